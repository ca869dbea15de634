// `rlsched ensemble`: several trained policies as one model file whose score is the mean of theirs.
//
// One training run is one draw: the same recipe at another seed or trace order gave a model 1.42 times the best
// heuristic where the shipped one was 1.00 (policy_models/README.md, stop 43). Averaging the members' scores (their
// logits: a product of their ranking distributions) was meant to even out what one draw got wrong alone; measured on
// 40 fresh sites, the mean of three draws scored among them, not below the best (stop 44). The result is again one
// MLP of the form `rlsched train` writes, so the plugin, the simulator and `--init-model` read it unchanged.
#pragma once

#include <string>
#include <vector>

#include "rlsched/policy/model_metadata.h"
#include "rlsched/status.h"

namespace rlsched::train {

/// Writes the ensemble of `members` (model files `rlsched train` wrote, all with the same number of layers) to
/// `output`, with a model card beside it (`<output without .pt>.md`) naming every member and its weights' sha256.
/// `command_line` goes into the card's Reproduce section.
/// \return the metadata written (architecture, weights' sha256); InvalidInput naming the member that cannot be read
/// or does not fit (another depth, not an MLP), or the error of writing `output`.
Result<policy::ModelMetadata> write_ensemble(const std::vector<std::string>& members, const std::string& output,
                                             const std::string& command_line);

}  // namespace rlsched::train
