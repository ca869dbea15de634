// The C ABI's structs (rlsched.h) in the core's terms: the cluster snapshot and pending jobs as job_view sees them,
// and the partition states placement decides on.
#include "capi/c_snapshot.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include <fmt/format.h>

#include "capi/submit.h"

namespace rlsched::capi {
namespace {

Seconds limit_of(const rlsched_job& job, const rlsched_cluster& cluster, Seconds default_limit) {
  if (job.time_limit > 0) return job.time_limit;
  if (job.partition >= 0 && job.partition < cluster.n_partitions && cluster.partitions[job.partition].max_time > 0)
    return cluster.partitions[job.partition].max_time;
  return default_limit;
}

}  // namespace

std::string_view view(const char* s) {
  return s ? std::string_view(s) : std::string_view();
}

std::string class_of(const config::PluginConfig& config, const rlsched_job& job) {
  if (config.job_classes.empty()) return {};
  return config.classify(view(job.job_name), view(job.account), user_name_for_classes(config, job.user_id));
}

int32_t c_record_field(config::RecordField field) {
  switch (field) {
    case config::RecordField::kNone:
      return RLSCHED_RECORD_NONE;
    case config::RecordField::kAdminComment:
      return RLSCHED_RECORD_ADMIN_COMMENT;
    case config::RecordField::kComment:
      return RLSCHED_RECORD_COMMENT;
  }
  return RLSCHED_RECORD_NONE;
}

Status check_cluster(const rlsched_cluster& c) {
  if (c.n_partitions < 0 || (c.n_partitions > 0 && !c.partitions) || c.n_accel < 0 || (c.n_accel > 0 && !c.accel))
    return Status::InvalidInput("cluster: partitions/accel count negative or array NULL");
  for (int p = 0; p < c.n_partitions; ++p) {
    const rlsched_partition& part = c.partitions[p];
    if (!part.name) return Status::InvalidInput(fmt::format("cluster: partitions[{}].name is NULL", p));
    if (part.n_accel < 0 || (part.n_accel > 0 && !part.accel))
      return Status::InvalidInput(fmt::format("cluster: partition {}: accel count negative or array NULL", part.name));
    for (int k = 0; k < part.n_accel; ++k)
      if (!part.accel[k].gres)
        return Status::InvalidInput(fmt::format("cluster: partition {}: accel[{}].gres is NULL", part.name, k));
  }
  for (int k = 0; k < c.n_accel; ++k)
    if (!c.accel[k].gres) return Status::InvalidInput(fmt::format("cluster: accel[{}].gres is NULL", k));
  return Status::Ok();
}

BatchView::BatchView(const rlsched_cluster& cluster, const config::PluginConfig& config) : config_(config) {
  auto pools_of = [](const rlsched_accel* accel, int n) {
    std::vector<job_view::Pool> pools;
    pools.reserve(static_cast<std::size_t>(std::max(n, 0)));
    for (int k = 0; k < n; ++k)
      pools.push_back(
          {view(accel[k].gres), view(accel[k].type), std::max(accel[k].total, 0), std::max(accel[k].idle, 0)});
    return pools;
  };
  state.cpus_total = cluster.cpus_total;
  state.cpus_idle = cluster.cpus_idle;
  state.nodes_total = cluster.nodes_total;
  state.pools = pools_of(cluster.accel, cluster.n_accel);
  state.partitions.reserve(static_cast<std::size_t>(std::max(cluster.n_partitions, 0)));
  for (int p = 0; p < cluster.n_partitions; ++p)
    state.partitions.push_back(
        {cluster.partitions[p].cpus_idle, pools_of(cluster.partitions[p].accel, cluster.partitions[p].n_accel)});
}

const double* BatchView::speeds_for(const std::string& job_class) {
  for (const auto& [name, speeds] : speeds_)
    if (name == job_class) return speeds.data();
  std::vector<double> speeds;
  speeds.reserve(state.pools.size());
  for (const job_view::Pool& pool : state.pools) {
    const AcceleratorType* type = config_.find_type(pool.type, pool.gres);
    speeds.push_back(type ? type->speed_for(job_class) : 1.0);
  }
  speeds_.emplace_back(job_class, std::move(speeds));
  return speeds_.back().second.data();
}

PendingJob to_pending_job(const rlsched_job& job, const rlsched_cluster& cluster, const config::PluginConfig& config,
                          Seconds now, BatchView& batch, const std::string& job_class) {
  job_view::JobState s;
  s.id = job.job_id;
  s.submit = job.submit_time;
  s.eligible = std::max<Seconds>(job.submit_time, job.begin_time);
  s.time_limit = limit_of(job, cluster, config.placement.default_time_limit);
  s.cpus = job.cpus;
  s.nodes = job.nodes;
  s.accelerators = job.accelerators;
  if (job.accelerators > 0 && job.gres) {
    s.gres = job.gres;
    s.types = view(job.gres_type);
  }
  if (job.partitions && job.n_partitions > 0) {
    s.partitions = job.partitions;
    s.n_partitions = job.n_partitions;
  } else {
    s.partitions = &job.partition;
    s.n_partitions = 1;
  }
  s.pool_speeds = batch.speeds_for(job_class);
  s.restarts = job.restarts;
  s.checkpointable = preemption::declared_checkpoint(job.comment).has_value();
  s.age_factor = job.age_factor;
  s.fairshare_factor = job.fairshare_factor;
  s.job_size_factor = job.job_size_factor;
  s.partition_factor = job.partition_factor;
  s.qos_factor = job.qos_factor;
  return job_view::build(s, batch.state, now);
}

PendingJob to_pending_job(const rlsched_job& job, const rlsched_cluster& cluster, const config::PluginConfig& config,
                          Seconds now) {
  BatchView batch(cluster, config);
  return to_pending_job(job, cluster, config, now, batch, class_of(config, job));
}

std::vector<placement::PartitionState> to_partition_states(const rlsched_cluster& cluster, const rlsched_job* queue,
                                                           std::size_t n_queue, Seconds now,
                                                           const config::PluginConfig& config, ClassCache& classes) {
  const placement::Options options = placement_options(config);
  std::vector<placement::PartitionState> parts(static_cast<std::size_t>(std::max(cluster.n_partitions, 0)));
  for (int p = 0; p < cluster.n_partitions; ++p) {
    const rlsched_partition& cp = cluster.partitions[p];
    placement::PartitionState& ps = parts[p];
    ps.name = cp.name;
    ps.accepts_jobs = cp.accepts_jobs != 0;
    ps.max_time = std::max<Seconds>(cp.max_time, 0);
    for (int k = 0; k < cp.n_accel; ++k) {
      placement::AcceleratorPool pool;
      pool.gres = cp.accel[k].gres;
      pool.type = view(cp.accel[k].type);
      pool.total = std::max(cp.accel[k].total, 0);
      pool.idle = std::min(std::max(cp.accel[k].idle, 0), pool.total);
      pool.max_per_node = std::max(cp.accel[k].max_per_node, 0);
      pool.nodes = std::max(cp.accel[k].nodes, 0);
      pool.idle_nodes = std::min(std::max(cp.accel[k].idle_nodes, -1), pool.nodes);
      ps.pools.push_back(std::move(pool));
    }
  }
  // The C ABI carries no node lists, so two partitions with the same type on disjoint nodes count each other's
  // work too (QueueLoad spreads a job's work over every partition holding its type): a pessimistic wait estimate,
  // never an optimistic one.
  placement::QueueLoad load(options);
  std::vector<int> job_partitions;  // reused: one allocation for the whole queue
  for (std::size_t i = 0; i < n_queue; ++i) {
    const rlsched_job& j = queue[i];
    if (j.accelerators <= 0 || !j.gres || j.partition < 0 || j.partition >= cluster.n_partitions) continue;
    const Seconds limit_s = limit_of(j, cluster, options.default_time_limit);
    const double limit = double(limit_s);
    const std::string& job_class = classes.classify(config, view(j.job_name), view(j.account), j.user_id);
    if (j.state == RLSCHED_JOB_PENDING) {
      // Where it may start (sbatch -p a,b: every partition of its list), for its share of each type's work.
      job_partitions.clear();
      if (j.partitions && j.n_partitions > 0) {
        for (int32_t k = 0; k < j.n_partitions; ++k)
          if (j.partitions[k] >= 0 && j.partitions[k] < cluster.n_partitions) job_partitions.push_back(j.partitions[k]);
      } else {
        job_partitions.push_back(j.partition);
      }
      load.add_pending(view(j.gres), view(j.gres_type), j.accelerators, limit, job_class, job_partitions);
    } else if (j.state == RLSCHED_JOB_RUNNING)
      // Slurm's end_time is start + time limit: the elapsed time is what the limit has used up.
      load.add_running(view(j.gres), view(j.gres_type), j.accelerators, limit, double(now - (j.end_time - limit_s)),
                       job_class);
  }
  load.apply(parts);
  return parts;
}

}  // namespace rlsched::capi
