// Backfill::kSlurm, sched/backfill's cycle as slurmctld 22.05 runs it (src/plugins/sched/backfill/backfill.c), and
// the main pass's node removal (src/slurmctld/job_scheduler.c, fail_by_part).
//
// Each cycle walks the pending jobs in priority order, one job-partition pair at a time, up to bf_max_job_test
// jobs, and plans each as _attempt_backfill does:
//  - From a start time S (now at first), the usable nodes are the partition's nodes that no reservation made
//    earlier in the cycle holds during [S, max(S, now) + limit] (both ends included).
//  - The expected start on those nodes is select/cons_tres's will-run test (cons_common/job_test.c,
//    _will_run_test): now if the job fits there now; otherwise running jobs on those nodes are taken away in
//    order of their expected end (start + limit), in batches: the first batch reaches 30 s past the first end's
//    next 30-s mark, and each further batch doubles that window; after each batch the job is tried on what is
//    free, and the expected start is the end of the last job taken away. So the start is often later than the
//    first instant the job would fit, and it lands on whichever node best fit chooses in that future.
//  - The start is at least S. If it is after `later_start` (the first time after S at which a node reserved in
//    the window comes free), or the chosen nodes are reserved during [start, start + limit) (both rounded down to
//    bf_resolution), the job is tried again from that time (TRY_LATER). A job that fits now starts now.
//  - Otherwise it gets a reservation: the chosen whole nodes over [start, start + limit) rounded down to
//    bf_resolution (at least one resolution long). Reservations hold whole nodes (backfill.c's node_space is a
//    node bitmap per time slot), so a reserved node takes no other job that would still run at the reservation's
//    start, whatever CPUs it has left.
#include <algorithm>
#include <limits>

#include "node_space.h"
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

void SlurmSim::mask_reserved(int p, Seconds from, Seconds to) {
  fill_unlimited(topology_, bf_mask_);
  usable_.assign(topology_.cpus.size(), 0);
  for (int n = 0; n < topology_.node_count(); ++n)
    if (node_space_.held(n, from, to)) clear_node(topology_, n, bf_mask_);
  for (int n : topology_.partition_nodes[p]) usable_[n] = free_.up[n] && bf_mask_.cpus[n] > 0;
}

void SlurmSim::backfill_cycle(Seconds now) {
  ++counters_.backfill_passes;
  next_backfill_ = now + std::max<Seconds>(cluster_.backfill.interval, 1);
  node_space_.reset(topology_.node_count());
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

namespace {

// cons_tres's will-run windows: the first batch of running jobs taken away ends kWillRunWindow past the first
// job's end rounded up to a multiple of it; each later batch doubles the window.
constexpr Seconds kWillRunWindow = 30;

}  // namespace

bool SlurmSim::fits_on(int job, int p, const FreeState& free, const FreeState& bound) {
  const Job& j = jobs_[job];
  for (int type : requests_[job].types) {
    const Demand d = make_demand(topology_, j, p, type);
    if (type >= 0 && d.nodes == 0) continue;
    if (!find_allocation(topology_, free, &bound, p, d, scratch_)) continue;
    scratch_demand_ = d;
    return true;
  }
  return false;
}

Seconds SlurmSim::will_run(int job, int p, Seconds now) {
  if (fits_on(job, p, free_, bf_mask_)) return now;
  FreeState future = free_;
  Seconds barrier = -1, window = kWillRunWindow;
  Seconds last_end = -1;
  const auto usable = [&](int running) {  // it runs on a node the job may use
    for (const Grant& g : state_[running].allocation)
      if (usable_[g.node]) return true;
    return false;
  };
  // Running jobs in order of expected end; a batch ends at a job (usable or not) past barrier + window.
  auto it = running_by_limit_.begin();
  bool more = it != running_by_limit_.end();
  while (more) {
    bool removed = false;
    auto next = it;
    while (it != running_by_limit_.end()) {
      const auto [end, running] = *it++;
      if (!usable(running)) continue;
      if (barrier < 0) barrier = end + (window - end % window);
      future.give(state_[running].allocation);
      last_end = end;
      removed = true;
      next = it;
      if (next == running_by_limit_.end() || next->first > barrier + window) break;
    }
    if (it == running_by_limit_.end()) more = false;
    if (!removed) break;
    do window *= 2;
    while (next != running_by_limit_.end() && next->first > barrier + window);
    // A job due to end now has not ended yet (slurmctld guesses a later end, _guess_job_end).
    if (fits_on(job, p, future, bf_mask_)) return last_end > now ? last_end : now + 1;
  }
  return -1;
}

bool SlurmSim::plan(int job, int p, Seconds now) {
  const JobRequest& r = requests_[job];
  const Seconds resolution = std::max<Seconds>(cluster_.backfill.resolution, 1);
  std::vector<int>& up = up_nodes_;
  up.clear();
  for (int n : topology_.partition_nodes[p])
    if (free_.up[n]) up.push_back(n);
  Seconds from = now;
  // Each try moves `from` past a slot boundary or to a later start, so a few tries per slot at most.
  for (std::size_t tries = 0; tries <= 2 * node_space_.slots() + 2; ++tries) {
    const Seconds to = std::max(from, now) + r.limit;
    mask_reserved(p, from, to);
    const Seconds later = node_space_.later_start(from, to, up);
    Seconds expected = will_run(job, p, now);
    if (expected < 0) {
      if (later <= from) return false;
      from = later;
      continue;
    }
    if (expected <= now && from <= now) {
      start(job, p, scratch_demand_, now, true);
      ++counters_.backfilled_jobs;
      return true;
    }
    const Seconds start = std::max(expected, from);
    if (later > 0 && start > later) {
      from = later;
      continue;
    }
    const Seconds begin = start / resolution * resolution;
    const Seconds end = std::max((start + r.limit) / resolution * resolution, begin + resolution);
    std::vector<int> nodes;
    for (const Grant& g : scratch_)
      if (std::find(nodes.begin(), nodes.end(), g.node) == nodes.end()) nodes.push_back(g.node);
    if (node_space_.held_any(nodes, begin, end)) {
      if (start <= from) return false;
      from = start;
      continue;
    }
    notify(ScheduleEvent::Kind::kReservation, job, now, start, &nodes);
    node_space_.reserve(begin, end, nodes);
    return false;
  }
  return false;
}

}  // namespace rlsched::sim
