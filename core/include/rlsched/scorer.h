// Scorer: "rank these pending jobs". Heuristics and learned policies are peers behind this one interface, chosen by
// name. The simulator calls it exactly as the site_factor plugin does inside slurmctld: one batched call for the
// whole pending queue, plus single-job calls at submit.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/job.h"
#include "rlsched/status.h"

namespace rlsched {

/// What a scorer sees of one pending job. Plain data, so the C ABI can mirror it field by field.
struct PendingJob {
  JobId id = 0;
  Seconds submit = 0;
  Seconds wait = 0;        ///< now - submit (time eligible so far), >= 0
  Seconds time_limit = 0;  ///< requested wall time, > 0
  /// The run time its user's ended jobs predict (rlsched::PredictedRunTimes), in [1, time_limit] (the limit while
  /// they have none); 0 where no one predicted it (the predicted_* features then read the time limit).
  Seconds predicted_run_time = 0;
  int cpus = 1;
  int nodes = 1;           ///< node count the job needs (>= 1)
  int accelerators = 0;    ///< accelerators requested in total
  int restarts = 0;
  bool checkpointable = false;
  bool fits_now = false;        ///< its request fits in the idle resources of one of its partitions
  double accel_speed = 1.0;     ///< fastest allowed accelerator type's speed / fastest type in the cluster; 1 if none
  double idle_accel_share = 0;  ///< idle accelerators of its allowed types / all of those types; 0 for CPU jobs
  /// Slurm multifactor factors, each normalised to [0, 1] as Slurm does (priority_factors_t).
  double age_factor = 0;
  double fairshare_factor = 0;
  double job_size_factor = 0;
  double partition_factor = 0;
  double qos_factor = 0;
};

/// Queue-wide context of one scoring call.
struct ScoringContext {
  Seconds now = 0;
  int total_cpus = 0;
  int idle_cpus = 0;
  int total_nodes = 0;
  int total_accelerators = 0;
  int pending_jobs = 0;
};

class Scorer {
 public:
  virtual ~Scorer() = default;
  virtual std::string_view name() const = 0;

  /// Scores jobs[i] into scores[i]; a higher score runs first. Rows are scored independently of each other.
  /// Ties are broken by the caller (earlier submit first, then trace order).
  virtual void score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
                     std::vector<double>& scores) const = 0;

  /// \return true when a job's score depends on nothing that changes while it waits, so callers may cache it.
  virtual bool is_static() const { return false; }
  /// \return true when it reads PendingJob::predicted_run_time, so callers must fill it in
  /// (rlsched::PredictedRunTimes::annotate); callers that do not leave it 0 and the scorer reads the time limit.
  virtual bool reads_predicted_run_time() const { return false; }
};

/// Names of the built-in scorers, in a stable order: fcfs, sjf, wfp3, unicep, f1, multifactor.
std::vector<std::string> scorer_names();

/// Slurm's priority/multifactor: the weighted sum of a job's normalised factors, without the site factor. What the
/// "multifactor" scorer scores, and what the simulator adds the site factor to.
double multifactor_priority(const PriorityWeights& weights, const PendingJob& job);

/// What scorers that need settings are built with.
struct ScorerSettings {
  /// Weights of the "multifactor" scorer: the cluster's slurm.conf weights, or PriorityWeights::Typical().
  PriorityWeights multifactor = PriorityWeights::Typical();
};

/// Creates a scorer by name (case-sensitive) or area rule spec (`area:A/B/G[/C[/F]][/relative]`,
/// rlsched/area_rule.h).
/// \return InvalidInput listing the known names when unknown, or saying what is wrong in an area rule spec.
Result<std::unique_ptr<Scorer>> make_scorer(std::string_view name, const ScorerSettings& settings = {});

}  // namespace rlsched
