#include "rlsched/job_view.h"

#include <algorithm>
#include <cmath>

#include "rlsched/placement.h"

namespace rlsched::job_view {
namespace {

double clamp01(double v) { return std::isfinite(v) ? std::min(std::max(v, 0.0), 1.0) : 0.0; }

bool allows(const Pool& pool, const JobState& job) {
  return pool.gres == job.gres && placement::type_allowed(job.types, pool.type);
}

bool valid_partition(const ClusterState& cluster, int p) {
  return p >= 0 && p < static_cast<int>(cluster.partitions.size());
}

}  // namespace

int ClusterState::accelerators_total() const {
  int total = 0;
  for (const Pool& p : pools) total += std::max(p.total, 0);
  return total;
}

ScoringContext ClusterState::context(Seconds now, int pending) const {
  ScoringContext c;
  c.now = now;
  c.total_cpus = std::max(cpus_total, 0);
  c.idle_cpus = std::max(cpus_idle, 0);
  c.total_nodes = std::max(nodes_total, 0);
  c.total_accelerators = accelerators_total();
  c.pending_jobs = pending;
  return c;
}

PendingJob build(const JobState& job, const ClusterState& cluster, Seconds now) {
  PendingJob p;
  p.id = job.id;
  p.submit = job.submit;
  p.wait = std::max<Seconds>(now - std::max(job.eligible, job.submit), 0);
  p.time_limit = std::max<Seconds>(job.time_limit, 1);
  p.cpus = std::max(job.cpus, 1);
  p.nodes = std::max(job.nodes, 1);
  p.accelerators = std::max(job.accelerators, 0);
  p.restarts = std::max(job.restarts, 0);
  p.checkpointable = job.checkpointable;
  p.age_factor = clamp01(job.age_factor);
  p.fairshare_factor = clamp01(job.fairshare_factor);
  p.job_size_factor = clamp01(job.job_size_factor);
  p.partition_factor = clamp01(job.partition_factor);
  p.qos_factor = clamp01(job.qos_factor);

  const int* parts = job.partitions;
  const int n_parts = job.partitions ? job.n_partitions : 0;
  bool any_partition = false;
  for (int i = 0; i < n_parts; ++i) any_partition = any_partition || valid_partition(cluster, parts[i]);
  const bool accel_job = p.accelerators > 0 && !job.gres.empty();

  if (!accel_job) {  // accel_speed 1, idle_accel_share 0: the schema's values for CPU jobs
    if (!any_partition) {
      p.fits_now = cluster.cpus_idle >= p.cpus;
      return p;
    }
    for (int i = 0; i < n_parts && !p.fits_now; ++i)
      if (valid_partition(cluster, parts[i])) p.fits_now = cluster.partitions[parts[i]].cpus_idle >= p.cpus;
    return p;
  }

  // Speed and capacity over the whole cluster.
  double speed = 0, best = 0, capacity = 0;
  for (std::size_t k = 0; k < cluster.pools.size(); ++k) {
    const Pool& pool = cluster.pools[k];
    if (pool.gres != job.gres) continue;
    const double s = job.pool_speeds ? job.pool_speeds[k] : 1.0;
    best = std::max(best, s);
    if (!placement::type_allowed(job.types, pool.type)) continue;
    speed = std::max(speed, s);
    capacity += std::max(pool.total, 0);
  }
  p.accel_speed = (speed > 0 && best > 0) ? std::min(speed / best, 1.0) : 1.0;

  // Idle accelerators where it can run: per allowed type, the most idle in one of its partitions.
  double idle = 0;
  if (!any_partition) {
    for (const Pool& pool : cluster.pools) {
      if (!allows(pool, job)) continue;
      idle += std::max(pool.idle, 0);
      p.fits_now = p.fits_now || (pool.idle >= p.accelerators && cluster.cpus_idle >= p.cpus);
    }
  } else {
    for (const Pool& type : cluster.pools) {
      if (!allows(type, job)) continue;
      int most = 0;
      for (int i = 0; i < n_parts; ++i) {
        if (!valid_partition(cluster, parts[i])) continue;
        const PartitionState& part = cluster.partitions[parts[i]];
        for (const Pool& pool : part.pools) {
          if (pool.gres != type.gres || pool.type != type.type) continue;
          most = std::max(most, pool.idle);
          p.fits_now = p.fits_now || (pool.idle >= p.accelerators && part.cpus_idle >= p.cpus);
        }
      }
      idle += most;
    }
  }
  p.idle_accel_share = capacity > 0 ? std::min(idle / capacity, 1.0) : 0.0;
  return p;
}

}  // namespace rlsched::job_view
