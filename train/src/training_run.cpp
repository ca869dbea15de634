#include "training_run.h"

#include <algorithm>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

namespace rlsched::train {

double raw_spread(const std::vector<Episode>& episodes, std::size_t k) {
  float lo = std::numeric_limits<float>::max(), hi = std::numeric_limits<float>::lowest();
  for (const Episode& e : episodes)
    for (std::size_t r = 0; r < e.features.size() / features::kFeatureCount; ++r) {
      const float v = e.features[r * features::kFeatureCount + k];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  return hi >= lo ? static_cast<double>(hi - lo) : 0.0;
}

std::mt19937_64 stream(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index) {
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(epoch), static_cast<std::uint32_t>(index)};
  return std::mt19937_64(seq);
}

Trainer::Trainer(const TrainConfig& config, std::vector<TraceSplit> traces, std::vector<ValidationSite> sites,
                 std::vector<std::vector<Workload>> validation_jobs, std::unique_ptr<Scorer> reference,
                 std::optional<InitialPolicy> initial)
    : config_(config),
      initial_(std::move(initial)),
      traces_(std::move(traces)),
      sites_(std::move(sites)),
      reference_(std::move(reference)),
      cost_(config),
      backfill_(config.backfill == sim::Backfill::kEasy),
      slurm_(config.rollouts == Rollouts::kSlurm),
      threads_(config.threads > 0 ? config.threads
                                  : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
      nets_(network_inputs(config.predicted_run_times, initial_), config.hidden),
      optimizer_(nets_->parameters(), torch::optim::AdamOptions(config.learning_rate)),
      value_optimizer_(nets_->value->parameters(), torch::optim::AdamOptions(config.learning_rate)) {
  for (std::size_t t = 0; t < traces_.size(); ++t) {
    for (int w = 0; w < traces_[t].weight; ++w) draws_.push_back(t);
    in_slurm_.push_back(slurm_ || (config.rollouts == Rollouts::kMixed && has_accelerator_jobs(traces_[t])) ? 1 : 0);
  }
  for (const TraceSplit& t : traces_)
    for (std::size_t start : t.validation_starts) {
      validation_.push_back(Sequence{&t.prepared, start, config.sequence_length});
      validation_weight_.push_back(t.weight);
    }
  validation_reference_.resize(validation_.size());
  parallel_for(validation_.size(), threads_, [&](std::size_t i) {
    validation_reference_[i] = reference_cost(validation_[i], *reference_, backfill_, cost_);
  });
  slurm_sim_.backfill = config.backfill;
  if (std::find(in_slurm_.begin(), in_slurm_.end(), 1) != in_slurm_.end()) {
    training_reference_.assign(traces_.size(), -1.0);
    weigh_windows_by_contention();  // sets training_reference_ where its run is the search's (the whole part)
    parallel_for(traces_.size(), threads_, [&](std::size_t t) {
      if (training_reference_[t] >= 0 || !in_slurm_[t]) return;
      training_reference_[t] = std::max(slurm_reference_cost(search_stretch(t), *reference_, slurm_sim_, cost_), 1e-9);
    });
  }
  validation_jobs_ = std::move(validation_jobs);
  validation_slurm_reference_.resize(validation_jobs_.size());
  parallel_for(validation_jobs_.size(), threads_, [&](std::size_t i) {
    for (const Workload& jobs : validation_jobs_[i])
      validation_slurm_reference_[i].push_back(slurm_metric(jobs, traces_[i].cluster.get(), *reference_));
  });
  site_reference_.resize(sites_.size());
  parallel_for(sites_.size(), threads_, [&](std::size_t i) {
    site_reference_[i] = slurm_metric(sites_[i].workload, sites_[i].cluster.get(), *reference_);
  });
}

Result<TrainResult> Trainer::run(const std::function<void(const TrainProgress&)>& progress) {
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - config_.started).count(); };
  const double budget = config_.time_budget_seconds;
  TrainResult result;
  int first_epoch = 0;
  if (!config_.resume.empty()) {
    Status s = load_checkpoint(config_.resume, first_epoch);
    if (!s.ok()) return s;
    if (slurm_) {  // the kept model's figure on the training part, measured again
      const State current = snapshot();
      restore(best_state_);
      best_training_ = training_part_ratio();
      restore(current);
    }
  } else {
    if (initial_) {
      apply_initial_policy(nets_, *initial_);
      teacher_ = fmt::format("none: PPO went on from the model {} (weights sha256 {})", initial_->path,
                             initial_->weights_sha256);
    } else if (Status s = warm_start(); !s.ok()) {
      return s;
    }
    best_ = validate();
    best_state_ = snapshot();
    initial_cost_ = best_;
    if (slurm_) initial_training_ = best_training_ = training_part_ratio();
  }
  result.initial_validation_cost_ratio = initial_cost_;
  result.teacher_validation_cost_ratio = teacher_validation_;
  result.teacher = config_.imitation_epochs > 0 || initial_ ? teacher_ : "none";

  TrainProgress p;
  p.epochs = config_.epochs;
  p.best_validation = best_;
  p.validation_cost_ratio = best_;
  int epoch = first_epoch;
  double slowest_epoch = 0;  // the next epoch is not started when one as slow would end past the budget
  bool out_of_time = budget > 0 && elapsed() >= budget;  // the warm start took it all: the model stays as it left it
  for (; epoch < config_.epochs && !out_of_time; ++epoch) {
    const double epoch_start = elapsed();
    set_learning_rate(config_.learning_rate * learning_rate_decay(epoch));
    const UpdateStats stats = slurm_                                 ? slurm_epoch(epoch, p.train_cost_ratio)
                              : config_.rollouts == Rollouts::kMixed ? mixed_epoch(epoch, p.train_cost_ratio)
                                                                     : compat_epoch(epoch, p.train_cost_ratio);
    p.entropy = stats.entropy;
    p.approx_kl = stats.approx_kl;
    p.value_loss = stats.value_loss;

    const bool last = epoch + 1 == config_.epochs;
    if ((epoch + 1) % std::max(config_.eval_every, 1) == 0 || last) {
      p.validation_cost_ratio = validate();
      if (p.validation_cost_ratio < best_ * (1.0 - config_.min_improvement) && holds_on_training_part()) {
        best_ = p.validation_cost_ratio;
        best_state_ = snapshot();
        stale_ = 0;
      } else {
        ++stale_;
      }
      p.best_validation = best_;
      if (!config_.checkpoint.empty()) {
        Status s = save_checkpoint(config_.checkpoint, epoch + 1);
        if (!s.ok()) return s;
      }
    }
    p.epoch = epoch + 1;
    p.elapsed_seconds = elapsed();
    slowest_epoch = std::max(slowest_epoch, p.elapsed_seconds - epoch_start);
    result.curve.push_back(p);
    if (progress) progress(p);
    // "Stopped early" is what the card and the command say: only when epochs were left to run.
    if (config_.patience > 0 && stale_ >= config_.patience) {
      result.stopped_early = !last;
      ++epoch;
      break;
    }
    const bool chunk_done = config_.stop_after > 0 && epoch + 1 - first_epoch >= config_.stop_after;
    out_of_time = budget > 0 && p.elapsed_seconds + slowest_epoch > budget;
    if (chunk_done || out_of_time) {
      if (!config_.checkpoint.empty()) {  // so that --resume goes on exactly from here
        Status s = save_checkpoint(config_.checkpoint, epoch + 1);
        if (!s.ok()) return s;
      }
      result.stopped_early = !last;
      ++epoch;
      break;
    }
  }
  if (epoch == first_epoch && out_of_time) {
    result.stopped_early = true;
    if (!config_.checkpoint.empty())
      if (Status s = save_checkpoint(config_.checkpoint, epoch); !s.ok()) return s;
  }
  restore(best_state_);
  result.epochs_run = epoch;
  result.best_validation_cost_ratio = best_;
  if (slurm_) {
    result.initial_training_cost_ratio = initial_training_;
    result.training_cost_ratio = best_training_;
  }
  result.seconds = elapsed();
  result.model_path = config_.output;
  if (!config_.output.empty()) {
    ExportInfo info{config_, traces_, sites_, result, validation_table()};
    Status s = export_model(nets_, info);
    if (!s.ok()) return s;
    result.curve_csv = curve_csv_path(config_);
  }
  return result;
}

Trainer::State Trainer::snapshot() {
  State s;
  for (const torch::Tensor& t : nets_->parameters()) s.push_back(t.detach().clone());
  for (const torch::Tensor& t : nets_->buffers()) s.push_back(t.detach().clone());
  return s;
}

void Trainer::restore(const State& s) {
  torch::NoGradGuard no_grad;
  std::size_t i = 0;
  for (torch::Tensor& t : nets_->parameters()) t.copy_(s[i++]);
  for (torch::Tensor& t : nets_->buffers()) t.copy_(s[i++]);
}

Status Trainer::save_checkpoint(const std::string& path, int epoch) {
  try {
    torch::serialize::OutputArchive archive;
    nets_->save(archive);
    torch::serialize::OutputArchive optimizer;
    optimizer_.save(optimizer);
    archive.write("optimizer", optimizer);
    torch::serialize::OutputArchive best;
    for (std::size_t i = 0; i < best_state_.size(); ++i) best.write(std::to_string(i), best_state_[i]);
    archive.write("best_state", best);
    // The features warm_start left out: without them a resumed run would train (and export) all features.
    const std::vector<char>& used = nets_->used_features();
    archive.write("used_features", torch::tensor(std::vector<int64_t>(used.begin(), used.end()), torch::kInt64));
    archive.write("epoch", torch::tensor(static_cast<int64_t>(epoch)));
    archive.write("best", torch::tensor(best_, torch::kFloat64));
    archive.write("initial", torch::tensor(initial_cost_, torch::kFloat64));
    archive.write("initial_training", torch::tensor(initial_training_, torch::kFloat64));
    archive.write("stale", torch::tensor(static_cast<int64_t>(stale_)));
    const std::string temp = path + ".tmp";
    archive.save_to(temp);
    std::filesystem::rename(temp, path);
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::IoError(fmt::format("{}: cannot write checkpoint: {}", path, e.what()));
  }
}

Status Trainer::load_checkpoint(const std::string& path, int& epoch) {
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    nets_->load(archive);
    torch::serialize::InputArchive optimizer;
    archive.read("optimizer", optimizer);
    optimizer_.load(optimizer);
    torch::serialize::InputArchive best;
    archive.read("best_state", best);
    best_state_ = snapshot();
    for (std::size_t i = 0; i < best_state_.size(); ++i) best.read(std::to_string(i), best_state_[i]);
    // One tensor per entry: reading into a tensor that holds another entry keeps its dtype, so "best" (a double)
    // read into the tensor that held "epoch" (an integer) came back as a wrong figure.
    auto entry = [&](const char* key) {
      torch::Tensor t;
      archive.read(key, t);
      return t;
    };
    const torch::Tensor used_features = entry("used_features");
    if (used_features.numel() != static_cast<int64_t>(features::kFeatureCount))
      return Status::InvalidInput(fmt::format("{}: the checkpoint lists {} features, this trainer has {}", path,
                                              used_features.numel(), features::kFeatureCount));
    std::vector<char> used(features::kFeatureCount);
    for (std::size_t k = 0; k < used.size(); ++k)
      used[k] = used_features[static_cast<int64_t>(k)].item<int64_t>() != 0 ? 1 : 0;
    nets_->set_used_features(used);
    epoch = static_cast<int>(entry("epoch").item<int64_t>());
    best_ = entry("best").item<double>();
    initial_cost_ = entry("initial").item<double>();
    try {  // written since the training-part check; a checkpoint from before goes on without the start's figure
      initial_training_ = entry("initial_training").item<double>();
    } catch (const std::exception&) {
      initial_training_ = -1;
    }
    stale_ = static_cast<int>(entry("stale").item<int64_t>());
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::InvalidInput(fmt::format("{}: not a checkpoint of this trainer configuration: {}", path, e.what()));
  }
}

}  // namespace rlsched::train
