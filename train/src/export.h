// Writing the trained policy: the TorchScript model file with its metadata, and its Markdown model card.
#pragma once

#include <string>
#include <vector>

#include "networks.h"
#include "rlsched/status.h"
#include "rlsched/train/trainer.h"
#include "trace_split.h"

namespace rlsched::train {

/// One policy's results on the validation sequences (the card's evaluation table).
struct ValidationRow {
  std::string policy;
  double avg_bsld = 0;
  double avg_wait = 0;
  double p99_wait = 0;
  double cost = 0;  ///< the training objective
};

struct ExportInfo {
  const TrainConfig& config;
  const std::vector<TraceSplit>& traces;
  const std::vector<ValidationSite>& sites;  ///< where the model was selected, when given
  const TrainResult& result;
  std::vector<ValidationRow> table;
};

/// The learning curve beside the model card: `<card without .md>.curve.csv`, drawn as `.curve.png`.
std::string curve_csv_path(const TrainConfig& config);
std::string curve_png_path(const TrainConfig& config);

/// Saves the policy network as config.output (verified by the loader before it replaces anything) and writes the
/// model card beside it.
Status export_model(PolicyNets& nets, const ExportInfo& info);

}  // namespace rlsched::train
