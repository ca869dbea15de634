// The cluster a workload runs on: nodes with CPUs, memory and typed accelerators (GRES), partitions over them,
// accelerator types with relative speeds, QOS levels, and the multifactor priority weights of slurm.conf.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rlsched/job.h"
#include "rlsched/status.h"

namespace rlsched {

/// An accelerator model (Slurm GRES type): "h200" of GRES "gpu", "910b" of GRES "npu".
/// Speeds are relative throughput (higher is faster, 1.0 = reference); a job's run time on this type is
/// reference_run_time / speed. Per-class speeds override the default for jobs whose Job::job_class matches.
/// count_scale says how many devices of this type stand for one reference accelerator when a request moves between
/// types (2: a typeless request for 4 gets 8 of this type); 1 for most sites.
struct AcceleratorType {
  std::string name;
  std::string gres;  ///< GRES name this type belongs to ("gpu", "npu")
  double speed = 1.0;
  std::map<std::string, double> class_speed;
  double count_scale = 1.0;

  double speed_for(const std::string& job_class) const;
};

/// Accelerators of one type on one node.
struct GresCount {
  std::string name;  ///< "gpu"
  std::string type;  ///< "h200"; empty for untyped GRES
  int count = 0;

  friend bool operator==(const GresCount& a, const GresCount& b) {
    return a.name == b.name && a.type == b.type && a.count == b.count;
  }
  friend bool operator!=(const GresCount& a, const GresCount& b) { return !(a == b); }
};

struct Node {
  std::string name;
  int cpus = 1;
  std::int64_t mem_mb = 0;  ///< 0 = not tracked
  std::vector<GresCount> gres;
};

/// Slurm's own ceiling for a partition's PriorityJobFactor and PriorityTier.
inline constexpr int kMaxPartitionPriority = 65533;

struct Partition {
  std::string name;
  std::vector<int> nodes;        ///< indices into Cluster::nodes
  int priority_job_factor = 1;   ///< Slurm PriorityJobFactor (enters the partition factor)
  int priority_tier = 1;         ///< Slurm PriorityTier (higher tiers are scheduled first)
  Seconds max_time = 0;          ///< 0 = unlimited
  bool is_default = false;
};

struct Qos {
  std::string name;
  int priority = 0;
};

/// rlsched.yaml's score_scale when the file gives none, and so the simulator's weights.site: the value of the
/// shipped slurm_conf_examples/rlsched.yaml, under which the default model was trained and every protocol figure
/// measured (policy_models/README.md).
inline constexpr std::uint32_t kDefaultScoreScale = 100000;

/// Slurm's priority/multifactor weights (slurm.conf PriorityWeight*) and decay settings.
struct PriorityWeights {
  double age = 0;
  double fairshare = 0;
  double job_size = 0;
  double partition = 0;
  double qos = 0;
  /// Scale of the site factor: the policy score's rank share mapped to [0, site], as site_factor/rlsched writes it
  /// with rlsched.yaml's score_scale (kDefaultScoreScale without one; the CLI sets it from --config).
  double site = kDefaultScoreScale;
  Seconds max_age = 7 * 86400;            ///< PriorityMaxAge
  Seconds decay_half_life = 7 * 86400;    ///< PriorityDecayHalfLife
  Seconds calc_period = 300;              ///< PriorityCalcPeriod: how often priorities are recomputed
  bool favor_small = false;               ///< PriorityFavorSmall

  /// `site` as the whole-number scale site_factor_of takes (rounded, clamped to [0, 1e9]).
  std::uint32_t site_scale() const;
  bool multifactor_enabled() const { return age != 0 || fairshare != 0 || job_size != 0 || partition != 0 || qos != 0; }
  /// \return the weights of a common site configuration (Slurm's own defaults are all 0, i.e. FIFO):
  /// age 1000, fairshare 10000, job_size 100, partition 1000, qos 10000.
  static PriorityWeights Typical();
};

/// sched/backfill's settings (slurm.conf SchedulerParameters), used by the simulator's Backfill::kSlurm.
/// The defaults are Slurm 22.05's.
struct BackfillSettings {
  Seconds interval = 30;    ///< bf_interval: seconds between backfill cycles
  Seconds resolution = 60;  ///< bf_resolution: a reservation's start and end are multiples of it (rounded down)
  int max_job_test = 500;   ///< bf_max_job_test: pending jobs one cycle looks at
  /// batch_sched_delay (a main-scheduler parameter read from the same line): slurmctld's background thread runs
  /// the main pass a submit asked for at most once per this many seconds.
  Seconds batch_sched_delay = 3;
};

struct Cluster {
  std::string name = "cluster";
  std::vector<Node> nodes;
  std::vector<Partition> partitions;
  std::vector<AcceleratorType> accelerator_types;
  std::vector<Qos> qos;
  PriorityWeights priority;
  BackfillSettings backfill;
  /// slurm.conf SuspendTime: Slurm's power saving suspends a node idle this many seconds; -1 (absent, NONE,
  /// INFINITE or a negative value): never.
  Seconds suspend_time = -1;

  /// \return index of the partition with that name, or -1.
  int find_partition(const std::string& name) const;
  /// \return index of the default partition (the one marked default, else the first), or -1 when none.
  int default_partition() const;
  /// \return the accelerator type of that name (and GRES name when given), or nullptr.
  const AcceleratorType* find_type(const std::string& type, const std::string& gres = {}) const;
  int total_cpus() const;

  /// A homogeneous CPU-only cluster with one partition "batch" — what SWF traces assume.
  static Cluster Homogeneous(int nodes, int cpus_per_node);
};

/// Checks references and ranges: partition nodes exist, counts positive, speeds > 0, names unique.
/// \return Ok, or InvalidInput naming the first problem found.
Status validate(const Cluster& cluster);

}  // namespace rlsched
