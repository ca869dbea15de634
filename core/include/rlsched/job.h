// Jobs as a Slurm user submits them, and workloads (ordered job lists read from traces).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace rlsched {

/// Simulation and trace time: whole seconds. Traces give epoch seconds or seconds since trace start.
using Seconds = std::int64_t;
using JobId = std::int64_t;

/// A time that never comes: no next event, a node never freed, no deadline.
inline constexpr Seconds kNever = std::numeric_limits<Seconds>::max();

/// An accelerator request as Slurm's GRES options express it.
///   --gres=gpu:4             -> {count 4, name "gpu", types {}}          (typeless: any type)
///   --gres=gpu:h200:4        -> {count 4, name "gpu", types {"h200"}}
///   any-of set (Alibaba "V100M16|V100M32", or job_submit/rlsched mapping) -> several types
/// `count` is the total for the job across all its nodes (Slurm's --gpus / ReqTRES gres/gpu=N).
struct AcceleratorRequest {
  int count = 0;
  std::string name;                ///< GRES name ("gpu", "npu"); empty when count == 0
  std::vector<std::string> types;  ///< allowed types; empty = any type of that GRES name

  bool empty() const { return count == 0; }
  bool any_type() const { return types.empty(); }
  bool allows(const std::string& type) const;
};

/// One job: what was asked (request) and, from a trace, what happened (run time).
struct Job {
  JobId id = 0;
  std::string user;
  std::string account;
  std::string qos;
  std::vector<std::string> partitions;  ///< allowed partitions; empty = the cluster's default partition
  std::string job_class;                ///< workload class for accelerator speed lookup ("ResNet-50", ...); may be empty

  Seconds submit = 0;
  Seconds time_limit = 0;  ///< requested wall time (Slurm --time); 0 = unknown (readers fill run time then)

  int nodes = 0;            ///< minimum node count (Slurm -N); 0 = scheduler chooses
  int cpus = 1;             ///< total CPUs across nodes
  std::int64_t mem_mb = 0;  ///< memory per node in MiB; 0 = not requested
  AcceleratorRequest accel;

  /// Run time measured in the trace (on `ran_on_type` when it ran on an accelerator); -1 when unknown
  /// (still pending or running when the trace was cut).
  Seconds run_time = -1;
  std::string ran_on_type;  ///< accelerator type the trace recorded for this job; empty = none / unknown

  /// Declared checkpointing (rlsched/preemption.h, sbatch --comment=checkpoint:interval=30m,cost=90s): a
  /// checkpoint every `checkpoint_interval` of run time and on the checkpoint signal, each taking
  /// `checkpoint_cost`. 0: the job declares none.
  Seconds checkpoint_interval = 0;
  Seconds checkpoint_cost = 0;
  /// The one meaning of "checkpointable" (the policy's feature, the simulator's resume, preemption's victims): the
  /// job declared a checkpoint.
  bool checkpointable() const { return checkpoint_interval > 0; }
  int restarts = 0;  ///< times this job was requeued before the trace ended
  int priority_tier = 0;  ///< trace queue number (SWF field 15); a feature only, not a Slurm tier
};

/// Counters a reader fills so that nothing is lost silently.
struct ReadReport {
  std::string source;        ///< file name as given
  std::size_t records = 0;   ///< data records seen (comments and headers excluded)
  std::size_t used = 0;      ///< records that became jobs
  std::size_t skipped = 0;   ///< records dropped; each with a reason below (first kMaxReasons kept verbatim)
  std::size_t merged = 0;    ///< records folded into another job (job steps, earlier requeue records)
  std::vector<std::string> reasons;  ///< "file:line: what is wrong", at most kMaxReasons
  std::size_t warned = 0;             ///< records used despite something odd (e.g. extra trailing SWF fields)
  std::vector<std::string> warnings;  ///< "file:line: what was odd", at most kMaxReasons
  static constexpr std::size_t kMaxReasons = 20;

  /// Count a skipped record and keep its reason if there is room.
  void skip(std::string reason);
  /// Count a record used with a warning and keep the warning if there is room.
  void warn(std::string warning);
};

/// A job trace, ordered by submit time (ties by trace order).
struct Workload {
  std::vector<Job> jobs;
  ReadReport report;
  int max_procs = 0;  ///< from the trace header (SWF MaxProcs), 0 if absent
  int max_nodes = 0;  ///< from the trace header (SWF MaxNodes), 0 if absent
};

/// Moves the last `share` of the jobs by submit time (ceil(share * jobs); stable for equal submit times) out of
/// `workload` and returns them, with the header's machine size. The one meaning of "the jobs that come next":
/// `rlsched train` never reads them (--held-back) and `rlsched evaluate --candidate` judges the model on them.
Workload take_recent(Workload& workload, double share);

}  // namespace rlsched
