// A training trace: read, prepared for the simulator, and split into the jobs trained on and the jobs held back.
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
  Workload workload;
  sim::CompatWorkload prepared;
  std::size_t train_end = 0;                   ///< jobs [0, train_end) are trained on, the rest validate
  std::vector<std::size_t> validation_starts;  ///< first jobs of the validation sequences
  /// The cluster the trace ran on (TrainConfig::cluster); null: the one the trace implies.
  std::shared_ptr<const Cluster> cluster;
};

/// Reads `path` and splits it by config.validation_share. \return InvalidInput when the trace is too short for one
/// training and one validation sequence of config.sequence_length jobs.
Result<TraceSplit> split_trace(const std::string& path, const TrainConfig& config);

/// Splits a workload the caller read (TrainConfig::workloads) as split_trace does, on its own cluster.
Result<TraceSplit> split_workload(const TrainWorkload& workload, const TrainConfig& config);

/// The held-back jobs of a split as a workload of their own (for evaluations in the Slurm model).
Workload held_back_workload(const TraceSplit& t);

}  // namespace rlsched::train
