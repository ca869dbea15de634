// Node resources and allocation: the simulator's counterpart of Slurm's select/cons_tres.
//
// FreeState holds what is free on every node (CPUs, memory, accelerators per GRES slot). The live state of the
// cluster is one FreeState; backfill copies it to look ahead (the state at a reservation's start) and to bound what
// a backfilled job may take ("extra" resources that do not delay the reservation).
#pragma once

#include <cstdint>
#include <vector>

#include "rlsched/cluster.h"

namespace rlsched::sim {

/// What one job needs under one choice of partition and accelerator type.
struct Demand {
  int nodes = 0;               ///< node count; 0 = spread CPUs over as many nodes as needed (CPU-only jobs)
  int cpus = 0;                ///< total CPUs
  int cpus_per_node = 0;       ///< when nodes > 0
  std::int64_t mem_per_node = 0;
  int type = -1;               ///< accelerator type index into Cluster::accelerator_types; -1 = no accelerators
  int accel_per_node = 0;      ///< when type >= 0
  int accel() const { return type >= 0 ? accel_per_node * nodes : 0; }
};

/// Resources granted on one node. `slot` indexes the node's GRES slots (see Topology), -1 if none.
struct Grant {
  int node = 0;
  int cpus = 0;
  std::int64_t mem = 0;
  int slot = -1;
  int accel = 0;
};
using Allocation = std::vector<Grant>;

/// The fixed shape of the cluster: which GRES slots each node has, which nodes each partition has.
struct Topology {
  explicit Topology(const Cluster& cluster);

  int node_count() const { return static_cast<int>(cpus.size()); }
  int total_cpus = 0;
  std::vector<int> cpus;
  std::vector<std::int64_t> mem;
  std::vector<int> slot_begin;  ///< node n's slots are [slot_begin[n], slot_begin[n+1])
  std::vector<int> slot_type;   ///< accelerator type index of each slot
  std::vector<int> slot_count;
  std::vector<std::vector<int>> partition_nodes;
  std::vector<int> type_capacity;  ///< accelerators of each type in the cluster
  /// Most accelerators of a type on one node of a partition: [partition][type], 0 when absent.
  std::vector<std::vector<int>> max_accel_per_node;
};

struct FreeState {
  std::vector<int> cpus;
  std::vector<std::int64_t> mem;
  std::vector<int> slot_free;
  std::vector<char> up;

  static FreeState AllFree(const Topology& topology);
  void take(const Allocation& allocation);
  void give(const Allocation& allocation);
};

/// Finds an allocation for `demand` on `partition` within `free`, and, when `bound` is given, also within it
/// (node by node: a backfilled job may use only what is free now AND left over at a reservation's start).
/// A one-node demand takes the node that fits with the fewest CPUs left (select/cons_tres best fit); a wider one
/// the first nodes that fit, in partition order. \return false if the demand does not fit.
bool find_allocation(const Topology& topology, const FreeState& free, const FreeState* bound, int partition,
                     const Demand& demand, Allocation& out);

/// Demands that found no allocation in one state of `free` and the bounds. find_allocation is monotone: a demand at
/// least as large in every dimension (nodes, CPUs, memory and accelerators per node, on the same partition, type and
/// bound) cannot fit where a smaller one did not. So in a backfill pass, where hundreds of pending jobs often ask
/// for the same few shapes (Gavel's GPU jobs), most tests end here instead of in a walk over the partition's nodes.
/// The owner clears it whenever `free` or a bound changes.
class NoFitMemo {
 public:
  void clear() { failed_.clear(); }
  /// Whether `demand` is known not to fit: a demand it dominates failed since the last clear().
  bool known(int partition, const FreeState* bound, const Demand& demand) const;
  /// Records that `demand` found no allocation.
  void add(int partition, const FreeState* bound, const Demand& demand);

 private:
  struct Entry {
    const FreeState* bound;
    int partition;
    int type;
    int nodes;  ///< 0: CPUs spread over nodes (cpus is the total), else cpus is per node
    int cpus;
    std::int64_t mem;
    int accel;
  };
  static Entry entry(int partition, const FreeState* bound, const Demand& demand);
  static bool covers(const Entry& failed, const Entry& e);  ///< e is at least as large as failed
  std::vector<Entry> failed_;
};

/// Free CPUs on up nodes of a partition.
int free_cpus(const Topology& topology, const FreeState& free, int partition);

}  // namespace rlsched::sim
