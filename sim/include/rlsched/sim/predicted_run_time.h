// A rule on predicted run times: any policy (a rule of thumb, an area rule, a model) ranks the queue as if each job
// had asked for the run time its user's ended jobs predict, not for its time limit (rlsched::PredictedRunTimes, the
// view the plugin serves with `run_time: predicted`; Tsafrir, Etsion & Feitelson, IEEE TPDS 2007): a user whose last
// jobs ended far inside their time limits gets a short prediction for the next one; a user with no ended job, the
// time limit (the rule as it is). It hears of starts and ends from the simulator, so it lives here; `rlsched
// evaluate` builds it for `predicted:RULE`, and for a model under a config with `run_time: predicted`.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rlsched/job.h"
#include "rlsched/predicted_run_times.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/simulator.h"

namespace rlsched::sim {

/// How such a policy is named on the command line: `predicted:RULE` (predicted:sjf, predicted:model:PATH, ...).
inline constexpr std::string_view kPredictedPrefix = "predicted:";

/// Whether `spec` names a rule on predicted run times (the prefix and something after it).
bool is_predicted_spec(std::string_view spec);
/// The rule a predicted spec names: "predicted:f1" -> "f1".
std::string_view predicted_rule(std::string_view spec);

class PredictedRunTimeScorer final : public Scorer {
 public:
  /// `jobs` is the list the run simulates (ScheduleEvent::job indexes it; a pending job is found by its id, the
  /// first job of the list with that id). It must outlive the scorer. `rule` scores the jobs as predicted.
  PredictedRunTimeScorer(const std::vector<Job>& jobs, std::unique_ptr<Scorer> rule,
                         RunTimePredictorOptions options = {});

  std::string_view name() const override { return name_; }
  /// The rule's scores of `jobs`, each with its predicted run time for its time limit; a job whose user has no
  /// ended job, or that is not in the list, keeps its limit.
  void score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
             std::vector<double>& scores) const override;

  /// For SimConfig::observer: a job's end records its run (from its last start) for its user.
  void observe(const ScheduleEvent& event);

 private:
  const std::vector<Job>& jobs_;
  std::unique_ptr<Scorer> rule_;
  std::string name_;
  std::unordered_map<JobId, int> index_of_;  ///< id -> first index with that id
  std::vector<Seconds> started_at_;          ///< per job, its last start; -1 before any
  /// Per job, the time limit it was last scored with (the simulator's, which a trace's missing limit is filled
  /// into); 0 before any. An end is recorded under it, so that its share of the limit is the one the job had.
  mutable std::vector<Seconds> scored_limit_;
  mutable std::vector<PendingJob> predicted_;  ///< the jobs as the rule sees them (kept to reuse its memory)
  PredictedRunTimes view_;
};

}  // namespace rlsched::sim
