// Checkpoint-aware preemption: what a job declares (how often it checkpoints and what a checkpoint costs), which
// running jobs may be preempted for an urgent one, in which order, and how long each gets to checkpoint first. One
// decision for preempt/rlsched (through the C ABI) and the simulator; docs/preemption.md.
//
// A job declares itself checkpointable in its comment: sbatch --comment=checkpoint:interval=30m,cost=90s. It then
// writes a checkpoint every `interval` of run time and on the checkpoint signal, and a checkpoint takes `cost`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rlsched/job.h"
#include "rlsched/status.h"

namespace rlsched::preemption {

struct Checkpoint {
  Seconds interval = 0;  ///< run time between periodic checkpoints
  Seconds cost = 0;      ///< time to write one
};

/// The word of a job comment that declares a checkpoint, without the "checkpoint:" prefix: "interval=30m,cost=90s".
/// \return nullopt when the comment declares nothing; InvalidInput with a message sbatch can show when the
/// declaration is malformed ("checkpoint:interval=30x: '30x' is not a duration: use 90s, 30m or 2h").
Result<std::optional<Checkpoint>> parse_checkpoint_comment(std::string_view comment);

/// The checkpoint a running or pending job's comment declares; nullopt when none, or a malformed one (job_submit
/// refused those at submit; a later edit declares nothing). A job is checkpointable exactly when this has a value.
std::optional<Checkpoint> declared_checkpoint(const char* comment);

/// rlsched.yaml's `preemption` section (docs/plugins.md).
struct Policy {
  /// A job is never preempted before it has run this long in its current run (no thrashing).
  Seconds min_run_time = 600;
  /// ... nor more than max_preemptions times within `window` (0: no cap).
  int max_preemptions = 2;
  Seconds window = 86400;
  /// Jobs of these QOS may be victims without a checkpoint declaration (they restart from scratch).
  std::vector<std::string> preemptable_qos;
  /// A checkpointable victim's grace time: its declared cost plus this margin.
  Seconds grace_margin = 30;
};

/// A running job as a preemption candidate.
struct Candidate {
  JobId id = 0;
  std::optional<Checkpoint> checkpoint;  ///< declared; nullopt: not checkpointable
  std::string qos;
  Seconds run_start = 0;  ///< start of its current run
  double size = 1;        ///< accelerators it holds (CPUs when none): lost work is weighed by it
  double rank = 0;        ///< its learned rank share in [0, 1] (site factor / score_scale); lower goes first
};

enum class Refusal {
  kNone,
  kNotCheckpointable,  ///< neither declared checkpointable nor of a preemptable QOS
  kTooYoung,           ///< has run less than min_run_time
  kCapReached,         ///< preempted max_preemptions times within the window already
};
const char* refusal_text(Refusal refusal);

/// When each job was preempted (kept per job, pruned to the policy's window): the preemption cap. preempt/rlsched
/// keeps a copy in slurmctld's StateSaveLocation so that the cap survives a restart (capi/preemption_history.h).
class History {
 public:
  void record(JobId job, Seconds when);
  /// Preemptions of `job` in (now - window, now].
  int recent(JobId job, Seconds now, Seconds window) const;
  /// Drops entries older than the window (call now and then; bounded memory in a long-running slurmctld).
  void prune(Seconds now, Seconds window);
  std::size_t jobs() const { return times_.size(); }
  /// Every job's preemption times, in the order recorded.
  const std::unordered_map<JobId, std::vector<Seconds>>& times() const { return times_; }

 private:
  std::unordered_map<JobId, std::vector<Seconds>> times_;
};

/// Why `job` may not be preempted at `now`, or kNone.
Refusal refusal(const Policy& policy, const Candidate& job, const History& history, Seconds now);

/// Run time lost if the job stopped now: since its last periodic checkpoint when checkpointable (checkpoints at
/// run_start + k * interval), else its whole current run.
Seconds run_time_lost(const Candidate& job, Seconds now);

/// Work lost weighed by size (accelerator-seconds, or CPU-seconds for CPU jobs).
double work_lost(const Candidate& job, Seconds now);

/// The victim order as one number, ascending: least work lost first (whole accelerator-minutes, at most 65,535 in
/// the upper 16 bits), then the lowest learned rank (lower 16 bits). Slurm's preempt plugins sort candidates by it
/// (PREEMPT_DATA_PRIO) and the select plugin preempts in that order until the urgent job fits.
std::uint32_t victim_order(const Candidate& job, Seconds now);

/// Seconds between the checkpoint signal and the requeue: the declared cost plus the margin; 0 for a job without
/// a checkpoint (it is requeued at once and restarts from scratch).
Seconds grace_time(const Policy& policy, const Candidate& job);

/// Indices of the candidates that may be preempted, in victim order (ties by index).
std::vector<std::size_t> victims_in_order(const Policy& policy, const std::vector<Candidate>& candidates,
                                          const History& history, Seconds now);

}  // namespace rlsched::preemption
