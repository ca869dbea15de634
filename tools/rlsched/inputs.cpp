#include "inputs.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include <fmt/format.h>

#include "rlsched/io/cluster_readers.h"
#include "rlsched/io/workload_readers.h"
#include "rlsched/sim/rlscheduler_compat.h"
#include "rlsched/sim/simulator.h"

namespace rlsched::cli {

namespace {

Result<Workload> load_workload(const RunOptions& options, Inputs& inputs) {
  if (options.trace.empty()) {
    inputs.synthetic = true;
    inputs.trace_label = fmt::format("built-in synthetic ({} jobs, {} nodes, load {}, seed {})", kSyntheticJobs,
                                     kSyntheticNodes, kSyntheticLoad, kSyntheticSeed);
    fmt::print(stderr,
               "no --trace: using the built-in synthetic workload ({} jobs, {} one-CPU nodes, load {}, seed {})\n",
               kSyntheticJobs, kSyntheticNodes, kSyntheticLoad, kSyntheticSeed);
    return sim::synthetic_workload(kSyntheticJobs, kSyntheticNodes, kSyntheticLoad, kSyntheticSeed);
  }
  inputs.trace_label = options.trace;
  io::ReadOptions read;
  read.strict = options.strict;
  auto workload = io::read_workload(options.trace, read);
  if (!workload.ok()) return workload.status();
  if (!options.jobs.empty()) {
    const auto colon = options.jobs.find(':');
    const std::size_t first = std::stoull(options.jobs.substr(0, colon));
    const std::size_t count = std::stoull(options.jobs.substr(colon + 1));
    std::vector<Job>& jobs = workload->jobs;
    if (first >= jobs.size())
      return Status::InvalidInput(
          fmt::format("{}: --jobs starts at job {} but the trace has {} usable jobs", options.trace, first, jobs.size()));
    jobs.erase(jobs.begin() + static_cast<std::ptrdiff_t>(std::min(first + count, jobs.size())), jobs.end());
    jobs.erase(jobs.begin(), jobs.begin() + static_cast<std::ptrdiff_t>(first));
    inputs.trace_label += fmt::format(" (jobs {}..{})", first, first + jobs.size() - 1);
  }
  if (workload->jobs.empty())
    return Status::InvalidInput(fmt::format("{}: no usable jobs ({} records, {} skipped)", options.trace,
                                            workload->report.records, workload->report.skipped));
  return workload;
}

// The machine evaluate_policy will use when no --cluster is given, so the report shows what is simulated.
Status imply_cluster(const RunOptions& options, Inputs& inputs) {
  if (options.parsed_protocol() == sim::Protocol::kRlScheduler) {
    auto compat = sim::prepare_compat_workload(inputs.workload);
    if (!compat.ok()) return compat.status();
    inputs.cluster = Cluster::Homogeneous(compat->nodes, compat->procs_per_node);
    inputs.cluster_label = "implied by the trace header (RLScheduler's machine)";
    return Status::Ok();
  }
  auto implied = sim::implied_cluster(inputs.workload);
  if (!implied.ok()) return implied.status();
  inputs.cluster = std::move(*implied);
  if (inputs.synthetic)
    inputs.cluster_label = "implied by the synthetic workload";
  else if (inputs.workload.max_nodes > 0)
    inputs.cluster_label = "implied by the trace header (MaxNodes, MaxProcs)";
  else
    inputs.cluster_label = "implied: one one-CPU node per CPU of the widest job";
  return Status::Ok();
}

}  // namespace

Result<Inputs> load_inputs(const RunOptions& options) {
  Inputs inputs;
  // The cluster first: a typo in its path should not wait for a large trace to load.
  if (!options.cluster.empty()) {
    auto cluster = io::read_cluster(options.cluster);
    if (!cluster.ok()) return cluster.status();
    inputs.cluster = std::move(*cluster);
    inputs.cluster_given = true;
    inputs.cluster_label = options.cluster;
  }
  auto workload = load_workload(options, inputs);
  if (!workload.ok()) return workload.status();
  inputs.workload = std::move(*workload);
  if (!inputs.cluster_given) {
    Status status = imply_cluster(options, inputs);
    if (!status.ok()) return status;
  }
  return inputs;
}

sim::EvaluationOptions make_evaluation_options(const RunOptions& options, const Inputs& inputs) {
  sim::EvaluationOptions evaluation;
  evaluation.protocol = options.parsed_protocol();
  evaluation.sim.backfill = options.parsed_backfill();
  evaluation.sim.bf_max_job_test = options.bf_max_job_test;
  if (options.failures_mtbf_hours > 0 && !inputs.workload.jobs.empty()) {
    const auto [first, last] = sim::workload_span(inputs.workload.jobs);
    evaluation.sim.failures = sim::random_failures(inputs.cluster, first, last, options.failures_mtbf_hours,
                                                   options.failures_mttr_hours, options.seed);
  }
  return evaluation;
}

ScorerSettings scorer_settings(const Inputs& inputs) {
  ScorerSettings settings;
  if (inputs.cluster_given && inputs.cluster.priority.multifactor_enabled())
    settings.multifactor = inputs.cluster.priority;
  return settings;
}

}  // namespace rlsched::cli
