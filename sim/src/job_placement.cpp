#include "job_placement.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace rlsched::sim {

const char* to_string(Placement placement) {
  switch (placement) {
    case Placement::kFastestFree:
      return "fastest-free";
    case Placement::kFirstFit:
      return "first-fit";
    case Placement::kRecorded:
      return "recorded";
    case Placement::kFastest:
      return "fastest";
    case Placement::kPredictive:
      return "predictive";
  }
  return "?";
}

Result<Placement> parse_placement(const std::string& text) {
  for (Placement p : {Placement::kFastestFree, Placement::kFirstFit, Placement::kRecorded, Placement::kFastest,
                      Placement::kPredictive})
    if (text == to_string(p)) return p;
  return Status::InvalidInput(fmt::format(
      "unknown placement '{}' (known: fastest-free, first-fit, recorded, fastest, predictive)", text));
}

bool pin(const Cluster& cluster, const Topology& topology, const FreeState& idle, const Job& job,
         const PlacementSettings& settings, int partition, int type, JobRequest& request) {
  std::vector<int> candidates;
  if (partition >= 0) {
    candidates.push_back(partition);
  } else if (job.partitions.empty() && !settings.partitions.empty()) {
    for (const std::string& name : settings.partitions)
      if (const int p = cluster.find_partition(name); p >= 0) candidates.push_back(p);
  } else {
    candidates = request.partitions;
  }
  std::vector<int> kept;
  for (int p : candidates) {
    const Partition& part = cluster.partitions[p];
    if (part.max_time > 0 && request.limit > part.max_time) continue;
    if (fits_ever(topology, idle, job, p, type)) kept.push_back(p);
  }
  if (kept.empty()) return false;
  set_partitions(cluster, std::move(kept), request);
  request.types = {type};
  request.queue_types = cluster.accelerator_types[type].name;
  return true;
}

bool pin_set(const Cluster& cluster, const Topology& topology, const FreeState& idle, const Job& job,
             const std::vector<std::pair<int, int>>& set, JobRequest& request) {
  std::vector<int> partitions, types;
  for (const auto& [p, t] : set) {
    const Partition& part = cluster.partitions[p];
    if (part.max_time > 0 && request.limit > part.max_time) continue;
    if (!fits_ever(topology, idle, job, p, t)) continue;
    if (std::find(partitions.begin(), partitions.end(), p) == partitions.end()) partitions.push_back(p);
    if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
  }
  if (partitions.empty()) return false;
  const bool pinned = partitions.size() == 1;
  set_partitions(cluster, std::move(partitions), request);
  request.queue_types = pinned ? cluster.accelerator_types[types.front()].name : std::string();
  request.types = pinned ? std::vector<int>{types.front()} : std::move(types);
  return true;
}

void apply_static_placement(const Cluster& cluster, const Topology& topology, const FreeState& idle, const Job& job,
                            const PlacementSettings& settings, JobRequest& request) {
  if (!request.rejection.empty() || request.types.empty() || request.types.front() < 0) return;
  switch (settings.mode) {
    case Placement::kFastestFree:
    case Placement::kPredictive:
      return;
    case Placement::kFirstFit: {
      // select/cons_tres takes the first nodes that fit, whatever their type: the types in the order their first
      // node appears.
      std::vector<int> first_node(cluster.accelerator_types.size(), std::numeric_limits<int>::max());
      for (int n = topology.node_count() - 1; n >= 0; --n)
        for (int s = topology.slot_begin[n]; s < topology.slot_begin[n + 1]; ++s)
          first_node[topology.slot_type[s]] = n;
      std::stable_sort(request.types.begin(), request.types.end(),
                       [&](int a, int b) { return first_node[a] < first_node[b]; });
      return;
    }
    case Placement::kRecorded: {
      for (int t : request.types)
        if (cluster.accelerator_types[t].name == job.ran_on_type) {
          pin(cluster, topology, idle, job, settings, -1, t, request);
          return;
        }
      return;
    }
    case Placement::kFastest:
      // types are sorted fastest first for this job's class; the first that some partition can hold.
      for (int t : std::vector<int>(request.types))
        if (pin(cluster, topology, idle, job, settings, -1, t, request)) return;
      return;
  }
}

}  // namespace rlsched::sim
