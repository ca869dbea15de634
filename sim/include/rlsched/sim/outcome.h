// What happened to each job in a simulation: the raw material of every metric.
#pragma once

#include <cstdint>
#include <vector>

#include "rlsched/job.h"

namespace rlsched::sim {

enum class JobEnd : std::uint8_t {
  kCompleted,  ///< ran to its (scaled) run time
  kTimeout,    ///< killed at its time limit
  kRejected,   ///< can never run on this cluster (too large, no such partition or accelerator type)
  kUnfinished, ///< still pending or running when the simulation stopped
};

const char* to_string(JobEnd end);

struct JobOutcome {
  std::size_t job = 0;  ///< index into the simulated job list
  Seconds submit = 0;
  Seconds start = -1;   ///< start of the final run; -1 if never started
  Seconds end = -1;
  JobEnd state = JobEnd::kUnfinished;
  int cpus = 0;
  int accelerators = 0;
  int accelerator_type = -1;  ///< index into Cluster::accelerator_types of the final run, -1 for none
  int partition = -1;         ///< index into Cluster::partitions of the final run
  std::vector<int> nodes;     ///< indices into Cluster::nodes of the final run, in node order
  /// Placement::kPredictive: the wait job_submit/rlsched's model predicted at submit, for the earliest member of
  /// the job's set (seconds); -1 when the job was not placed that way.
  double predicted_wait = -1;
  int restarts = 0;     ///< requeues (node failures, preemptions) before the final run
  int preemptions = 0;  ///< times chosen as a preemption victim
  /// Work thrown away by requeues: the run since the last checkpoint (the whole run without one); for a victim
  /// that checkpointed at the signal, the checkpoint's cost.
  double lost_cpu_seconds = 0;
  double lost_accelerator_seconds = 0;
  /// Resources held over every run, grace times included, and the part of it that advanced the job and was kept
  /// (not lost, not restart overhead, not waiting out a grace): goodput = useful / allocated.
  double allocated_cpu_seconds = 0;
  double allocated_accelerator_seconds = 0;
  double useful_cpu_seconds = 0;
  double useful_accelerator_seconds = 0;

  Seconds wait() const { return start - submit; }
  Seconds run() const { return end - start; }
  bool ran() const { return start >= 0 && end >= start; }
};

/// Bounded slowdown with threshold tau: max(1, (wait + run) / max(run, tau)).
double bounded_slowdown(Seconds wait, Seconds run, Seconds tau = 10);

}  // namespace rlsched::sim
