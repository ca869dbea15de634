#include "trace_split.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rlsched/io/cluster_readers.h"
#include "rlsched/io/workload_readers.h"
#include "rlsched/sim/evaluation.h"

namespace rlsched::train {

namespace {

/// The Slurm model runs where the model will serve: multifactor plus its rank at score_scale.
std::shared_ptr<const Cluster> serving(Cluster cluster, const TrainConfig& config) {
  cluster.priority.site = config.score_scale;
  return std::make_shared<const Cluster>(std::move(cluster));
}

Result<TraceSplit> split(std::string path, Workload workload, Cluster cluster, const TrainConfig& config) {
  TraceSplit t;
  t.cluster = serving(std::move(cluster), config);
  t.path = std::move(path);
  t.held_back_jobs = take_recent(workload, config.held_back).jobs.size();
  if (t.held_back_jobs > 0 && workload.jobs.empty())
    return Status::InvalidInput(fmt::format("{}: --held-back {} leaves no job to train on", t.path, config.held_back));
  t.workload = std::move(workload);
  const Cluster* const cluster_ptr = t.cluster.get();
  // One CPU per simulated node: allocation by CPU, as Slurm's cons_tres does, not RLScheduler's whole nodes (which
  // would make a one-CPU job take a 72-CPU node of COARE).
  auto prepared = sim::prepare_compat_workload(t.workload, cluster_ptr->total_cpus(), 1);
  if (!prepared.ok()) return prepared.status();
  t.prepared = std::move(*prepared);

  const std::size_t n = t.prepared.jobs.size();
  const double share = std::clamp(config.validation_share, 0.0, 0.9);
  t.train_end = static_cast<std::size_t>(static_cast<double>(n) * (1.0 - share));
  const std::size_t length = config.sequence_length;
  if (t.train_end < length + 1 || n - t.train_end < length)
    return Status::InvalidInput(
        fmt::format("{}: {} usable jobs are too few for training and validation sequences of {} jobs ({}% of them "
                    "validate; {} later jobs held back)",
                    t.path, n, length, static_cast<int>(share * 100), t.held_back_jobs));
  // Validation sequences spread evenly over the validation jobs.
  const std::size_t span = n - length - t.train_end;
  const std::size_t count = std::max<std::size_t>(config.validation_sequences, 1);
  for (std::size_t i = 0; i < count; ++i)
    t.validation_starts.push_back(t.train_end + (count == 1 ? 0 : span * i / (count - 1)));
  return t;
}

}  // namespace

Result<TraceSplit> split_trace(const std::string& path, const TrainConfig& config) {
  auto workload = io::read_workload(path);
  if (!workload.ok()) return workload.status();
  Result<Cluster> cluster = Status::InvalidInput("no cluster");
  if (!config.cluster.empty()) {
    cluster = io::read_cluster(config.cluster);
    if (!cluster.ok()) return cluster.status();
  } else {
    cluster = sim::implied_cluster(*workload);
    if (!cluster.ok())
      return Status::InvalidInput(
          fmt::format("{} (give the cluster it ran on: --slurm-conf)", cluster.status().message()));
  }
  return split(path, std::move(*workload), std::move(*cluster), config);
}

Result<TraceSplit> split_workload(const TrainWorkload& workload, const TrainConfig& config) {
  auto out = split(workload.label, workload.workload, workload.cluster, config);
  if (out.ok()) out->weight = workload.weight;
  return out;
}

Result<ValidationSite> validation_site(const TrainWorkload& workload, const TrainConfig& config) {
  if (workload.weight < 1)
    return Status::InvalidInput(
        fmt::format("{}: weight {}: a validation workload counts at least once", workload.label, workload.weight));
  if (workload.workload.jobs.empty())
    return Status::InvalidInput(fmt::format("{}: no job to validate on", workload.label));
  return ValidationSite{workload.label, workload.workload, serving(workload.cluster, config), workload.weight};
}

Workload validation_workload(const TraceSplit& t) {
  Workload validation;
  validation.report = t.workload.report;
  validation.max_nodes = t.workload.max_nodes;
  validation.max_procs = t.workload.max_procs;
  for (std::size_t i = t.train_end; i < t.prepared.jobs.size(); ++i)
    validation.jobs.push_back(t.workload.jobs[t.prepared.jobs[i].source]);
  return validation;
}

Result<std::vector<Workload>> validation_loads(const TraceSplit& t, const std::vector<double>& load_factors) {
  const Workload jobs = validation_workload(t);
  if (load_factors.empty()) return std::vector<Workload>{jobs};
  const double load = sim::offered_load(jobs.jobs, *t.cluster);
  std::vector<Workload> out;
  for (double factor : load_factors) {
    Workload scaled = jobs;
    if (factor != 1) {
      auto scale = load > 0 ? sim::scale_to_load(scaled.jobs, *t.cluster, load * factor)
                            : Result<double>(Status::InvalidInput("they offer no load to multiply"));
      if (!scale.ok())
        return Status::InvalidInput(fmt::format("--select-load-factors {}: {}'s {} validation jobs: {}", factor,
                                                t.path, jobs.jobs.size(), scale.status().message()));
    }
    out.push_back(std::move(scaled));
  }
  return out;
}

std::string selection_loads(const TrainConfig& config) {
  const std::vector<double>& factors = config.selection_load_factors;
  if (factors.empty() || factors == std::vector<double>{1}) return {};
  if (factors.size() == 1) return fmt::format(" at x{} their load", factors[0]);
  return fmt::format(" at {} loads (x{} their own)", factors.size(), fmt::join(factors, ", x"));
}

}  // namespace rlsched::train
