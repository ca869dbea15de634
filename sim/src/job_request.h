// A trace job turned into what the scheduler works with: eligible partitions, allowed accelerator types (fastest
// first), the static parts of its priority, its run time at reference speed, and the reason when it can never run.
#pragma once

#include <string>
#include <vector>

#include "resources.h"
#include "rlsched/cluster.h"
#include "rlsched/job.h"

namespace rlsched::sim {

struct JobRequest {
  std::vector<int> partitions;  ///< eligible partition indices, highest PriorityTier first
  std::vector<int> types;       ///< allowed accelerator types, fastest for this job first; {-1} for CPU-only jobs
  /// The types as the queue shows them to job_submit/rlsched: one type name once pinned, an any-of set "a|b", or
  /// "" for any type (what Slurm's job record holds after job_submit ran).
  std::string queue_types;
  int user = 0;                 ///< index into the simulation's user table
  int tier = 0;                 ///< highest PriorityTier among its partitions
  Seconds limit = 0;            ///< time limit (the scheduler's estimate of its run time), > 0
  double reference_work = 0;    ///< run time at speed 1.0, in seconds
  double job_size_factor = 0;
  double partition_factor = 0;
  double qos_factor = 0;
  std::string rejection;        ///< non-empty when the job can never run on this cluster
};

/// Builds the request of `job`. `user` is its user's index; `idle` is the cluster with every node up and idle. Sets `rejection` for jobs that cannot run anywhere:
/// unknown partition or accelerator type, time limit above every partition's MaxTime, or larger than any partition.
JobRequest make_request(const Cluster& cluster, const Topology& topology, const FreeState& idle, const Job& job,
                        int user);

/// Makes `partitions` (eligible, non-empty) the job's partitions: highest PriorityTier first, and the priority
/// factors that follow from the first.
void set_partitions(const Cluster& cluster, std::vector<int> partitions, JobRequest& request);

/// Whether `job` fits partition `p` with accelerator type `type` (-1: none) on the idle cluster.
bool fits_ever(const Topology& topology, const FreeState& idle, const Job& job, int p, int type);

/// The demand of `job` on partition `p` with accelerator type `type` (-1: none). `nodes` is 0 when the demand cannot
/// be met on that partition at all (the type is absent there).
Demand make_demand(const Topology& topology, const Job& job, int p, int type);

/// Run time of `job` on accelerator type `type` (-1: CPU-only), at least 1 second when the trace's run is positive.
Seconds run_time_on(const Cluster& cluster, const Job& job, const JobRequest& request, int type);

}  // namespace rlsched::sim
