#include "training_run.h"

#include <algorithm>

namespace rlsched::train {

std::size_t Trainer::draw_trace(std::mt19937_64& rng) const {
  return draws_[std::uniform_int_distribution<std::size_t>(0, draws_.size() - 1)(rng)];
}

Sequence Trainer::sample_in(const TraceSplit& t, std::mt19937_64& rng) const {
  draw_trace(rng);
  return start_in(t, rng);
}

Sequence Trainer::start_in(const TraceSplit& t, std::mt19937_64& rng) const {
  const std::size_t last_start = t.train_end - config_.sequence_length;
  return Sequence{&t.prepared, std::uniform_int_distribution<std::size_t>(0, last_start)(rng), config_.sequence_length};
}

SlurmSequence Trainer::slurm_start_in(const TraceSplit& t, std::mt19937_64& rng) const {
  draw_trace(rng);
  const Sequence s = start_in(t, rng);
  const std::vector<double>& cdf = contention_cdf_[static_cast<std::size_t>(&t - traces_.data())];
  std::size_t first = s.first;
  if (!cdf.empty() && std::uniform_real_distribution<double>(0, 1)(rng) >= kUniformWindows) {
    const double at = std::uniform_real_distribution<double>(0, cdf.back())(rng);
    first =
        std::min(static_cast<std::size_t>(std::upper_bound(cdf.begin(), cdf.end(), at) - cdf.begin()), cdf.size() - 1);
  }
  const std::vector<std::uint32_t>& warmup = window_warmup_[static_cast<std::size_t>(&t - traces_.data())];
  return SlurmSequence{&t, first, s.length, first < warmup.size() ? warmup[first] : 0};
}

void Trainer::weigh_windows_by_contention() {
  contention_cdf_.assign(traces_.size(), {});
  window_warmup_.assign(traces_.size(), {});
  parallel_for(traces_.size(), threads_, [&](std::size_t i) {
    const TraceSplit& t = traces_[i];
    if (!in_slurm_[i] || t.train_end < config_.sequence_length) return;
    const SlurmSequence all{&t, 0, t.train_end};
    auto run = sim::simulate(*t.cluster, sequence_jobs(all), *reference_, slurm_sim_);
    if (!run.ok()) return;  // uniform windows, as before
    // The search's reference over the whole training part is this very run (slurm_reference_cost): not twice.
    if (search_stretch(i).first == 0) training_reference_[i] = std::max(slurm_cost(run->outcomes, cost_), 1e-9);
    std::vector<double> waited(run->outcomes.size() + 1, 0.0);  // prefix sums of "this job waited"
    for (std::size_t j = 0; j < run->outcomes.size(); ++j) {
      const sim::JobOutcome& o = run->outcomes[j];
      waited[j + 1] = waited[j] + (o.ran() && o.start > o.submit ? 1.0 : 0.0);
    }
    const std::size_t starts = t.train_end - config_.sequence_length + 1;
    std::vector<double>& cdf = contention_cdf_[i];
    cdf.resize(starts);
    double total = 0;
    for (std::size_t s = 0; s < starts; ++s) {
      const std::size_t end = std::min(s + config_.sequence_length, run->outcomes.size());
      total += 1.0 + waited[end] - waited[std::min(s, end)];
      cdf[s] = total;
    }
    std::vector<std::uint32_t>& warmup = window_warmup_[i];
    warmup.resize(starts);
    std::size_t present = 0;  // the earliest job that had not ended when job s arrived
    for (std::size_t s = 0; s < starts && s < run->outcomes.size(); ++s) {
      const Seconds arrival = run->outcomes[s].submit;
      while (present < s && run->outcomes[present].end >= 0 && run->outcomes[present].end <= arrival) ++present;
      warmup[s] = static_cast<std::uint32_t>(std::min(s - present, config_.sequence_length));
    }
  });
}

UpdateStats Trainer::slurm_epoch(int epoch, double& train_cost_ratio) {
  const std::size_t k = std::max<std::size_t>(config_.rollouts_per_sequence, 2);
  const std::size_t count = std::max<std::size_t>(config_.episodes_per_epoch / k, 1);
  std::vector<SlurmSequence> sequences(count);
  for (std::size_t s = 0; s < count; ++s) {
    std::mt19937_64 rng = stream(config_.seed, static_cast<std::uint64_t>(epoch), s);
    sequences[s] = slurm_start_in(traces_[draw_trace(rng)], rng);
  }
  return slurm_update(epoch, sequences, train_cost_ratio, ~0ull, config_);
}

double Trainer::learning_rate_decay(int epoch) const {
  return 1.0 - 0.9 * static_cast<double>(epoch) / std::max(config_.epochs, 1);
}

void Trainer::set_learning_rate(double rate) {
  for (torch::optim::Adam* o : {&optimizer_, &value_optimizer_})
    for (auto& group : o->param_groups()) static_cast<torch::optim::AdamOptions&>(group.options()).lr(rate);
}

UpdateStats Trainer::mixed_epoch(int epoch, double& train_cost_ratio) {
  const std::size_t k = std::max<std::size_t>(config_.rollouts_per_sequence, 2);
  std::vector<CompatDraw> compat;
  std::vector<SlurmSequence> slurm;
  std::size_t slurm_draws = 0;
  for (std::size_t i = 0; i < config_.episodes_per_epoch; ++i) {
    std::mt19937_64 rng = stream(config_.seed, static_cast<std::uint64_t>(epoch), i);
    std::mt19937_64 copy = rng;
    const std::size_t t = draw_trace(copy);
    if (!in_slurm_[t]) {
      const Sequence s = sample(rng);
      compat.push_back({s, rng});
    } else if (slurm_draws++ % k == 0) {
      slurm.push_back(slurm_start_in(traces_[t], rng));
    }
  }
  std::vector<UpdateStats> stats;
  double cost_sum = 0, episodes = 0;
  if (!compat.empty()) {
    const auto count = static_cast<double>(compat.size());
    double ratio = 0;
    stats.push_back(compat_update(epoch, std::move(compat), ratio));
    cost_sum += ratio * count;
    episodes += count;
  }
  if (!slurm.empty()) {
    // The Slurm model's update at its own step size, decayed as the compat one is this epoch.
    TrainConfig slurm_config = config_;
    slurm_config.minibatch = kSlurmMinibatch;
    set_learning_rate(kSlurmLearningRate * learning_rate_decay(epoch));
    double ratio = 0;
    stats.push_back(slurm_update(epoch, slurm, ratio, ~1ull, slurm_config));
    set_learning_rate(config_.learning_rate * learning_rate_decay(epoch));
    cost_sum += ratio * static_cast<double>(slurm.size() * k);
    episodes += static_cast<double>(slurm.size() * k);
  }
  train_cost_ratio = episodes > 0 ? cost_sum / episodes : 1.0;
  UpdateStats mean;
  for (const UpdateStats& u : stats) {
    mean.entropy += u.entropy / static_cast<double>(stats.size());
    mean.approx_kl += u.approx_kl / static_cast<double>(stats.size());
    mean.value_loss += u.value_loss / static_cast<double>(stats.size());
  }
  return mean;
}

UpdateStats Trainer::slurm_update(int epoch, const std::vector<SlurmSequence>& sequences, double& train_cost_ratio,
                                  std::uint64_t update, const TrainConfig& update_config) {
  const PlainMlp plain = nets_->to_plain();
  const std::size_t k = std::max<std::size_t>(config_.rollouts_per_sequence, 2);
  const std::size_t count = sequences.size();
  std::vector<double> references(count);
  parallel_for(count, threads_, [&](std::size_t s) {
    references[s] = slurm_reference_cost(sequences[s], *reference_, slurm_sim_, cost_);
  });
  std::vector<ScoreEpisode> episodes(count * k);
  parallel_for(episodes.size(), threads_, [&](std::size_t i) {
    const std::size_t s = i / k, r = i % k;
    std::mt19937_64 rng = stream(config_.seed, static_cast<std::uint64_t>(epoch), (1ull << 32) + i);
    Exploration x;
    x.sigma = config_.score_noise;
    x.key = stream(config_.seed, static_cast<std::uint64_t>(epoch), (2ull << 32) + s * k + r / 2)();
    x.sign = r % 2 == 0 ? 1.0 : -1.0;
    x.record = x.sigma > 0;
    episodes[i] = run_slurm_policy(sequences[s], plain, x, slurm_sim_, cost_, references[s], rng);
  });
  double sum = 0;
  for (std::size_t s = 0; s < count; ++s) {
    double mean = 0;
    for (std::size_t r = 0; r < k; ++r) mean += episodes[s * k + r].cost_ratio();
    mean /= static_cast<double>(k);
    for (std::size_t r = 0; r < k; ++r) episodes[s * k + r].advantage = -(episodes[s * k + r].cost_ratio() - mean);
    sum += mean;
  }
  train_cost_ratio = sum / static_cast<double>(count);
  std::mt19937_64 rng = stream(config_.seed, static_cast<std::uint64_t>(epoch), update);
  return ppo_update_scores(nets_, optimizer_, episodes, config_.score_noise, update_config, rng);
}

UpdateStats Trainer::compat_epoch(int epoch, double& train_cost_ratio) {
  std::vector<CompatDraw> draws;
  for (std::size_t i = 0; i < config_.episodes_per_epoch; ++i) {
    std::mt19937_64 rng = stream(config_.seed, static_cast<std::uint64_t>(epoch), i);
    const Sequence s = sample(rng);
    draws.push_back({s, rng});
  }
  return compat_update(epoch, std::move(draws), train_cost_ratio);
}

UpdateStats Trainer::compat_update(int epoch, std::vector<CompatDraw> draws, double& train_cost_ratio) {
  const std::vector<Episode> episodes = rollouts(std::move(draws));
  double ratio = 0;
  for (const Episode& e : episodes) ratio += e.cost_ratio();
  train_cost_ratio = ratio / static_cast<double>(std::max<std::size_t>(episodes.size(), 1));
  std::mt19937_64 rng = stream(config_.seed, static_cast<std::uint64_t>(epoch), ~0ull);
  if (epoch < config_.critic_warmup)
    return ppo_update(nets_, value_optimizer_, episodes, config_, rng, Fit::kValueOnly);
  return ppo_update(nets_, optimizer_, episodes, config_, rng);
}

std::vector<Episode> Trainer::rollouts(std::vector<CompatDraw> draws) {
  const PlainMlp plain = nets_->to_plain();
  std::vector<Episode> episodes(draws.size());
  parallel_for(episodes.size(), threads_, [&](std::size_t i) {
    const Sequence& s = draws[i].sequence;
    std::mt19937_64& rng = draws[i].rng;
    const double reference = reference_cost(s, *reference_, backfill_, cost_);
    episodes[i] = run_policy(s, plain, backfill_, config_.temperature, config_.visible_queue, cost_, reference, rng);
  });
  return episodes;
}

}  // namespace rlsched::train
