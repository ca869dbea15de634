// A one-line progress bar on stderr for long simulations. It draws only when stderr is a terminal and only once a
// run has lasted a second, so short runs, pipes and tests see nothing.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace rlsched::cli {

class ProgressBar {
 public:
  /// Starts timing a run labelled `label` (e.g. "sjf [2/6]").
  explicit ProgressBar(std::string label);
  ~ProgressBar();  ///< clears the line if anything was drawn
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  /// Records the share of work done (0..1) and redraws when due.
  void update(double share);
  /// Text shown after the bar (e.g. the latest validation figure).
  void set_detail(std::string detail) { detail_ = std::move(detail); }

  /// A callback for EvaluationOptions::progress that feeds this bar.
  std::function<void(double)> callback() {
    return [this](double share) { update(share); };
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  std::string detail_;
  Clock::time_point start_;
  Clock::time_point last_draw_;
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace rlsched::cli
