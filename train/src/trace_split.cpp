#include "trace_split.h"

#include <fmt/format.h>

#include "rlsched/io/cluster_readers.h"
#include "rlsched/io/workload_readers.h"
#include "rlsched/sim/evaluation.h"

namespace rlsched::train {

Result<TraceSplit> split_trace(const std::string& path, const TrainConfig& config) {
  auto workload = io::read_workload(path);
  if (!workload.ok()) return workload.status();
  TraceSplit t;
  if (!config.cluster.empty()) {
    auto given = io::read_cluster(config.cluster);
    if (!given.ok()) return given.status();
    t.cluster = std::make_shared<const Cluster>(std::move(*given));
  }
  auto cluster = t.cluster ? Result<Cluster>(*t.cluster) : sim::implied_cluster(*workload);
  if (!cluster.ok())
    return Status::InvalidInput(fmt::format("{} (give the cluster it ran on: --slurm-conf)", cluster.status().message()));
  // The Slurm-model validation runs where the model will serve: multifactor plus its rank at score_scale.
  cluster->priority.site = config.score_scale;
  t.cluster = std::make_shared<const Cluster>(*cluster);
  t.path = path;
  t.workload = std::move(*workload);
  // One CPU per simulated node: allocation by CPU, as Slurm's cons_tres does, not RLScheduler's whole nodes (which
  // would make a one-CPU job take a 72-CPU node of COARE).
  auto prepared = sim::prepare_compat_workload(t.workload, cluster->total_cpus(), 1);
  if (!prepared.ok()) return prepared.status();
  t.prepared = std::move(*prepared);

  const std::size_t n = t.prepared.jobs.size();
  const double share = std::clamp(config.validation_share, 0.0, 0.9);
  t.train_end = static_cast<std::size_t>(static_cast<double>(n) * (1.0 - share));
  const std::size_t length = config.sequence_length;
  if (t.train_end < length + 1 || n - t.train_end < length)
    return Status::InvalidInput(fmt::format(
        "{}: {} usable jobs are too few for training and validation sequences of {} jobs ({}% held back)", path, n,
        length, static_cast<int>(share * 100)));
  // Validation sequences spread evenly over the held-back jobs.
  const std::size_t span = n - length - t.train_end;
  const std::size_t count = std::max<std::size_t>(config.validation_sequences, 1);
  for (std::size_t i = 0; i < count; ++i)
    t.validation_starts.push_back(t.train_end + (count == 1 ? 0 : span * i / (count - 1)));
  return t;
}

Workload held_back_workload(const TraceSplit& t) {
  Workload held_back;
  held_back.report = t.workload.report;
  held_back.max_nodes = t.workload.max_nodes;
  held_back.max_procs = t.workload.max_procs;
  for (std::size_t i = t.train_end; i < t.prepared.jobs.size(); ++i)
    held_back.jobs.push_back(t.workload.jobs[t.prepared.jobs[i].source]);
  return held_back;
}

}  // namespace rlsched::train
