// Warm start (`rlsched train --init-model`): the policy of an existing model file, the cluster's current one, as the
// trainer's starting point instead of imitating a heuristic.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "networks.h"
#include "rlsched/status.h"

namespace rlsched::train {

/// A model file's MLP in the trainer's shapes: every tensor widened to the whole feature schema.
struct InitialPolicy {
  std::string path;
  std::string weights_sha256;
  nlohmann::json training;                     ///< the model's own record of how it was made (metadata `training`)
  std::vector<int> hidden;                     ///< widths of the hidden layers
  std::vector<char> used;                      ///< per schema feature: 1 when the model reads it
  torch::Tensor mean, std;                     ///< [kFeatureCount]; 0 and 1 for the features the model leaves out
  std::vector<torch::Tensor> weights, biases;  ///< per layer; the first weight is [hidden0, kFeatureCount]
};

/// Reads a model file written by `rlsched train` (verified by load_model first): its features, normalisation and
/// fc<i>_weight / fc<i>_bias layers. \return InvalidInput naming the file and what does not fit (not an MLP of
/// that form, an unknown feature).
Result<InitialPolicy> read_initial_policy(const std::string& path);

/// Copies the policy into `nets` in place (the optimiser keeps its parameters); nets must have been built with
/// policy.hidden and over every column the policy reads (network_inputs). The value head keeps its random start.
void apply_initial_policy(PolicyNets& nets, const InitialPolicy& policy);

/// The schema columns the trainer's networks read: v1's, unless the policy may read the predicted run time (asked
/// with `predicted_run_times`, or a warm start from a model that reads it, which goes on reading it).
int network_inputs(bool predicted_run_times, const std::optional<InitialPolicy>& initial);

}  // namespace rlsched::train
