// SJF on predicted run times: shortest predicted job first, the prediction made from the jobs of the same user that
// have ended so far (rlsched::RunTimePredictor, as the start-time estimates make it; Tsafrir, Etsion & Feitelson,
// IEEE TPDS 2007). A user whose last jobs ended far inside their time limits gets a short prediction for the next
// one; a user with no ended job, the time limit (plain SJF).
//
// It asks whether the run time a user's history predicts is worth a place in the policy's inputs (COARE's loss to
// SJF is in large jobs that end within a minute of asking for hours: policy_models/README.md, stop 49). It hears of
// starts and ends from the simulator, so it lives here and `rlsched evaluate` builds it; the plugins cannot serve it.
#pragma once

#include <string_view>
#include <unordered_map>
#include <vector>

#include "rlsched/job.h"
#include "rlsched/run_time_prediction.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/simulator.h"

namespace rlsched::sim {

/// How the policy is named on the command line.
inline constexpr std::string_view kPredictedSjfName = "sjf-predicted";

class PredictedSjfScorer final : public Scorer {
 public:
  /// `jobs` is the list the run simulates (ScheduleEvent::job indexes it; a pending job is found by its id, the
  /// first job of the list with that id). It must outlive the scorer.
  explicit PredictedSjfScorer(const std::vector<Job>& jobs, RunTimePredictorOptions options = {});

  std::string_view name() const override { return kPredictedSjfName; }
  /// -(predicted run time); the time limit for a job whose user has no ended job, or that is not in the list.
  void score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
             std::vector<double>& scores) const override;

  /// For SimConfig::observer: a job's end records its run (from its last start) for its user.
  void observe(const ScheduleEvent& event);

 private:
  const std::vector<Job>& jobs_;
  std::unordered_map<JobId, int> index_of_;  ///< id -> first index with that id
  std::vector<Seconds> started_at_;          ///< per job, its last start; -1 before any
  /// Per job, the time limit it was last scored with (the simulator's, which a trace's missing limit is filled
  /// into); 0 before any. An end is recorded under it, so that its share of the limit is the one the job had.
  mutable std::vector<Seconds> scored_limit_;
  RunTimePredictor predictor_;
};

}  // namespace rlsched::sim
