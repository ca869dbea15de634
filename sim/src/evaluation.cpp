#include "rlsched/sim/evaluation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <random>

#include <fmt/format.h>

namespace rlsched::sim {

const char* to_string(Protocol protocol) { return protocol == Protocol::kFull ? "full" : "rlscheduler"; }
const char* to_string(Backfill backfill) {
  switch (backfill) {
    case Backfill::kEasy: return "easy";
    case Backfill::kSlurm: return "slurm";
    case Backfill::kNone: return "none";
  }
  return "?";
}

Result<Protocol> parse_protocol(const std::string& text) {
  if (text == "full") return Protocol::kFull;
  if (text == "rlscheduler") return Protocol::kRlScheduler;
  return Status::InvalidInput(fmt::format("unknown protocol '{}' (known: full, rlscheduler)", text));
}

Result<Backfill> parse_backfill(const std::string& text) {
  if (text == "easy") return Backfill::kEasy;
  if (text == "none") return Backfill::kNone;
  if (text == "slurm") return Backfill::kSlurm;
  return Status::InvalidInput(fmt::format("unknown backfill '{}' (known: easy, slurm, none)", text));
}

Result<Cluster> implied_cluster(const Workload& workload) {
  for (const Job& job : workload.jobs)
    if (job.accel.count > 0)
      return Status::InvalidInput(fmt::format(
          "{}: the workload asks for accelerators, so it needs a cluster description (--cluster)",
          workload.report.source));
  Cluster cluster;
  if (workload.max_nodes > 0) {
    const int procs = workload.max_procs > 0 ? workload.max_procs : workload.max_nodes;
    cluster = Cluster::Homogeneous(workload.max_nodes, std::max(procs / workload.max_nodes, 1));
  } else {
    int widest = 1;
    for (const Job& job : workload.jobs) widest = std::max(widest, job.cpus);
    cluster = Cluster::Homogeneous(widest, 1);
  }
  // A trace names partitions but not their nodes: each partition it names spans the whole machine.
  std::vector<std::string> named;
  for (const Job& job : workload.jobs)
    for (const std::string& p : job.partitions)
      if (std::find(named.begin(), named.end(), p) == named.end()) named.push_back(p);
  if (!named.empty()) {
    const std::vector<int> all_nodes = cluster.partitions.front().nodes;
    cluster.partitions.clear();
    for (const std::string& name : named) cluster.partitions.push_back(Partition{name, all_nodes, 1, 1, 0, false});
    cluster.partitions.front().is_default = true;
  }
  // No site runs Slurm on the policy's score alone: the learned rank is added to multifactor priority.
  const double site = cluster.priority.site;
  cluster.priority = PriorityWeights::Typical();
  cluster.priority.site = site;
  return cluster;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Result<PolicyResult> evaluate_compat(const Workload& workload, const Cluster* cluster, const Scorer& scorer,
                                     const EvaluationOptions& options) {
  int nodes = 0, per_node = 0;
  if (cluster != nullptr) {
    nodes = static_cast<int>(cluster->nodes.size());
    per_node = nodes > 0 ? cluster->nodes.front().cpus : 1;
  }
  auto prepared = prepare_compat_workload(workload, nodes, per_node);
  if (!prepared.ok()) return prepared.status();
  const CompatWorkload& cw = *prepared;
  const CompatProtocol& protocol = options.compat;
  for (std::size_t start : protocol.starts)
    if (start + protocol.sequence_length > cw.jobs.size())
      return Status::InvalidInput(fmt::format(
          "{}: the rlscheduler protocol needs jobs {}..{}, the trace has {} usable jobs", workload.report.source,
          start, start + protocol.sequence_length - 1, cw.jobs.size()));

  PolicyResult result;
  result.protocol = Protocol::kRlScheduler;
  result.backfill = options.sim.backfill;
  const auto begin = Clock::now();
  std::vector<JobOutcome> all;
  double utilization = 0, makespan = 0;
  const int total_cpus = cw.nodes * cw.procs_per_node;
  for (std::size_t i = 0; i < protocol.starts.size(); ++i) {
    std::vector<JobOutcome> outcomes = run_compat_sequence(cw, protocol.starts[i], protocol.sequence_length, scorer,
                                                           options.sim.backfill == Backfill::kEasy);
    // Per sequence only what is averaged over sequences; everything else comes from all jobs at the end.
    double bsld = 0, busy = 0;
    Seconds first = outcomes.empty() ? 0 : outcomes.front().submit, last = first;
    for (const JobOutcome& o : outcomes) {
      bsld += bounded_slowdown(o.wait(), o.run());
      busy += static_cast<double>(o.cpus) * static_cast<double>(o.run());
      first = std::min(first, o.submit);
      last = std::max(last, o.end);
    }
    const double n = static_cast<double>(std::max<std::size_t>(outcomes.size(), 1));
    const double span = static_cast<double>(last - first);
    result.sequence_bsld.push_back(bsld / n);
    utilization += span > 0 ? busy / (total_cpus * span) : 0;
    makespan += span;
    all.insert(all.end(), outcomes.begin(), outcomes.end());
    if (options.progress) options.progress(static_cast<double>(i + 1) / static_cast<double>(protocol.starts.size()));
  }
  result.wall_seconds = seconds_since(begin);
  result.metrics = compute_metrics(workload.jobs, all, total_cpus);
  const double sequences = static_cast<double>(std::max<std::size_t>(protocol.starts.size(), 1));
  result.metrics.utilization = utilization / sequences;
  result.metrics.makespan = makespan / sequences;
  return result;
}

}  // namespace

Result<PolicyResult> evaluate_policy(const Workload& workload, const Cluster* cluster, const Scorer& scorer,
                                     const EvaluationOptions& options) {
  Result<PolicyResult> result = Status::Internal("unreachable");
  if (options.protocol == Protocol::kRlScheduler && options.energy != nullptr)
    return Status::InvalidInput("energy is metered under the full protocol only, not rlscheduler");
  if (options.protocol == Protocol::kRlScheduler) {
    result = evaluate_compat(workload, cluster, scorer, options);
  } else {
    Cluster implied;
    if (cluster == nullptr) {
      auto c = implied_cluster(workload);
      if (!c.ok()) return c.status();
      implied = std::move(*c);
      cluster = &implied;
    }
    SimConfig config = options.sim;
    if (options.progress) config.progress = options.progress;
    std::optional<EnergyMeter> meter;
    if (options.energy != nullptr) {
      meter.emplace(*cluster, workload.jobs, *options.energy, options.energy_series_step);
      if (!workload.jobs.empty()) meter->start_at(workload_span(workload.jobs).first);  // the idle wait counts too
      config.observer = [&meter, observer = options.sim.observer](const ScheduleEvent& e) {
        meter->observe(e);
        if (observer) observer(e);
      };
    }
    const auto begin = Clock::now();
    auto run = simulate(*cluster, workload.jobs, scorer, config);
    if (!run.ok()) return run.status();
    PolicyResult r;
    r.protocol = Protocol::kFull;
    r.backfill = config.backfill;
    r.placement = config.placement.mode;
    r.preemption = config.preemption.mode;
    r.metrics = std::move(run->metrics);
    r.counters = std::move(run->counters);
    if (meter) {
      r.energy = meter->finish(0);  // closed at the last event
      r.energy->deferral = config.energy != nullptr ? config.energy->rule : energy::Rule::kNone;
      split_by_deferral(*r.energy, workload.jobs, run->outcomes, *options.energy);
    }
    if (options.keep_outcomes) r.outcomes = std::move(run->outcomes);
    r.wall_seconds = seconds_since(begin);
    result = std::move(r);
  }
  if (result.ok()) result->policy = std::string(scorer.name());
  return result;
}

double offered_load(const std::vector<Job>& jobs, const Cluster& cluster) {
  bool accelerators = false;
  for (const Job& j : jobs) accelerators = accelerators || j.accel.count > 0;
  double capacity = 0;
  for (const Node& n : cluster.nodes) {
    if (!accelerators) capacity += n.cpus;
    for (const GresCount& g : n.gres) capacity += accelerators ? g.count : 0;
  }
  if (jobs.empty() || capacity <= 0) return 0;
  Seconds first = jobs.front().submit, last = first;
  double work = 0;
  for (const Job& j : jobs) {
    first = std::min(first, j.submit);
    last = std::max(last, j.submit);
    if (j.run_time > 0)
      work += static_cast<double>(accelerators ? j.accel.count : j.cpus) * static_cast<double>(j.run_time);
  }
  return last > first ? work / (capacity * static_cast<double>(last - first)) : 0;
}

Result<double> scale_to_load(std::vector<Job>& jobs, const Cluster& cluster, double load) {
  if (!(load > 0)) return Status::InvalidInput(fmt::format("load must be > 0 (got {})", load));
  const double now = offered_load(jobs, cluster);
  if (!(now > 0))
    return Status::InvalidInput("cannot scale to a load: the workload has no work or all jobs arrive at once");
  const double factor = now / load;  // the span grows by this factor, and the load falls by it
  Seconds first = jobs.front().submit;
  for (const Job& j : jobs) first = std::min(first, j.submit);
  for (Job& j : jobs)
    j.submit = first + static_cast<Seconds>(std::llround(static_cast<double>(j.submit - first) * factor));
  return factor;
}

Workload synthetic_workload(std::size_t jobs, int nodes, double load, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const int max_log2 = std::max(0, static_cast<int>(std::floor(std::log2(std::max(nodes, 1)))));
  Workload w;
  w.report.source = fmt::format("synthetic(jobs={}, nodes={}, load={}, seed={})", jobs, nodes, load, seed);
  w.max_nodes = nodes;
  w.max_procs = nodes;
  w.jobs.reserve(jobs);
  double work = 0;
  for (std::size_t i = 0; i < jobs; ++i) {
    Job job;
    job.id = static_cast<JobId>(i + 1);
    const double u = unit(rng);
    if (u < 0.25) {
      job.cpus = 1;
    } else if (u < 0.85) {
      job.cpus = 1 << std::uniform_int_distribution<int>(1, std::max(1, max_log2))(rng);
    } else {
      job.cpus = std::uniform_int_distribution<int>(1, std::max(1, nodes))(rng);
    }
    job.cpus = std::min(job.cpus, std::max(nodes, 1));
    // Run time: log-uniform, 70% between 10 s and 1 h, 30% between 1 h and 1 day.
    const bool long_job = unit(rng) < 0.3;
    const double lo = std::log(long_job ? 3600.0 : 10.0), hi = std::log(long_job ? 86400.0 : 3600.0);
    job.run_time = static_cast<Seconds>(std::exp(lo + (hi - lo) * unit(rng)));
    // Users ask for more: 1x to 5x, rounded up to 5 minutes.
    const double asked = static_cast<double>(job.run_time) * (1.0 + 4.0 * unit(rng));
    job.time_limit = static_cast<Seconds>(std::ceil(asked / 300.0) * 300.0);
    job.user = fmt::format("u{}", static_cast<int>(std::pow(unit(rng), 2.0) * 20.0));
    job.account = "synthetic";
    work += static_cast<double>(job.cpus) * static_cast<double>(job.run_time);
    w.jobs.push_back(std::move(job));
  }
  // Poisson arrivals whose mean gap offers `load` of the machine.
  const double mean_gap = work / (std::max(load, 0.01) * std::max(nodes, 1) * static_cast<double>(std::max<std::size_t>(jobs, 1)));
  std::exponential_distribution<double> gap(1.0 / std::max(mean_gap, 1e-9));
  double t = 0;
  for (Job& job : w.jobs) {
    t += gap(rng);
    job.submit = static_cast<Seconds>(t);
  }
  w.report.records = w.report.used = jobs;
  return w;
}

}  // namespace rlsched::sim
