// PPO's learning step and the imitation warm start, over recorded episodes.
#pragma once

#include <random>
#include <vector>

#include "networks.h"
#include "rollout.h"
#include "slurm_rollout.h"

namespace rlsched::train {

struct UpdateStats {
  double policy_loss = 0;
  double value_loss = 0;
  double entropy = 0;
  double approx_kl = 0;
  double clip_fraction = 0;
};

/// Per-feature mean and standard deviation of all recorded rows (std floored so constant features stay finite).
std::pair<torch::Tensor, torch::Tensor> feature_statistics(const std::vector<Episode>& episodes);

/// Generalised advantage estimates and returns of every decision, episode after episode.
void advantages(const std::vector<Episode>& episodes, const std::vector<float>& values, double gamma, double lambda,
                std::vector<float>& advantage, std::vector<float>& returns);

/// What an update may change.
enum class Fit { kPolicyAndValue, kValueOnly };

/// One PPO update: several passes of clipped-objective minibatch steps over all decisions of `episodes`. With
/// Fit::kValueOnly only the value loss is minimised, its gradient clipped over the value head alone: give it an
/// optimiser over the value head's parameters, so that the policy stays exactly as it acted.
UpdateStats ppo_update(PolicyNets& nets, torch::optim::Optimizer& optimizer, const std::vector<Episode>& episodes,
                       const TrainConfig& config, std::mt19937_64& rng, Fit fit = Fit::kPolicyAndValue);

/// PPO's clipped surrogate, -mean(weight * min(ratio * A, clip(ratio) * A)) / mean(weight): the one objective both
/// update steps minimise.
torch::Tensor clipped_surrogate(const torch::Tensor& logp, const torch::Tensor& old_logp,
                                const torch::Tensor& advantage, const torch::Tensor& weight, double clip);

/// Log-densities of recorded played scores under the current policy: log N(played; mu(rows), sigma^2).
torch::Tensor score_log_densities(PolicyNets& nets, const torch::Tensor& rows, const torch::Tensor& played,
                                  double sigma);

/// One PPO update over Slurm-model episodes (slurm_rollout.h): every sample of an episode gets the episode's
/// advantage (normalised over the epoch), weighted by its sample weight; several passes of clipped-objective
/// minibatch steps, stopped early at the target KL. No value head: the baseline is the sequence's mean return.
UpdateStats ppo_update_scores(PolicyNets& nets, torch::optim::Optimizer& optimizer,
                              const std::vector<ScoreEpisode>& episodes, double sigma, const TrainConfig& config,
                              std::mt19937_64& rng);

/// One pass of behaviour cloning: cross-entropy of the policy's softmax against the recorded choices.
/// \return the mean loss.
double imitation_pass(PolicyNets& nets, torch::optim::Optimizer& optimizer, const std::vector<Episode>& episodes,
                      std::size_t minibatch, std::mt19937_64& rng);

/// The policy's scores of the rows of every decision of `episodes`, decision after decision.
std::vector<double> decision_row_scores(PolicyNets& nets, const std::vector<Episode>& episodes);

}  // namespace rlsched::train
