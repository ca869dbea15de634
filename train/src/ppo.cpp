#include "ppo.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace rlsched::train {
namespace {

struct DecisionRef {
  std::uint32_t episode;
  std::uint32_t decision;
};

std::vector<DecisionRef> all_decisions(const std::vector<Episode>& episodes) {
  std::vector<DecisionRef> refs;
  for (std::size_t e = 0; e < episodes.size(); ++e)
    for (std::size_t d = 0; d < episodes[e].decisions.size(); ++d)
      refs.push_back(DecisionRef{static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(d)});
  return refs;
}

DecisionBatch make_batch(const std::vector<Episode>& episodes, const DecisionRef* refs, std::size_t count) {
  constexpr auto kF = static_cast<int64_t>(features::kFeatureCount);
  std::size_t rows = 0;
  for (std::size_t i = 0; i < count; ++i) rows += episodes[refs[i].episode].decisions[refs[i].decision].rows;
  DecisionBatch b;
  b.decisions = static_cast<int64_t>(count);
  b.rows = torch::empty({static_cast<int64_t>(rows), kF});
  b.segment = torch::empty({static_cast<int64_t>(rows)}, torch::kInt64);
  b.action_row = torch::empty({b.decisions}, torch::kInt64);
  b.counts = torch::empty({b.decisions});
  b.remaining = torch::empty({b.decisions});
  float* x = b.rows.data_ptr<float>();
  int64_t* seg = b.segment.data_ptr<int64_t>();
  int64_t* action = b.action_row.data_ptr<int64_t>();
  float* counts = b.counts.data_ptr<float>();
  float* remaining = b.remaining.data_ptr<float>();
  std::size_t row = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const Episode& e = episodes[refs[i].episode];
    const Decision& d = e.decisions[refs[i].decision];
    std::copy_n(e.features.data() + static_cast<std::size_t>(d.first_row) * features::kFeatureCount,
                static_cast<std::size_t>(d.rows) * features::kFeatureCount, x + row * features::kFeatureCount);
    std::fill_n(seg + row, d.rows, static_cast<int64_t>(i));
    action[i] = static_cast<int64_t>(row + d.action);
    counts[i] = static_cast<float>(d.rows);
    remaining[i] = d.remaining;
    row += d.rows;
  }
  return b;
}

}  // namespace

std::pair<torch::Tensor, torch::Tensor> feature_statistics(const std::vector<Episode>& episodes) {
  constexpr std::size_t kF = features::kFeatureCount;
  std::vector<double> sum(kF, 0), sum_sq(kF, 0);
  double n = 0;
  for (const Episode& e : episodes) {
    for (std::size_t r = 0; r < e.features.size() / kF; ++r) {
      for (std::size_t k = 0; k < kF; ++k) {
        const double v = e.features[r * kF + k];
        sum[k] += v;
        sum_sq[k] += v * v;
      }
      n += 1;
    }
  }
  torch::Tensor mean = torch::zeros({static_cast<int64_t>(kF)}), std = torch::ones({static_cast<int64_t>(kF)});
  if (n == 0) return {mean, std};
  for (std::size_t k = 0; k < kF; ++k) {
    const double m = sum[k] / n;
    const double var = std::max(0.0, sum_sq[k] / n - m * m);
    mean[static_cast<int64_t>(k)] = static_cast<float>(m);
    std[static_cast<int64_t>(k)] = static_cast<float>(std::max(std::sqrt(var), 0.05));
  }
  return {mean, std};
}

void advantages(const std::vector<Episode>& episodes, const std::vector<float>& values, double gamma, double lambda,
                std::vector<float>& advantage, std::vector<float>& returns) {
  advantage.assign(values.size(), 0.0f);
  returns.assign(values.size(), 0.0f);
  std::size_t base = 0;
  for (const Episode& e : episodes) {
    const std::size_t n = e.decisions.size();
    double next_value = 0, gae = 0;
    for (std::size_t t = n; t-- > 0;) {
      const double delta = e.rewards[t] + gamma * next_value - values[base + t];
      gae = delta + gamma * lambda * gae;
      advantage[base + t] = static_cast<float>(gae);
      returns[base + t] = static_cast<float>(gae + values[base + t]);
      next_value = values[base + t];
    }
    base += n;
  }
}

UpdateStats ppo_update(PolicyNets& nets, torch::optim::Optimizer& optimizer, const std::vector<Episode>& episodes,
                       const TrainConfig& config, std::mt19937_64& rng, Fit fit) {
  const bool value_only = fit == Fit::kValueOnly;
  std::vector<DecisionRef> refs = all_decisions(episodes);
  UpdateStats stats;
  if (refs.empty()) return stats;

  // Values of every decision under the current value head, then advantages.
  std::vector<float> values(refs.size());
  {
    torch::NoGradGuard no_grad;
    for (std::size_t i = 0; i < refs.size(); i += 1024) {
      const std::size_t n = std::min<std::size_t>(1024, refs.size() - i);
      const torch::Tensor v = nets->values(make_batch(episodes, refs.data() + i, n)).contiguous();
      std::copy_n(v.data_ptr<float>(), n, values.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  std::vector<float> adv, ret;
  advantages(episodes, values, config.gamma, config.gae_lambda, adv, ret);
  double mean = 0, sq = 0;
  for (float a : adv) mean += a;
  mean /= static_cast<double>(adv.size());
  for (float a : adv) sq += (a - mean) * (a - mean);
  const double sd = std::sqrt(sq / static_cast<double>(adv.size())) + 1e-8;
  for (float& a : adv) a = static_cast<float>((a - mean) / sd);

  std::vector<std::size_t> order(refs.size());
  std::size_t steps = 0;
  bool stop = false;  // the policy moved as far from the one that acted as one update should (target KL)
  for (int pass = 0; pass < config.ppo_iterations && !stop; ++pass) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t i = 0; i < order.size() && !stop; i += config.minibatch) {
      const std::size_t n = std::min(config.minibatch, order.size() - i);
      std::vector<DecisionRef> chosen(n);
      std::vector<float> old_logp(n), a(n), r(n);
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t j = order[i + k];
        chosen[k] = refs[j];
        old_logp[k] = episodes[refs[j].episode].decisions[refs[j].decision].logp;
        a[k] = adv[j];
        r[k] = ret[j];
      }
      const DecisionBatch batch = make_batch(episodes, chosen.data(), n);
      const auto N = static_cast<int64_t>(n);
      const torch::Tensor old = torch::from_blob(old_logp.data(), {N}).clone();
      const torch::Tensor advantage = torch::from_blob(a.data(), {N}).clone();
      const torch::Tensor target = torch::from_blob(r.data(), {N}).clone();

      const LogProbs lp = nets->log_probs(batch, config.temperature);
      const torch::Tensor ratio = (lp.action - old).exp();
      const torch::Tensor policy_loss = clipped_surrogate(lp.action, old, advantage, torch::ones({N}), config.clip);
      const torch::Tensor value_loss = (nets->values(batch) - target).pow(2).mean();
      const torch::Tensor entropy = lp.entropy.mean();
      const torch::Tensor loss = value_only ? config.value_coef * value_loss
                                            : policy_loss + config.value_coef * value_loss -
                                                  config.entropy_coef * entropy;

      optimizer.zero_grad();
      loss.backward();
      torch::nn::utils::clip_grad_norm_(value_only ? nets->value->parameters() : nets->parameters(),
                                        config.max_grad_norm);
      optimizer.step();
      nets->mask_unused();

      stats.policy_loss += policy_loss.item<double>();
      stats.value_loss += value_loss.item<double>();
      stats.entropy += entropy.item<double>();
      const double kl = (old - lp.action).mean().item<double>();
      stats.approx_kl += kl;
      if (config.target_kl > 0 && kl > 1.5 * config.target_kl) stop = true;
      stats.clip_fraction += ((ratio - 1.0).abs() > config.clip).to(torch::kFloat).mean().item<double>();
      ++steps;
    }
  }
  const double s = static_cast<double>(std::max<std::size_t>(steps, 1));
  stats.policy_loss /= s;
  stats.value_loss /= s;
  stats.entropy /= s;
  stats.approx_kl /= s;
  stats.clip_fraction /= s;
  return stats;
}

torch::Tensor clipped_surrogate(const torch::Tensor& logp, const torch::Tensor& old_logp,
                                const torch::Tensor& advantage, const torch::Tensor& weight, double clip) {
  const torch::Tensor ratio = (logp - old_logp).exp();
  const torch::Tensor clipped = ratio.clamp(1.0 - clip, 1.0 + clip);
  return -(weight * torch::min(ratio * advantage, clipped * advantage)).sum() / weight.sum().clamp_min(1e-12);
}

torch::Tensor score_log_densities(PolicyNets& nets, const torch::Tensor& rows, const torch::Tensor& played,
                                  double sigma) {
  const torch::Tensor z = (played - nets->scores(rows)) / sigma;
  return -0.5 * z * z - std::log(sigma) - 0.5 * std::log(2.0 * M_PI);
}

UpdateStats ppo_update_scores(PolicyNets& nets, torch::optim::Optimizer& optimizer,
                              const std::vector<ScoreEpisode>& episodes, double sigma, const TrainConfig& config,
                              std::mt19937_64& rng) {
  struct SampleRef {
    std::uint32_t episode;
    std::uint32_t sample;
  };
  std::vector<SampleRef> refs;
  for (std::size_t e = 0; e < episodes.size(); ++e)
    for (std::size_t i = 0; i < episodes[e].samples(); ++i)
      refs.push_back(SampleRef{static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(i)});
  UpdateStats stats;
  if (refs.empty() || sigma <= 0) return stats;
  // Episode advantages scaled to unit spread over the epoch (they are already centred per sequence).
  double sq = 0;
  for (const ScoreEpisode& e : episodes) sq += e.advantage * e.advantage;
  const double sd = std::sqrt(sq / static_cast<double>(episodes.size())) + 1e-8;

  constexpr auto kF = static_cast<int64_t>(features::kFeatureCount);
  std::vector<std::size_t> order(refs.size());
  std::size_t steps = 0;
  bool stop = false;
  for (int pass = 0; pass < config.ppo_iterations && !stop; ++pass) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t i = 0; i < order.size() && !stop; i += config.minibatch) {
      const std::size_t n = std::min(config.minibatch, order.size() - i);
      const auto N = static_cast<int64_t>(n);
      torch::Tensor rows = torch::empty({N, kF});
      torch::Tensor played = torch::empty({N}), old = torch::empty({N}), advantage = torch::empty({N}),
                    weight = torch::empty({N});
      float* x = rows.data_ptr<float>();
      for (std::size_t k = 0; k < n; ++k) {
        const SampleRef ref = refs[order[i + k]];
        const ScoreEpisode& e = episodes[ref.episode];
        std::copy_n(e.features.data() + static_cast<std::size_t>(ref.sample) * features::kFeatureCount,
                    features::kFeatureCount, x + k * features::kFeatureCount);
        played.data_ptr<float>()[k] = e.played[ref.sample];
        old.data_ptr<float>()[k] = e.logp[ref.sample];
        advantage.data_ptr<float>()[k] = static_cast<float>(e.advantage / sd);
        weight.data_ptr<float>()[k] = e.weight[ref.sample];
      }
      const torch::Tensor logp = score_log_densities(nets, rows, played, sigma);
      const torch::Tensor policy_loss = clipped_surrogate(logp, old, advantage, weight, config.clip);
      optimizer.zero_grad();
      policy_loss.backward();
      torch::nn::utils::clip_grad_norm_(nets->parameters(), config.max_grad_norm);
      optimizer.step();
      nets->mask_unused();

      stats.policy_loss += policy_loss.item<double>();
      const double kl = (old - logp.detach()).mean().item<double>();
      stats.approx_kl += kl;
      if (config.target_kl > 0 && kl > 1.5 * config.target_kl) stop = true;
      const torch::Tensor ratio = (logp.detach() - old).exp();
      stats.clip_fraction += ((ratio - 1.0).abs() > config.clip).to(torch::kFloat).mean().item<double>();
      ++steps;
    }
  }
  const double s = static_cast<double>(std::max<std::size_t>(steps, 1));
  stats.policy_loss /= s;
  stats.approx_kl /= s;
  stats.clip_fraction /= s;
  // The Gaussian's entropy per sample: fixed by sigma.
  stats.entropy = 0.5 * std::log(2.0 * M_PI * M_E * sigma * sigma);
  return stats;
}

double imitation_pass(PolicyNets& nets, torch::optim::Optimizer& optimizer, const std::vector<Episode>& episodes,
                      std::size_t minibatch, std::mt19937_64& rng) {
  std::vector<DecisionRef> refs = all_decisions(episodes);
  std::shuffle(refs.begin(), refs.end(), rng);
  double total = 0;
  std::size_t steps = 0;
  for (std::size_t i = 0; i < refs.size(); i += minibatch) {
    const std::size_t n = std::min(minibatch, refs.size() - i);
    const DecisionBatch batch = make_batch(episodes, refs.data() + i, n);
    const torch::Tensor loss = -nets->log_probs(batch).action.mean();
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    nets->mask_unused();
    total += loss.item<double>();
    ++steps;
  }
  return steps > 0 ? total / static_cast<double>(steps) : 0.0;
}

std::vector<double> decision_row_scores(PolicyNets& nets, const std::vector<Episode>& episodes) {
  std::vector<float> rows;
  for (const Episode& e : episodes)
    for (const Decision& d : e.decisions)
      rows.insert(rows.end(), e.features.begin() + static_cast<std::ptrdiff_t>(d.first_row * features::kFeatureCount),
                  e.features.begin() + static_cast<std::ptrdiff_t>((d.first_row + d.rows) * features::kFeatureCount));
  const auto count = static_cast<int64_t>(rows.size() / features::kFeatureCount);
  if (count == 0) return {};
  torch::NoGradGuard no_grad;
  const torch::Tensor scores =
      nets->scores(torch::from_blob(rows.data(), {count, static_cast<int64_t>(features::kFeatureCount)})).contiguous();
  return std::vector<double>(scores.data_ptr<float>(), scores.data_ptr<float>() + count);
}

}  // namespace rlsched::train
