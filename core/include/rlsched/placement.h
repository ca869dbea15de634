// Placer: "which partition and accelerator type should this job use?" The decision job_submit/rlsched makes for a
// job that asks for accelerators without a type (--gres=gpu:4, --gpus=4) or with an any-of set (gpu:h200|a100:4).
// A pure function of the request and a snapshot of the partitions, so that the simulator can make the same
// decision from its own state.
//
// Model. For each candidate (partition, GRES, type) pool the job could use, the predicted completion is
//     wait + run,  run = time_limit / speed(type)   (the time limit is read as the run time at speed 1.0)
//     wait = (pending_work + shortage * mean_remaining) / total
// where pending_work is the accelerator-seconds requested by jobs already queued for that pool (all counted as
// ahead of this one: the new job's priority is not known yet), shortage = max(0, count - idle) the accelerators
// that must first be freed, mean_remaining = running_work / busy the mean time left of the running jobs there, and
// total the pool's accelerators. An empty, idle pool gives wait 0. The pool with the earliest completion wins; ties
// go to the faster type, then to the pool with fewer accelerators (the more specific partition), then to the
// earlier partition. This is a queue estimate, not a schedule: it ignores backfill and priorities by design.
#pragma once

#include <string>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/job.h"

namespace rlsched::placement {

/// Accelerators of one GRES name and type inside one partition, as the scheduler sees them now.
struct AcceleratorPool {
  std::string gres;  ///< "gpu"
  std::string type;  ///< "h200"; empty for an untyped GRES
  int total = 0;     ///< on the partition's usable nodes
  int idle = 0;
  int max_per_node = 0;     ///< most on one node
  int nodes = 0;            ///< nodes that have at least one
  double pending_work = 0;  ///< accelerator-seconds (count x time limit) of pending jobs queued for this pool
  double running_work = 0;  ///< accelerator-seconds left (count x time to their limit) of jobs running here
};

struct PartitionState {
  std::string name;
  bool accepts_jobs = true;  ///< up, and this user may submit to it
  Seconds max_time = 0;      ///< MaxTime; 0 = unlimited
  std::vector<AcceleratorPool> pools;
};

struct Request {
  int count = 0;     ///< accelerators for the whole job
  int per_node = 0;  ///< accelerators each node must hold (--gres, --gpus-per-node); 0 for a per-job count
  int nodes = 1;     ///< nodes the job asks for (with per_node)
  std::string gres;  ///< GRES name as asked ("gpu")
  std::vector<std::string> types;       ///< allowed types; empty = any type
  Seconds time_limit = 0;               ///< 0 = not given
  std::vector<std::string> partitions;  ///< allowed partitions; empty = every partition of the snapshot
};

struct Options {
  std::vector<AcceleratorType> types;  ///< speeds; a type not listed has speed 1
  /// Groups of GRES names that may replace each other ({{"gpu", "npu"}}); a request may move within its group.
  std::vector<std::vector<std::string>> gres_equivalence;
  /// Run time assumed when neither the job nor the partition gives a time limit.
  Seconds default_time_limit = 3600;
};

/// One pool considered, for logs (DebugFlags=Priority) and tests.
struct Candidate {
  int partition = -1;  ///< index into the snapshot
  int pool = -1;       ///< index into its pools
  bool feasible = false;
  double wait = 0;  ///< seconds (feasible only)
  double run = 0;
  std::string why_not;  ///< when not feasible: "has 8 gpu:h200, job needs 16"
};

struct Decision {
  bool placed = false;  ///< false: no pool can ever hold the request (`reason` says why, for the user)
  int partition = -1;
  int pool = -1;
  std::string partition_name;
  std::string gres;
  std::string type;
  double wait = 0;  ///< predicted seconds until start
  double run = 0;   ///< predicted run time on the chosen type
  /// placed: "gpu:a100 in partition a100: start in ~0 s, run ~1 h (next best gpu:h200 in h200: ~2.5 h)";
  /// not placed: what the user should change, e.g. "no partition has 16 gpu (any type); most is 8 gpu:h200 in
  /// partition h200".
  std::string reason;
  std::vector<Candidate> candidates;
};

/// Chooses where the request completes earliest (see the model above). Never throws for any input.
Decision place(const Request& request, const std::vector<PartitionState>& partitions, const Options& options);

/// "45 s", "12 min", "2.5 h", "3.1 d": durations in decision reasons.
std::string format_duration(double seconds);

}  // namespace rlsched::placement
