// A training trace: read, prepared for the simulator, and split by submit time into the jobs trained on, the jobs
// that validate, and the last jobs, held back unread for the verdict (TrainConfig::held_back).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/job.h"
#include "rlsched/sim/rlscheduler_compat.h"
#include "rlsched/status.h"
#include "rlsched/train/trainer.h"

namespace rlsched::train {

struct TraceSplit {
  std::string path;
  Workload workload;               ///< without the held-back jobs
  std::size_t held_back_jobs = 0;  ///< the trace's last jobs, dropped unread
  sim::CompatWorkload prepared;
  std::size_t train_end = 0;                   ///< jobs [0, train_end) are trained on, the rest validate
  std::vector<std::size_t> validation_starts;  ///< first jobs of the validation sequences
  /// The cluster the trace ran on (TrainConfig::cluster); null: the one the trace implies.
  std::shared_ptr<const Cluster> cluster;
  int weight = 1;  ///< TrainWorkload::weight
};

/// A workload that only validates (TrainConfig::validation_workloads): all its jobs, none held back, on its cluster
/// with the site factor at score_scale.
struct ValidationSite {
  std::string path;
  Workload workload;
  std::shared_ptr<const Cluster> cluster;
  int weight = 1;
};

/// Reads `path`, drops its last config.held_back and splits the rest by config.validation_share. \return InvalidInput
/// when the trace is too short for one training and one validation sequence of config.sequence_length jobs.
Result<TraceSplit> split_trace(const std::string& path, const TrainConfig& config);

/// Splits a workload the caller read (TrainConfig::workloads) as split_trace does, on its own cluster.
Result<TraceSplit> split_workload(const TrainWorkload& workload, const TrainConfig& config);

/// \return InvalidInput for a workload without jobs or a weight below 1.
Result<ValidationSite> validation_site(const TrainWorkload& workload, const TrainConfig& config);

/// The validation jobs of a split as a workload of their own (for selection in the Slurm model).
Workload validation_workload(const TraceSplit& t);

/// The validation jobs of a split at each of `load_factors` times their offered load on the split's cluster
/// (TrainConfig::selection_load_factors, each above 0); empty: only as they came. \return InvalidInput, naming the
/// trace, where the jobs offer no load to multiply.
Result<std::vector<Workload>> validation_loads(const TraceSplit& t, const std::vector<double>& load_factors);

/// " at 3 loads (x0.97, x1, x1.03 their own)" (or " at x1.03 their load") where config.selection_load_factors asks
/// for other loads than the jobs' own, else "": what the card and the teacher line say of the validation jobs.
std::string selection_loads(const TrainConfig& config);

}  // namespace rlsched::train
