// A learned policy as a Scorer, peer of the heuristics: "model:PATH" wherever a scorer name is accepted.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rlsched/policy/model.h"
#include "rlsched/scorer.h"
#include "rlsched/status.h"

namespace rlsched::policy {

/// Scores with one verified model. Thread-safe: concurrent score() calls share only the (read-only) model and atomic
/// counters.
class TorchScriptScorer final : public Scorer {
 public:
  explicit TorchScriptScorer(std::shared_ptr<const Model> model);

  /// "model:<path>"
  std::string_view name() const override { return name_; }
  /// One feature extraction and ONE forward call for the whole batch. A NaN or infinite score never reaches the
  /// ranking: it becomes the lowest finite double (counted in nonfinite_replaced()). If forward fails (it passed the
  /// smoke batch, so only an input it could not handle does this), every job of the call gets the lowest finite
  /// double, so the caller's tie-break (earlier submit first) orders them, and forward_failures() counts it.
  void score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
             std::vector<double>& scores) const override;
  bool is_static() const override { return false; }
  bool reads_predicted_run_time() const override;

  const Model& model() const { return *model_; }
  std::uint64_t nonfinite_replaced() const { return nonfinite_replaced_.load(std::memory_order_relaxed); }
  std::uint64_t forward_failures() const { return forward_failures_.load(std::memory_order_relaxed); }

 private:
  std::shared_ptr<const Model> model_;
  std::string name_;
  mutable std::atomic<std::uint64_t> nonfinite_replaced_{0};
  mutable std::atomic<std::uint64_t> forward_failures_{0};
};

/// The policy factory the CLI and the simulator use: "model:PATH" gives a TorchScriptScorer for that file (the load
/// error, one line, when it does not load and verify); any other spec is a built-in scorer (make_scorer).
Result<std::unique_ptr<Scorer>> make_policy_scorer(std::string_view spec, const ScorerSettings& settings = {});

/// "model:" (the prefix of a model spec).
inline constexpr std::string_view kModelSpecPrefix = "model:";

}  // namespace rlsched::policy
