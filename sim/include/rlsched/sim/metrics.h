// Schedule quality, computed from job outcomes the same way for every policy and protocol.
#pragma once

#include <string>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/sim/outcome.h"

namespace rlsched::sim {

struct AcceleratorTypeMetrics {
  std::string name;
  std::size_t jobs = 0;
  double avg_wait = 0;
  double utilization = 0;  ///< busy accelerator-seconds / (accelerators of this type * makespan)
  /// The same between the first and the last submit (while jobs arrive: the steady state, without the final drain)
  double utilization_arriving = 0;
  /// Jobs started on this type whose wait was predicted at submit (JobOutcome::predicted_wait), and the error of
  /// that prediction against the simulated wait: mean of (actual - predicted) (> 0: the model was optimistic),
  /// mean and median of its absolute value, seconds.
  std::size_t predicted = 0;
  double wait_error_bias = 0;
  double wait_error_mean_abs = 0;
  double wait_error_median_abs = 0;
};

/// Waits of the jobs of one QOS (urgent jobs against the others, with preemption).
struct QosMetrics {
  std::string name;  ///< "" for jobs without a QOS
  std::size_t jobs = 0;
  double avg_wait = 0;
  double p95_wait = 0;
};

struct Metrics {
  std::size_t jobs = 0;       ///< jobs that ran (the denominators below)
  std::size_t completed = 0;
  std::size_t timed_out = 0;
  std::size_t rejected = 0;
  std::size_t unfinished = 0;
  double avg_wait = 0;
  double avg_bsld = 0;        ///< bounded slowdown, tau = 10 s
  double p50_wait = 0, p95_wait = 0, p99_wait = 0, max_wait = 0;
  double avg_completion = 0;  ///< mean of wait + run (job completion time)
  double p95_completion = 0;
  double utilization = 0;     ///< busy CPU-seconds / (total CPUs * makespan)
  double makespan = 0;        ///< last end - first submit, seconds
  double fragmentation = 0;   ///< share of idle CPU-time during which a pending job fitting the idle total waited
  double accel_fragmentation = 0;  ///< the same for accelerators
  double jain_fairness = 1;   ///< Jain's index over users' average bounded slowdown (1 = perfectly even)
  std::size_t restarts = 0;     ///< requeues: node failures and preemptions
  std::size_t preemptions = 0;
  double lost_cpu_hours = 0;
  double lost_accelerator_hours = 0;
  /// Useful over allocated accelerator-hours over all runs (CPU-hours for a workload without accelerators); 1 when
  /// nothing was lost.
  double goodput = 1;
  std::vector<AcceleratorTypeMetrics> per_type;
  std::vector<QosMetrics> per_qos;  ///< by QOS name, only when the jobs that ran have more than one QOS
};

/// Computes everything that follows from outcomes alone (not the fragmentation figures, which need the timeline).
/// `jobs` is the simulated job list (outcome.job indexes it); `accel_capacity[t]` the accelerators of type t.
Metrics compute_metrics(const std::vector<Job>& jobs, const std::vector<JobOutcome>& outcomes, int total_cpus,
                        const std::vector<AcceleratorType>& types = {}, const std::vector<int>& accel_capacity = {});

/// Percentile (0..100) of an unsorted sample, interpolated linearly between ranks as numpy does. 0 when empty.
double percentile(std::vector<double> values, double pct);

}  // namespace rlsched::sim
