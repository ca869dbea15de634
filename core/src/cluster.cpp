#include "rlsched/cluster.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace rlsched {

double AcceleratorType::speed_for(const std::string& job_class) const {
  if (!job_class.empty()) {
    auto it = class_speed.find(job_class);
    if (it != class_speed.end()) return it->second;
  }
  return speed;
}

std::uint32_t PriorityWeights::site_scale() const {
  if (!std::isfinite(site) || site <= 0) return 0;
  return static_cast<std::uint32_t>(std::lround(std::min(site, 1e9)));
}

PriorityWeights PriorityWeights::Typical() {
  PriorityWeights w;
  w.age = 1000;
  w.fairshare = 10000;
  w.job_size = 100;
  w.partition = 1000;
  w.qos = 10000;
  return w;
}

int Cluster::find_partition(const std::string& partition_name) const {
  for (std::size_t i = 0; i < partitions.size(); ++i)
    if (partitions[i].name == partition_name) return static_cast<int>(i);
  return -1;
}

int Cluster::default_partition() const {
  for (std::size_t i = 0; i < partitions.size(); ++i)
    if (partitions[i].is_default) return static_cast<int>(i);
  return partitions.empty() ? -1 : 0;
}

const AcceleratorType* Cluster::find_type(const std::string& type, const std::string& gres) const {
  for (const auto& t : accelerator_types)
    if (t.name == type && (gres.empty() || t.gres == gres)) return &t;
  return nullptr;
}

int Cluster::total_cpus() const {
  int total = 0;
  for (const auto& n : nodes) total += n.cpus;
  return total;
}

Cluster Cluster::Homogeneous(int node_count, int cpus_per_node) {
  Cluster c;
  c.name = "homogeneous";
  Partition p;
  p.name = "batch";
  p.is_default = true;
  for (int i = 0; i < node_count; ++i) {
    c.nodes.push_back(Node{fmt::format("n{}", i), cpus_per_node, 0, {}});
    p.nodes.push_back(i);
  }
  c.partitions.push_back(std::move(p));
  return c;
}

Status validate(const Cluster& cluster) {
  if (cluster.nodes.empty()) return Status::InvalidInput("cluster has no nodes");
  if (cluster.partitions.empty()) return Status::InvalidInput("cluster has no partitions");
  std::set<std::string> names;
  for (const auto& n : cluster.nodes) {
    if (!names.insert(n.name).second) return Status::InvalidInput(fmt::format("node '{}' is defined twice", n.name));
    if (n.cpus <= 0) return Status::InvalidInput(fmt::format("node '{}': cpus must be > 0 (got {})", n.name, n.cpus));
    if (n.mem_mb < 0) return Status::InvalidInput(fmt::format("node '{}': memory must be >= 0", n.name));
    for (const auto& g : n.gres) {
      if (g.count <= 0)
        return Status::InvalidInput(fmt::format("node '{}': gres {}:{} count must be > 0 (got {})", n.name, g.name,
                                                g.type, g.count));
    }
  }
  names.clear();
  int defaults = 0;
  for (const auto& p : cluster.partitions) {
    if (!names.insert(p.name).second)
      return Status::InvalidInput(fmt::format("partition '{}' is defined twice", p.name));
    if (p.nodes.empty()) return Status::InvalidInput(fmt::format("partition '{}' has no nodes", p.name));
    for (int idx : p.nodes)
      if (idx < 0 || idx >= static_cast<int>(cluster.nodes.size()))
        return Status::InvalidInput(fmt::format("partition '{}' refers to node index {} out of range", p.name, idx));
    if (p.max_time < 0) return Status::InvalidInput(fmt::format("partition '{}': max_time must be >= 0", p.name));
    defaults += p.is_default ? 1 : 0;
  }
  if (defaults > 1) return Status::InvalidInput("more than one default partition");
  names.clear();
  for (const auto& t : cluster.accelerator_types) {
    if (!names.insert(t.gres + ":" + t.name).second)
      return Status::InvalidInput(fmt::format("accelerator type '{}:{}' is defined twice", t.gres, t.name));
    if (!(t.speed > 0) || !std::isfinite(t.speed))
      return Status::InvalidInput(fmt::format("accelerator type '{}': speed must be > 0 (got {})", t.name, t.speed));
    for (const auto& [cls, s] : t.class_speed)
      if (!(s > 0) || !std::isfinite(s))
        return Status::InvalidInput(
            fmt::format("accelerator type '{}': speed for class '{}' must be > 0 (got {})", t.name, cls, s));
    if (!(t.count_scale > 0) || !std::isfinite(t.count_scale))
      return Status::InvalidInput(
          fmt::format("accelerator type '{}': count_scale must be > 0 (got {})", t.name, t.count_scale));
  }
  return Status::Ok();
}

}  // namespace rlsched
