// Preemption in the Slurm model: which mode, which QOS may preempt which, and how a workload gets urgent and
// checkpointable jobs for a study (docs/preemption.md, "In the simulator").
//
// Modes:
//  - none: no preemption (the default; the simulator behaves as it always did);
//  - requeue: Slurm's preempt/qos with PreemptMode=REQUEUE: a pending job of a QOS that may preempt, which cannot
//    start, takes the resources of running jobs of the QOS it preempts, in Slurm's order (lowest QOS priority, then
//    fewest nodes, then youngest first); victims are requeued at once and restart from scratch; no grace;
//  - checkpoint: preempt/rlsched: only the victims rlsched/preemption.h allows (checkpointable or of a preemptable
//    QOS, minimum run time, a cap per window), in its victim order; a checkpointable victim gets the grace time
//    (it keeps its resources meanwhile, writes a checkpoint at the signal, then is requeued) and resumes from that
//    checkpoint, losing only the checkpoint's cost; on a node failure it resumes from its last periodic checkpoint.
// In the modes none and requeue a requeued job restarts from scratch: Slurm as it is, without checkpoint-restart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rlsched/job.h"
#include "rlsched/preemption.h"
#include "rlsched/status.h"

namespace rlsched::sim {

enum class PreemptionMode { kNone, kRequeue, kCheckpoint };

const char* to_string(PreemptionMode mode);
/// "none", "requeue", "checkpoint".
Result<PreemptionMode> parse_preemption_mode(const std::string& text);

/// A QOS whose pending jobs may preempt running jobs of the QOS listed (sacctmgr: QOS urgent Preempt=normal).
/// Jobs of such a QOS also queue ahead of all others in every mode (the QOS priority an admin gives an urgent QOS),
/// so that the mode none is the fair baseline: urgent first in the queue, but no preemption.
struct PreemptRule {
  std::string qos;
  std::vector<std::string> preempts;
};

/// Slurm's default QOS: what a job without a QOS runs under.
inline constexpr const char* kDefaultQos = "normal";

struct PreemptionSettings {
  PreemptionMode mode = PreemptionMode::kNone;
  std::vector<PreemptRule> rules;
  /// The checkpoint mode's decision (minimum run time, cap, preemptable QOS, grace margin).
  preemption::Policy policy;
  /// Extra run time a job pays when it resumes from a checkpoint (reading it, warming up again).
  Seconds restart_overhead = 0;

  /// Whether jobs of `qos` queue first and may preempt.
  bool preemptor(const std::string& qos) const;
  /// Whether a pending job of QOS `urgent` may preempt a running job of QOS `victim` (empty: kDefaultQos).
  bool may_preempt(const std::string& urgent, const std::string& victim) const;
};

/// What a workload injection did, for the report.
struct InjectionReport {
  std::size_t urgent = 0;          ///< jobs marked with the urgent QOS
  std::size_t checkpointable = 0;  ///< jobs given the checkpoint declaration
};

/// Urgent jobs as they arise on GPU training clusters: short jobs (a recorded run of at most `max_run`: evaluations,
/// debugging runs, a deadline's last experiments) get QOS `urgent_qos` with probability `share`, drawn with `seed`;
/// every other job without a QOS gets kDefaultQos. Deterministic for a seed.
std::size_t mark_urgent(std::vector<Job>& jobs, double share, std::uint64_t seed,
                        const std::string& urgent_qos = "urgent", Seconds max_run = 7200);

/// Long training jobs checkpoint: a job not of `urgent_qos` whose time limit exceeds the checkpoint interval
/// declares `checkpoint` with probability `share` (drawn with `seed`, independently of mark_urgent's draw).
std::size_t declare_checkpoints(std::vector<Job>& jobs, const preemption::Checkpoint& checkpoint, double share,
                                std::uint64_t seed, const std::string& urgent_qos = "urgent");

}  // namespace rlsched::sim
