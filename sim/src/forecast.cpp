// rlsched::sim::forecast: the simulator run from a snapshot (SimStart), once per scenario of run times.
#include "rlsched/sim/forecast.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "job_request.h"
#include "resources.h"
#include "slurm_sim.h"

namespace rlsched::sim {
namespace {

/// How long a job that outlived every end we would give it is taken to run on (docs/estimates.md).
constexpr Seconds kRemainder = 60;
/// The optimistic scenario: what is left of every run (running jobs' remaining time, pending jobs' run time) is
/// this share of the expected.
constexpr double kOptimisticShare = 0.5;

enum class Scenario { kExpected, kEarliest, kLatest };

/// `total` taken from `room` node by node in order, as much as each has (select/cons_tres's spread of a job that
/// names no node count); nullopt when it does not fit.
std::optional<std::vector<int>> fill(int total, const std::vector<int>& room) {
  std::vector<int> share(room.size(), 0);
  for (std::size_t i = 0; i < room.size() && total > 0; ++i) {
    share[i] = std::min(room[i], total);
    total -= share[i];
  }
  if (total > 0) return std::nullopt;
  return share;
}

/// The accelerator type a running job holds: the one named, else the first type on its first node it allows.
Result<int> held_type(const Cluster& cluster, const Topology& topology, const RunningJob& r) {
  if (r.job.accel.count <= 0) return -1;
  if (!r.accelerator_type.empty()) {
    for (std::size_t t = 0; t < cluster.accelerator_types.size(); ++t) {
      const AcceleratorType& type = cluster.accelerator_types[t];
      if (type.name == r.accelerator_type && (r.job.accel.name.empty() || type.gres == r.job.accel.name))
        return static_cast<int>(t);
    }
    return Status::InvalidInput(fmt::format("running job {} holds accelerator type '{}', which the cluster lacks",
                                            r.job.id, r.accelerator_type));
  }
  const int node = r.nodes.front();
  for (int s = topology.slot_begin[node]; s < topology.slot_begin[node + 1]; ++s) {
    const AcceleratorType& type = cluster.accelerator_types[topology.slot_type[s]];
    if (type.gres == r.job.accel.name && r.job.accel.allows(type.name)) return topology.slot_type[s];
  }
  return Status::InvalidInput(fmt::format("running job {} asks for {} {} but node {} has none it allows", r.job.id,
                                          r.job.accel.count, r.job.accel.name, cluster.nodes[node].name));
}

/// The resources a running job holds on its nodes, taken from `free`: the CPUs given per node, else its demand's
/// shape (make_demand) when it has as many nodes as that, else its CPUs and accelerators filled in node order; its
/// memory on each.
Result<Allocation> hold(const Cluster& cluster, const Topology& topology, FreeState& free, const RunningJob& r,
                        int partition, int type) {
  const auto misfit = [&](const char* what) {
    std::vector<std::string> names;
    for (int n : r.nodes) names.push_back(cluster.nodes[n].name);
    return Status::InvalidInput(
        fmt::format("running job {} does not fit its nodes {} (not enough {} left by the "
                    "other running jobs)",
                    r.job.id, fmt::join(names, ","), what));
  };
  if (!r.node_cpus.empty() && r.node_cpus.size() != r.nodes.size())
    return Status::InvalidInput(fmt::format("running job {} gives CPUs for {} nodes but holds {}", r.job.id,
                                            r.node_cpus.size(), r.nodes.size()));
  const Demand demand = make_demand(topology, r.job, partition, type);
  const bool shaped = demand.nodes == static_cast<int>(r.nodes.size());
  std::vector<int> cpu_room, accel_room, slots;
  for (int n : r.nodes) {
    int slot = -1;
    for (int s = topology.slot_begin[n]; s < topology.slot_begin[n + 1] && type >= 0; ++s)
      if (topology.slot_type[s] == type) slot = s;
    slots.push_back(slot);
    // With the demand's shape, a node must have its share; the fill takes what there is.
    const int cpus = !r.node_cpus.empty() ? r.node_cpus[cpu_room.size()] : shaped ? demand.cpus_per_node : free.cpus[n];
    const int accel = shaped ? demand.accel_per_node : slot >= 0 ? free.slot_free[slot] : 0;
    if (cpus > free.cpus[n]) return misfit("CPUs");
    if (accel > 0 && (slot < 0 || accel > free.slot_free[slot])) return misfit("accelerators");
    if (free.mem[n] < (topology.mem[n] > 0 ? r.job.mem_mb : 0)) return misfit("memory");
    cpu_room.push_back(cpus);
    accel_room.push_back(accel);
  }
  const bool given = shaped || !r.node_cpus.empty();
  const auto cpus = given ? std::optional(cpu_room) : fill(std::max(r.job.cpus, 1), cpu_room);
  if (!cpus) return misfit("CPUs");
  const auto accel = shaped ? std::optional(accel_room) : fill(std::max(r.job.accel.count, 0), accel_room);
  if (!accel) return misfit("accelerators");
  Allocation allocation;
  for (std::size_t i = 0; i < r.nodes.size(); ++i) {
    const int n = r.nodes[i];
    allocation.push_back(
        Grant{n, (*cpus)[i], topology.mem[n] > 0 ? r.job.mem_mb : 0, (*accel)[i] > 0 ? slots[i] : -1, (*accel)[i]});
  }
  free.take(allocation);
  return allocation;
}

/// When a running job ends in a scenario. Latest: its time limit's end, or kRemainder from now when that is past
/// (Slurm lets a job overrun by OverTimeLimit and the kill takes a moment). Expected: start + its predicted run
/// time, or its time limit's end when it has no prediction; one that outlived its prediction runs on as long again
/// as it has run (at least kRemainder), within that latest end. Earliest: now plus kOptimisticShare of the expected
/// remainder.
Seconds running_end(const RunningJob& r, Seconds now, Seconds limit, Scenario scenario) {
  const Seconds limit_end = r.start + limit > now ? r.start + limit : now + kRemainder;
  if (scenario == Scenario::kLatest) return limit_end;
  Seconds end = r.job.run_time >= 0 ? std::min(r.start + r.job.run_time, limit_end) : limit_end;
  if (end <= now) end = std::min(limit_end, now + std::max(kRemainder, now - r.start));
  if (scenario == Scenario::kEarliest)
    end = now + std::max<Seconds>(1, std::llround(kOptimisticShare * static_cast<double>(end - now)));
  return end;
}

/// A pending job's run time in a scenario: its prediction (its limit without one), or its limit (kLatest), or a
/// share of the prediction (kEarliest).
Seconds pending_run(const Job& job, Seconds limit, Scenario scenario) {
  const Seconds expected = job.run_time >= 0 ? std::min(job.run_time, limit) : limit;
  if (scenario == Scenario::kLatest) return limit;
  if (scenario == Scenario::kEarliest)
    return std::max<Seconds>(1, std::llround(kOptimisticShare * static_cast<double>(expected)));
  return expected;
}

struct Run {
  Seconds start = -1;
  int partition = -1;
  int type = -1;
};

}  // namespace

Result<std::vector<StartEstimate>> forecast(const Cluster& cluster, const Snapshot& snapshot, const Scorer& scorer,
                                            const ForecastOptions& options) {
  if (Status s = validate(cluster); !s.ok()) return s;
  const Topology topology(cluster);
  FreeState free = FreeState::AllFree(topology);
  const Seconds now = snapshot.now;
  // A job without a time limit runs, as far as the forecast knows, past the horizon.
  const auto limit_of = [&](const Job& j) { return j.time_limit > 0 ? j.time_limit : options.horizon + 1; };

  std::unordered_map<JobId, int> index;  // job id -> index into jobs
  std::vector<Job> jobs;
  const auto add = [&](const Job& job) -> Status {
    if (!index.emplace(job.id, static_cast<int>(jobs.size())).second)
      return Status::InvalidInput(fmt::format("job {} appears twice in the snapshot", job.id));
    jobs.push_back(job);
    jobs.back().time_limit = limit_of(job);
    return Status::Ok();
  };

  SimStart start;
  start.now = now;
  start.until = now + options.horizon;
  for (const RunningJob& r : snapshot.running) {
    if (Status s = add(r.job); !s.ok()) return s;
    if (r.nodes.empty()) return Status::InvalidInput(fmt::format("running job {} holds no nodes", r.job.id));
    for (int n : r.nodes)
      if (n < 0 || n >= topology.node_count())
        return Status::InvalidInput(fmt::format("running job {} holds node index {}, but the cluster has {} nodes",
                                                r.job.id, n, topology.node_count()));
    int partition = r.partition.empty() ? -1 : cluster.find_partition(r.partition);
    if (r.partition.empty()) {
      partition =
          r.job.partitions.empty() ? cluster.default_partition() : cluster.find_partition(r.job.partitions.front());
    }
    if (partition < 0)
      return Status::InvalidInput(fmt::format("running job {} runs in partition '{}', which the cluster lacks",
                                              r.job.id, r.partition.empty() ? "(default)" : r.partition));
    auto type = held_type(cluster, topology, r);
    if (!type.ok()) return type.status();
    auto allocation = hold(cluster, topology, free, r, partition, *type);
    if (!allocation.ok()) return allocation.status();
    start.running.push_back({index.at(r.job.id), partition, *type, std::move(*allocation), r.start, 0});
  }
  for (const QueuedJob& q : snapshot.pending)
    if (Status s = add(q.job); !s.ok()) return s;
  for (int n : snapshot.nodes_down)
    if (n < 0 || n >= topology.node_count())
      return Status::InvalidInput(
          fmt::format("node index {} is down, but the cluster has {} nodes", n, topology.node_count()));
  start.nodes_down = snapshot.nodes_down;
  start.eligible.assign(jobs.size(), now);
  for (const QueuedJob& q : snapshot.pending) start.eligible[index.at(q.job.id)] = q.eligible;

  std::vector<JobId> targets = options.targets;
  if (targets.empty())
    for (const QueuedJob& q : snapshot.pending) targets.push_back(q.job.id);
  const std::size_t first_pending = snapshot.running.size();
  for (JobId id : targets) {
    const auto it = index.find(id);
    if (it == index.end() || static_cast<std::size_t>(it->second) < first_pending)
      return Status::InvalidInput(fmt::format("job {} to estimate is not pending in the snapshot", id));
    start.targets.push_back(it->second);
  }

  SimConfig config = options.sim;
  config.failures.clear();
  config.progress = nullptr;
  config.on_scoring = nullptr;
  // Each scenario runs on its own copies of the jobs, the start and the configuration, so that the expected and
  // the latest run at once (the scorer's score() is const and thread-safe, as in slurmctld's threads); the
  // earliest needs the expected's result.
  const auto simulate_scenario = [&](Scenario scenario, Seconds until) -> Result<std::vector<Run>> {
    std::vector<Job> scenario_jobs = jobs;
    SimStart scenario_start = start;
    scenario_start.until = until;
    for (std::size_t i = 0; i < snapshot.running.size(); ++i)
      scenario_start.running[i].end = running_end(snapshot.running[i], now, jobs[i].time_limit, scenario);
    for (std::size_t i = first_pending; i < jobs.size(); ++i)
      scenario_jobs[i].run_time = pending_run(snapshot.pending[i - first_pending].job, jobs[i].time_limit, scenario);
    std::vector<Run> runs(jobs.size());
    SimConfig scenario_config = config;
    scenario_config.observer = [&runs](const ScheduleEvent& e) {
      if (e.kind != ScheduleEvent::Kind::kStart && e.kind != ScheduleEvent::Kind::kBackfillStart) return;
      if (runs[e.job].start < 0) runs[e.job] = Run{e.time, e.partition, e.accelerator_type};
    };
    try {
      SlurmSim(cluster, scenario_jobs, scorer, scenario_config, &scenario_start).run();
    } catch (const std::logic_error& e) {
      return Status::Internal(std::string("simulator invariant broken in a forecast: ") + e.what());
    }
    return runs;
  };

  std::future<Result<std::vector<Run>>> latest_run;
  if (options.interval)
    latest_run = std::async(std::launch::async, simulate_scenario, Scenario::kLatest, start.until);
  auto expected = simulate_scenario(Scenario::kExpected, start.until);
  std::vector<Run> earliest, latest;
  if (options.interval) {
    auto l = latest_run.get();
    if (!expected.ok()) return expected.status();
    if (!l.ok()) return l.status();
    latest = std::move(*l);
    // The earliest start counts only where it is before the expected one: that run may stop there.
    Seconds expected_last = now;
    for (int job : start.targets)
      expected_last = (*expected)[job].start < 0 ? start.until : std::max(expected_last, (*expected)[job].start);
    auto e = simulate_scenario(Scenario::kEarliest, std::min(start.until, expected_last));
    if (!e.ok()) return e.status();
    earliest = std::move(*e);
  }
  if (!expected.ok()) return expected.status();

  std::vector<StartEstimate> estimates;
  for (int job : start.targets) {
    const Run& run = (*expected)[job];
    StartEstimate e;
    e.id = jobs[job].id;
    e.start = run.start;
    e.earliest = e.latest = run.start;
    if (options.interval) {
      // The interval holds the expected start; a bound past the horizon (or never) is -1.
      const Seconds low = earliest[job].start, high = latest[job].start;
      if (low >= 0) e.earliest = e.start >= 0 ? std::min(low, e.start) : low;
      e.latest = high < 0 || e.start < 0 ? -1 : std::max(high, e.start);
    }
    if (run.partition >= 0) e.partition = cluster.partitions[run.partition].name;
    if (run.type >= 0) e.accelerator_type = cluster.accelerator_types[run.type].name;
    estimates.push_back(std::move(e));
  }
  return estimates;
}

std::vector<Result<std::vector<StartEstimate>>> forecast_each(const Cluster& cluster,
                                                              const std::vector<Snapshot>& snapshots,
                                                              const Scorer& scorer, const ForecastOptions& options) {
  std::vector<std::future<Result<std::vector<StartEstimate>>>> runs;
  for (const Snapshot& snapshot : snapshots)
    runs.push_back(std::async(std::launch::async, [&cluster, &snapshot, &scorer, &options] {
      return forecast(cluster, snapshot, scorer, options);
    }));
  std::vector<Result<std::vector<StartEstimate>>> results;
  for (auto& run : runs) results.push_back(run.get());
  return results;
}

}  // namespace rlsched::sim
