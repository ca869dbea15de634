// The live cluster through libslurm (slurm/slurm.h; never squeue's text): jobs, nodes, partitions and Slurm's
// priority factors, read once and converted into the C snapshot the plugins build from slurmctld's own structs
// (rlsched.h: rlsched_cluster, rlsched_job; plugin/common/rlsched_snapshot.c), so that `rlsched explain` scores jobs
// through the same capi::to_pending_job -> job_view::build as site_factor/rlsched does.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "rlsched/job.h"
#include "rlsched/rlsched.h"
#include "rlsched/status.h"

namespace rlsched::cli::live {

/// An ended job's time suspended, which libslurm does not give whole: at its last resume (`last_resume`, job_info's
/// suspend_time; 0: never suspended) it had run `ran_before` (pre_sus_time) and ran on to `end`, so the rest of its
/// elapsed time was spent suspended (squeue's TimeUsed counts its run the same way). A job that ended while
/// suspended has its last suspension counted as run: libslurm cannot tell the two apart.
inline Seconds suspended_seconds(Seconds start, Seconds end, Seconds last_resume, Seconds ran_before) {
  if (last_resume <= 0 || start <= 0 || end < last_resume) return 0;
  const Seconds ran = ran_before + (end - last_resume);
  return end - start > ran ? end - start - ran : 0;
}

enum class JobPhase { kPending, kRunning, kFinished };

/// Slurm's priority factors of one job, weighted as sprio shows them.
struct PriorityFactors {
  double age = 0, fairshare = 0, job_size = 0, partition = 0, qos = 0, assoc = 0;
  std::int64_t site = 0;  ///< the SITE factor (site_factor/rlsched's scaled rank)
  std::int64_t nice = 0;  ///< the job's nice (sprio's NICE)
};

struct LiveJob {
  /// The engine's view; its strings point into this record and its partition indices into LiveCluster::cluster.
  rlsched_job c{};
  JobPhase phase = JobPhase::kFinished;
  std::string state;   ///< Slurm's state name: "PENDING", "RUNNING", "COMPLETED", ...
  std::string reason;  ///< Slurm's reason text ("Priority", "QOSMaxJobsPerUserLimit"); "None" when none
  std::string user, account, qos, name, comment, admin_comment, partition_list, node_list;
  std::string gres, gres_type;  ///< what c.gres / c.gres_type point at
  std::vector<std::int32_t> partitions;
  std::uint32_t priority = 0;
  Seconds submit = 0, eligible = 0;
  /// Slurm's start: when it started, or for a pending job the backfill plan's estimate (squeue --start); 0: none.
  Seconds start = 0;
  Seconds end = 0;                    ///< ended, or expected to end (start + limit)
  Seconds suspended = 0;  ///< an ended job's time suspended between its start and end (Slurm's tot_sus_time)
  std::vector<std::string> nodes;     ///< nodes it runs on
  std::vector<int> node_cpus;         ///< CPUs it holds on each of `nodes` (empty when libslurm does not say)
  bool has_factors = false;
  PriorityFactors factors;

  /// "gpu:h200:2, 8 cpus, 1 node, 1h00m": what it asks for (running jobs: what they hold).
  std::string request() const;
};

struct LiveNode {
  std::string name;
  bool usable = false;  ///< not down, drained, failing or powered down
};

class LiveCluster {
 public:
  /// Reads slurmctld's tables (slurm_conf: the slurm.conf libslurm reads; "" for SLURM_CONF or its default).
  /// \return IoError "cannot reach slurmctld ..." when it does not answer.
  static Result<std::unique_ptr<LiveCluster>> load(const std::string& slurm_conf);
  ~LiveCluster();
  LiveCluster(const LiveCluster&) = delete;
  LiveCluster& operator=(const LiveCluster&) = delete;

  Seconds now = 0;
  std::vector<LiveJob> jobs;
  std::vector<LiveNode> nodes;
  /// Partitions, accelerator pools and CPUs over usable nodes, as the plugins' snapshot has them.
  rlsched_cluster cluster{};
  /// slurm.conf's PriorityWeight* (what the factors are normalised by).
  double weight_age = 0, weight_fairshare = 0, weight_job_size = 0, weight_partition = 0, weight_qos = 0;
  /// slurm.conf's StateSaveLocation, where site_factor/rlsched keeps what ended jobs taught it ("" when unset).
  std::string state_save_location;

  const LiveJob* find(JobId id) const;
  /// Index of partition `name` in cluster.partitions, or -1.
  int partition_index(const std::string& name) const;
  /// The engine's views of every pending job, in `jobs` order (`pending_of[i]`: index into jobs).
  std::vector<rlsched_job> pending(std::vector<std::size_t>* pending_of = nullptr) const;

 private:
  LiveCluster() = default;
  std::deque<std::string> names_;  // partition and pool names the C structs point at
  std::vector<rlsched_partition> partitions_;
  std::vector<std::vector<rlsched_accel>> partition_pools_;
  std::vector<rlsched_accel> pools_;
};

}  // namespace rlsched::cli::live
