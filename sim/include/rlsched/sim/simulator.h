// The trace-driven discrete-event model of a Slurm cluster: the training ground and the judge of policies.
//
// What it models, as slurmctld does it:
//  - arrivals at submit time; priority = multifactor (age, fair-share, job size, partition, QOS, with the cluster's
//    weights) + site factor from the policy's Scorer, recomputed every PriorityCalcPeriod (priority/multifactor's
//    decay thread, where site_factor_p_update runs) and set at submit (site_factor_p_set);
//  - the main scheduler: jobs in priority order (higher partition PriorityTier first), each partition blocked for
//    lower-priority jobs once a job cannot start in it;
//  - the main scheduler removes the nodes of a partition where a job could not start for the rest of its pass
//    (slurmctld's fail_by_part: a blocked job of a partition spanning the cluster stops every other start);
//  - backfill "easy": a reservation for the highest-priority blocked job of each partition; a lower-priority job
//    starts early only if it delays no reservation (it ends, by its time limit, before the reservation starts, or it
//    uses only resources the reservation does not need); or backfill "slurm" (Backfill::kSlurm), sched/backfill's
//    own cycle;
//  - single-node jobs go to the node that fits with the fewest free CPUs (select/cons_tres's best fit);
//  - nodes with CPUs, memory and typed accelerators (GRES); typed, typeless and any-of accelerator requests; a job's
//    run time scales with the speed of the accelerator type it gets; multi-partition jobs;
//  - time limits (a job is killed at its limit: TIMEOUT); node failures from a schedule (running jobs on a failed
//    node are requeued and restart from scratch, as with JobRequeue=1);
//  - how a job that allows several accelerator types gets one (SimConfig::placement): left to the scheduler
//    (fastest free type, or type-blind first fit in node order), pinned at submit to the type the trace recorded or
//    to its fastest type, or pinned by job_submit/rlsched's predictive decision (rlsched/placement.h) made on the
//    simulator's own queue state, which may move a job of a portable class to an equivalent GRES name with the
//    device count its count_scale gives (PlacementSettings::gres_equivalence);
//  - preemption (SimConfig::preemption, rlsched/sim/preemption.h): none, Slurm's preempt/qos REQUEUE, or
//    checkpoint-aware preemption with grace, resume from checkpoint and restart overhead.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/energy.h"
#include "rlsched/job.h"
#include "rlsched/job_view.h"
#include "rlsched/placement.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/metrics.h"
#include "rlsched/sim/outcome.h"
#include "rlsched/sim/preemption.h"
#include "rlsched/status.h"

namespace rlsched::sim {

/// kEasy: one reservation per partition, for its highest-priority blocked job, on exactly the resources it needs.
/// kSlurm: sched/backfill as slurmctld 22.05 runs it (Cluster::backfill): a cycle every bf_interval seconds looks at
/// the pending jobs in priority order (up to bf_max_job_test), starts those that fit now on nodes no earlier job
/// has reserved over their time limit, and gives each of the others a reservation of the whole nodes it will
/// start on, over [start, start + limit) rounded down to bf_resolution, whatever partitions they are in.
enum class Backfill { kNone, kEasy, kSlurm };

/// How a job whose request allows several accelerator types (typeless or any-of) gets its type.
enum class Placement {
  kFastestFree,  ///< the job keeps all its types; the scheduler starts it on the fastest type free (default)
  kFirstFit,     ///< the job keeps all its types; tried in node order, type-blind (select/cons_tres first fit)
  kRecorded,     ///< pinned at submit to the type the trace recorded (Job::ran_on_type) when it is allowed
  kFastest,      ///< pinned at submit to its fastest allowed type ("fastest type only")
  kPredictive,   ///< pinned at submit where job_submit/rlsched predicts the earliest completion
};

const char* to_string(Placement placement);
/// "fastest-free", "first-fit", "recorded", "fastest", "predictive".
Result<Placement> parse_placement(const std::string& text);

/// The placement mode and what job_submit/rlsched's placement section would say (plugin_config.h).
struct PlacementSettings {
  Placement mode = Placement::kFastestFree;
  /// Partitions a pinned job may go to when it names none (empty: the partitions it was eligible for).
  std::vector<std::string> partitions;
  Seconds default_time_limit = 3600;
  /// kPredictive: rlsched.yaml placement.slack (placement::Options::slack): the job keeps every partition whose
  /// late-binding completion is within slack x the best's predicted completion and starts in whichever can start
  /// it first.
  double slack = placement::Options::kDefaultSlack;
  /// kPredictive: GRES names a job of a portable class may move between (rlsched.yaml gres_equivalence and
  /// job_classes[].gres_portable), as in job_submit/rlsched, with the same count_scale rule: a job moved to a type
  /// of another count_scale runs with the device count and GRES name job_submit/rlsched writes.
  std::vector<std::vector<std::string>> gres_equivalence{};
  std::vector<std::string> gres_portable_classes{};
};

/// A node that fails at `down` and returns at `up` (up < 0: stays down).
struct NodeFailure {
  int node = 0;
  Seconds down = 0;
  Seconds up = -1;
};

/// What the scheduler did, for tests and `rlsched explain`: job indices refer to the simulated job list.
struct ScheduleEvent {
  /// kPlacement: the job was pinned at submit (partition and accelerator_type say where). kPreempt: the job was
  /// chosen as a victim (signalled; its kRequeue follows after its grace time).
  enum class Kind { kStart, kBackfillStart, kReservation, kEnd, kRequeue, kPlacement, kPreempt };
  Kind kind = Kind::kStart;
  Seconds time = 0;
  int job = 0;
  Seconds reserved_start = 0;  ///< kReservation: when the job is expected to start
  int partition = -1;
  int accelerator_type = -1;
  /// kPlacement: the devices the job now asks for, of accelerator_type's GRES (its own count, or the count_scale
  /// move's).
  int accelerators = 0;
  /// kPlacement: every partition the job may start in, best first (one when pinned; with two or more the job
  /// asks for its GRES without a type, as job_submit/rlsched writes it).
  std::vector<int> partitions;
  /// kStart, kBackfillStart: the nodes the job starts on; kReservation under Backfill::kSlurm: the nodes kept for
  /// it (indices into Cluster::nodes, ascending).
  std::vector<int> nodes;
  /// kStart, kBackfillStart: the CPUs the job holds on each of `nodes` (same order).
  std::vector<int> node_cpus;
};

/// One call of the policy in the Slurm model, with the snapshot it was made on: a decay-thread tick (the whole
/// pending queue, site_factor_p_update) or one job at submit (site_factor_p_set). What a learning agent records
/// (its Scorer gives the scores, this says on what state and for which jobs), and what the parity tests replay
/// through the C entry points. Everything is valid during the call only.
struct ScoringDecision {
  Seconds now = 0;
  bool at_submit = false;
  const job_view::ClusterState& cluster;
  const std::vector<int>& jobs;                   ///< indices into the simulated job list, in batch order
  const std::vector<job_view::JobState>& states;  ///< the job view's inputs of each of them
  const ScoringContext& context;
  const std::vector<PendingJob>& views;  ///< what the scorer saw
  const std::vector<double>& scores;     ///< what it gave
  /// SimConfig::energy: where the energy rule ranks jobs[i] (energy::rank_now): kLast or kFirst replace its score
  /// by energy::ranked_score before it becomes a site factor. All kPolicy without an energy section.
  const std::vector<energy::Rank>& energy_rank;
};

struct SimConfig {
  Backfill backfill = Backfill::kEasy;
  std::vector<NodeFailure> failures;
  Seconds requeue_delay = 0;  ///< a requeued job (node failure or preemption) is eligible again this long after
  PreemptionSettings preemption;
  /// At most this many pending jobs are tried per backfill pass (Slurm bf_max_job_test); 0 = all.
  int bf_max_job_test = 0;
  /// Backfill::kEasy: skip a demand no smaller than one that found no room in the same pass and state (NoFitMemo,
  /// sim/src/resources.h). It changes no schedule, only how long a deep queue takes; false only to measure that
  /// (bench/sim_bench) and to test it.
  bool skip_known_no_fit = true;
  /// How long after a submit (or any change but a job's end) the main scheduling pass runs. Unset: 1 s under
  /// Backfill::kSlurm: slurmctld's background thread runs the pass a submit asks for on its next tick (it wakes
  /// about once a second; 0-1.3 s later on the lab, and sacct keeps whole seconds), at most once per the
  /// cluster's batch_sched_delay; 0 otherwise.
  std::optional<Seconds> main_pass_delay;
  /// How long after a job's end the main pass runs. Unset: 0. slurmctld calls schedule() itself from the RPC that
  /// reports the job's epilog complete, not through the throttled background thread; on the lab that came 0-2.8 s
  /// after the end (median 0.5 s), so in whole seconds the end's own second and the next are about as likely, and
  /// 0 agreed slightly better with four real runs than 1 (docs/fidelity.md).
  std::optional<Seconds> end_pass_delay;
  /// Backfill::kSlurm: the backfill thread wakes every bf_interval on a grid of its own; this many seconds after
  /// the first submit is on it (a replay of a real run can take slurmctld's). Unset: main_pass_delay.
  std::optional<Seconds> backfill_phase;
  PlacementSettings placement;
  /// rlsched.yaml's energy section (docs/energy.md), or nullptr: a deferrable job (EnergyConfig::deferrable of its
  /// QOS and class) arriving when energy::plan_start defers it becomes eligible at the planned begin time, as
  /// job_submit/rlsched's begin time makes it in Slurm, and it ranks last or first while energy::rank_now says so.
  const energy::EnergyConfig* energy = nullptr;
  /// Called now and then with the share of arrivals processed (0..1), for progress bars.
  std::function<void(double)> progress;
  /// Called for every start, reservation, end and requeue when set.
  std::function<void(const ScheduleEvent&)> observer;
  /// Called after every scoring call of the policy when set (the decision hook).
  std::function<void(const ScoringDecision&)> on_scoring;
};

/// What the simulator counted besides job outcomes.
struct SimCounters {
  std::size_t events = 0;
  std::size_t scheduling_passes = 0;
  std::size_t backfill_passes = 0;
  std::size_t backfilled_jobs = 0;
  std::size_t priority_updates = 0;  ///< batched scorer calls (decay-thread ticks)
  std::size_t requeues = 0;
  std::size_t preemptions = 0;
  std::size_t deferred = 0;  ///< jobs given a later begin time at submit (SimConfig::energy)
  /// Scheduling passes followed by a check of the simulator's invariants: every one in Debug builds and with
  /// RLSCHED_SIM_INVARIANTS (the asan-ubsan preset), none otherwise (the final check always runs).
  std::size_t invariant_checks = 0;
  std::map<std::string, std::size_t> rejections;  ///< reason -> jobs
};

struct SimResult {
  std::vector<JobOutcome> outcomes;  ///< one per input job, same order
  Metrics metrics;
  SimCounters counters;
};

/// Simulates `jobs` (any order; arrivals are processed by submit time, ties in input order) on `cluster`.
/// \return InvalidInput when the cluster is invalid, Internal when an invariant breaks (a bug).
Result<SimResult> simulate(const Cluster& cluster, const std::vector<Job>& jobs, const Scorer& scorer,
                           const SimConfig& config = {});

/// A failure schedule over [start, end) drawn from exponential inter-failure (MTBF per node) and repair (MTTR)
/// times, deterministic for a given seed.
std::vector<NodeFailure> random_failures(const Cluster& cluster, Seconds start, Seconds end, double mtbf_hours,
                                         double mttr_hours, std::uint64_t seed);

/// [first submit, latest submit + its run time or time limit): the span a failure schedule should cover.
std::pair<Seconds, Seconds> workload_span(const std::vector<Job>& jobs);

}  // namespace rlsched::sim
