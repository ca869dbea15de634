// The event loop and scheduling passes behind rlsched::sim::simulate (see simulator.h for what is modelled).
#pragma once

#include <chrono>
#include <optional>
#include <queue>
#include <set>
#include <vector>

#include "fairshare.h"
#include "job_request.h"
#include "node_space.h"
#include "resources.h"
#include "rlsched/job_view.h"
#include "rlsched/predicted_run_times.h"
#include "rlsched/preemption.h"
#include "rlsched/sim/simulator.h"

namespace rlsched::sim {

/// Integrates idle resources over time, and the part of it during which a pending job would have fit the idle total.
class FragmentationMeter {
 public:
  void advance(Seconds elapsed) {
    const double dt = static_cast<double>(elapsed);
    idle_cpu_ += cpus_ * dt;
    idle_accel_ += accel_ * dt;
    if (cpu_fits_) wasted_cpu_ += cpus_ * dt;
    if (accel_fits_) wasted_accel_ += accel_ * dt;
  }
  void set(long long idle_cpus, bool cpu_fits, long long idle_accel, bool accel_fits) {
    cpus_ = static_cast<double>(idle_cpus);
    accel_ = static_cast<double>(idle_accel);
    cpu_fits_ = cpu_fits;
    accel_fits_ = accel_fits;
  }
  double cpu_share() const { return idle_cpu_ > 0 ? wasted_cpu_ / idle_cpu_ : 0; }
  double accel_share() const { return idle_accel_ > 0 ? wasted_accel_ / idle_accel_ : 0; }

 private:
  double cpus_ = 0, accel_ = 0;
  bool cpu_fits_ = false, accel_fits_ = false;
  double idle_cpu_ = 0, idle_accel_ = 0, wasted_cpu_ = 0, wasted_accel_ = 0;
};

/// Where a run starts when not from an empty cluster (a forecast, forecast.cpp): jobs already running on given
/// resources, the others arriving at the start at the earliest, nodes down, and when the run may stop.
struct SimStart {
  struct Running {
    int job = 0;  ///< index into the simulated job list
    int partition = 0;
    int type = -1;
    Allocation allocation;
    Seconds start = 0;
    Seconds end = 0;  ///< when it ends (> `now`)
  };
  Seconds now = 0;
  std::vector<Running> running;
  /// Per job index: when each job not running became eligible (the age factor counts from it); it arrives at
  /// max(eligible, now), its submit time kept for the queue order.
  std::vector<Seconds> eligible;
  std::vector<int> nodes_down;
  std::vector<int> targets;  ///< stop once all these jobs started (empty: run to the end)
  Seconds until = 0;         ///< ...or at the first event after this
};

class SlurmSim {
 public:
  /// `start`, when given, must outlive the simulator.
  SlurmSim(const Cluster& cluster, const std::vector<Job>& jobs, const Scorer& scorer, const SimConfig& config,
           const SimStart* start = nullptr);
  /// Runs to the end, or until SimStart's stop condition (then the result has no outcomes or metrics, only
  /// counters). Throws std::logic_error when an invariant breaks.
  SimResult run();

 private:
  enum class Phase : std::uint8_t { kFuture, kPending, kRunning, kDone };

  struct JobState {
    Phase phase = Phase::kFuture;
    Seconds eligible = 0;  ///< submit, or when a requeued job may run again
    double priority = 0;
    int partition = -1;
    int type = -1;
    Seconds start = -1;
    Seconds end = -1;           ///< actual end of the current run (by run time or time limit)
    Seconds expected_end = -1;  ///< start + time limit: what the scheduler believes
    bool times_out = false;
    std::uint32_t generation = 0;  ///< invalidates completion events of runs cut short by a node failure
    Allocation allocation;
    int allocated_cpus = 0;
    double saved_work = 0;   ///< reference work (run seconds at speed 1) kept by checkpoints: resumed from
    Seconds overhead = 0;    ///< restart overhead paid at the start of the current run
    Seconds signalled = -1;  ///< when the current run was chosen as a victim (its grace runs); -1: not
  };

  struct Completion {
    Seconds at;
    int job;
    std::uint32_t generation;
    bool operator>(const Completion& o) const { return at != o.at ? at > o.at : job > o.job; }
  };

  /// Where a blocked job will start if running jobs end at their time limits, and what is left over then.
  /// A job that only needs CPUs spread anywhere in the partition gets an aggregate reservation (a count of CPUs);
  /// any other job a per-node one (what each node has left at `start`).
  struct Reservation {
    int job = -1;
    int partition = -1;
    Seconds start = 0;
    bool per_node = false;
    long long extra_cpus = 0;  ///< aggregate: partition CPUs left at `start` after the reserved job
    FreeState extra;           ///< per node: free at `start` minus the reserved job's allocation
  };

  // Events.
  Seconds next_event_time();
  void complete_due(Seconds now);
  void apply_failures_due(Seconds now);
  void admit_arrivals_due(Seconds now);
  void admit_requeued_due(Seconds now);
  /// Placement::kPredictive: pins an arriving job where job_submit/rlsched would (predictive_placement.cpp).
  void place_at_submit(int job, Seconds now);
  void update_priorities(Seconds now);
  /// Requeues victims whose grace time is over.
  void end_graces_due(Seconds now);

  // Scheduling.
  void schedule(Seconds now);
  bool schedule_arrivals_only(Seconds now);
  bool try_start(int job, int partition, Seconds now, std::vector<Reservation>* reservations);
  // Backfill::kEasy (easy_backfill.cpp).
  void backfill(Seconds now);
  bool backfill_one(int job, Seconds now);
  bool reserve(int job, Seconds now, Reservation& out);
  // Backfill::kSlurm (slurm_backfill.cpp).
  void backfill_cycle(Seconds now);
  /// Starts `job` on partition `p` now, or reserves whole nodes for it where it can start first.
  /// \return true when it started.
  bool plan(int job, int p, Seconds now);
  /// bf_mask_: unlimited on every node but those reserved over any part of [from, to], which have nothing;
  /// usable_: the up nodes of partition p that are not.
  void mask_reserved(int p, Seconds from, Seconds to);
  /// Whether `job` fits in partition p on `free` within `bound` (any of its types, in order); the allocation in
  /// scratch_, its demand in scratch_demand_.
  bool fits_on(int job, int p, const FreeState& free, const FreeState& bound);
  /// select/cons_tres's will-run test on the usable nodes: the expected start (now when it fits now), with the
  /// allocation in scratch_; -1 when it never fits there.
  Seconds will_run(int job, int p, Seconds now);
  /// The main pass's fail_by_part: nodes of partition `p` take no more jobs until the pass ends.
  void remove_nodes(int p);
  /// Starts `job` on the allocation in scratch_.
  void start(int job, int partition, const Demand& demand, Seconds now, bool backfilled);
  void notify(ScheduleEvent::Kind kind, int job, Seconds now, Seconds reserved_start = 0,
              const std::vector<int>* reserved_nodes = nullptr);
  void finish(int job, Seconds now);
  enum class RequeueCause { kNodeFailure, kPreemption };
  void requeue(int job, Seconds now, RequeueCause cause);

  // Preemption (slurm_preemption.cpp).
  /// A pending job that may preempt under the configured mode.
  bool can_preempt(int job) const;
  /// Chooses victims for `job` that free just enough on a partition it may use and preempts them.
  /// \return true when the job started (no victim needed a grace time).
  bool preempt_for(int job, Seconds now);
  preemption::Candidate candidate(int job) const;
  /// Victim indices into `candidates` in the mode's order; notes when a candidate too young becomes eligible.
  std::vector<std::size_t> victim_order(const std::vector<preemption::Candidate>& candidates, Seconds now);
  void preempt(int victim, const preemption::Candidate& candidate, Seconds now);
  /// Whether the job resumes from its checkpoints (checkpoint mode and a declared checkpoint).
  bool resumes(int job) const;
  /// Run time left for `job` on accelerator type `type` (-1: none), restart overhead included.
  Seconds run_left(int job, int type) const;

  // Bookkeeping.
  /// `eligible`: when the job became eligible (the age factor counts from it), at most `now`.
  void make_pending(int job, Seconds now, Seconds eligible);
  /// SimStart: puts its running jobs on their resources and its nodes down.
  void start_from(const SimStart& start);
  void compact_pending();
  /// Refreshes view_cluster_, the snapshot job_view::build reads, from the live aggregates.
  void refresh_view_cluster();
  /// What site_factor/rlsched would copy out of slurmctld for `job` (job_view's inputs).
  job_view::JobState view_state(int job, Seconds now) const;
  /// Multifactor (the cluster's weights, the view's factors) plus the site factor: site_factor_of(score) at
  /// weights.site.
  double priority_of(const PendingJob& view, double score) const;
  /// SimConfig::energy: the job's deferral request at `now` (energy.h), or nullopt when it is not deferrable.
  std::optional<energy::StartRequest> deferral_request(int job, Seconds now) const;
  /// Scores batch_ into scores_ (the policy's one batched call), tells config_.on_scoring, then gives the jobs
  /// the energy rule ranks last or first (SimConfig::energy) energy::ranked_score.
  void score_batch(const std::vector<int>& jobs, Seconds now, bool at_submit);
  bool ranks_before(int a, int b) const;
  bool in_partition(int node, int partition) const;
  long long cpus_in(int partition, const Allocation& allocation) const;
  void take(const Allocation& allocation);
  void give(const Allocation& allocation);
  void adjust_aggregates(const Allocation& allocation, int sign);
  void set_node_up(int node, bool up);
  void measure_fragmentation();
  void check_invariants() const;

  const Cluster& cluster_;
  /// The jobs as job_submit/rlsched leaves them: a copy only when predictive placement may change a job's device
  /// count and GRES name (a type with count_scale != 1), else empty and jobs_ is the caller's.
  std::vector<Job> placed_jobs_;
  const std::vector<Job>& jobs_;
  const Scorer& scorer_;
  const SimConfig& config_;
  const Topology topology_;
  const FreeState idle_;  // every node up and idle: what "can this ever run" is checked against
  const int total_cpus_;
  const bool multifactor_;
  const bool ticks_;  ///< priorities change while jobs wait, so the decay thread must run
  /// The site factor's scale: weights.site, but 0 under the multifactor policy, which is Slurm without a site
  /// factor plugin (ranking its own score again would count the multifactor priority twice, at score_scale).
  const std::uint32_t site_scale_;

  std::vector<JobRequest> requests_;
  std::vector<JobState> state_;
  std::vector<JobOutcome> outcomes_;
  SimCounters counters_;

  FreeState free_;
  long long free_cpus_total_ = 0;   // up nodes only
  long long free_accel_total_ = 0;  // up nodes only
  int nodes_down_ = 0;
  std::vector<std::vector<int>> node_partitions_;
  std::vector<char> partition_whole_;                   // partition has every node: membership tests can be skipped
  std::vector<int> partition_free_cpus_;                // up nodes only
  std::vector<std::vector<int>> partition_free_accel_;  // [partition][type], up nodes only
  std::vector<long long> type_free_;                    // [type], up nodes only
  std::vector<long long> type_up_;                      // [type]: accelerators on up nodes

  const SimStart* start_;
  std::vector<Seconds> arrival_;    // [job]: when it arrives (its submit, or SimStart's max(eligible, now))
  std::vector<char> target_;        // [job]: SimStart::targets
  std::size_t targets_left_ = 0;
  std::vector<int> arrival_order_;  // job indices by arrival time
  std::size_t next_arrival_ = 0;
  /// A pending job in queue order. What backfill filters on is stored inline, so that scanning a long queue for
  /// the few jobs that fit reads one contiguous array. Entries of jobs that started stay until the next compaction.
  struct QueueEntry {
    int job;
    int cpus;
    Seconds limit;
    std::uint32_t generation;  // the job's generation when queued: a requeued job's old entry is stale
    int tier;                  // queue order keys, copies of the job's (see ranks_before)
    double priority;
    Seconds submit;
    bool operator<(const QueueEntry& o) const {  // queue order: see ranks_before
      if (tier != o.tier) return tier > o.tier;
      if (priority != o.priority) return priority > o.priority;
      if (submit != o.submit) return submit < o.submit;
      return job < o.job;
    }
  };
  bool live(const QueueEntry& e) const {
    return state_[e.job].phase == Phase::kPending && state_[e.job].generation == e.generation;
  }
  std::vector<QueueEntry> pending_;
  std::size_t pending_count_ = 0;
  std::size_t first_live_ = 0;       // no live entry before this index (jobs start mostly from the head)
  std::multiset<int> pending_cpus_;  // CPU requests of pending jobs (backfill and fragmentation need the smallest)
  std::size_t pending_accel_jobs_ = 0;
  std::set<std::pair<Seconds, int>> running_by_limit_;  // (expected end, job)
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;
  std::priority_queue<std::pair<Seconds, int>, std::vector<std::pair<Seconds, int>>, std::greater<>> requeued_;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> grace_ends_;
  std::set<Seconds> wakeups_;  // when a victim refused as too young becomes eligible: schedule again then
  preemption::History history_;
  std::vector<char> urgent_;  // job of a QOS that may preempt (queues first in every mode)
  std::vector<std::pair<Seconds, NodeFailure>> failure_events_;  // (time, failure) sorted; up events too
  std::size_t next_failure_ = 0;

  FairShare fairshare_;
  /// What each user's ended jobs predict, shown to a scorer that reads it (the plugin's engine does the same).
  PredictedRunTimes run_times_;
  Seconds next_tick_ = 0;
  Seconds last_event_ = 0;
  Seconds last_charge_ = 0;
  std::vector<double> sorted_scores_;  // last tick's scores, for the site factor of jobs arriving in between
  bool dirty_ = false;                 // something changed since the last scheduling pass
  // slurmctld's main pass has two triggers (see SimConfig::main_pass_delay): a job's end runs it at once
  // (end_delay_ later), anything else on the background thread's next tick (main_delay_), at most once per
  // batch_delay_.
  Seconds main_delay_ = 0;
  Seconds end_delay_ = 0;
  Seconds batch_delay_ = 0;
  Seconds main_due_ = -1;            // when the deferred main pass runs
  Seconds last_deferred_pass_ = -1;  // when the last deferred main pass ran
  bool ended_ = false;               // a job ended since the last pass
  bool only_arrivals_ = false;       // ...and it was only arrivals (the last full pass's blocks still hold)
  std::vector<int> new_arrivals_;

  // The policy's inputs (job_view): the cluster snapshot, and each job class's speed of every type.
  job_view::ClusterState view_cluster_;
  std::vector<std::vector<double>> class_speeds_;  // [class][type]
  std::vector<int> job_class_;                     // [job] -> index into class_speeds_

  // Scratch buffers reused across calls.
  std::size_t last_batch_size_ = 0;  // jobs of the last decay-thread batch
  std::vector<int> batch_jobs_;
  std::vector<job_view::JobState> batch_states_;  // only when config_.on_scoring is set
  std::vector<PendingJob> batch_;
  std::vector<double> scores_;
  std::vector<energy::Rank> energy_rank_;  // score_batch: where the energy rule ranks each of the batch
  Allocation scratch_;
  std::vector<int> top_blocked_;  // per partition: its highest-priority job that could not start, -1 if none
  std::vector<Reservation> reservations_;
  // EASY backfill's demands that did not fit within reservations_ on free_; cleared when either changes (take,
  // give, a node going up or down, a new backfill pass).
  NoFitMemo no_fit_;
  FragmentationMeter fragmentation_;
  FreeState main_mask_;  // the main pass's nodes left (unlimited) and removed (nothing); used once masking_
  bool masking_ = false;
  NodeSpace node_space_;  // Backfill::kSlurm: this cycle's reservations
  FreeState bf_mask_;
  std::vector<char> usable_;
  std::vector<int> up_nodes_;
  Demand scratch_demand_;
  Seconds next_backfill_ = 0;  // Backfill::kSlurm: when the next cycle runs
};

}  // namespace rlsched::sim
