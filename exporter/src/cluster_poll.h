// What one poll of slurmctld saw, in plain C++ types (slurm_poller.cpp fills it from libslurm's job, node and
// statistics records), and what the exporter derives from it. Kept free of Slurm types so the derivations are
// tested on hand-written tables.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "rlsched/job.h"

namespace rlsched::exporter {

/// The accelerators a job asks for, in total over its nodes (tres_per_job / _node x nodes / _task x tasks).
struct AcceleratorAsk {
  std::string gres;                ///< "gpu"; empty for a job without accelerators
  std::vector<std::string> types;  ///< {"h200"}; empty: any type of that GRES
  std::int64_t count = 0;
};

enum class JobPhase { kPending, kRunning, kOther };

struct PolledJob {
  std::uint32_t id = 0;
  JobPhase phase = JobPhase::kOther;
  std::vector<std::string> partitions;  ///< a pending job may list several ("h200,a100")
  std::string qos;
  std::string reason;    ///< Slurm's pending reason ("Priority", "Resources"); "None" when running
  Seconds eligible = 0;  ///< when it could first start (submit, --begin, requeue)
  Seconds start = 0;     ///< 0 until it started (libslurm's start_time of a pending job is a forecast, not kept)
  AcceleratorAsk ask;
};

/// Accelerators of one GRES name and type on one node.
struct NodeAccelerators {
  std::string gres;  ///< "gpu"
  std::string type;  ///< "h200"; empty for an untyped GRES
  std::int64_t total = 0;
  std::int64_t allocated = 0;
};

struct PolledNode {
  std::string name;
  std::vector<std::string> partitions;
  bool usable = true;  ///< not down, drained, failed or powered off: its free accelerators are idle, not lost
  std::vector<NodeAccelerators> accelerators;
};

/// slurmctld's own scheduler statistics (sdiag): times in microseconds.
struct SchedulerCycles {
  double main_last_us = 0, main_mean_us = 0;
  double backfill_last_us = 0, backfill_mean_us = 0;
  std::int64_t main_cycles = 0, backfill_cycles = 0;
};

struct ClusterPoll {
  Seconds now = 0;
  std::vector<PolledJob> jobs;
  std::vector<PolledNode> nodes;
  SchedulerCycles cycles;
};

/// The label that names an accelerator type in metrics: the type ("h200"), "any" for a typeless request of a GRES,
/// "none" for a job without accelerators; several allowed types are joined with '|' ("a100|h200").
std::string accelerator_label(const AcceleratorAsk& ask);

/// (partition, qos, accelerator_type, reason) -> jobs
using PendingKey = std::tuple<std::string, std::string, std::string, std::string>;
/// (partition, qos, accelerator_type) -> jobs
using RunningKey = std::tuple<std::string, std::string, std::string>;
/// (gres, type)
using TypeKey = std::pair<std::string, std::string>;

struct TypeUsage {
  std::int64_t total = 0, allocated = 0, idle = 0;
  /// idle accelerators of this type while a pending job that fits them (its partition holds this type, it may use
  /// it, and it asks for no more than that partition's idle ones of it) waits; 0 when no such job waits.
  std::int64_t idle_while_fitting_jobs_wait = 0;
  std::int64_t fitting_jobs_waiting = 0;
};

struct QueueSummary {
  std::map<PendingKey, std::int64_t> pending;
  std::map<RunningKey, std::int64_t> running;
  std::map<TypeKey, TypeUsage> types;
};

/// A pending job counts under each partition it lists; a running one under its own. Accelerators are counted once
/// per node, however many partitions hold it; idle ones only on usable nodes.
QueueSummary summarize(const ClusterPoll& poll);

/// A job's wait, seen once: the first poll that shows it started observes start - eligible.
struct StartedJob {
  std::string partition, qos, accelerator_type;
  Seconds wait = 0;
};

/// Remembers which jobs were already observed, so that each start is counted once however many polls still show
/// the job (finished jobs stay visible for MinJobAge), and a requeued job's later start is not counted again. A job
/// that left slurmctld's list is forgotten.
class StartTracker {
 public:
  /// \return the jobs of `poll` that started since the previous call (all started ones on the first call).
  std::vector<StartedJob> newly_started(const ClusterPoll& poll);

 private:
  std::set<std::uint32_t> seen_;
};

}  // namespace rlsched::exporter
