// Start-time estimates from a forward simulation of a cluster's state: what `rlsched explain` and
// `rlsched estimate` answer, for a live cluster (its snapshot read through libslurm) and for a simulated one (the
// replay study, bench/estimate_replay; docs/estimates.md).
//
// The forward simulation is the simulator itself (simulator.h), started from the snapshot instead of an empty
// cluster: running jobs keep their nodes until their predicted end (at the latest their time limit), pending jobs
// keep their submit time (the age factor counts from it), and the policy in service ranks them as it does in
// slurmctld. Nothing about the future is known to it: jobs submitted later are not there, and run times are
// predictions (RunTimePredictor) or time limits.
#pragma once

#include <string>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/job.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/simulator.h"
#include "rlsched/status.h"

namespace rlsched::sim {

/// A job running when the snapshot was taken.
struct RunningJob {
  /// As submitted. job.run_time is the predicted run time on what it holds, from `start` (-1: unknown; it runs to
  /// its time limit). One past its predicted end runs on as long again as it has run, within its limit
  /// (docs/estimates.md).
  Job job;
  Seconds start = 0;
  std::vector<int> nodes;        ///< indices into Cluster::nodes
  /// The CPUs it holds on each of `nodes` (same order; Slurm's job_resrcs). Empty: its CPUs as the simulator
  /// would spread them (its request's per-node share when it has that many nodes, else filled in node order).
  std::vector<int> node_cpus;
  std::string partition;         ///< the partition it runs in (empty: its first allowed one)
  std::string accelerator_type;  ///< the type it holds; empty when none or unknown
};

/// A job pending when the snapshot was taken.
struct QueuedJob {
  /// As submitted (job.submit: the age factor counts from it). job.run_time is the predicted run time (-1: its
  /// time limit).
  Job job;
  /// When it became eligible (the age factor counts from it); a begin time after the snapshot's time holds it
  /// until then.
  Seconds eligible = 0;
};

/// A cluster's state at one moment, as slurmctld has it (or as the simulator had it at some event).
struct Snapshot {
  Seconds now = 0;
  std::vector<RunningJob> running;
  std::vector<QueuedJob> pending;
  std::vector<int> nodes_down;  ///< nodes that take no jobs (down, drained), indices into Cluster::nodes
};

/// One pending job's estimated start.
struct StartEstimate {
  JobId id = 0;
  /// The expected start: the forward simulation with run times as predicted. -1: it did not start within the
  /// horizon (or can never start on this cluster).
  Seconds start = -1;
  /// An interval around it (docs/estimates.md says how it is made and how often the real start fell inside).
  Seconds earliest = -1;
  Seconds latest = -1;
  std::string partition;         ///< where it starts in the expected run
  std::string accelerator_type;  ///< the type it gets there; empty when none
};

struct ForecastOptions {
  /// How the cluster schedules (backfill, placement, energy, ...); failures, observers and hooks are ignored.
  /// A live forecast should take bf_max_job_test from slurm.conf (Cluster::backfill.max_job_test, Slurm's default
  /// 500): with 0 (the simulator's default: every pending job) backfill dominates a 10,000-job forecast's time.
  SimConfig sim;
  /// Jobs (ids of pending jobs) to estimate; empty: every pending job. The simulation stops once all of them
  /// started or the horizon passed.
  std::vector<JobId> targets;
  /// How far past the snapshot's time to simulate.
  Seconds horizon = 30 * 86400;
  /// Also run the scenarios that give StartEstimate::earliest and ::latest (otherwise both equal start).
  bool interval = true;
};

/// Estimates the start of the pending jobs of `snapshot` (ForecastOptions::targets) under `scorer`.
/// \return InvalidInput naming the job or node when the snapshot does not fit the cluster (a node index out of
/// range, a running job whose request does not fit its nodes, an unknown partition or accelerator type, a duplicate
/// job id, a target that is not pending).
Result<std::vector<StartEstimate>> forecast(const Cluster& cluster, const Snapshot& snapshot, const Scorer& scorer,
                                            const ForecastOptions& options = {});

/// forecast() of each of `snapshots` (alternatives of one state, e.g. a job not yet submitted pinned to each
/// accelerator type it allows), all at once on threads of their own: what `rlsched estimate` runs. Results in the
/// order of `snapshots`.
std::vector<Result<std::vector<StartEstimate>>> forecast_each(const Cluster& cluster,
                                                              const std::vector<Snapshot>& snapshots,
                                                              const Scorer& scorer,
                                                              const ForecastOptions& options = {});

}  // namespace rlsched::sim
