#include "rlsched/train/ensemble.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <torch/torch.h>

#include "initial_policy.h"
#include "rlsched/features.h"
#include "rlsched/policy/model_builder.h"

namespace rlsched::train {
namespace {

Status does_not_fit(const std::string& path, const std::string& why) {
  return Status::InvalidInput(fmt::format("{}: cannot be a member of this ensemble: {}", path, why));
}

/// The members' MLPs side by side: the first layers stacked (each rewritten to read one shared normalisation of
/// the inputs), the hidden layers block-diagonal, the last layer each member's scaled by 1/K and summed. ReLU acts
/// element by element, so every member's hidden units compute exactly what they computed alone, and the output is
/// the mean of the members' scores.
policy::MlpSpec side_by_side(const std::vector<InitialPolicy>& members) {
  const auto schema = static_cast<int64_t>(features::kFeatureCount);
  // Each input column keeps the normalisation of the first member that reads it.
  torch::Tensor mean = torch::zeros({schema}), std = torch::ones({schema});
  std::vector<char> used(static_cast<std::size_t>(schema), 0);
  for (const InitialPolicy& m : members)
    for (int64_t c = 0; c < schema; ++c)
      if (m.used[static_cast<std::size_t>(c)] && !used[static_cast<std::size_t>(c)]) {
        used[static_cast<std::size_t>(c)] = 1;
        mean[c] = m.mean[c];
        std[c] = m.std[c];
      }

  const auto k = static_cast<double>(members.size());
  const std::size_t depth = members.front().weights.size();
  std::vector<policy::MlpLayer> layers(depth);
  for (std::size_t layer = 0; layer < depth; ++layer) {
    std::vector<torch::Tensor> weights, biases;
    for (const InitialPolicy& m : members) {
      torch::Tensor w = m.weights[layer], b = m.biases[layer];
      if (layer == 0) {
        // The member read (x - m_k) / s_k = z s / s_k + (m - m_k) / s_k with z = (x - m) / s, the shared form.
        b = b + torch::matmul(w, (mean - m.mean) / m.std);
        w = w * (std / m.std);
      } else if (layer + 1 == depth) {
        w = w / k;
        b = b / k;
      }
      weights.push_back(w);
      biases.push_back(b);
    }
    if (layer == 0)
      layers[layer] = {torch::cat(weights, 0), torch::cat(biases, 0)};
    else if (layer + 1 == depth)
      layers[layer] = {torch::cat(weights, 1), torch::stack(biases).sum(0)};
    else
      layers[layer] = {torch::block_diag(weights), torch::cat(biases, 0)};
  }

  // Only the columns some member reads stay inputs (schema order, as `rlsched train` writes them).
  std::vector<int64_t> columns;
  policy::MlpSpec spec;
  const std::vector<std::string> names = features::schema_names();
  for (int64_t c = 0; c < schema; ++c)
    if (used[static_cast<std::size_t>(c)]) {
      columns.push_back(c);
      spec.features.push_back(names[static_cast<std::size_t>(c)]);
    }
  const torch::Tensor index = torch::tensor(columns, torch::kInt64);
  spec.input_mean = mean.index_select(0, index).contiguous();
  spec.input_std = std.index_select(0, index).contiguous();
  layers[0].weight = layers[0].weight.index_select(1, index).contiguous();
  for (policy::MlpLayer& l : layers) {
    l.weight = l.weight.to(torch::kFloat32).contiguous();
    l.bias = l.bias.to(torch::kFloat32).contiguous();
  }
  spec.layers = std::move(layers);
  return spec;
}

std::string card_path(const std::string& output) {
  const std::filesystem::path p(output);
  return (p.parent_path() / p.stem()).string() + ".md";
}

std::string card(const std::string& output, const policy::ModelMetadata& metadata,
                 const std::vector<InitialPolicy>& members, const std::string& command_line) {
  std::string md = fmt::format("# rlsched policy `{}`: an ensemble of {} models\n\n", output, members.size());
  md += fmt::format("Created {} · feature schema v{} · {} · weights sha256 `{}`\n\n", metadata.created,
                    metadata.schema_version, metadata.architecture, metadata.weights_sha256);
  md +=
      "A job's score is the mean of the members' scores: each member's network runs unchanged beside the others "
      "(`rlsched ensemble`, docs/cli.md). Each member's own card says how it was trained and what it was "
      "trained on; the ensemble has read every workload any member read.\n\n"
      "| member | architecture | weights sha256 |\n|---|---|---|\n";
  for (const InitialPolicy& m : members)
    md += fmt::format("| `{}` | {} hidden | `{}` |\n", m.path, fmt::join(m.hidden, "-"), m.weights_sha256);
  md += fmt::format("\n## Reproduce\n\n```\n{}\n```\n", command_line.empty() ? "rlsched ensemble ..." : command_line);
  return md;
}

}  // namespace

Result<policy::ModelMetadata> write_ensemble(const std::vector<std::string>& members, const std::string& output,
                                             const std::string& command_line) {
  if (members.size() < 2)
    return Status::InvalidInput(fmt::format("an ensemble needs at least two models ({} given)", members.size()));
  std::vector<InitialPolicy> policies;
  nlohmann::json record = nlohmann::json::array();
  for (const std::string& path : members) {
    auto policy = read_initial_policy(path);
    if (!policy.ok()) return policy.status();
    if (!policies.empty() && policy->weights.size() != policies.front().weights.size())
      return does_not_fit(path, fmt::format("it has {} layers and {} has {}", policy->weights.size(),
                                            policies.front().path, policies.front().weights.size()));
    record.push_back({{"model", path}, {"weights_sha256", policy->weights_sha256}, {"training", policy->training}});
    policies.push_back(std::move(policy).value());
  }

  torch::NoGradGuard no_grad;
  const policy::MlpSpec spec = side_by_side(policies);
  auto module = policy::build_mlp_module(spec);
  if (!module.ok()) return module.status();
  policy::ModelMetadata metadata = policy::ModelMetadata::ForFeatures(spec.features, spec.architecture());
  metadata.training = {{"ensemble", {{"combination", "mean of the members' scores"}, {"members", record}}},
                       {"command", command_line}};
  if (Status s = policy::save_model(output, *module, metadata); !s.ok()) return s;
  metadata.weights_sha256 = policy::weights_sha256(*module);
  if (metadata.created.empty()) metadata.created = policy::utc_now_iso8601();
  const std::string path = card_path(output);
  std::ofstream out(path);
  out << card(output, metadata, policies, command_line);
  if (!out) return Status::IoError(fmt::format("{}: cannot write the model card", path));
  return metadata;
}

}  // namespace rlsched::train
