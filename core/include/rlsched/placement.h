// Placer: "which partition and accelerator type should this job use?" The decision job_submit/rlsched makes for a
// job that asks for accelerators without a type (--gres=gpu:4, --gpus=4) or with an any-of set (gpu:h200|a100:4).
// A pure function of the request and a snapshot of the partitions, so that the simulator makes the same decision
// from its own state (placement "predictive" in rlsched::sim; test/capi/placement_parity_test.cpp checks both agree).
//
// Model. For each candidate (partition, GRES, type) pool the job could use, the predicted completion is
//     wait + run,  run = time_limit / speed(type, job class)   (the time limit is read as the run time at speed 1)
//     wait = (pending_work + shortage * mean_remaining) / total
// where pending_work is the accelerator-seconds, on this pool's type, of jobs already queued for it (all counted as
// ahead of this one: the new job's priority is not known yet), shortage = max(0, count - idle) the accelerators
// that must first be freed, mean_remaining = running_work / busy the mean time left of the running jobs there, and
// total the pool's accelerators. A job that takes whole nodes (its per-node count, or a per-job count on the fewest
// nodes, equals the most on one node: an 8-GPU job on 8-GPU nodes) while fewer nodes than it needs are wholly idle
// waits for nodes to drain instead, when that is longer: missing * mean_remaining * H(max_per_node) / busy nodes (one
// node drains after the last of its jobs, H the harmonic number; the busy nodes drain at once). QueueLoad computes
// both work figures from a job list, at each job's class speed (the type's default speed for jobs of no class). An
// empty, idle pool gives wait 0. The pool with the earliest completion wins; ties go to the faster type, then to the
// pool with fewer accelerators (the more specific partition), then to the earlier partition. This is a queue estimate,
// not a schedule: it ignores backfill and priorities by design.
//
// The set. Slurm binds late: a job allowed several partitions starts in whichever can start it first. So the
// decision is a set, not a point: every pool whose late-binding completion is within `slack` times the best one's
// predicted completion (Options::slack), in order of predicted completion. A pool's late-binding completion is the
// latest the job may finish if it is allowed there too: it starts there no later than the earlier of the two
// predicted waits, then runs at that pool's speed (min(wait, best wait) + run). So a pool at least as fast as the
// best but predicted to free later is always in (if the prediction is wrong, it only helps), and a slower one only
// when its run fits within the slack. As long as Slurm 22.05 can be told exactly that set with one
// request: a partition list and a typeless GRES. That holds when each member's partition offers the request's GRES
// in one type only (a per-type partition: a typeless request there can only get that type), all members share the
// GRES name and the device count, and each partition and each type appears once (two partitions offering the same
// type are taken for the same accelerators: the snapshot has no node lists). A best pool in a mixed partition
// ("all") gives a set of one, pinned by type as before. docs/placement.md has the mechanism and the study that chose
// the slack.
//
// Counts. A request for `count` accelerators of `count_type` ("" for a typeless or any-of request: reference
// accelerators) needs ceil(count * count_scale(pool type) / count_scale(count_type)) devices of a pool's type: an
// admin may declare that 4 H200 stand for 8 of another type (count_scale 1 and 2).
#pragma once

#include <map>
#include <string>
#include <string_view>
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
  int idle_nodes = -1;      ///< nodes with every one of theirs idle; -1 = unknown (no whole-node term)
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
  std::string job_class;                ///< speed-table class (config job_classes); empty = per-type speeds
  std::string count_type;               ///< the type `count` is in (a typed request being re-mapped); empty = reference
};

struct Options {
  std::vector<AcceleratorType> types;  ///< speeds and count scales; a type not listed has speed 1 and scale 1
  /// Groups of GRES names that may replace each other ({{"gpu", "npu"}}); a request may move within its group.
  std::vector<std::vector<std::string>> gres_equivalence;
  /// Job classes whose software runs on every GRES name of its gres_equivalence group (rlsched.yaml
  /// job_classes[].gres_portable). A job of any other class, or of none, keeps its GRES name: CUDA code does not
  /// run on an NPU, so moving vendors is the job's choice, never a guess.
  std::vector<std::string> gres_portable_classes;
  /// Run time assumed when neither the job nor the partition gives a time limit.
  Seconds default_time_limit = 3600;
  /// A pool joins the decision's set when its late-binding completion (min(its wait, the best's wait) + its run) is
  /// at most `slack` times the best one's predicted completion; 1: the best and every pool at least as fast for
  /// this job.
  double slack = kDefaultSlack;
  /// The default of rlsched.yaml placement.slack and of the simulator (chosen by bench/placement_study; see
  /// docs/placement.md for the workloads it was tuned on).
  static constexpr double kDefaultSlack = 1.3;
};

/// A member of a decision's set: a partition and the one pool of the request's GRES in it.
struct SetMember {
  int partition = -1;  ///< index into the snapshot
  int pool = -1;       ///< index into its pools
  std::string partition_name;
  std::string type;
  double wait = 0, run = 0;  ///< predicted, seconds
};

/// One pool considered, for logs (DebugFlags=Priority) and tests.
struct Candidate {
  int partition = -1;  ///< index into the snapshot
  int pool = -1;       ///< index into its pools
  bool feasible = false;
  int count = 0;    ///< devices of the pool's type the request needs there
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
  int count = 0;       ///< devices of `type` for the whole job (the request's count scaled, see Counts above)
  int per_node = 0;    ///< devices per node when the request gave a per-node count
  double wait = 0;  ///< predicted seconds until start
  double run = 0;   ///< predicted run time on the chosen type
  /// placed: "gpu:a100 in partition a100: start in ~0 s, run ~1 h (next best gpu:h200 in h200: ~2.5 h)";
  /// not placed: what the user should change, e.g. "no partition has 16 gpu (any type); most is 8 gpu:h200 in
  /// partition h200".
  std::string reason;
  std::vector<Candidate> candidates;
  /// placed: where Slurm may start the job, best first (set.front() is partition/pool above). Two or more members:
  /// write the partitions as a list and the GRES without a type (gres:count); one: pin partition and type.
  std::vector<SetMember> set;
};

/// Accelerator work of the jobs already queued and running, summed by what they asked for (a handful of distinct
/// requests even in a queue of 10,000). Each request's work is spread over the accelerator types it may run on in
/// its partitions (all partitions when it names none), in proportion to how many of each type there are, and added
/// to every pool of those types in every partition (partitions overlap: a catch-all partition shows the same
/// accelerators as the per-type ones, so each view carries the same work, not a share of it). A typeless job given
/// a set of per-type partitions thus weighs on each type by its share, not whole on each. Work is converted to
/// seconds on each pool's type at the speed of the job's class there (the type's default speed for a job without
/// one).
class QueueLoad {
 public:
  explicit QueueLoad(const Options& options) : options_(options) {}
  /// A pending job asking `count` accelerators of `gres`, `types` an any-of set "h200|a100" ("" = any type), with
  /// time limit `limit` (read as its run time at speed 1), speed-table class `job_class` ("" = none), allowed in
  /// `partitions` (indices into the snapshot apply() gets; empty = any).
  void add_pending(std::string_view gres, std::string_view types, int count, double limit,
                   std::string_view job_class = {}, const std::vector<int>& partitions = {});
  /// A running job on `types` (normally its one allocated type), `elapsed` seconds into its time limit `limit`.
  void add_running(std::string_view gres, std::string_view types, int count, double limit, double elapsed,
                   std::string_view job_class = {});
  /// Adds the work to the pools' pending_work and running_work.
  void apply(std::vector<PartitionState>& partitions) const;

 private:
  struct Running {
    double count, limit, elapsed;
  };
  struct Work {
    std::string gres, types, job_class;
    std::vector<int> partitions;
    double pending = 0;            // sum of count * limit
    std::vector<Running> running;  // time left depends on each pool's speed: kept per job
  };
  Work& slot(std::string_view gres, std::string_view types, std::string_view job_class,
             const std::vector<int>& partitions);
  static constexpr std::size_t kScanLimit = 16;
  const Options& options_;
  std::vector<Work> work_;
  std::size_t last_ = 0;  // index of the Work hit last
  std::string key_;
  std::map<std::string, std::size_t, std::less<>> index_;  // built once work_ outgrows kScanLimit
};

/// How a per-job count sits on nodes when the job names no node count.
struct NodeShape {
  int nodes = 0;
  int per_node = 0;
};

/// `count` devices on nodes holding at most `per_node_max` each: on as few nodes as it takes, spread evenly (the
/// simulator's shape of a job without a node count, and what the wait estimate assumes for a per-job count; Slurm
/// may spread a --gpus job wider). {0, 0} when either is not positive.
NodeShape fewest_nodes(int count, int per_node_max);

/// Whether a job of `job_class` may be moved to another GRES name of its equivalence group.
bool may_change_gres(const Options& options, std::string_view job_class);

/// Whether `type` is in the any-of set `types` ("h200|a100"; "" allows any type). No allocation.
bool type_allowed(std::string_view types, std::string_view type);

/// `count` accelerators of type `from` (reference accelerators when `from` is empty) as devices of type `to`:
/// ceil(count * count_scale(to) / count_scale(from)), at least 1 for a positive count.
int scaled_count(const Options& options, int count, std::string_view gres_from, std::string_view from,
                 std::string_view gres_to, std::string_view to);

/// Speed of `type` of GRES `gres` for jobs of `job_class` under `options` (1 when the type is not listed).
double speed_of(const Options& options, std::string_view gres, std::string_view type, const std::string& job_class = {});

/// Chooses where the request completes earliest (see the model above). Never throws for any input.
Decision place(const Request& request, const std::vector<PartitionState>& partitions, const Options& options);

/// "45 s", "12 min", "2.5 h", "3.1 d": durations in decision reasons.
std::string format_duration(double seconds);

}  // namespace rlsched::placement
