#include "slurm_sim.h"

#include "text/type_set.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "job_placement.h"
#include "rlsched/site_factor.h"

namespace rlsched::sim {
namespace {

/// Added to the queue tier of jobs of a QOS that may preempt: they queue ahead of every other job.
constexpr int kUrgentTier = 1 << 20;

#define SIM_CHECK(condition, ...)                                       \
  do {                                                                  \
    if (!(condition)) throw std::logic_error(fmt::format(__VA_ARGS__)); \
  } while (0)

bool placement_may_scale_counts(const Cluster& cluster, const SimConfig& config) {
  if (config.placement.mode != Placement::kPredictive) return false;
  return std::any_of(cluster.accelerator_types.begin(), cluster.accelerator_types.end(),
                     [](const AcceleratorType& t) { return t.count_scale != 1.0; });
}

}  // namespace

SlurmSim::SlurmSim(const Cluster& cluster, const std::vector<Job>& jobs, const Scorer& scorer, const SimConfig& config,
                   const SimStart* start)
    : cluster_(cluster),
      placed_jobs_(placement_may_scale_counts(cluster, config) ? jobs : std::vector<Job>()),
      jobs_(placement_may_scale_counts(cluster, config) ? placed_jobs_ : jobs),
      scorer_(scorer),
      config_(config),
      topology_(cluster),
      idle_(FreeState::AllFree(topology_)),
      total_cpus_(cluster.total_cpus()),
      multifactor_(cluster.priority.multifactor_enabled()),
      ticks_(multifactor_ || !scorer.is_static()),
      site_scale_(scorer.name() == "multifactor" ? 0 : cluster.priority.site_scale()),
      start_(start),
      fairshare_(0, cluster.priority.decay_half_life) {
  std::unordered_map<std::string, int> users;
  for (const Job& job : jobs) users.emplace(job.user, static_cast<int>(users.size()));
  fairshare_ = FairShare(users.size(), cluster.priority.decay_half_life);

  const FreeState& idle = idle_;
  requests_.reserve(jobs.size());
  urgent_.resize(jobs.size());
  outcomes_.resize(jobs.size());
  state_.resize(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job& job = jobs[i];
    requests_.push_back(make_request(cluster, topology_, idle, job, users.at(job.user)));
    apply_static_placement(cluster, topology_, idle, job, config.placement, requests_.back());
    urgent_[i] = config.preemption.preemptor(job.qos) ? 1 : 0;
    if (urgent_[i]) requests_.back().tier += kUrgentTier;
    JobOutcome& o = outcomes_[i];
    o.job = i;
    o.submit = job.submit;
    o.cpus = job.cpus;
    o.accelerators = job.accel.count;
  }

  free_ = idle;
  free_cpus_total_ = total_cpus_;
  for (int count : topology_.slot_count) free_accel_total_ += count;
  type_free_.assign(cluster.accelerator_types.size(), 0);
  for (std::size_t s = 0; s < topology_.slot_count.size(); ++s)
    type_free_[topology_.slot_type[s]] += topology_.slot_count[s];
  type_up_ = type_free_;
  // Each job class's speed on every type, looked up once: the job view reads them per type.
  std::unordered_map<std::string, int> classes;
  job_class_.reserve(jobs.size());
  for (const Job& job : jobs) {
    const auto [it, added] = classes.emplace(job.job_class, static_cast<int>(class_speeds_.size()));
    if (added) {
      std::vector<double> speeds;
      for (const AcceleratorType& t : cluster.accelerator_types) speeds.push_back(t.speed_for(job.job_class));
      class_speeds_.push_back(std::move(speeds));
    }
    job_class_.push_back(it->second);
  }
  view_cluster_.partitions.resize(cluster.partitions.size());
  for (const AcceleratorType& t : cluster.accelerator_types) view_cluster_.pools.push_back({t.gres, t.name, 0, 0});
  for (job_view::PartitionState& part : view_cluster_.partitions) part.pools = view_cluster_.pools;
  node_partitions_.resize(topology_.node_count());
  partition_free_cpus_.assign(cluster.partitions.size(), 0);
  partition_free_accel_.assign(cluster.partitions.size(), std::vector<int>(cluster.accelerator_types.size(), 0));
  for (std::size_t p = 0; p < cluster.partitions.size(); ++p) {
    for (int n : topology_.partition_nodes[p]) {
      node_partitions_[n].push_back(static_cast<int>(p));
      partition_free_cpus_[p] += topology_.cpus[n];
      for (int s = topology_.slot_begin[n]; s < topology_.slot_begin[n + 1]; ++s)
        partition_free_accel_[p][topology_.slot_type[s]] += topology_.slot_count[s];
    }
  }

  for (const auto& nodes : topology_.partition_nodes)
    partition_whole_.push_back(static_cast<int>(nodes.size()) == topology_.node_count() ? 1 : 0);

  arrival_.resize(jobs.size());
  target_.assign(jobs.size(), 0);
  std::vector<char> running(jobs.size(), 0);
  for (std::size_t i = 0; i < jobs.size(); ++i)
    arrival_[i] = start ? std::max(start->eligible.at(i), start->now) : jobs[i].submit;
  if (start) {
    for (const SimStart::Running& r : start->running) running.at(r.job) = 1;
    for (int job : start->targets) {
      SIM_CHECK(!running.at(job), "target job {} is running", jobs[job].id);
      targets_left_ += target_[job] ? 0 : 1;
      target_[job] = 1;
    }
  }
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (!running[i]) arrival_order_.push_back(static_cast<int>(i));
  std::stable_sort(arrival_order_.begin(), arrival_order_.end(),
                   [&](int a, int b) { return arrival_[a] < arrival_[b]; });

  for (const NodeFailure& f : config.failures) {
    SIM_CHECK(f.node >= 0 && f.node < topology_.node_count(), "failure schedule names node index {} of {}", f.node,
              topology_.node_count());
    failure_events_.push_back({f.down, NodeFailure{f.node, f.down, -1}});
    if (f.up >= 0) failure_events_.push_back({f.up, NodeFailure{f.node, -1, f.up}});
  }
  std::stable_sort(failure_events_.begin(), failure_events_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });

  if (start) {
    last_charge_ = start->now;
    next_tick_ = start->now;  // the decay thread has ranked the queue already: rank it at the start
    next_backfill_ = start->now;
  } else if (!arrival_order_.empty()) {
    last_charge_ = jobs[arrival_order_.front()].submit;
    next_tick_ = last_charge_ + std::max<Seconds>(cluster.priority.calc_period, 1);
    next_backfill_ = last_charge_;
  }
  main_delay_ = config.main_pass_delay.value_or(config.backfill == Backfill::kSlurm ? 1 : 0);
  end_delay_ = config.end_pass_delay.value_or(0);
  batch_delay_ = main_delay_ > 0 ? cluster.backfill.batch_sched_delay : 0;
  // The backfill thread's grid is slurmctld's own; by default phased so that the first job meets the main pass
  // first.
  next_backfill_ += config.backfill_phase.value_or(main_delay_);
  if (start) start_from(*start);
}

void SlurmSim::start_from(const SimStart& start) {
  for (const SimStart::Running& r : start.running) {
    JobState& s = state_[r.job];
    SIM_CHECK(s.phase == Phase::kFuture, "job {} given twice", jobs_[r.job].id);
    SIM_CHECK(r.end > start.now, "running job {} ends at {}, not after the start {}", jobs_[r.job].id, r.end,
              start.now);
    s.phase = Phase::kRunning;
    s.partition = r.partition;
    s.type = r.type;
    s.start = r.start;
    s.allocation = r.allocation;
    for (const Grant& g : s.allocation) s.allocated_cpus += g.cpus;
    take(s.allocation);
    s.end = r.end;
    s.expected_end = std::max(r.start + requests_[r.job].limit, r.end);
    running_by_limit_.emplace(s.expected_end, r.job);
    completions_.push(Completion{s.end, r.job, s.generation});
  }
  for (int node : start.nodes_down) set_node_up(node, false);
}

SimResult SlurmSim::run() {
  Seconds last = start_ ? start_->now : arrival_order_.empty() ? 0 : arrival_[arrival_order_.front()];
  std::size_t reported = 0;
  bool stopped = false;
  for (;;) {
    const Seconds now = next_event_time();
    if (now == kNever) break;
    if (start_ && (now > start_->until || (!start_->targets.empty() && targets_left_ == 0))) {
      stopped = true;
      break;
    }
    ++counters_.events;
    fragmentation_.advance(now - last);
    last = now;
    if (next_backfill_ < now) {
      const Seconds interval = std::max<Seconds>(cluster_.backfill.interval, 1);
      next_backfill_ += (now - next_backfill_ + interval - 1) / interval * interval;
    }
    if (config_.backfill == Backfill::kSlurm && pending_count_ > 0 && now == next_backfill_) {
      // The backfill thread wakes at the start of its second (on the lab 0.03 s past it), so it sees the queue and
      // nodes as they were before the ends and submits of that second.
      if (ticks_ && now >= next_tick_) update_priorities(now);
      backfill_cycle(now);
      measure_fragmentation();
    }
    complete_due(now);
    end_graces_due(now);
    apply_failures_due(now);
    admit_arrivals_due(now);
    admit_requeued_due(now);
    while (!wakeups_.empty() && *wakeups_.begin() <= now) {
      wakeups_.erase(wakeups_.begin());
      dirty_ = true;
      only_arrivals_ = false;
    }
    if (ticks_ && pending_count_ > 0 && now >= next_tick_) update_priorities(now);
    const Seconds delay = ended_ ? end_delay_ : main_delay_;
    if (dirty_ && main_due_ != now && delay > 0) {
      // slurmctld's main pass runs after the event that asks for it, not in the same instant: defer it (and
      // whatever else happens meanwhile); a submit's to the background thread's tick, at most once per
      // batch_sched_delay.
      if (main_due_ < now) {
        main_due_ = now + delay;
        if (!ended_ && last_deferred_pass_ >= 0) main_due_ = std::max(main_due_, last_deferred_pass_ + batch_delay_);
        wakeups_.insert(main_due_);
      }
      dirty_ = false;
    }
    if (dirty_) {
      if (main_due_ == now) last_deferred_pass_ = now;
      ended_ = false;
      schedule(now);
      measure_fragmentation();
#if !defined(NDEBUG) || defined(RLSCHED_SIM_INVARIANTS)
      check_invariants();
      ++counters_.invariant_checks;
#endif
    }
    if (config_.progress && next_arrival_ >= reported + 512) {
      reported = next_arrival_;
      config_.progress(static_cast<double>(next_arrival_) /
                       static_cast<double>(std::max<std::size_t>(jobs_.size(), 1)));
    }
  }

  check_invariants();
  if (stopped) {
    SimResult result;
    result.counters = std::move(counters_);
    return result;
  }
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    JobOutcome& o = outcomes_[j];
    if (state_[j].phase == Phase::kPending || state_[j].phase == Phase::kFuture) {
      if (o.state != JobEnd::kRejected) o.state = JobEnd::kUnfinished;
    }
    SIM_CHECK(state_[j].phase != Phase::kRunning, "job {} still running after the last event", jobs_[j].id);
  }

  SimResult result;
  result.metrics = compute_metrics(jobs_, outcomes_, total_cpus_, cluster_.accelerator_types, topology_.type_capacity);
  result.metrics.fragmentation = fragmentation_.cpu_share();
  result.metrics.accel_fragmentation = fragmentation_.accel_share();
  result.outcomes = std::move(outcomes_);
  result.counters = std::move(counters_);
  if (config_.progress) config_.progress(1.0);
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// Events

Seconds SlurmSim::next_event_time() {
  Seconds t = kNever;
  if (next_arrival_ < arrival_order_.size()) t = arrival_[arrival_order_[next_arrival_]];
  while (!completions_.empty() && completions_.top().generation != state_[completions_.top().job].generation)
    completions_.pop();  // a run cut short by a node failure
  if (!completions_.empty()) t = std::min(t, completions_.top().at);
  if (!requeued_.empty()) t = std::min(t, requeued_.top().first);
  while (!grace_ends_.empty() && grace_ends_.top().generation != state_[grace_ends_.top().job].generation)
    grace_ends_.pop();  // the victim was requeued by a node failure meanwhile
  if (!grace_ends_.empty()) t = std::min(t, grace_ends_.top().at);
  if (pending_count_ == 0) wakeups_.clear();
  if (!wakeups_.empty()) t = std::min(t, *wakeups_.begin());
  if (next_failure_ < failure_events_.size()) {
    // Failures matter only while something can still happen; a trailing schedule does not keep the clock running.
    if (t != kNever || pending_count_ > 0) t = std::min(t, failure_events_[next_failure_].first);
  }
  if (ticks_ && pending_count_ > 0) t = std::min(t, std::max(next_tick_, last_event_));
  // The backfill thread wakes every bf_interval whether or not anything changed (run() keeps next_backfill_ on
  // that grid, at or after the last event).
  if (config_.backfill == Backfill::kSlurm && pending_count_ > 0) t = std::min(t, next_backfill_);
  if (t != kNever) last_event_ = t;
  return t;
}

void SlurmSim::complete_due(Seconds now) {
  while (!completions_.empty() && completions_.top().at <= now) {
    const Completion c = completions_.top();
    completions_.pop();
    if (c.generation != state_[c.job].generation) continue;
    finish(c.job, c.at);
  }
}

void SlurmSim::apply_failures_due(Seconds now) {
  while (next_failure_ < failure_events_.size() && failure_events_[next_failure_].first <= now) {
    const NodeFailure& f = failure_events_[next_failure_++].second;
    if (f.down >= 0) {
      std::vector<int> victims;
      for (const auto& [expected_end, job] : running_by_limit_)
        for (const Grant& g : state_[job].allocation)
          if (g.node == f.node) {
            victims.push_back(job);
            break;
          }
      for (int job : victims) requeue(job, now, RequeueCause::kNodeFailure);
      set_node_up(f.node, false);
    } else {
      set_node_up(f.node, true);
    }
    dirty_ = true;
    only_arrivals_ = false;
  }
}

void SlurmSim::admit_arrivals_due(Seconds now) {
  while (next_arrival_ < arrival_order_.size() && arrival_[arrival_order_[next_arrival_]] <= now) {
    const int job = arrival_order_[next_arrival_++];
    const JobRequest& r = requests_[job];
    if (!r.rejection.empty()) {
      outcomes_[job].state = JobEnd::kRejected;
      state_[job].phase = Phase::kDone;
      ++counters_.rejections[r.rejection];
      continue;
    }
    if (config_.placement.mode == Placement::kPredictive) place_at_submit(job, now);
    // job_submit/rlsched's begin time: a deferred job is not eligible until then (Slurm: reason BeginTime).
    if (const auto request = deferral_request(job, now)) {
      const energy::StartPlan plan = energy::plan_start(*config_.energy, *request);
      if (plan.deferred) {
        requeued_.emplace(plan.begin, job);
        ++counters_.deferred;
        continue;
      }
    }
    make_pending(job, now, start_ ? std::min(start_->eligible[job], now) : now);
  }
}

void SlurmSim::admit_requeued_due(Seconds now) {
  while (!requeued_.empty() && requeued_.top().first <= now) {
    const int job = requeued_.top().second;
    requeued_.pop();
    make_pending(job, now, now);
  }
}

/// The decay thread: charge usage, decay it, rescore every pending job in one batch, re-sort the queue.
void SlurmSim::update_priorities(Seconds now) {
  fairshare_.decay(now - last_charge_);
  for (const auto& [expected_end, job] : running_by_limit_)
    fairshare_.charge(requests_[job].user, static_cast<double>(jobs_[job].cpus) *
                                               static_cast<double>(now - std::max(state_[job].start, last_charge_)));
  last_charge_ = now;
  next_tick_ = now + std::max<Seconds>(cluster_.priority.calc_period, 1);
  ++counters_.priority_updates;

  compact_pending();
  batch_jobs_.clear();
  for (const QueueEntry& e : pending_) batch_jobs_.push_back(e.job);
  score_batch(batch_jobs_, now, false);
  if (multifactor_) {
    sorted_scores_ = scores_;
    std::sort(sorted_scores_.begin(), sorted_scores_.end());
  }
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    pending_[i].priority = priority_of(batch_[i], scores_[i]);
    state_[pending_[i].job].priority = pending_[i].priority;
  }
  std::sort(pending_.begin(), pending_.end());
  dirty_ = true;
  only_arrivals_ = false;
}

// ---------------------------------------------------------------------------------------------------------------
// Scheduling

void SlurmSim::schedule(Seconds now) {
  dirty_ = false;
  ++counters_.scheduling_passes;
  if (only_arrivals_ && schedule_arrivals_only(now)) {
    new_arrivals_.clear();
    return;
  }
  new_arrivals_.clear();
  only_arrivals_ = true;

  // The main scheduler: priority order, each partition blocked for lower-priority jobs at its first failure.
  const int partitions = static_cast<int>(cluster_.partitions.size());
  top_blocked_.assign(partitions, -1);
  int blocked = 0;
  while (first_live_ < pending_.size() && !live(pending_[first_live_])) ++first_live_;
  // Jobs that may preempt (the first tier) are tried even when every partition is blocked.
  for (std::size_t i = first_live_; i < pending_.size() && (blocked < partitions || pending_[i].tier >= kUrgentTier);
       ++i) {
    if (!live(pending_[i])) continue;
    const int job = pending_[i].job;
    bool started = false;
    // A job that may preempt is tried everywhere: Slurm's backfill would try it, with preemption, past a block.
    const bool urgent = can_preempt(job);
    for (int p : requests_[job].partitions) {
      if (top_blocked_[p] >= 0 && !urgent) continue;
      if (try_start(job, p, now, nullptr)) {
        started = true;
        break;
      }
    }
    if (!started && urgent) started = preempt_for(job, now);
    if (started) continue;
    for (int p : requests_[job].partitions) {
      if (top_blocked_[p] >= 0) continue;
      top_blocked_[p] = job;
      ++blocked;
      remove_nodes(p);
    }
  }
  masking_ = false;
  reservations_.clear();
  if (config_.backfill == Backfill::kEasy && blocked > 0) backfill(now);
  if (pending_.size() > 2 * pending_count_ + 64) compact_pending();
}

/// Since the last full pass only jobs arrived: nothing that was blocked can start now, so unless a newcomer outranks
/// a partition's blocked job (or lands in a partition nothing blocks) only the newcomers need a backfill test,
/// against the reservations already made. \return false when a full pass is needed.
bool SlurmSim::schedule_arrivals_only(Seconds now) {
  for (int job : new_arrivals_) {
    if (state_[job].phase != Phase::kPending) continue;
    if (can_preempt(job)) return false;
    for (int p : requests_[job].partitions)
      if (top_blocked_[p] < 0 || ranks_before(job, top_blocked_[p])) return false;
  }
  if (config_.backfill == Backfill::kEasy) {
    ++counters_.backfill_passes;
    no_fit_.clear();
    for (int job : new_arrivals_)
      if (state_[job].phase == Phase::kPending) backfill_one(job, now);
  }
  return true;
}

bool SlurmSim::try_start(int job, int p, Seconds now, std::vector<Reservation>* reservations) {
  const Job& j = jobs_[job];
  const JobRequest& r = requests_[job];
  if (partition_free_cpus_[p] < j.cpus) return false;
  const Seconds ends = now + r.limit;
  const FreeState* bound = reservations == nullptr && masking_ ? &main_mask_ : nullptr;
  if (reservations != nullptr) {
    for (const Reservation& res : *reservations) {
      if (ends <= res.start) continue;
      if (!res.per_node && res.partition == p && j.cpus > res.extra_cpus) return false;
      if (res.per_node && bound == nullptr) bound = &res.extra;
    }
  }
  const bool memo = reservations != nullptr && config_.skip_known_no_fit;
  for (int type : r.types) {
    if (type >= 0 && partition_free_accel_[p][type] < j.accel.count) continue;
    const Demand d = make_demand(topology_, j, p, type);
    if (type >= 0 && d.nodes == 0) continue;
    if (memo && no_fit_.known(p, bound, d)) continue;
    if (!find_allocation(topology_, free_, bound, p, d, scratch_)) {
      if (memo) no_fit_.add(p, bound, d);
      continue;
    }
    if (reservations != nullptr) {
      // Backfill: a job still running at a reservation's start may use only what that reservation leaves over.
      bool delays_none = true;
      for (const Reservation& res : *reservations) {
        if (ends <= res.start) continue;
        if (!res.per_node) {
          delays_none = delays_none && cpus_in(res.partition, scratch_) <= res.extra_cpus;
        } else if (&res.extra != bound) {
          for (const Grant& g : scratch_)
            if (res.extra.cpus[g.node] < g.cpus || res.extra.mem[g.node] < g.mem ||
                (g.slot >= 0 && res.extra.slot_free[g.slot] < g.accel))
              delays_none = false;
        }
      }
      if (!delays_none) continue;
      for (Reservation& res : *reservations) {
        if (ends <= res.start) continue;
        if (res.per_node) {
          res.extra.take(scratch_);
        } else {
          res.extra_cpus -= cpus_in(res.partition, scratch_);
        }
      }
    }
    start(job, p, d, now, reservations != nullptr);
    return true;
  }
  return false;
}

void SlurmSim::start(int job, int p, const Demand& demand, Seconds now, bool backfilled) {
  JobState& s = state_[job];
  const JobRequest& r = requests_[job];
  s.phase = Phase::kRunning;
  s.partition = p;
  s.type = demand.type;
  s.start = now;
  s.allocation = scratch_;
  s.allocated_cpus = 0;
  for (const Grant& g : s.allocation) s.allocated_cpus += g.cpus;
  take(s.allocation);
  s.overhead = s.saved_work > 0 ? config_.preemption.restart_overhead : 0;
  const Seconds run = run_left(job, demand.type);
  s.times_out = run > r.limit;
  s.end = now + std::min(run, r.limit);
  s.expected_end = now + r.limit;
  running_by_limit_.emplace(s.expected_end, job);
  completions_.push(Completion{s.end, job, s.generation});
  notify(backfilled ? ScheduleEvent::Kind::kBackfillStart : ScheduleEvent::Kind::kStart, job, now);
  --pending_count_;
  pending_cpus_.erase(pending_cpus_.find(jobs_[job].cpus));
  if (jobs_[job].accel.count > 0) --pending_accel_jobs_;
  if (target_[job]) {
    target_[job] = 0;
    --targets_left_;
  }
}

void SlurmSim::finish(int job, Seconds now) {
  JobState& s = state_[job];
  SIM_CHECK(s.phase == Phase::kRunning, "job {} finished while not running", jobs_[job].id);
  give(s.allocation);
  running_by_limit_.erase({s.expected_end, job});
  fairshare_.charge(requests_[job].user,
                    static_cast<double>(jobs_[job].cpus) * static_cast<double>(now - std::max(s.start, last_charge_)));
  s.phase = Phase::kDone;
  JobOutcome& o = outcomes_[job];
  SIM_CHECK(o.state == JobEnd::kUnfinished, "job {} ended twice", jobs_[job].id);
  const double held = static_cast<double>(now - s.start);
  const double useful = static_cast<double>(std::max<Seconds>(now - s.start - s.overhead, 0));
  o.allocated_cpu_seconds += held * jobs_[job].cpus;
  o.useful_cpu_seconds += useful * jobs_[job].cpus;
  if (s.type >= 0) {
    o.allocated_accelerator_seconds += held * jobs_[job].accel.count;
    o.useful_accelerator_seconds += useful * jobs_[job].accel.count;
  }
  run_times_.ended(jobs_[job].user, requests_[job].limit, now - s.start);
  o.start = s.start;
  o.end = now;
  o.state = s.times_out ? JobEnd::kTimeout : JobEnd::kCompleted;
  o.partition = s.partition;
  o.accelerator_type = s.type;
  o.nodes.clear();
  for (const Grant& g : s.allocation)
    if (std::find(o.nodes.begin(), o.nodes.end(), g.node) == o.nodes.end()) o.nodes.push_back(g.node);
  std::sort(o.nodes.begin(), o.nodes.end());
  dirty_ = true;
  ended_ = true;
  only_arrivals_ = false;
  notify(ScheduleEvent::Kind::kEnd, job, now);
}

void SlurmSim::requeue(int job, Seconds now, RequeueCause cause) {
  JobState& s = state_[job];
  const Job& j = jobs_[job];
  give(s.allocation);
  running_by_limit_.erase({s.expected_end, job});
  ++s.generation;
  // What the run leaves: the progress up to its last checkpoint when the job resumes, else nothing.
  const Seconds held = now - s.start;
  Seconds kept = 0;     // run time, from the start of this run, whose progress a checkpoint holds
  Seconds lost = held;  // run time thrown away
  if (resumes(job)) {
    if (cause == RequeueCause::kPreemption && s.signalled >= 0) {
      // The victim writes a checkpoint at the signal (docs/preemption.md): it keeps its progress up to the
      // signal and loses the time the checkpoint takes; the rest of the grace is neither.
      kept = s.signalled - s.start;
      lost = std::min(j.checkpoint_cost, held - kept);
    } else {
      lost = preemption::run_time_lost(candidate(job), now);  // since the last periodic checkpoint
      kept = held - lost;
    }
    const double speed = s.type >= 0 ? cluster_.accelerator_types[s.type].speed_for(j.job_class) : 1.0;
    const Seconds advanced = std::max<Seconds>(kept - s.overhead, 0);
    s.saved_work = std::min(requests_[job].reference_work, s.saved_work + static_cast<double>(advanced) * speed);
    kept = advanced;
  } else {
    s.saved_work = 0;
  }
  JobOutcome& o = outcomes_[job];
  o.lost_cpu_seconds += static_cast<double>(lost) * j.cpus;
  o.allocated_cpu_seconds += static_cast<double>(held) * j.cpus;
  o.useful_cpu_seconds += static_cast<double>(kept) * j.cpus;
  if (s.type >= 0) {
    o.lost_accelerator_seconds += static_cast<double>(lost) * j.accel.count;
    o.allocated_accelerator_seconds += static_cast<double>(held) * j.accel.count;
    o.useful_accelerator_seconds += static_cast<double>(kept) * j.accel.count;
  }
  s.signalled = -1;
  ++o.restarts;
  ++counters_.requeues;
  notify(ScheduleEvent::Kind::kRequeue, job, now);
  fairshare_.charge(requests_[job].user,
                    static_cast<double>(jobs_[job].cpus) * static_cast<double>(now - std::max(s.start, last_charge_)));
  s.allocation.clear();
  s.phase = Phase::kFuture;
  only_arrivals_ = false;
  dirty_ = true;
  // A victim is requeued during a scheduling pass, which must not see the queue change under it.
  if (config_.requeue_delay > 0 || cause == RequeueCause::kPreemption) {
    requeued_.emplace(now + config_.requeue_delay, job);
  } else {
    make_pending(job, now, now);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Bookkeeping

void SlurmSim::notify(ScheduleEvent::Kind kind, int job, Seconds now, Seconds reserved_start,
                      const std::vector<int>* reserved_nodes) {
  if (!config_.observer) return;
  ScheduleEvent e;
  e.kind = kind;
  e.time = now;
  e.job = job;
  e.reserved_start = reserved_start;
  e.partition = state_[job].partition;
  e.accelerator_type = state_[job].type;
  if (reserved_nodes) e.nodes = *reserved_nodes;
  if (kind == ScheduleEvent::Kind::kStart || kind == ScheduleEvent::Kind::kBackfillStart)
    for (const Grant& g : state_[job].allocation) e.nodes.push_back(g.node);
  std::sort(e.nodes.begin(), e.nodes.end());
  e.nodes.erase(std::unique(e.nodes.begin(), e.nodes.end()), e.nodes.end());
  if (kind == ScheduleEvent::Kind::kStart || kind == ScheduleEvent::Kind::kBackfillStart) {
    e.node_cpus.assign(e.nodes.size(), 0);
    for (const Grant& g : state_[job].allocation)
      e.node_cpus[std::lower_bound(e.nodes.begin(), e.nodes.end(), g.node) - e.nodes.begin()] += g.cpus;
  }
  config_.observer(e);
}

void SlurmSim::make_pending(int job, Seconds now, Seconds eligible) {
  JobState& s = state_[job];
  s.phase = Phase::kPending;
  s.eligible = eligible;
  batch_jobs_.assign(1, job);
  score_batch(batch_jobs_, now, true);
  s.priority = priority_of(batch_[0], scores_[0]);
  const QueueEntry entry{job,        jobs_[job].cpus,  requests_[job].limit, s.generation, requests_[job].tier,
                         s.priority, jobs_[job].submit};
  const auto at = std::upper_bound(pending_.begin(), pending_.end(), entry);
  first_live_ = std::min(first_live_, static_cast<std::size_t>(at - pending_.begin()));
  pending_.insert(at, entry);
  ++pending_count_;
  pending_cpus_.insert(jobs_[job].cpus);
  if (jobs_[job].accel.count > 0) ++pending_accel_jobs_;
  new_arrivals_.push_back(job);
  dirty_ = true;
}

void SlurmSim::compact_pending() {
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(), [this](const QueueEntry& e) { return !live(e); }),
                 pending_.end());
  first_live_ = 0;
}

void SlurmSim::refresh_view_cluster() {
  view_cluster_.cpus_total = total_cpus_;
  view_cluster_.cpus_idle = static_cast<int>(free_cpus_total_);
  view_cluster_.nodes_total = topology_.node_count();
  for (std::size_t t = 0; t < view_cluster_.pools.size(); ++t) {
    view_cluster_.pools[t].total = static_cast<int>(type_up_[t]);
    view_cluster_.pools[t].idle = static_cast<int>(type_free_[t]);
  }
  for (std::size_t p = 0; p < view_cluster_.partitions.size(); ++p) {
    job_view::PartitionState& part = view_cluster_.partitions[p];
    part.cpus_idle = partition_free_cpus_[p];
    for (std::size_t t = 0; t < part.pools.size(); ++t) part.pools[t].idle = partition_free_accel_[p][t];
  }
}

job_view::JobState SlurmSim::view_state(int job, Seconds now) const {
  const Job& j = jobs_[job];
  const JobRequest& r = requests_[job];
  job_view::JobState v;
  v.id = j.id;
  v.submit = j.submit;
  v.eligible = state_[job].eligible;
  v.time_limit = r.limit;
  v.cpus = j.cpus;
  v.nodes = std::max(j.nodes, 1);
  if (j.accel.count > 0) {
    v.accelerators = j.accel.count;
    v.gres = j.accel.name;
    v.types = r.queue_types;
  }
  v.partitions = r.partitions.data();
  v.n_partitions = static_cast<int>(r.partitions.size());
  v.pool_speeds = class_speeds_[job_class_[job]].data();
  v.restarts = outcomes_[job].restarts;
  v.checkpointable = j.checkpointable();
  const Seconds max_age = std::max<Seconds>(cluster_.priority.max_age, 1);
  v.age_factor = std::min(1.0, static_cast<double>(now - state_[job].eligible) / static_cast<double>(max_age));
  v.fairshare_factor = fairshare_.factor(r.user);
  v.job_size_factor = r.job_size_factor;
  v.partition_factor = r.partition_factor;
  v.qos_factor = r.qos_factor;
  return v;
}

void SlurmSim::score_batch(const std::vector<int>& jobs, Seconds now, bool at_submit) {
  refresh_view_cluster();
  batch_.clear();
  batch_states_.clear();
  const bool tell = static_cast<bool>(config_.on_scoring);
  for (int job : jobs) {
    const job_view::JobState v = view_state(job, now);
    batch_.push_back(job_view::build(v, view_cluster_, now));
    if (tell) batch_states_.push_back(v);
  }
  if (scorer_.reads_predicted_run_time())
    for (std::size_t i = 0; i < jobs.size(); ++i) run_times_.annotate(jobs_[jobs[i]].user, batch_[i]);
  scores_.assign(batch_.size(), 0.0);
  // The queue length the plugin knows: the batch at a tick; at submit (site_factor_p_set sees no queue), the last
  // batch and this job.
  const ScoringContext context =
      view_cluster_.context(now, static_cast<int>(at_submit ? last_batch_size_ + 1 : batch_.size()));
  if (!at_submit) last_batch_size_ = batch_.size();
  scorer_.score(context, batch_, scores_);
  // The energy rule's rank (site_factor/rlsched's), decided here so that the hook sees it beside the policy's own
  // scores.
  energy_rank_.assign(jobs.size(), energy::Rank::kPolicy);
  if (config_.energy)
    for (std::size_t i = 0; i < jobs.size(); ++i)
      if (const auto request = deferral_request(jobs[i], now))
        energy_rank_[i] = energy::rank_now(*config_.energy, *request);
  if (tell)
    config_.on_scoring({now, at_submit, view_cluster_, jobs, batch_states_, context, batch_, scores_, energy_rank_});
  for (std::size_t i = 0; i < jobs.size(); ++i) scores_[i] = energy::ranked_score(energy_rank_[i], scores_[i]);
}

/// Without multifactor weights the policy's score is the priority (the library's bare mode; the CLI always gives
/// weights). With them, the score enters as site_factor/rlsched writes it, site_factor_of against the last batch
/// at scale weights.site, added to the weighted factors.
double SlurmSim::priority_of(const PendingJob& view, double score) const {
  if (!multifactor_) return score;
  const double site = static_cast<double>(site_factor_of(score, sorted_scores_, site_scale_));
  // slurmctld keeps priorities as whole numbers (job_record_t::priority is uint32_t, 0 is reserved for held jobs;
  // the site factor is already the plugin's floor(score_scale * share)): jobs a fraction of a point apart tie, and
  // ties go by submit time, then job id.
  const double slurm = multifactor_priority(cluster_.priority, view) + site;
  return std::max(1.0, std::floor(slurm));
}

std::optional<energy::StartRequest> SlurmSim::deferral_request(int job, Seconds now) const {
  if (!config_.energy) return std::nullopt;
  const Job& j = jobs_[job];
  if (!config_.energy->max_deferral_for(j.qos, j.job_class)) return std::nullopt;  // most jobs: nothing to build
  energy::DeferrableJob d;
  d.qos = j.qos;
  d.job_class = j.job_class;
  d.eligible = j.submit;
  d.time_limit = requests_[job].limit;
  if (j.accel.count > 0) d.types = text::parse_type_set(requests_[job].queue_types);  // as the plugin reads them
  d.accelerators = j.accel.count;
  d.cpus = j.cpus;
  d.node_cpus = total_cpus_ / std::max(topology_.node_count(), 1);
  return energy::deferral_request(*config_.energy, d, now);
}

/// Queue order: higher partition tier, higher priority, earlier submit, earlier in the trace.
bool SlurmSim::ranks_before(int a, int b) const {
  const int ta = requests_[a].tier, tb = requests_[b].tier;
  if (ta != tb) return ta > tb;
  const double pa = state_[a].priority, pb = state_[b].priority;
  if (pa != pb) return pa > pb;
  if (jobs_[a].submit != jobs_[b].submit) return jobs_[a].submit < jobs_[b].submit;
  return a < b;
}

long long SlurmSim::cpus_in(int p, const Allocation& allocation) const {
  long long cpus = 0;
  for (const Grant& g : allocation)
    if (free_.up[g.node] && (partition_whole_[p] || in_partition(g.node, p))) cpus += g.cpus;
  return cpus;
}

bool SlurmSim::in_partition(int node, int p) const {
  for (int q : node_partitions_[node])
    if (q == p) return true;
  return false;
}

void SlurmSim::take(const Allocation& allocation) {
  no_fit_.clear();
  free_.take(allocation);
  adjust_aggregates(allocation, -1);
}

void SlurmSim::give(const Allocation& allocation) {
  no_fit_.clear();
  free_.give(allocation);
  adjust_aggregates(allocation, +1);
}

void SlurmSim::adjust_aggregates(const Allocation& allocation, int sign) {
  for (const Grant& g : allocation) {
    if (!free_.up[g.node]) continue;
    free_cpus_total_ += sign * g.cpus;
    if (g.slot >= 0) {
      free_accel_total_ += sign * g.accel;
      type_free_[topology_.slot_type[g.slot]] += sign * g.accel;
    }
    for (int p : node_partitions_[g.node]) {
      partition_free_cpus_[p] += sign * g.cpus;
      if (g.slot >= 0) partition_free_accel_[p][topology_.slot_type[g.slot]] += sign * g.accel;
    }
  }
}

void SlurmSim::set_node_up(int node, bool up) {
  if (static_cast<bool>(free_.up[node]) == up) return;
  no_fit_.clear();
  const int sign = up ? +1 : -1;
  if (up) free_.up[node] = 1;
  nodes_down_ -= sign;
  free_cpus_total_ += sign * free_.cpus[node];
  for (int s = topology_.slot_begin[node]; s < topology_.slot_begin[node + 1]; ++s) {
    free_accel_total_ += sign * free_.slot_free[s];
    type_free_[topology_.slot_type[s]] += sign * free_.slot_free[s];
    type_up_[topology_.slot_type[s]] += sign * topology_.slot_count[s];
  }
  for (int p : node_partitions_[node]) {
    partition_free_cpus_[p] += sign * free_.cpus[node];
    for (int s = topology_.slot_begin[node]; s < topology_.slot_begin[node + 1]; ++s)
      partition_free_accel_[p][topology_.slot_type[s]] += sign * free_.slot_free[s];
  }
  if (!up) free_.up[node] = 0;
}

/// Fragmentation: is a pending job waiting that would fit in the idle total of one of its partitions?
void SlurmSim::measure_fragmentation() {
  bool cpu_fits = false, accel_fits = false;
  const bool any_cpu_fit = !pending_cpus_.empty() && *pending_cpus_.begin() <= free_cpus_total_;
  if (cluster_.partitions.size() == 1) {
    cpu_fits = any_cpu_fit;  // the smallest pending request decides
  }
  const bool scan_cpu = any_cpu_fit && !cpu_fits;
  const bool scan_accel = pending_accel_jobs_ > 0 && free_accel_total_ > 0;
  for (std::size_t i = first_live_; (scan_cpu || scan_accel) && i < pending_.size(); ++i) {
    if ((cpu_fits || !scan_cpu) && (accel_fits || !scan_accel)) break;
    if (!live(pending_[i])) continue;
    const int job = pending_[i].job;
    const Job& j = jobs_[job];
    for (int p : requests_[job].partitions) {
      if (partition_free_cpus_[p] < j.cpus) continue;
      cpu_fits = true;
      for (int t : requests_[job].types)
        if (t >= 0 && partition_free_accel_[p][t] >= j.accel.count) accel_fits = true;
    }
  }
  fragmentation_.set(free_cpus_total_, cpu_fits, free_accel_total_, accel_fits);
}

void SlurmSim::check_invariants() const {
  long long cpus = 0, accel = 0;
  for (int n = 0; n < topology_.node_count(); ++n) {
    SIM_CHECK(free_.cpus[n] >= 0 && free_.cpus[n] <= topology_.cpus[n], "node {} has {} free CPUs of {}",
              cluster_.nodes[n].name, free_.cpus[n], topology_.cpus[n]);
    SIM_CHECK(free_.mem[n] >= 0 && free_.mem[n] <= topology_.mem[n], "node {} memory oversubscribed",
              cluster_.nodes[n].name);
    for (int s = topology_.slot_begin[n]; s < topology_.slot_begin[n + 1]; ++s) {
      SIM_CHECK(free_.slot_free[s] >= 0 && free_.slot_free[s] <= topology_.slot_count[s],
                "node {} accelerators oversubscribed", cluster_.nodes[n].name);
      if (free_.up[n]) accel += free_.slot_free[s];
    }
    if (free_.up[n]) cpus += free_.cpus[n];
  }
  SIM_CHECK(cpus == free_cpus_total_, "free CPU total {} != {} recounted", free_cpus_total_, cpus);
  SIM_CHECK(accel == free_accel_total_, "free accelerator total {} != {} recounted", free_accel_total_, accel);
  std::size_t pending = 0;
  for (const JobState& s : state_) pending += s.phase == Phase::kPending ? 1 : 0;
  SIM_CHECK(pending == pending_count_, "{} jobs pending, {} counted", pending, pending_count_);
}

Result<SimResult> simulate(const Cluster& cluster, const std::vector<Job>& jobs, const Scorer& scorer,
                           const SimConfig& config) {
  if (Status s = validate(cluster); !s.ok()) return s;
  try {
    return SlurmSim(cluster, jobs, scorer, config).run();
  } catch (const std::logic_error& e) {
    return Status::Internal(std::string("simulator invariant broken: ") + e.what());
  }
}

}  // namespace rlsched::sim
