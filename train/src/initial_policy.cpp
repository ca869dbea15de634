#include "initial_policy.h"

#include <torch/script.h>

#include <algorithm>

#include <fmt/format.h>

#include "rlsched/features.h"
#include "rlsched/policy/model.h"

namespace rlsched::train {
namespace {

Status not_warm_startable(const std::string& path, const std::string& why) {
  return Status::InvalidInput(fmt::format("{}: cannot start training from this model: {}", path, why));
}

}  // namespace

Result<InitialPolicy> read_initial_policy(const std::string& path) {
  auto model = policy::load_model(path);
  if (!model.ok()) return model.status();
  const std::vector<std::string> names = (*model)->metadata().feature_names();
  const std::vector<std::string> schema = features::schema_names();
  std::vector<int64_t> columns;
  for (const std::string& name : names) {
    const auto at = std::find(schema.begin(), schema.end(), name);
    if (at == schema.end()) return not_warm_startable(path, fmt::format("feature '{}' is not in the schema", name));
    columns.push_back(at - schema.begin());
  }

  InitialPolicy out;
  out.path = path;
  out.weights_sha256 = (*model)->metadata().weights_sha256;
  out.training = (*model)->metadata().training;
  torch::jit::Module module;
  try {
    module = torch::jit::load(path);
  } catch (const std::exception& e) {
    return not_warm_startable(path, e.what());
  }
  auto tensor = [&](const std::string& name) -> torch::Tensor {
    for (const auto& p : module.named_parameters(/*recurse=*/false))
      if (p.name == name) return p.value.detach().to(torch::kFloat32).clone();
    for (const auto& b : module.named_buffers(/*recurse=*/false))
      if (b.name == name) return b.value.detach().to(torch::kFloat32).clone();
    return {};
  };
  const auto n = static_cast<int64_t>(columns.size());
  const torch::Tensor mean = tensor("input_mean"), std = tensor("input_std");
  if (!mean.defined() || !std.defined() || mean.numel() != n || std.numel() != n)
    return not_warm_startable(path, fmt::format("no input_mean / input_std of {} features", n));
  const torch::Tensor index = torch::tensor(columns, torch::kInt64);
  out.mean = torch::zeros({static_cast<int64_t>(schema.size())}).index_copy(0, index, mean.reshape({n}));
  out.std = torch::ones({static_cast<int64_t>(schema.size())}).index_copy(0, index, std.reshape({n}));
  out.used.assign(schema.size(), 0);
  for (int64_t c : columns) out.used[static_cast<std::size_t>(c)] = 1;

  int64_t width = n;
  for (int i = 0;; ++i) {
    torch::Tensor w = tensor(fmt::format("fc{}_weight", i)), b = tensor(fmt::format("fc{}_bias", i));
    if (!w.defined()) break;
    if (!b.defined() || w.dim() != 2 || w.size(1) != width || b.dim() != 1 || b.size(0) != w.size(0))
      return not_warm_startable(path, fmt::format("layer fc{} does not continue a {}-wide input", i, width));
    if (i == 0)  // widened to every schema column; the ones the model leaves out stay zero (and masked in training)
      w = torch::zeros({w.size(0), static_cast<int64_t>(schema.size())}).index_copy(1, index, w);
    width = w.size(0);
    out.weights.push_back(w);
    out.biases.push_back(b);
  }
  if (out.weights.size() < 2 || width != 1)
    return not_warm_startable(path, "not an MLP of fc<i>_weight / fc<i>_bias layers ending in one output with at "
                                    "least one hidden layer (the form `rlsched train` writes)");
  for (std::size_t i = 0; i + 1 < out.weights.size(); ++i)
    out.hidden.push_back(static_cast<int>(out.weights[i].size(0)));
  return out;
}

int network_inputs(bool predicted_run_times, const std::optional<InitialPolicy>& initial) {
  bool wide = predicted_run_times;
  if (initial)
    for (std::size_t k = features::kV1FeatureCount; k < initial->used.size(); ++k) wide = wide || initial->used[k];
  return static_cast<int>(wide ? features::kFeatureCount : features::kV1FeatureCount);
}

void apply_initial_policy(PolicyNets& nets, const InitialPolicy& policy) {
  torch::NoGradGuard no_grad;
  nets->set_normalisation(policy.mean, policy.std);
  std::size_t layer = 0;
  for (const auto& child : nets->policy->children())
    if (auto* linear = child->as<torch::nn::LinearImpl>()) {
      const torch::Tensor& w = policy.weights.at(layer);
      linear->weight.copy_(layer == 0 ? w.narrow(1, 0, nets->inputs()) : w);
      linear->bias.copy_(policy.biases.at(layer));
      ++layer;
    }
  nets->set_used_features(policy.used);
}

}  // namespace rlsched::train
