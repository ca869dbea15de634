// Placement::kPredictive: the simulator's side of job_submit/rlsched. It shows rlsched::placement the same picture
// slurmctld gives the plugin (plugin/common/rlsched_snapshot.c): per partition and accelerator type, the devices on
// usable nodes, how many are idle, the most on one node, the nodes with all of them idle; the pending jobs with the
// types they asked for (one type once placed) and their time limits; the running jobs with their allocated type and
// how much of their limit is used. test/capi/placement_parity_test.cpp checks that both make the same decision.
#include <algorithm>

#include "job_placement.h"
#include "rlsched/placement.h"
#include "slurm_sim.h"

namespace rlsched::sim {

void SlurmSim::place_at_submit(int job, Seconds now) {
  const Job& j = jobs_[job];
  JobRequest& r = requests_[job];
  if (j.accel.count <= 0 || j.accel.types.size() == 1) return;  // no accelerators, or the user chose the type

  placement::Options options;
  options.types = cluster_.accelerator_types;
  options.default_time_limit = config_.placement.default_time_limit;
  options.slack = config_.placement.slack;
  options.gres_equivalence = config_.placement.gres_equivalence;
  options.gres_portable_classes = config_.placement.gres_portable_classes;

  std::vector<placement::PartitionState> parts(cluster_.partitions.size());
  std::vector<int> on_node(cluster_.accelerator_types.size()), idle_on_node(on_node.size());
  for (std::size_t p = 0; p < parts.size(); ++p) {
    placement::PartitionState& ps = parts[p];
    ps.name = cluster_.partitions[p].name;
    ps.max_time = cluster_.partitions[p].max_time;
    std::vector<int> pool_of(cluster_.accelerator_types.size(), -1);
    for (std::size_t t = 0; t < pool_of.size(); ++t) {
      if (topology_.max_accel_per_node[p][t] <= 0) continue;
      pool_of[t] = static_cast<int>(ps.pools.size());
      placement::AcceleratorPool pool;
      pool.gres = cluster_.accelerator_types[t].gres;
      pool.type = cluster_.accelerator_types[t].name;
      pool.idle = partition_free_accel_[p][t];
      pool.idle_nodes = 0;
      ps.pools.push_back(std::move(pool));
    }
    for (int n : topology_.partition_nodes[p]) {
      if (!free_.up[n]) continue;
      std::fill(on_node.begin(), on_node.end(), 0);
      std::fill(idle_on_node.begin(), idle_on_node.end(), 0);
      for (int s = topology_.slot_begin[n]; s < topology_.slot_begin[n + 1]; ++s) {
        on_node[topology_.slot_type[s]] += topology_.slot_count[s];
        idle_on_node[topology_.slot_type[s]] += free_.slot_free[s];
      }
      for (std::size_t t = 0; t < on_node.size(); ++t) {
        if (on_node[t] == 0 || pool_of[t] < 0) continue;
        placement::AcceleratorPool& pool = ps.pools[pool_of[t]];
        pool.total += on_node[t];
        pool.max_per_node = std::max(pool.max_per_node, on_node[t]);
        ++pool.nodes;
        if (idle_on_node[t] == on_node[t]) ++pool.idle_nodes;
      }
    }
  }

  placement::QueueLoad load(options);
  for (std::size_t i = first_live_; i < pending_.size(); ++i) {
    const QueueEntry& e = pending_[i];
    if (!live(e) || jobs_[e.job].accel.count <= 0) continue;
    load.add_pending(jobs_[e.job].accel.name, requests_[e.job].queue_types, jobs_[e.job].accel.count,
                     static_cast<double>(requests_[e.job].limit), jobs_[e.job].job_class, requests_[e.job].partitions);
  }
  for (const auto& [expected_end, k] : running_by_limit_) {
    const JobState& s = state_[k];
    if (s.type < 0) continue;
    load.add_running(jobs_[k].accel.name, cluster_.accelerator_types[s.type].name, jobs_[k].accel.count,
                     static_cast<double>(requests_[k].limit), static_cast<double>(now - s.start), jobs_[k].job_class);
  }
  load.apply(parts);

  placement::Request q;
  q.count = j.accel.count;
  if (j.nodes > 0) {  // a trace's node count (sacct's NNodes) shapes the job as make_demand does
    q.nodes = j.nodes;
    q.per_node = (j.accel.count + j.nodes - 1) / j.nodes;
  }
  q.gres = j.accel.name;
  q.types = j.accel.types;
  q.time_limit = r.limit;
  q.partitions = j.partitions.empty() ? config_.placement.partitions : j.partitions;
  q.job_class = j.job_class;
  const placement::Decision d = placement::place(q, parts, options);
  if (!d.placed) return;  // the request stays as submitted; make_request already rejected what can never run
  std::vector<std::pair<int, int>> set;  // (partition, type) of each member, best first
  for (const placement::SetMember& m : d.set) {
    const AcceleratorType* type = cluster_.find_type(m.type, d.gres);
    if (type == nullptr) return;
    set.emplace_back(m.partition, static_cast<int>(type - cluster_.accelerator_types.data()));
  }
  if (d.count == j.accel.count) {  // the same devices, of this GRES or of an equivalent one
    if (!pin_set(cluster_, topology_, idle_, j, set, r)) return;
  } else {  // a move to a type of another count_scale: the job asks for what job_submit/rlsched writes
    Job moved = j;
    moved.accel.count = d.count;
    moved.accel.name = d.gres;
    if (placed_jobs_.empty() || !pin_set(cluster_, topology_, idle_, moved, set, r)) return;
    placed_jobs_[static_cast<std::size_t>(job)] = std::move(moved);
  }
  double predicted = d.set.front().wait;
  for (const placement::SetMember& m : d.set) predicted = std::min(predicted, m.wait);
  outcomes_[job].predicted_wait = predicted;
  const int t = set.front().second;
  if (config_.observer) {
    ScheduleEvent e;
    e.kind = ScheduleEvent::Kind::kPlacement;
    e.time = now;
    e.job = job;
    e.partition = d.partition;
    e.accelerator_type = t;
    e.accelerators = jobs_[job].accel.count;
    e.partitions = r.partitions;
    config_.observer(e);
  }
}

}  // namespace rlsched::sim
