// What a policy takes a waiting job's run time to be (rlsched.yaml `run_time`, docs/plugins.md): its time limit, or
// the run time its user's ended jobs predict (rlsched::RunTimePredictor, as the start-time estimates predict it).
// The plugin's engine and the simulator's `predicted:RULE` both show the policy their jobs through this one class,
// so that a policy served on predicted run times ranks alike in slurmctld and in the simulator (parity tests replay
// the simulator's ends and queues through the C entry points).
#pragma once

#include <string>

#include "rlsched/run_time_prediction.h"
#include "rlsched/scorer.h"

namespace rlsched {

enum class RunTimeView {
  kLimit,      ///< its time limit (a model that reads the predicted_* features still sees its prediction there)
  kPredicted,  ///< its user's ended jobs' share of their limits times its limit; the limit while they have none
};

/// As rlsched.yaml spells it: "limit" or "predicted".
const char* run_time_view_name(RunTimeView view);

/// The predicted view of one scheduler (the plugin's engine, one simulated run). Not thread-safe.
class PredictedRunTimes {
 public:
  explicit PredictedRunTimes(RunTimePredictorOptions options = {});

  /// A job of `user` ended after running `run_time` seconds under `time_limit` (0: none). Feed ends in the order
  /// they happened: the latest count.
  void ended(const std::string& user, Seconds time_limit, Seconds run_time);

  /// `job` as the policy sees it: its time limit replaced by its predicted run time (at least 1 s, at most the
  /// limit), which is also its predicted_run_time; unchanged while `user` has no ended job.
  void apply(const std::string& user, PendingJob& job) const;

  /// Sets job.predicted_run_time (the predicted_* features of schema v2) to its predicted run time, leaving its
  /// time limit as it is (the limit itself while `user` has no ended job).
  void annotate(const std::string& user, PendingJob& job) const;

  /// The run time `user`'s ended jobs predict for a job under `time_limit` (0: none): at least 1 s, at most the
  /// limit; the limit while `user` has none (-1 without a limit either).
  Seconds predict(const std::string& user, Seconds time_limit) const;

  /// What it has learned, to keep across restarts (the plugin's engine: capi/run_time_history.h).
  const RunTimePredictor& predictor() const { return predictor_; }
  RunTimePredictor& predictor() { return predictor_; }

 private:
  RunTimePredictor predictor_;
};

}  // namespace rlsched
