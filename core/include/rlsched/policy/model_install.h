// Installing a model where the Slurm plugin serves it from, without a restart: `rlsched promote` and
// `rlsched rollback`. The plugin's hot reload (docs/plugins.md) notices a new file at the model path, so every change
// is a rename over that path: slurmctld sees the old model or the new one, never a partial file.
//
//   promote CANDIDATE -> MODEL: verify CANDIDATE (every check the plugin makes), copy it beside MODEL, verify the
//     copy, keep the current MODEL as MODEL.previous (a hard link renamed into place), rename the copy over MODEL.
//   rollback MODEL: verify MODEL.previous, keep the current MODEL as MODEL.rolled-back, rename MODEL.previous over
//     MODEL (so a rollback is itself undone by promoting MODEL.rolled-back).
// Model cards travel along: CANDIDATE's card (CANDIDATE with .md) becomes MODEL's, the replaced one MODEL.previous.md.
#pragma once

#include <string>

#include "rlsched/status.h"

namespace rlsched::policy {

struct InstallResult {
  std::string model;      ///< the path now serving
  std::string sha256;     ///< of the weights now at `model` (from its metadata)
  std::string kept;       ///< where the replaced model went ("" when there was none)
  std::string kept_sha256;
};

/// \return the paths, or an error naming the file and what is wrong; on error MODEL is untouched.
Result<InstallResult> promote_model(const std::string& candidate, const std::string& model);
Result<InstallResult> rollback_model(const std::string& model);

/// MODEL.previous and MODEL.rolled-back.
std::string previous_path(const std::string& model);
std::string rolled_back_path(const std::string& model);

}  // namespace rlsched::policy
