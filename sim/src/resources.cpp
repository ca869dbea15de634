#include "resources.h"

#include <algorithm>
#include <string>

namespace rlsched::sim {

namespace {

// strnatcmp's order, as slurmctld sorts its node table by name (read_config.c, _sort_nodes_by_name, without a
// topology plugin that ranks nodes): runs of digits compare as numbers, so node2 < node10, and a100-1 < h200-1
// whatever order slurm.conf lists them in.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && a[ei] == '0') ++ei;  // leading zeros do not count
      while (ej < b.size() && b[ej] == '0') ++ej;
      std::size_t di = ei, dj = ej;
      while (di < a.size() && digit(a[di])) ++di;
      while (dj < b.size() && digit(b[dj])) ++dj;
      if (di - ei != dj - ej) return di - ei < dj - ej;
      const int c = a.compare(ei, di - ei, b, ej, dj - ej);
      if (c != 0) return c < 0;
      i = di;
      j = dj;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

Topology::Topology(const Cluster& cluster) {
  const auto n = cluster.nodes.size();
  cpus.reserve(n);
  mem.reserve(n);
  slot_begin.reserve(n + 1);
  type_capacity.assign(cluster.accelerator_types.size(), 0);
  for (const Node& node : cluster.nodes) {
    cpus.push_back(node.cpus);
    total_cpus += node.cpus;
    mem.push_back(node.mem_mb);
    slot_begin.push_back(static_cast<int>(slot_type.size()));
    for (const GresCount& g : node.gres) {
      const AcceleratorType* type = cluster.find_type(g.type, g.name);
      if (type == nullptr) continue;  // untyped or unknown GRES: not an accelerator the scheduler places
      const int t = static_cast<int>(type - cluster.accelerator_types.data());
      slot_type.push_back(t);
      slot_count.push_back(g.count);
      type_capacity[t] += g.count;
    }
  }
  slot_begin.push_back(static_cast<int>(slot_type.size()));
  // slurmctld walks a partition's nodes in its node table's order (bitmap index order): by name.
  for (const Partition& p : cluster.partitions) {
    std::vector<int> nodes = p.nodes;
    std::stable_sort(nodes.begin(), nodes.end(), [&](int x, int y) {
      return natural_less(cluster.nodes[x].name, cluster.nodes[y].name);
    });
    partition_nodes.push_back(std::move(nodes));
    std::vector<int> most(cluster.accelerator_types.size(), 0);
    for (int node : p.nodes)
      for (int s = slot_begin[node]; s < slot_begin[node + 1]; ++s)
        most[slot_type[s]] = std::max(most[slot_type[s]], slot_count[s]);
    max_accel_per_node.push_back(std::move(most));
  }
}

FreeState FreeState::AllFree(const Topology& topology) {
  FreeState f;
  f.cpus = topology.cpus;
  f.mem = topology.mem;
  f.slot_free = topology.slot_count;
  f.up.assign(topology.cpus.size(), 1);
  return f;
}

void FreeState::take(const Allocation& allocation) {
  for (const Grant& g : allocation) {
    cpus[g.node] -= g.cpus;
    mem[g.node] -= g.mem;
    if (g.slot >= 0) slot_free[g.slot] -= g.accel;
  }
}

void FreeState::give(const Allocation& allocation) {
  for (const Grant& g : allocation) {
    cpus[g.node] += g.cpus;
    mem[g.node] += g.mem;
    if (g.slot >= 0) slot_free[g.slot] += g.accel;
  }
}

namespace {

struct NodeRoom {
  int cpus;
  std::int64_t mem;
  int slot;   // slot of the demanded type, -1 if none
  int accel;  // free accelerators in that slot
};

/// What node n can offer to `demand`, the minimum of `free` and `bound`.
NodeRoom room(const Topology& topo, const FreeState& free, const FreeState* bound, int n, int type) {
  NodeRoom r{free.cpus[n], free.mem[n], -1, 0};
  if (bound != nullptr) {
    r.cpus = std::min(r.cpus, bound->cpus[n]);
    r.mem = std::min(r.mem, bound->mem[n]);
  }
  if (type >= 0) {
    for (int s = topo.slot_begin[n]; s < topo.slot_begin[n + 1]; ++s) {
      if (topo.slot_type[s] != type) continue;
      int a = free.slot_free[s];
      if (bound != nullptr) a = std::min(a, bound->slot_free[s]);
      if (a > r.accel) {
        r.accel = a;
        r.slot = s;
      }
    }
  }
  return r;
}

}  // namespace

bool find_allocation(const Topology& topo, const FreeState& free, const FreeState* bound, int partition,
                     const Demand& demand, Allocation& out) {
  out.clear();
  const std::vector<int>& nodes = topo.partition_nodes[partition];
  // Memory binds only on nodes that track it (mem 0: not tracked, e.g. SelectTypeParameters=CR_Core).
  const auto mem_of = [&](int n) -> std::int64_t { return topo.mem[n] > 0 ? demand.mem_per_node : 0; };
  if (demand.nodes == 0) {
    // Spread CPUs first-fit over nodes, as cons_tres does for a job with only a task count.
    int remaining = demand.cpus;
    for (int n : nodes) {
      if (!free.up[n]) continue;
      const NodeRoom r = room(topo, free, bound, n, -1);
      if (r.cpus <= 0 || r.mem < mem_of(n)) continue;
      const int take = std::min(r.cpus, remaining);
      out.push_back(Grant{n, take, mem_of(n), -1, 0});
      remaining -= take;
      if (remaining == 0) return true;
    }
    out.clear();
    return false;
  }
  // One node: select/cons_tres's best fit, the node that fits with the fewest CPUs left (the first such in
  // partition order). Several: the first that fit, in partition order.
  int best = -1, best_cpus = 0, best_slot = -1;
  for (int n : nodes) {
    if (!free.up[n]) continue;
    const NodeRoom r = room(topo, free, bound, n, demand.type);
    if (r.cpus < demand.cpus_per_node || r.mem < mem_of(n)) continue;
    if (demand.type >= 0 && r.accel < demand.accel_per_node) continue;
    if (demand.nodes == 1) {
      if (best < 0 || r.cpus < best_cpus) {
        best = n;
        best_cpus = r.cpus;
        best_slot = r.slot;
      }
      continue;
    }
    out.push_back(Grant{n, demand.cpus_per_node, mem_of(n), demand.type >= 0 ? r.slot : -1,
                        demand.type >= 0 ? demand.accel_per_node : 0});
    if (static_cast<int>(out.size()) == demand.nodes) return true;
  }
  if (best >= 0) {
    out.push_back(Grant{best, demand.cpus_per_node, mem_of(best), demand.type >= 0 ? best_slot : -1,
                        demand.type >= 0 ? demand.accel_per_node : 0});
    return true;
  }
  out.clear();
  return false;
}

NoFitMemo::Entry NoFitMemo::entry(int partition, const FreeState* bound, const Demand& demand) {
  const bool spread = demand.nodes == 0;
  return Entry{bound,
               partition,
               demand.type,
               demand.nodes,
               spread ? demand.cpus : demand.cpus_per_node,
               demand.mem_per_node,
               demand.type >= 0 ? demand.accel_per_node : 0};
}

bool NoFitMemo::covers(const Entry& failed, const Entry& e) {
  // A spread demand and a per-node one are placed by different walks: neither bounds the other.
  if (failed.bound != e.bound || failed.partition != e.partition || failed.type != e.type ||
      (failed.nodes == 0) != (e.nodes == 0))
    return false;
  return e.nodes >= failed.nodes && e.cpus >= failed.cpus && e.mem >= failed.mem && e.accel >= failed.accel;
}

bool NoFitMemo::known(int partition, const FreeState* bound, const Demand& demand) const {
  const Entry e = entry(partition, bound, demand);
  for (const Entry& f : failed_)
    if (covers(f, e)) return true;
  return false;
}

void NoFitMemo::add(int partition, const FreeState* bound, const Demand& demand) {
  const Entry e = entry(partition, bound, demand);
  failed_.erase(std::remove_if(failed_.begin(), failed_.end(), [&](const Entry& f) { return covers(e, f); }),
                failed_.end());
  failed_.push_back(e);
}

int free_cpus(const Topology& topo, const FreeState& free, int partition) {
  int total = 0;
  for (int n : topo.partition_nodes[partition])
    if (free.up[n]) total += free.cpus[n];
  return total;
}

}  // namespace rlsched::sim
