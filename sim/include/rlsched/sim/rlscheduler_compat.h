// A re-implementation of RLScheduler's (SC'20) simulator semantics, so our numbers can be set beside theirs.
//
// Their model: a homogeneous cluster of `nodes` x `procs_per_node`, a job takes ceil(procs / procs_per_node) whole
// nodes, requested time = user estimate (or run time when absent), jobs run for their trace run time.
// Sort the queue by score and commit to the head; if it does not fit, without backfill advance time (next arrival
// or next completion, whichever comes first) until it fits; with backfill compute the head's reservation from the
// requested times of running jobs and, while waiting, start queued jobs in FCFS order that fit now and end (by
// requested time) strictly before that reservation. After each start pick again at the same time; advance time
// only when the queue is empty. A sequence starts from an empty cluster at its first job's submit time and runs
// until all its jobs finished. On Lublin-1 this reproduces all six FCFS/SJF/F1 figures of their simulator to two
// decimals (test/sim/rlscheduler_compat_test.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "rlsched/job.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/outcome.h"
#include "rlsched/status.h"

namespace rlsched::sim {

/// What the compat simulation reads of a job, packed so that queue scans stay in cache.
struct CompatJob {
  JobId id;
  std::size_t source;  ///< index of the job in the workload it was prepared from
  Seconds submit;
  Seconds run;
  Seconds request;  ///< requested time (time limit), or the run time when the trace has none
  int procs;
  int nodes;        ///< whole nodes taken: ceil(procs / procs_per_node)
  std::string user;  ///< whose ended jobs predict its run time (PendingJob::predicted_run_time)
};

/// The job list and machine RLScheduler derives from an SWF trace.
struct CompatWorkload {
  std::vector<CompatJob> jobs;  ///< run_time > 0, sorted by job id (as RLScheduler's loader does)
  int nodes = 0;
  int procs_per_node = 1;
  std::size_t dropped_zero_runtime = 0;  ///< RLScheduler's loader drops jobs with run time 0
};

/// Applies RLScheduler's loader rules to a workload: drop run time 0, sort by id, machine from the SWF header
/// (MaxNodes, MaxProcs; MaxProcs defaults to MaxNodes), or from `nodes`/`procs_per_node` when they are > 0.
/// \return InvalidInput when no machine size is known or a job needs more processors than the machine has.
Result<CompatWorkload> prepare_compat_workload(const Workload& workload, int nodes = 0, int procs_per_node = 0);

/// Chooses each queue head itself instead of a scorer: what a learning agent plugs in.
class DecisionMaker {
 public:
  virtual ~DecisionMaker() = default;
  /// Picks the next queue head. `queue` holds the waiting jobs in FCFS order (earliest submit first).
  /// \return an index into `queue`.
  virtual std::size_t choose(const ScoringContext& context, const std::vector<PendingJob>& queue) = 0;
  /// Whether it reads PendingJob::predicted_run_time (Scorer::reads_predicted_run_time), so the run fills it in.
  virtual bool reads_predicted_run_time() const { return false; }
  /// Called whenever a job starts, chosen or backfilled; `job` indexes the prepared workload's jobs.
  virtual void on_start(std::size_t job, Seconds wait, Seconds run) {
    (void)job;
    (void)wait;
    (void)run;
  }
};

/// Simulates jobs [first, first + count) of the prepared workload. Outcome::job is the index in the workload the
/// jobs were prepared from (CompatJob::source), so metrics can be computed against that workload.
std::vector<JobOutcome> run_compat_sequence(const CompatWorkload& workload, std::size_t first, std::size_t count,
                                            const Scorer& scorer, bool backfill);
/// The same, with `agent` choosing every head (ties and order are its business).
std::vector<JobOutcome> run_compat_sequence(const CompatWorkload& workload, std::size_t first, std::size_t count,
                                            DecisionMaker& agent, bool backfill);

/// RLScheduler's evaluation: 10 sequences of 1,024 jobs at these 0-based start indices (their seeded draw).
struct CompatProtocol {
  std::vector<std::size_t> starts{6181, 1259, 5004, 6216, 8959, 1929, 3787, 8837, 3919, 6080};
  std::size_t sequence_length = 1024;
};

}  // namespace rlsched::sim
