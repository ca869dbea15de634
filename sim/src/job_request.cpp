#include "job_request.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "rlsched/placement.h"
#include "text/type_set.h"

namespace rlsched::sim {
namespace {

int ceil_div(int a, int b) { return b > 0 ? (a + b - 1) / b : 0; }

double speed_of(const Cluster& cluster, const Job& job, int type) {
  return type >= 0 ? cluster.accelerator_types[type].speed_for(job.job_class) : 1.0;
}

/// Can `demand` ever be met on partition p, with every node up and idle?
bool demand_fits_idle(const Topology& topology, const FreeState& idle, int p, const Demand& demand) {
  if (demand.nodes == 0) {  // spread CPUs: only the partition's total matters (and memory per node)
    long long cpus = 0;
    for (int n : topology.partition_nodes[p])
      if (topology.mem[n] == 0 || topology.mem[n] >= demand.mem_per_node) cpus += topology.cpus[n];
    return cpus >= demand.cpus;
  }
  Allocation scratch;
  return find_allocation(topology, idle, nullptr, p, demand, scratch);
}

}  // namespace

bool fits_ever(const Topology& topology, const FreeState& idle, const Job& job, int p, int type) {
  const Demand d = make_demand(topology, job, p, type);
  return (type < 0 || d.nodes > 0) && demand_fits_idle(topology, idle, p, d);
}

void set_partitions(const Cluster& cluster, std::vector<int> partitions, JobRequest& r) {
  std::stable_sort(partitions.begin(), partitions.end(), [&](int a, int b) {
    return cluster.partitions[a].priority_tier > cluster.partitions[b].priority_tier;
  });
  int max_factor = 1;
  for (const Partition& p : cluster.partitions) max_factor = std::max(max_factor, p.priority_job_factor);
  r.partitions = std::move(partitions);
  r.tier = cluster.partitions[r.partitions.front()].priority_tier;
  r.partition_factor = static_cast<double>(cluster.partitions[r.partitions.front()].priority_job_factor) / max_factor;
}

Demand make_demand(const Topology& topology, const Job& job, int p, int type) {
  Demand d;
  d.cpus = std::max(job.cpus, 1);
  d.mem_per_node = job.mem_mb;
  d.type = type;
  if (type >= 0) {
    const int per_node_max = topology.max_accel_per_node[p][type];
    if (per_node_max <= 0) return d;  // nodes stays 0: no such accelerator in this partition
    if (job.nodes > 0) {
      d.nodes = job.nodes;
      d.accel_per_node = ceil_div(job.accel.count, d.nodes);
    } else {  // the shape the placement estimate assumes too
      const placement::NodeShape shape = placement::fewest_nodes(job.accel.count, per_node_max);
      d.nodes = shape.nodes;
      d.accel_per_node = shape.per_node;
    }
  } else {
    d.nodes = std::max(job.nodes, 0);
  }
  if (d.nodes > 0) d.cpus_per_node = ceil_div(d.cpus, d.nodes);
  return d;
}

JobRequest make_request(const Cluster& cluster, const Topology& topology, const FreeState& idle, const Job& job,
                        int user) {
  JobRequest r;
  r.user = user;
  r.limit = job.time_limit > 0 ? job.time_limit : std::max<Seconds>(job.run_time, 1);
  // priority/multifactor 22.05 without PriorityFlags=SMALL_RELATIVE_TO_TIME: the mean of the job's share of the
  // cluster's nodes (its minimum node count) and of its CPUs; 1 minus that with PriorityFavorSmall.
  const double node_share = std::max(job.nodes, 1) / static_cast<double>(std::max(topology.node_count(), 1));
  const double cpu_share = std::max(job.cpus, 1) / static_cast<double>(std::max(topology.total_cpus, 1));
  r.job_size_factor = std::clamp((node_share + cpu_share) / 2, 0.0, 1.0);
  if (cluster.priority.favor_small) r.job_size_factor = 1.0 - r.job_size_factor;

  // Partitions: the ones asked for, or the default one.
  std::vector<int> asked;
  if (job.partitions.empty()) {
    if (cluster.default_partition() >= 0) asked.push_back(cluster.default_partition());
  } else {
    for (const std::string& name : job.partitions) {
      const int p = cluster.find_partition(name);
      if (p < 0) {
        r.rejection = fmt::format("no partition named '{}'", name);
        return r;
      }
      asked.push_back(p);
    }
  }

  // Accelerator types: those of the GRES name the job asks for, restricted to its any-of set.
  if (job.accel.count > 0) {
    for (std::size_t t = 0; t < cluster.accelerator_types.size(); ++t) {
      const AcceleratorType& type = cluster.accelerator_types[t];
      if (type.gres == job.accel.name && job.accel.allows(type.name)) r.types.push_back(static_cast<int>(t));
    }
    if (r.types.empty()) {
      r.rejection = job.accel.any_type() ? fmt::format("no accelerators of GRES '{}' in the cluster", job.accel.name)
                                         : fmt::format("no accelerator type of '{}' in the cluster", job.accel.name);
      return r;
    }
    std::stable_sort(r.types.begin(), r.types.end(), [&](int a, int b) {
      return speed_of(cluster, job, a) > speed_of(cluster, job, b);
    });
    r.queue_types = text::format_type_set(job.accel.types);
  } else {
    r.types.push_back(-1);
  }

  std::string why = "no partition can ever run it";
  for (int p : asked) {
    const Partition& part = cluster.partitions[p];
    if (part.max_time > 0 && r.limit > part.max_time) {
      why = fmt::format("time limit {} s exceeds MaxTime {} s of partition '{}'", r.limit, part.max_time, part.name);
      continue;
    }
    bool fits = false;
    for (int type : r.types) fits = fits || fits_ever(topology, idle, job, p, type);
    if (!fits) {
      why = fmt::format("asks for more than partition '{}' has ({} CPUs, {} nodes, {} {})", part.name, job.cpus,
                        job.nodes, job.accel.count, job.accel.name.empty() ? "accelerators" : job.accel.name);
      continue;
    }
    r.partitions.push_back(p);
  }
  if (r.partitions.empty()) {
    r.rejection = why;
    return r;
  }
  set_partitions(cluster, r.partitions, r);

  int max_qos = 0, qos = 0;
  for (const Qos& q : cluster.qos) {
    max_qos = std::max(max_qos, q.priority);
    if (q.name == job.qos) qos = q.priority;
  }
  r.qos_factor = max_qos > 0 ? static_cast<double>(qos) / max_qos : 0.0;

  const AcceleratorType* ran_on = job.ran_on_type.empty() ? nullptr : cluster.find_type(job.ran_on_type);
  const double reference_speed = ran_on != nullptr ? ran_on->speed_for(job.job_class) : 1.0;
  r.reference_work = static_cast<double>(std::max<Seconds>(job.run_time, 0)) * reference_speed;
  return r;
}

Seconds run_time_on(const Cluster& cluster, const Job& job, const JobRequest& request, int type) {
  if (type < 0) return std::max<Seconds>(job.run_time, 0);
  const double run = request.reference_work / speed_of(cluster, job, type);
  return job.run_time > 0 ? std::max<Seconds>(1, static_cast<Seconds>(std::llround(run))) : 0;
}

}  // namespace rlsched::sim
