// Backfill::kEasy (simulator.h), the EASY backfill run after a main pass: each partition's highest-priority blocked
// job gets a reservation at the earliest time running jobs, ending at their limits, leave room for it; later jobs
// start now only where they delay no reservation (try_start, slurm_sim.cpp, checks that).
#include <algorithm>
#include <utility>

#include "slurm_sim.h"

namespace rlsched::sim {

void SlurmSim::backfill(Seconds now) {
  ++counters_.backfill_passes;
  no_fit_.clear();
  for (int job : top_blocked_) {
    if (job < 0) continue;
    bool seen = false;
    for (const Reservation& r : reservations_) seen = seen || r.job == job;
    if (seen) continue;
    Reservation r;
    if (!reserve(job, now, r)) continue;
    notify(ScheduleEvent::Kind::kReservation, job, now, r.start);
    reservations_.push_back(std::move(r));
  }

  // The single aggregate reservation of a one-partition cluster (the common case) lets most jobs be rejected
  // from the inline fields alone: too many CPUs for what is free, or running past the reservation with more CPUs
  // than it leaves over.
  const Reservation* only = reservations_.size() == 1 && !reservations_[0].per_node ? &reservations_[0] : nullptr;
  int tested = 0;
  for (std::size_t i = first_live_; i < pending_.size(); ++i) {
    if (pending_cpus_.empty() || free_cpus_total_ < *pending_cpus_.begin()) break;  // nothing more can fit
    const QueueEntry& e = pending_[i];
    if (e.cpus > free_cpus_total_) continue;
    if (only != nullptr && now + e.limit > only->start && e.cpus > only->extra_cpus) continue;
    if (!live(e)) continue;
    const int job = e.job;
    bool reserved = false;
    for (const Reservation& r : reservations_) reserved = reserved || r.job == job;
    if (reserved) continue;
    if (config_.bf_max_job_test > 0 && ++tested > config_.bf_max_job_test) break;
    backfill_one(job, now);
  }
}

bool SlurmSim::backfill_one(int job, Seconds now) {
  if (free_cpus_total_ < jobs_[job].cpus) return false;
  for (int p : requests_[job].partitions) {
    if (try_start(job, p, now, &reservations_)) {
      ++counters_.backfilled_jobs;
      return true;
    }
  }
  return false;
}

bool SlurmSim::reserve(int job, Seconds now, Reservation& out) {
  const Job& j = jobs_[job];
  bool found = false;
  for (int p : requests_[job].partitions) {
    if (top_blocked_[p] != job) continue;
    for (int type : requests_[job].types) {
      const Demand d = make_demand(topology_, j, p, type);
      if (type >= 0 && d.nodes == 0) continue;
      // Release running jobs in the order the scheduler expects them to end (their time limits) until it fits.
      if (d.nodes == 0 && d.mem_per_node <= 0) {  // CPUs anywhere in the partition: counting is exact
        long long cpus = partition_free_cpus_[p];
        for (const auto& [expected_end, running] : running_by_limit_) {
          if (found && expected_end >= out.start) break;
          cpus += partition_whole_[p] && nodes_down_ == 0 ? state_[running].allocated_cpus
                                                          : cpus_in(p, state_[running].allocation);
          if (cpus < d.cpus) continue;
          out.job = job;
          out.partition = p;
          out.start = std::max(expected_end, now);
          out.per_node = false;
          out.extra_cpus = cpus - d.cpus;
          found = true;
          break;
        }
        continue;
      }
      FreeState shadow = free_;
      long long cpus = partition_free_cpus_[p];
      long long accel = type >= 0 ? partition_free_accel_[p][type] : 0;
      for (const auto& [expected_end, running] : running_by_limit_) {
        if (found && expected_end >= out.start) break;  // cannot beat the reservation already found
        const Allocation& a = state_[running].allocation;
        shadow.give(a);
        for (const Grant& g : a) {
          if (!shadow.up[g.node] || !in_partition(g.node, p)) continue;
          cpus += g.cpus;
          if (g.slot >= 0 && topology_.slot_type[g.slot] == type) accel += g.accel;
        }
        if (cpus < j.cpus || (type >= 0 && accel < j.accel.count)) continue;
        if (!find_allocation(topology_, shadow, nullptr, p, d, scratch_)) continue;
        out.job = job;
        out.partition = p;
        out.start = std::max(expected_end, now);
        out.per_node = true;
        shadow.take(scratch_);
        out.extra = std::move(shadow);
        found = true;
        break;
      }
    }
  }
  return found;
}

}  // namespace rlsched::sim
