// The trainable networks: the policy (one score per job, the part that ships) and the value head PPO needs.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "plain_mlp.h"

namespace rlsched::train {

/// Decisions of a minibatch, their visible jobs concatenated: rows of decision d are those with segment == d.
struct DecisionBatch {
  torch::Tensor rows;        ///< [N, F] raw features
  torch::Tensor segment;     ///< [N] int64, decision of each row
  torch::Tensor action_row;  ///< [B] int64, row index of each decision's chosen job
  torch::Tensor counts;      ///< [B] float, rows per decision
  torch::Tensor remaining;   ///< [B] float, share of the episode's jobs not yet started
  int64_t decisions = 0;
};

struct LogProbs {
  torch::Tensor action;   ///< [B] log-probability of each chosen job
  torch::Tensor entropy;  ///< [B]
};

/// Every method takes rows, statistics and masks as wide as the schema (features::kFeatureCount); the networks read
/// their first `inputs` columns. The trainer builds them over v1's columns unless the policy may read the predicted
/// run time, so that a model trained without it is v1's network draw for draw (the same initialisation and
/// arithmetic as on a v1 build, hence the same weights for the same recipe).
class PolicyNetsImpl : public torch::nn::Module {
 public:
  PolicyNetsImpl(int inputs, const std::vector<int>& hidden);

  int inputs() const { return features_; }
  /// Fixes the input normalisation (per-feature mean and standard deviation of visited states).
  void set_normalisation(const torch::Tensor& mean, const torch::Tensor& std);
  /// Features the network may read (1) or must ignore (0): their first-layer weights are held at zero, so the
  /// exported model can leave them out. Used for features the training data never varied. Columns past inputs()
  /// are never used.
  void set_used_features(const std::vector<char>& used);
  const std::vector<char>& used_features() const { return used_; }
  /// Re-zeroes the weights of unused features (after every optimiser step).
  void mask_unused();
  torch::Tensor normalise(const torch::Tensor& rows) const;
  /// Sets the policy to score a raw row x as scale * (weights . x) plus a constant, exactly: the first hidden layer's
  /// first unit carries the sum's positive part and its second unit the negative part, the later layers pass the
  /// two on, and the output is their difference. The other units keep their random weights and start muted (zero
  /// output weight). Call after set_normalisation; the value head is untouched. \return false, changing nothing,
  /// when a hidden layer has fewer than two units.
  bool set_linear_policy(const std::vector<double>& weights, double scale);

  /// Scores of raw feature rows [N, F] -> [N].
  torch::Tensor scores(const torch::Tensor& rows);
  /// Per decision: log-probability of its action under a softmax over its rows' scores / temperature, and the
  /// entropy.
  LogProbs log_probs(const DecisionBatch& batch, double temperature = 1.0);
  /// State values [B] from pooled (mean, max) normalised rows, the queue size and how much of the episode is left.
  torch::Tensor values(const DecisionBatch& batch);

  /// The policy's weights for plain-loop inference (rollout workers).
  PlainMlp to_plain() const;

  torch::nn::Sequential policy{nullptr};
  torch::nn::Sequential value{nullptr};
  torch::Tensor mean, std;  // buffers [inputs]

 private:
  int features_;            // inputs
  std::vector<char> used_;  // [kFeatureCount]
};
TORCH_MODULE(PolicyNets);

}  // namespace rlsched::train
