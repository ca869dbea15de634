// The one job view: what the policy scores of a pending job (PendingJob, the inputs of feature schema v1), built by
// one function from a neutral snapshot of the queue and the cluster. site_factor/rlsched (through the C ABI adapter,
// capi::to_pending_job) and the Slurm model (SlurmSim) both fill these snapshots from their own state and call
// job_view::build, so a policy sees the same numbers in slurmctld and in the simulator; test/capi/
// feature_parity_test.cpp replays simulator states through the C entry points and requires identical features.
//
// The rules, each written here only:
//  - wait counts from eligibility (the later of submit and --begin; a requeued job's new eligible time), as Slurm's
//    age factor does;
//  - accel_speed is the job class's speed on its fastest allowed type present in the cluster, over that class's speed
//    on the fastest type of the same GRES name in the cluster (1 for CPU jobs, and when the class is as fast
//    everywhere);
//  - fits_now: the request fits the idle CPUs and, for accelerator jobs, the idle accelerators of one allowed type in
//    one of the job's partitions;
//  - idle_accel_share: per allowed type, the most idle in any one of the job's partitions (overlapping partitions are
//    not counted twice), summed, over the cluster's total of those types;
//  - the queue length of the scoring context: the batch at a decay-thread tick; at submit (site_factor_p_set sees
//    no queue) the last batch plus the job.
#pragma once

#include <string_view>
#include <vector>

#include "rlsched/job.h"
#include "rlsched/scorer.h"

namespace rlsched::job_view {

/// Accelerators of one GRES name and type on usable nodes (of a partition, or of the whole cluster).
struct Pool {
  std::string_view gres;  ///< "gpu"
  std::string_view type;  ///< "h200"; empty for an untyped GRES
  int total = 0;
  int idle = 0;
};

struct PartitionState {
  int cpus_idle = 0;
  std::vector<Pool> pools;
};

/// What every job of one scoring call shares. Cluster pools list each (gres, type) once, each node counted once.
struct ClusterState {
  int cpus_total = 0;
  int cpus_idle = 0;
  int nodes_total = 0;
  std::vector<Pool> pools;
  std::vector<PartitionState> partitions;

  /// Accelerators of every pool: the feature schema's cluster accelerators.
  int accelerators_total() const;
  /// The scoring context of `pending` jobs at `now`.
  ScoringContext context(Seconds now, int pending) const;
};

/// One pending job as both Slurm and the simulator know it.
struct JobState {
  JobId id = 0;
  Seconds submit = 0;
  Seconds eligible = 0;    ///< submit, --begin, or when a requeued job may start again
  Seconds time_limit = 0;  ///< the resolved limit (job's, else partition MaxTime, else the configured default), > 0
  int cpus = 1;
  int nodes = 1;
  int accelerators = 0;
  std::string_view gres;   ///< GRES name of the accelerators; empty when none
  std::string_view types;  ///< allowed types: "h200", an any-of set "h200|a100", or "" for any type
  /// Partitions it may run in: indices into ClusterState::partitions; none valid means "look at the whole cluster".
  const int* partitions = nullptr;
  int n_partitions = 0;
  /// Speed of each ClusterState::pools entry for this job's class (AcceleratorType::speed_for); nullptr: all 1.
  const double* pool_speeds = nullptr;
  int restarts = 0;
  bool checkpointable = false;
  double age_factor = 0, fairshare_factor = 0, job_size_factor = 0, partition_factor = 0, qos_factor = 0;
};

/// The policy's view of `job` at `now`. Factors outside [0, 1] (or not finite) are clamped (0 when not finite).
PendingJob build(const JobState& job, const ClusterState& cluster, Seconds now);

}  // namespace rlsched::job_view
