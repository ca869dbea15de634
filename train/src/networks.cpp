#include "networks.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "rlsched/features.h"

namespace rlsched::train {
namespace {

torch::nn::Sequential mlp(int in, const std::vector<int>& hidden, int out) {
  torch::nn::Sequential net;
  int width = in;
  for (int h : hidden) {
    net->push_back(torch::nn::Linear(width, h));
    net->push_back(torch::nn::ReLU());
    width = h;
  }
  net->push_back(torch::nn::Linear(width, out));
  return net;
}

/// Per decision, the maximum of its rows (of a [N] or [N, F] tensor), without gradient. Computed by hand:
/// scatter_reduce's "amax" is still marked beta in libtorch 1.13 and logs a warning.
torch::Tensor segment_max(const torch::Tensor& values, const DecisionBatch& b) {
  const torch::Tensor v = values.detach().contiguous();
  const int64_t width = v.dim() == 1 ? 1 : v.size(1);
  torch::Tensor out = torch::full(v.dim() == 1 ? std::vector<int64_t>{b.decisions} : std::vector<int64_t>{b.decisions, width},
                                  -std::numeric_limits<float>::infinity());
  const float* in = v.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const int64_t* seg = b.segment.data_ptr<int64_t>();
  for (int64_t r = 0; r < v.size(0); ++r)
    for (int64_t k = 0; k < width; ++k) o[seg[r] * width + k] = std::max(o[seg[r] * width + k], in[r * width + k]);
  return out;
}

}  // namespace

PolicyNetsImpl::PolicyNetsImpl(int inputs, const std::vector<int>& hidden) : features_(inputs) {
  used_.assign(features::kFeatureCount, 0);
  std::fill_n(used_.begin(), inputs, 1);
  policy = register_module("policy", mlp(inputs, hidden, 1));
  value = register_module("value", mlp(2 * inputs + 2, hidden, 1));
  mean = register_buffer("mean", torch::zeros({inputs}));
  std = register_buffer("std", torch::ones({inputs}));
}

void PolicyNetsImpl::set_normalisation(const torch::Tensor& m, const torch::Tensor& s) {
  torch::NoGradGuard no_grad;
  mean.copy_(m.narrow(0, 0, features_));
  std.copy_(s.narrow(0, 0, features_));
}

void PolicyNetsImpl::set_used_features(const std::vector<char>& used) {
  used_.assign(features::kFeatureCount, 0);
  std::copy_n(used.begin(), std::min<std::size_t>(used.size(), static_cast<std::size_t>(features_)), used_.begin());
  mask_unused();
}

void PolicyNetsImpl::mask_unused() {
  if (used_.empty()) return;
  torch::NoGradGuard no_grad;
  auto* first = policy->children().front()->as<torch::nn::LinearImpl>();
  for (int k = 0; k < features_; ++k)
    if (!used_[static_cast<std::size_t>(k)]) first->weight.select(1, k).zero_();
}

torch::Tensor PolicyNetsImpl::normalise(const torch::Tensor& rows) const {
  return (rows.narrow(1, 0, features_) - mean) / std;
}

bool PolicyNetsImpl::set_linear_policy(const std::vector<double>& weights, double scale) {
  torch::NoGradGuard no_grad;
  std::vector<torch::nn::LinearImpl*> layers;
  for (const auto& child : policy->children())
    if (auto* linear = child->as<torch::nn::LinearImpl>()) layers.push_back(linear);
  if (layers.size() < 2) return false;
  for (std::size_t li = 0; li + 1 < layers.size(); ++li)
    if (layers[li]->weight.size(0) < 2) return false;
  // On normalised inputs x' = (x - mean) / std the sum w . x is (w * std) . x' plus a constant.
  const torch::Tensor w =
      torch::tensor(std::vector<float>(weights.begin(), weights.end())).narrow(0, 0, features_) * std * scale;
  for (std::size_t li = 0; li < layers.size(); ++li) {
    torch::nn::LinearImpl& l = *layers[li];
    if (li + 1 == layers.size()) {  // the output: positive part minus negative part
      l.weight.zero_();
      l.weight[0][0] = 1;
      l.weight[0][1] = -1;
      l.bias.zero_();
      break;
    }
    l.weight[0].zero_();
    l.weight[1].zero_();
    l.bias[0] = 0;
    l.bias[1] = 0;
    if (li == 0) {
      l.weight[0].copy_(w);
      l.weight[1].copy_(-w);
    } else {  // ReLU of a non-negative input is itself
      l.weight[0][0] = 1;
      l.weight[1][1] = 1;
    }
  }
  mask_unused();
  return true;
}

torch::Tensor PolicyNetsImpl::scores(const torch::Tensor& rows) { return policy->forward(normalise(rows)).squeeze(1); }

LogProbs PolicyNetsImpl::log_probs(const DecisionBatch& b, double temperature) {
  const torch::Tensor s = temperature == 1.0 ? scores(b.rows) : scores(b.rows) / temperature;
  // A softmax per decision over its own rows: shift by each segment's max, normalise by each segment's sum.
  const torch::Tensor shifted = s - segment_max(s.detach(), b).index_select(0, b.segment);
  const torch::Tensor sums = torch::zeros({b.decisions}).index_add(0, b.segment, shifted.exp());
  const torch::Tensor logp_rows = shifted - sums.log().index_select(0, b.segment);
  LogProbs out;
  out.action = logp_rows.index_select(0, b.action_row);
  out.entropy = -torch::zeros({b.decisions}).index_add(0, b.segment, logp_rows.exp() * logp_rows);
  return out;
}

torch::Tensor PolicyNetsImpl::values(const DecisionBatch& b) {
  torch::Tensor pooled;
  {
    torch::NoGradGuard no_grad;  // pooling has no parameters; gradients flow into the value net only
    const torch::Tensor x = normalise(b.rows);
    const torch::Tensor sums = torch::zeros({b.decisions, features_}).index_add(0, b.segment, x);
    const torch::Tensor means = sums / b.counts.unsqueeze(1);
    const torch::Tensor maxes = segment_max(x, b);
    const torch::Tensor size = (b.counts.log() / std::log(1000.0)).unsqueeze(1);
    pooled = torch::cat({means, maxes, size, b.remaining.unsqueeze(1)}, 1);
  }
  return value->forward(pooled).squeeze(1);
}

PlainMlp PolicyNetsImpl::to_plain() const {
  // As wide as the schema's rows, which the rollout workers pass whole: the columns past inputs() get zero weights
  // (adding their zero products after the others leaves every sum as it was).
  constexpr auto kWidth = static_cast<int64_t>(features::kFeatureCount);
  PlainMlp plain;
  const torch::Tensor m = mean.contiguous(), s = std.contiguous();
  plain.mean.assign(kWidth, 0.0f);
  plain.inv_std.assign(kWidth, 1.0f);
  for (int i = 0; i < features_; ++i) {
    plain.mean[i] = m[i].item<float>();
    plain.inv_std[i] = 1.0f / s[i].item<float>();
  }
  for (const auto& child : policy->children()) {
    auto* linear = child->as<torch::nn::LinearImpl>();
    if (linear == nullptr) continue;
    PlainLayer layer;
    torch::Tensor w = linear->weight.detach();
    if (plain.layers.empty() && w.size(1) < kWidth)
      w = torch::cat({w, torch::zeros({w.size(0), kWidth - w.size(1)})}, 1);
    w = w.contiguous();
    layer.in = static_cast<int>(w.size(1));
    layer.out = static_cast<int>(w.size(0));
    const torch::Tensor bias = linear->bias.detach().contiguous();
    layer.weight.assign(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
    layer.bias.assign(bias.data_ptr<float>(), bias.data_ptr<float>() + bias.numel());
    plain.layers.push_back(std::move(layer));
  }
  const std::vector<std::string> names = features::schema_names();
  for (std::size_t k = 0; k < used_.size() && k < names.size(); ++k)
    plain.reads_predicted_run_time =
        plain.reads_predicted_run_time || (used_[k] && features::reads_predicted_run_time({names[k]}));
  return plain;
}

}  // namespace rlsched::train
