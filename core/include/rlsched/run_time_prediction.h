// Run-time prediction for start-time estimates (rlsched explain/estimate, the forecast's expected run;
// docs/estimates.md). After Tsafrir, Etsion & Feitelson, "Backfilling using system-generated predictions rather
// than user runtime estimates" (IEEE TPDS 2007): a job runs about as long as its user's last completed jobs did on
// average, never longer than its own time limit; with no history, its time limit. Tsafrir et al. average the last
// two run times ({2, kRunTime}); the default, chosen on the Gavel workload only (docs/estimates.md), averages the
// share of the time limit the last eight used and applies it to this job's limit.
#pragma once

#include <deque>
#include <string>
#include <unordered_map>

#include "rlsched/job.h"

namespace rlsched {

/// What is averaged over the user's last `history` completed jobs.
enum class RunTimeBasis {
  kRunTime,     ///< their run times (Tsafrir et al.)
  kLimitShare,  ///< the share of their time limits they used, applied to this job's limit
};

struct RunTimePredictorOptions {
  int history = 8;  ///< completed jobs per user that count, the latest first (>= 1)
  RunTimeBasis basis = RunTimeBasis::kLimitShare;
};

/// Fed completed jobs in the order they ended; predicts from nothing else (no job that has not ended yet).
class RunTimePredictor {
 public:
  explicit RunTimePredictor(RunTimePredictorOptions options = {});

  /// Records a job that ended after running `run_time` seconds under `time_limit` (0: none).
  void record(const std::string& user, Seconds time_limit, Seconds run_time);

  /// \return the predicted run time of `job`: at least 1 s, at most job.time_limit when it has one; its time limit
  /// when its user has no completed job yet (-1 when it has no limit either: unknown).
  Seconds predict(const Job& job) const;

  const RunTimePredictorOptions& options() const { return options_; }
  /// What it remembers of each user's completed jobs (options().basis's values), the latest first.
  const std::unordered_map<std::string, std::deque<double>>& history() const { return history_; }
  /// Remembers `latest_first` for `user` in place of what it knew (the first options().history count).
  void restore(const std::string& user, std::deque<double> latest_first);

 private:
  RunTimePredictorOptions options_;
  std::unordered_map<std::string, std::deque<double>> history_;  ///< per user, the latest first
};

}  // namespace rlsched
