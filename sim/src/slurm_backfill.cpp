// Backfill::kSlurm, sched/backfill's cycle as slurmctld 22.05 runs it (src/plugins/sched/backfill/backfill.c), and
// the main pass's node removal (src/slurmctld/job_scheduler.c, fail_by_part).
//
// Each cycle walks the pending jobs in priority order, one job-partition pair at a time, up to bf_max_job_test
// jobs. A pair starts now when it fits on nodes that no reservation made earlier in the cycle holds during
// [now, now + limit]; otherwise it gets a reservation: the whole nodes it would start on at the earliest time T
// when running jobs, ending at their time limits, leave room on nodes no earlier reservation holds during
// [T, T + limit], kept over [T, T + limit) with both ends rounded down to bf_resolution (at least one resolution
// long). Reservations hold whole nodes (backfill.c's node_space is a node bitmap per time slot), so a reserved
// node takes no other job that would still run at the reservation's start, whatever CPUs it has left.
#include <algorithm>
#include <limits>

#include "slurm_sim.h"

namespace rlsched::sim {
namespace {

void fill_unlimited(const Topology& topology, FreeState& mask) {
  mask.cpus.assign(topology.cpus.size(), std::numeric_limits<int>::max());
  mask.mem.assign(topology.cpus.size(), std::numeric_limits<std::int64_t>::max());
  mask.slot_free.assign(topology.slot_count.size(), std::numeric_limits<int>::max());
  mask.up.assign(topology.cpus.size(), 1);
}

void clear_node(const Topology& topology, int n, FreeState& mask) {
  mask.cpus[n] = 0;
  mask.mem[n] = 0;
  for (int s = topology.slot_begin[n]; s < topology.slot_begin[n + 1]; ++s) mask.slot_free[s] = 0;
}

}  // namespace

void SlurmSim::remove_nodes(int p) {
  if (!masking_) {
    fill_unlimited(topology_, main_mask_);
    masking_ = true;
  }
  for (int n : topology_.partition_nodes[p]) clear_node(topology_, n, main_mask_);
}

void SlurmSim::mask_reserved(Seconds from, Seconds to) {
  fill_unlimited(topology_, bf_mask_);
  for (const NodeReservation& r : planned_)
    if (r.start <= to && r.end > from)
      for (int n : r.nodes) clear_node(topology_, n, bf_mask_);
}

void SlurmSim::backfill_cycle(Seconds now) {
  ++counters_.backfill_passes;
  next_backfill_ = now + std::max<Seconds>(cluster_.backfill.interval, 1);
  planned_.clear();
  const int max_test = config_.bf_max_job_test > 0 ? config_.bf_max_job_test : cluster_.backfill.max_job_test;
  int tested = 0;
  // Entries of jobs that start stay in pending_ until the next compaction, so the walk is not disturbed.
  for (std::size_t i = first_live_; i < pending_.size(); ++i) {
    if (!live(pending_[i])) continue;
    if (max_test > 0 && ++tested > max_test) break;
    const int job = pending_[i].job;
    for (int p : requests_[job].partitions)
      if (plan(job, p, now)) break;
  }
}

bool SlurmSim::plan(int job, int p, Seconds now) {
  const Job& j = jobs_[job];
  const JobRequest& r = requests_[job];
  mask_reserved(now, now + r.limit);
  for (int type : r.types) {
    const Demand d = make_demand(topology_, j, p, type);
    if (type >= 0 && d.nodes == 0) continue;
    if (!find_allocation(topology_, free_, &bf_mask_, p, d, scratch_)) continue;
    start(job, p, d, now, true);
    ++counters_.backfilled_jobs;
    return true;
  }

  // The earliest start: a running job's expected end, or the end of a reservation that held a node.
  std::vector<Seconds> times;
  for (const auto& [expected_end, running] : running_by_limit_) times.push_back(std::max(expected_end, now));
  for (const NodeReservation& res : planned_) times.push_back(std::max(res.end, now));
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  Seconds best = -1;
  Allocation best_allocation;
  for (int type : r.types) {
    const Demand d = make_demand(topology_, j, p, type);
    if (type >= 0 && d.nodes == 0) continue;
    FreeState shadow = free_;
    auto released = running_by_limit_.begin();
    for (Seconds t : times) {
      if (best >= 0 && t >= best) break;
      for (; released != running_by_limit_.end() && released->first <= t; ++released)
        shadow.give(state_[released->second].allocation);
      mask_reserved(t, t + r.limit);
      if (!find_allocation(topology_, shadow, &bf_mask_, p, d, scratch_)) continue;
      best = t;
      best_allocation = scratch_;
      break;
    }
  }
  if (best < 0) return false;
  const Seconds resolution = std::max<Seconds>(cluster_.backfill.resolution, 1);
  NodeReservation res;
  res.start = best / resolution * resolution;
  res.end = std::max((best + r.limit) / resolution * resolution, res.start + resolution);
  for (const Grant& g : best_allocation) res.nodes.push_back(g.node);
  planned_.push_back(std::move(res));
  notify(ScheduleEvent::Kind::kReservation, job, now, best);
  return false;
}

}  // namespace rlsched::sim
