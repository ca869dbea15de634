// Preemption in the Slurm model (rlsched/sim/preemption.h): victim choice, grace, requeue.
//
// Like Slurm's select plugin with a preempt plugin: the candidates come in the preempt plugin's order (preempt/qos:
// lowest QOS priority, fewest nodes, youngest first; preempt/rlsched: rlsched/preemption.h's victims_in_order), and
// are taken one by one until the pending job fits on a partition it may use; of those, only the victims on the
// nodes the job gets are preempted (select/cons_tres keeps the preemptees that overlap the chosen nodes).
#include <algorithm>
#include <tuple>

#include "slurm_sim.h"

namespace rlsched::sim {

bool SlurmSim::can_preempt(int job) const {
  return urgent_[job] != 0 && config_.preemption.mode != PreemptionMode::kNone;
}

bool SlurmSim::resumes(int job) const {
  return config_.preemption.mode == PreemptionMode::kCheckpoint && jobs_[job].checkpoint_interval > 0;
}

Seconds SlurmSim::run_left(int job, int type) const {
  const JobState& s = state_[job];
  const JobRequest& r = requests_[job];
  if (s.saved_work <= 0) return run_time_on(cluster_, jobs_[job], r, type);
  const double speed = type >= 0 ? cluster_.accelerator_types[type].speed_for(jobs_[job].job_class) : 1.0;
  const double left = std::max(r.reference_work - s.saved_work, 0.0) / speed;
  return std::max<Seconds>(1, static_cast<Seconds>(std::llround(left))) + s.overhead;
}

preemption::Candidate SlurmSim::candidate(int job) const {
  const Job& j = jobs_[job];
  preemption::Candidate c;
  c.id = job;  // the index: unique even when a trace repeats job ids
  if (j.checkpoint_interval > 0) c.checkpoint = preemption::Checkpoint{j.checkpoint_interval, j.checkpoint_cost};
  c.qos = j.qos.empty() ? std::string(kDefaultQos) : j.qos;
  c.run_start = state_[job].start;
  c.size = j.accel.count > 0 ? j.accel.count : j.cpus;
  c.rank = 0;  // running jobs have no current rank in the simulator: ties keep the candidates' order
  return c;
}

std::vector<std::size_t> SlurmSim::victim_order(const std::vector<preemption::Candidate>& candidates, Seconds now) {
  const PreemptionSettings& settings = config_.preemption;
  if (settings.mode == PreemptionMode::kCheckpoint) {
    // Wake the scheduler when a victim refused only for its age becomes eligible (Slurm's scheduler runs at least
    // every sched_interval; this is that, without the idle passes).
    for (const preemption::Candidate& c : candidates)
      if (preemption::refusal(settings.policy, c, history_, now) == preemption::Refusal::kTooYoung)
        wakeups_.insert(c.run_start + settings.policy.min_run_time);
    return preemption::victims_in_order(settings.policy, candidates, history_, now);
  }
  // preempt/qos: the QOS priority in the upper bits and the node count in the lower (lowest first), then the
  // youngest first (PreemptParameters=youngest_first: the least work thrown away).
  auto qos_priority = [this](const std::string& name) {
    for (const Qos& q : cluster_.qos)
      if (q.name == name) return q.priority;
    return 0;
  };
  std::vector<std::size_t> order(candidates.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto key = [&](std::size_t i) {
    const int job = static_cast<int>(candidates[i].id);
    return std::make_tuple(qos_priority(candidates[i].qos), state_[job].allocation.size(), -candidates[i].run_start);
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  return order;
}

bool SlurmSim::preempt_for(int job, Seconds now) {
  const Job& j = jobs_[job];
  std::vector<preemption::Candidate> candidates;
  FreeState soon = free_;  // with the resources of victims already in their grace time
  bool in_grace = false;
  for (const auto& [expected_end, running] : running_by_limit_) {
    if (state_[running].signalled >= 0) {
      soon.give(state_[running].allocation);
      in_grace = true;
    } else if (config_.preemption.may_preempt(j.qos, jobs_[running].qos)) {
      candidates.push_back(candidate(running));
    }
  }
  const std::vector<std::size_t> order = victim_order(candidates, now);

  for (int p : requests_[job].partitions) {
    for (int type : requests_[job].types) {
      const Demand d = make_demand(topology_, j, p, type);
      if (type >= 0 && d.nodes == 0) continue;
      // Victims already signalled will make room: wait for them rather than preempt more.
      if (in_grace && find_allocation(topology_, soon, nullptr, p, d, scratch_)) return false;
      FreeState shadow = soon;
      std::vector<int> taken;
      for (std::size_t i : order) {
        const int victim = static_cast<int>(candidates[i].id);
        const Allocation& a = state_[victim].allocation;
        if (std::none_of(a.begin(), a.end(), [&](const Grant& g) { return in_partition(g.node, p); })) continue;
        shadow.give(a);
        taken.push_back(victim);
        if (!find_allocation(topology_, shadow, nullptr, p, d, scratch_)) continue;
        const Allocation chosen = scratch_;
        for (std::size_t k = 0; k < taken.size(); ++k) {
          const Allocation& held = state_[taken[k]].allocation;
          const bool overlaps = std::any_of(held.begin(), held.end(), [&](const Grant& g) {
            return std::any_of(chosen.begin(), chosen.end(), [&](const Grant& c) { return c.node == g.node; });
          });
          if (overlaps) preempt(taken[k], candidate(taken[k]), now);
        }
        return try_start(job, p, now, nullptr);  // at once unless a victim has a grace time
      }
    }
  }
  return false;
}

void SlurmSim::preempt(int victim, const preemption::Candidate& c, Seconds now) {
  JobState& s = state_[victim];
  history_.record(c.id, now);
  ++outcomes_[victim].preemptions;
  ++counters_.preemptions;
  notify(ScheduleEvent::Kind::kPreempt, victim, now);
  const Seconds grace = config_.preemption.mode == PreemptionMode::kCheckpoint && resumes(victim)
                            ? preemption::grace_time(config_.preemption.policy, c)
                            : 0;
  if (grace <= 0) {
    requeue(victim, now, RequeueCause::kPreemption);
    return;
  }
  s.signalled = now;
  grace_ends_.push(Completion{now + grace, victim, s.generation});
}

void SlurmSim::end_graces_due(Seconds now) {
  while (!grace_ends_.empty() && grace_ends_.top().at <= now) {
    const Completion c = grace_ends_.top();
    grace_ends_.pop();
    if (c.generation != state_[c.job].generation || state_[c.job].phase != Phase::kRunning) continue;
    requeue(c.job, c.at, RequeueCause::kPreemption);
  }
}

}  // namespace rlsched::sim
