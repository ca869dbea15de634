#include "report_json.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "report_energy.h"

namespace rlsched::cli {

// Ordered, so that a document reads policy first, as the table does.
using nlohmann::ordered_json;  // not `json`: a unity batch may hold a file with nlohmann::json as `json`

ordered_json result_json(const sim::PolicyResult& r) {
  const sim::Metrics& m = r.metrics;
  ordered_json j = {
      {"policy", r.policy},
      {"backfill", sim::to_string(r.backfill)},
      {"placement", sim::to_string(r.placement)},
      {"preemption", sim::to_string(r.preemption)},
      {"protocol", sim::to_string(r.protocol)},
      {"avg_bsld", m.avg_bsld},
      {"avg_wait", m.avg_wait},
      {"p50_wait", m.p50_wait},
      {"p95_wait", m.p95_wait},
      {"p99_wait", m.p99_wait},
      {"max_wait", m.max_wait},
      {"avg_completion", m.avg_completion},
      {"p95_completion", m.p95_completion},
      {"utilization", m.utilization},
      {"makespan", m.makespan},
      {"jain_fairness", m.jain_fairness},
      {"jobs", m.jobs},
      {"completed", m.completed},
      {"timed_out", m.timed_out},
      {"rejected", m.rejected},
      {"unfinished", m.unfinished},
      {"restarts", m.restarts},
      {"lost_cpu_hours", m.lost_cpu_hours},
      {"lost_accelerator_hours", m.lost_accelerator_hours},
      {"preemptions", m.preemptions},
      {"goodput", m.goodput},
      {"sim_seconds", r.wall_seconds},
  };
  // The rlscheduler protocol computes metrics from outcomes alone, so fragmentation (which needs the timeline) is
  // unknown there: null rather than a misleading 0.
  const bool timeline = r.protocol == sim::Protocol::kFull;
  j["fragmentation"] = timeline ? ordered_json(m.fragmentation) : ordered_json(nullptr);
  j["accel_fragmentation"] = timeline ? ordered_json(m.accel_fragmentation) : ordered_json(nullptr);
  ordered_json per_type = ordered_json::array();
  for (const sim::AcceleratorTypeMetrics& t : m.per_type)
    per_type.push_back({{"name", t.name},
                        {"jobs", t.jobs},
                        {"avg_wait", t.avg_wait},
                        {"utilization", t.utilization},
                        {"utilization_arriving", t.utilization_arriving},
                        {"predicted", t.predicted},
                        {"wait_error_bias", t.wait_error_bias},
                        {"wait_error_mean_abs", t.wait_error_mean_abs},
                        {"wait_error_median_abs", t.wait_error_median_abs}});
  j["per_type"] = std::move(per_type);
  ordered_json per_qos = ordered_json::array();
  for (const sim::QosMetrics& q : m.per_qos)
    per_qos.push_back({{"name", q.name}, {"jobs", q.jobs}, {"avg_wait", q.avg_wait}, {"p95_wait", q.p95_wait}});
  j["per_qos"] = std::move(per_qos);
  if (r.energy) j["energy"] = energy_json(*r.energy);
  if (r.protocol == sim::Protocol::kRlScheduler) {
    j["sequence_bsld"] = r.sequence_bsld;
  } else {
    const sim::SimCounters& c = r.counters;
    j["counters"] = {{"events", c.events},
                     {"scheduling_passes", c.scheduling_passes},
                     {"backfill_passes", c.backfill_passes},
                     {"backfilled_jobs", c.backfilled_jobs},
                     {"priority_updates", c.priority_updates},
                     {"requeues", c.requeues},
                     {"preemptions", c.preemptions},
                     {"rejections", c.rejections}};
  }
  return j;
}

ordered_json document_json(const Inputs& inputs, const RunOptions& options, const sim::EvaluationOptions& evaluation,
                           const std::vector<sim::PolicyResult>& results) {
  const ReadReport& report = inputs.workload.report;
  const Cluster& cluster = inputs.cluster;
  std::map<std::string, int> accelerators;  // "gpu:h200" -> count over all nodes
  for (const Node& node : cluster.nodes)
    for (const GresCount& gres : node.gres)
      accelerators[gres.type.empty() ? gres.name : gres.name + ":" + gres.type] += gres.count;

  ordered_json doc = {
      {"rlsched_version", RLSCHED_VERSION},
      {"trace", inputs.trace_label},
      {"synthetic", inputs.synthetic},
      {"report",
       {{"source", report.source},
        {"records", report.records},
        {"used", report.used},
        {"skipped", report.skipped},
        {"merged", report.merged},
        {"reasons", report.reasons},
        {"warned", report.warned},
        {"warnings", report.warnings},
        {"jobs", inputs.workload.jobs.size()}}},
      {"cluster",
       {{"name", cluster.name},
        {"source", inputs.cluster_label},
        {"given", inputs.cluster_given},
        {"nodes", cluster.nodes.size()},
        {"cpus", cluster.total_cpus()},
        {"partitions", cluster.partitions.size()},
        {"accelerators", accelerators}}},
      {"protocol", sim::to_string(evaluation.protocol)},
      {"config", {{"source", inputs.config_label}, {"score_scale", inputs.plugin_config.score_scale}}},
      {"priority",
       {{"multifactor", evaluation.protocol != sim::Protocol::kRlScheduler && cluster.priority.multifactor_enabled()},
        {"age", cluster.priority.age},
        {"fairshare", cluster.priority.fairshare},
        {"job_size", cluster.priority.job_size},
        {"partition", cluster.priority.partition},
        {"qos", cluster.priority.qos},
        {"site", cluster.priority.site_scale()}}},
  };
  if (evaluation.sim.bf_max_job_test > 0) doc["bf_max_job_test"] = evaluation.sim.bf_max_job_test;
  if (options.failures_mtbf_hours > 0)
    doc["failures"] = {{"mtbf_hours", options.failures_mtbf_hours},
                       {"mttr_hours", options.failures_mttr_hours},
                       {"seed", options.seed},
                       {"node_failures", evaluation.sim.failures.size()}};
  if (inputs.injected.urgent > 0 || inputs.injected.checkpointable > 0) {
    const auto [share, seed] = options.parsed_urgent();
    doc["injection"] = {{"urgent_share", share},
                        {"seed", seed},
                        {"urgent_jobs", inputs.injected.urgent},
                        {"checkpoint", options.checkpoint},
                        {"checkpointable_share", options.checkpointable},
                        {"checkpointable_jobs", inputs.injected.checkpointable},
                        {"restart_overhead", options.restart_overhead},
                        {"requeue_delay", options.requeue_delay}};
  }
  if (inputs.energy) doc["energy"] = energy_settings_json(inputs, options);
  ordered_json list = ordered_json::array();
  for (const sim::PolicyResult& r : results) list.push_back(result_json(r));
  doc["results"] = std::move(list);
  return doc;
}

Status write_json(const ordered_json& doc, const std::string& path) {
  // NaN (a metric over no jobs) becomes null rather than invalid JSON; nlohmann does that on dump.
  const std::string text = doc.dump(2) + "\n";
  if (path == "-") {
    const bool written = std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
    return written ? Status::Ok() : Status::IoError("cannot write JSON to stdout");
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return Status::IoError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  file << text;
  file.close();
  if (!file) return Status::IoError(fmt::format("{}: write failed: {}", path, std::strerror(errno)));
  return Status::Ok();
}

}  // namespace rlsched::cli
