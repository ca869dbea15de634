#include "report_table.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace rlsched::cli {

namespace {

constexpr std::size_t kShownSkipReasons = 5;

std::string count(std::size_t n, const char* singular, const char* plural) {
  return fmt::format("{} {}", n, n == 1 ? singular : plural);
}

// Seconds keep one decimal: waits are whole seconds per job, their means rarely are.
std::string secs(double value) {
  return fixed(value, 1);
}

double jobs_per_second(const sim::PolicyResult& r) {
  return r.wall_seconds > 0 ? static_cast<double>(r.metrics.jobs) / r.wall_seconds : 0.0;
}

std::string accelerator_summary(const Cluster& cluster) {
  std::map<std::string, int> counts;  // "gpu:h200" -> accelerators on all nodes
  for (const Node& node : cluster.nodes)
    for (const GresCount& gres : node.gres)
      counts[gres.type.empty() ? gres.name : gres.name + ":" + gres.type] += gres.count;
  if (counts.empty()) return "no accelerators";
  std::vector<std::string> parts;
  for (const auto& [name, count] : counts) parts.push_back(fmt::format("{} x{}", name, count));
  return fmt::format("accelerators {}", fmt::join(parts, ", "));
}

std::string protocol_summary(const sim::EvaluationOptions& evaluation) {
  if (evaluation.protocol == sim::Protocol::kRlScheduler)
    return fmt::format("rlscheduler ({} sequences of {} jobs, RLScheduler's simulator semantics)",
                       evaluation.compat.starts.size(), evaluation.compat.sequence_length);
  std::string text = "full (the whole workload through the Slurm model)";
  if (evaluation.sim.bf_max_job_test > 0) text += fmt::format(", bf_max_job_test {}", evaluation.sim.bf_max_job_test);
  return text;
}

bool several_placements(const std::vector<sim::PolicyResult>& results) {
  for (const sim::PolicyResult& r : results)
    if (r.placement != results.front().placement) return true;
  return false;
}

bool several_preemptions(const std::vector<sim::PolicyResult>& results) {
  for (const sim::PolicyResult& r : results)
    if (r.preemption != results.front().preemption) return true;
  return false;
}

/// "POLICY", with " / PLACEMENT" and " / PREEMPTION" when the results differ in them (the preemption table has its
/// own column for the mode: with_preemption false).
std::string run_label(const sim::PolicyResult& r, const std::vector<sim::PolicyResult>& results,
                      bool with_preemption = true) {
  std::string label = r.policy;
  if (several_placements(results)) label += fmt::format(" / {}", sim::to_string(r.placement));
  if (with_preemption && several_preemptions(results)) label += fmt::format(" / {}", sim::to_string(r.preemption));
  return label;
}

/// The waits of the urgent QOS's jobs, and the average wait of all others.
struct UrgentWaits {
  std::size_t urgent_jobs = 0;
  double urgent_avg = 0, urgent_p95 = 0, others_avg = 0;
};

UrgentWaits urgent_waits(const sim::Metrics& m) {
  UrgentWaits w;
  double others = 0;
  std::size_t other_jobs = 0;
  for (const sim::QosMetrics& q : m.per_qos) {
    if (q.name == kUrgentQos) {
      w.urgent_jobs = q.jobs;
      w.urgent_avg = q.avg_wait;
      w.urgent_p95 = q.p95_wait;
    } else {
      others += q.avg_wait * static_cast<double>(q.jobs);
      other_jobs += q.jobs;
    }
  }
  w.others_avg = other_jobs > 0 ? others / static_cast<double>(other_jobs) : 0;
  return w;
}

}  // namespace

std::string fixed(double value, int precision) {
  return fmt::format("{:.{}f}", value, precision);
}

std::string hours(double seconds) {
  return fixed(seconds / 3600.0, 2);
}

void Table::add_column(std::string header, Align align) {
  headers_.push_back(std::move(header));
  aligns_.push_back(align);
}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::render(const std::string& indent) const {
  std::vector<std::size_t> widths(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) {
    widths[c] = headers_[c].size();
    for (const auto& row : rows_) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  auto append_line = [&](const std::vector<std::string>& cells) {
    std::string line = indent;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) line += "  ";
      line += aligns_[c] == Align::kLeft ? fmt::format("{:<{}}", cells[c], widths[c])
                                         : fmt::format("{:>{}}", cells[c], widths[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  append_line(headers_);
  for (const auto& row : rows_) append_line(row);
  return out;
}

std::string read_notes(const ReadReport& report) {
  std::string notes;
  const auto list = [&notes](const std::vector<std::string>& lines, std::size_t total, const char* what,
                             const char* more) {
    const std::size_t shown = std::min(lines.size(), kShownSkipReasons);
    for (std::size_t i = 0; i < shown; ++i) notes += fmt::format("  {}: {}\n", what, lines[i]);
    if (total > shown) notes += fmt::format("  ... and {} more {}\n", total - shown, more);
  };
  list(report.reasons, report.skipped, "skipped", "skipped");
  list(report.warnings, report.warned, "warning", "warnings");
  return notes;
}

void print_inputs(std::FILE* out, const Inputs& inputs, const RunOptions& options,
                  const sim::EvaluationOptions& evaluation) {
  const ReadReport& report = inputs.workload.report;
  fmt::print(out, "trace:     {}\n", inputs.trace_label);
  fmt::print(out, "report:    {} records, {} used, {} skipped, {} merged; {} jobs\n", report.records, report.used,
             report.skipped, report.merged, inputs.workload.jobs.size());
  fmt::print(out, "{}", read_notes(report));

  const Cluster& cluster = inputs.cluster;
  fmt::print(out, "cluster:   {} ({}): {}, {}, {}, {}\n", cluster.name, inputs.cluster_label,
             count(cluster.nodes.size(), "node", "nodes"), count(cluster.total_cpus(), "CPU", "CPUs"),
             count(cluster.partitions.size(), "partition", "partitions"), accelerator_summary(cluster));
  const PriorityWeights& w = cluster.priority;
  if (evaluation.protocol == sim::Protocol::kRlScheduler || !w.multifactor_enabled())
    fmt::print(out, "priority:  the policy's score alone orders the queue (no multifactor weights)\n");
  else
    fmt::print(out,
               "priority:  multifactor (age {:g}, fairshare {:g}, job size {:g}, partition {:g}, QOS {:g}) + the "
               "policy's rank as site factor, 0..{} (score_scale)\n",
               w.age, w.fairshare, w.job_size, w.partition, w.qos, w.site_scale());
  fmt::print(out, "config:    {}\n", inputs.config_label);
  fmt::print(out, "protocol:  {}\n", protocol_summary(evaluation));
  if (inputs.injected.urgent > 0) {
    const auto [share, seed] = options.parsed_urgent();
    fmt::print(out,
               "urgent:    {} jobs of QOS {} ({} of the jobs with a run of at most 2 h, seed {}); they queue first "
               "and may preempt QOS {}\n",
               inputs.injected.urgent, kUrgentQos, share, seed, sim::kDefaultQos);
    fmt::print(out, "preemption: {}; restart overhead {} s, requeue delay {} s\n", options.preemption,
               options.restart_overhead, options.requeue_delay);
  }
  if (!options.checkpoint.empty())
    fmt::print(out, "checkpoint: {} jobs declare {} ({} of the long jobs)\n", inputs.injected.checkpointable,
               options.checkpoint, options.checkpointable);
  if (inputs.workload_has_accelerators() && evaluation.protocol == sim::Protocol::kFull)
    fmt::print(out, "placement: {}{}\n", options.placement,
               options.placement_partitions.empty()
                   ? std::string()
                   : fmt::format(" (placed jobs go to {})", options.placement_partitions));
  if (inputs.energy) {
    const energy::EnergyConfig& e = *inputs.energy;
    std::vector<std::string> groups;  // "QOS sweep up to 43200 s"
    for (const energy::DeferrableGroup& g : e.deferrable) {
      std::vector<std::string> who;
      if (!g.qos.empty()) who.push_back(fmt::format("QOS {}", fmt::join(g.qos, ",")));
      if (!g.job_classes.empty()) who.push_back(fmt::format("classes {}", fmt::join(g.job_classes, ",")));
      groups.push_back(fmt::format("{} up to {} s", fmt::join(who, " and "), g.max_deferral));
    }
    fmt::print(
        out, "energy:    metered with the energy section of {} (prices in {}/kWh); deferral rule {}{}; {}\n",
        inputs.config_label, e.currency, options.energy_rule.empty() ? energy::to_string(e.rule) : options.energy_rule,
        e.follow_carbon ? " following the carbon intensity" : "",
        groups.empty() ? std::string("no job is deferrable") : fmt::format("deferrable: {}", fmt::join(groups, "; ")));
    if (!options.deferrable.empty()) {
      const auto [share, seed] = options.parsed_deferrable();
      fmt::print(out, "deferrable: {} jobs of QOS {} ({} of the jobs{}, seed {})\n", inputs.deferrable_jobs,
                 inputs.deferrable_qos, share,
                 options.deferrable_max_limit > 0
                     ? fmt::format(" with a time limit up to {} s", options.deferrable_max_limit)
                     : std::string(),
                 seed);
    }
  }
  if (options.failures_mtbf_hours > 0)
    fmt::print(out, "failures:  {} node failures (MTBF {} h per node, MTTR {} h, seed {})\n",
               evaluation.sim.failures.size(), options.failures_mtbf_hours, options.failures_mttr_hours, options.seed);
  fmt::print(out, "\n");
}

void print_comparison(std::FILE* out, const std::vector<sim::PolicyResult>& results) {
  Table table;
  table.add_column("policy", Table::Align::kLeft);
  table.add_column("backfill", Table::Align::kLeft);
  for (const char* name : {"avg_bsld", "avg_wait", "p50_wait", "p95_wait", "p99_wait", "max_wait", "util", "frag",
                           "jain", "jobs", "timeouts", "rejected", "sim_s", "jobs/s"})
    table.add_column(name);
  for (const sim::PolicyResult& r : results) {
    const sim::Metrics& m = r.metrics;
    table.add_row({run_label(r, results), sim::to_string(r.backfill), fixed(m.avg_bsld, 2), secs(m.avg_wait),
                   secs(m.p50_wait), secs(m.p95_wait), secs(m.p99_wait), secs(m.max_wait), fixed(m.utilization, 3),
                   r.protocol == sim::Protocol::kFull ? fixed(m.fragmentation, 3) : "-", fixed(m.jain_fairness, 3),
                   std::to_string(m.jobs), std::to_string(m.timed_out), std::to_string(m.rejected),
                   fixed(r.wall_seconds, 2), fixed(jobs_per_second(r), 0)});
  }
  fmt::print(out, "{}", table.render());
  fmt::print(out,
             "\nwaits in seconds; util = busy CPU share, frag = idle CPU-time share while a fitting job waited, "
             "jain = fairness of users' slowdowns (1 = even); sim_s = wall-clock seconds of the run\n");
}

void print_placement_comparison(std::FILE* out, const std::vector<sim::PolicyResult>& results) {
  if (results.empty() || results.front().protocol != sim::Protocol::kFull) return;
  Table table;
  table.add_column("policy", Table::Align::kLeft);
  table.add_column("placement", Table::Align::kLeft);
  for (const char* name : {"avg_jct_h", "p95_jct_h", "avg_wait_h", "jct_vs_pred"}) table.add_column(name);
  for (const sim::AcceleratorTypeMetrics& t : results.front().metrics.per_type) table.add_column("util_" + t.name);
  for (const char* name : {"accel_frag", "jobs", "timeouts"}) table.add_column(name);
  for (const sim::PolicyResult& r : results) {
    const sim::Metrics& m = r.metrics;
    std::string ratio = "-";
    for (const sim::PolicyResult& p : results)
      if (p.policy == r.policy && p.placement == sim::Placement::kPredictive && p.metrics.avg_completion > 0)
        ratio = fixed(m.avg_completion / p.metrics.avg_completion, 2);
    std::vector<std::string> row = {
        r.policy, sim::to_string(r.placement), hours(m.avg_completion), hours(m.p95_completion), hours(m.avg_wait),
        ratio};
    for (const sim::AcceleratorTypeMetrics& t : m.per_type) row.push_back(fixed(t.utilization_arriving, 3));
    row.insert(row.end(), {fixed(m.accel_fragmentation, 3), std::to_string(m.jobs), std::to_string(m.timed_out)});
    table.add_row(std::move(row));
  }
  fmt::print(out, "\n{}", table.render());
  fmt::print(
      out,
      "\njct = job completion time (wait + run), hours; jct_vs_pred = average jct over that of the predictive "
      "placement (same policy); util_TYPE = busy share of that type's accelerators while jobs arrive (first to last "
      "submit); "
      "accel_frag = idle accelerator-time share while a fitting job waited\n");
}

void print_preemption_comparison(std::FILE* out, const std::vector<sim::PolicyResult>& results) {
  if (results.empty() || results.front().protocol != sim::Protocol::kFull) return;
  bool accelerators = false;
  for (const sim::PolicyResult& r : results)
    for (const sim::AcceleratorTypeMetrics& t : r.metrics.per_type) accelerators = accelerators || t.jobs > 0;
  Table table;
  table.add_column("policy", Table::Align::kLeft);
  table.add_column("preemption", Table::Align::kLeft);
  for (const char* name : {"urgent_jobs", "urgent_avg_wait_h", "urgent_p95_wait_h", "others_avg_wait_h", "preemptions",
                           "requeues", accelerators ? "lost_accel_h" : "lost_cpu_h", "goodput"})
    table.add_column(name);
  for (const sim::PolicyResult& r : results) {
    const sim::Metrics& m = r.metrics;
    const UrgentWaits w = urgent_waits(m);
    table.add_row({run_label(r, results, false), sim::to_string(r.preemption), std::to_string(w.urgent_jobs),
                   hours(w.urgent_avg), hours(w.urgent_p95), hours(w.others_avg), std::to_string(m.preemptions),
                   std::to_string(m.restarts), fixed(accelerators ? m.lost_accelerator_hours : m.lost_cpu_hours, 1),
                   fixed(m.goodput, 4)});
  }
  fmt::print(out, "\n{}", table.render());
  fmt::print(out,
             "\nwaits in hours; requeues = preemptions' and node failures' requeues; lost = work thrown away (since "
             "the last checkpoint, or the whole run); goodput = useful / allocated {}-hours over every run\n",
             accelerators ? "accelerator" : "CPU");
}

void print_details(std::FILE* out, const sim::PolicyResult& r) {
  const sim::Metrics& m = r.metrics;
  fmt::print(out, "policy {}, backfill {}, protocol {}, placement {}, preemption {}\n\n", r.policy,
             sim::to_string(r.backfill), sim::to_string(r.protocol), sim::to_string(r.placement),
             sim::to_string(r.preemption));

  Table metrics;
  metrics.add_column("metric", Table::Align::kLeft);
  metrics.add_column("value");
  auto row = [&metrics](const char* name, std::string value) { metrics.add_row({name, std::move(value)}); };
  row("jobs (ran)", std::to_string(m.jobs));
  row("completed", std::to_string(m.completed));
  row("timed out", std::to_string(m.timed_out));
  row("rejected", std::to_string(m.rejected));
  row("unfinished", std::to_string(m.unfinished));
  row("avg bounded slowdown", fixed(m.avg_bsld, 3));
  row("avg wait (s)", secs(m.avg_wait));
  row("p50 wait (s)", secs(m.p50_wait));
  row("p95 wait (s)", secs(m.p95_wait));
  row("p99 wait (s)", secs(m.p99_wait));
  row("max wait (s)", secs(m.max_wait));
  row("avg completion (s)", secs(m.avg_completion));
  row("p95 completion (s)", secs(m.p95_completion));
  row("utilization", fixed(m.utilization, 4));
  row("makespan (s)", secs(m.makespan));
  if (r.protocol == sim::Protocol::kFull) {  // the rlscheduler protocol has no timeline to measure it on
    row("fragmentation", fixed(m.fragmentation, 4));
    row("accel fragmentation", fixed(m.accel_fragmentation, 4));
  }
  row("jain fairness", fixed(m.jain_fairness, 4));
  row("restarts (requeues)", std::to_string(m.restarts));
  row("preemptions", std::to_string(m.preemptions));
  row("lost CPU hours", fixed(m.lost_cpu_hours, 2));
  row("lost accelerator hours", fixed(m.lost_accelerator_hours, 2));
  row("goodput", fixed(m.goodput, 4));
  row("sim seconds", fixed(r.wall_seconds, 3));
  row("jobs/s", fixed(jobs_per_second(r), 0));
  fmt::print(out, "{}", metrics.render());

  if (!m.per_type.empty()) {
    Table types;
    types.add_column("accelerator type", Table::Align::kLeft);
    types.add_column("jobs");
    types.add_column("avg_wait");
    types.add_column("utilization");
    types.add_column("util_arriving");
    for (const sim::AcceleratorTypeMetrics& t : m.per_type)
      types.add_row({t.name, std::to_string(t.jobs), secs(t.avg_wait), fixed(t.utilization, 4),
                     fixed(t.utilization_arriving, 4)});
    fmt::print(out, "\n{}", types.render());
  }

  if (!m.per_qos.empty()) {
    Table qos;
    qos.add_column("QOS", Table::Align::kLeft);
    qos.add_column("jobs");
    qos.add_column("avg_wait");
    qos.add_column("p95_wait");
    for (const sim::QosMetrics& q : m.per_qos)
      qos.add_row({q.name.empty() ? "(none)" : q.name, std::to_string(q.jobs), secs(q.avg_wait), secs(q.p95_wait)});
    fmt::print(out, "\n{}", qos.render());
  }

  if (!r.sequence_bsld.empty()) {
    Table sequences;
    sequences.add_column("sequence");
    sequences.add_column("avg_bsld");
    for (std::size_t i = 0; i < r.sequence_bsld.size(); ++i)
      sequences.add_row({std::to_string(i + 1), fixed(r.sequence_bsld[i], 3)});
    fmt::print(out, "\n{}", sequences.render());
  }

  if (r.protocol == sim::Protocol::kFull) {
    const sim::SimCounters& c = r.counters;
    Table counters;
    counters.add_column("counter", Table::Align::kLeft);
    counters.add_column("value");
    counters.add_row({"events", std::to_string(c.events)});
    counters.add_row({"scheduling passes", std::to_string(c.scheduling_passes)});
    counters.add_row({"backfill passes", std::to_string(c.backfill_passes)});
    counters.add_row({"backfilled jobs", std::to_string(c.backfilled_jobs)});
    counters.add_row({"priority updates", std::to_string(c.priority_updates)});
    counters.add_row({"requeues", std::to_string(c.requeues)});
    counters.add_row({"preemptions", std::to_string(c.preemptions)});
    for (const auto& [reason, jobs] : c.rejections) counters.add_row({"rejected: " + reason, std::to_string(jobs)});
    fmt::print(out, "\n{}", counters.render());
  }
}

}  // namespace rlsched::cli
