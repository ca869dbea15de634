#include "rlsched/policy/reloading_scorer.h"

#include <cstdio>

#include <fmt/format.h>

namespace rlsched::policy {

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "?";
}

LogSink stderr_log_sink() {
  return [](LogLevel level, const std::string& line) {
    const std::string text = fmt::format("rlsched: {}: {}\n", log_level_name(level), line);
    std::fwrite(text.data(), 1, text.size(), stderr);  // one write, so concurrent lines do not interleave
  };
}

Result<std::unique_ptr<ReloadingScorer>> ReloadingScorer::Create(ReloadingScorerOptions options) {
  Result<std::unique_ptr<ReloadingScorer>> scorer = CreateUnloaded(std::move(options));
  if (scorer.ok()) (*scorer)->reload_if_changed();
  return scorer;
}

Result<std::unique_ptr<ReloadingScorer>> ReloadingScorer::CreateUnloaded(ReloadingScorerOptions options) {
  auto fallback = make_scorer(options.fallback, options.fallback_settings);
  if (!fallback.ok()) return Status::InvalidInput("fallback: " + fallback.status().message());
  if (!options.log) options.log = stderr_log_sink();
  return std::unique_ptr<ReloadingScorer>(new ReloadingScorer(std::move(options), std::move(*fallback)));
}

ReloadingScorer::ReloadingScorer(ReloadingScorerOptions options, std::unique_ptr<Scorer> fallback)
    : options_(std::move(options)),
      fallback_(std::move(fallback)),
      name_(fmt::format("model:{} (fallback {})", options_.model_path, fallback_->name())) {}

void ReloadingScorer::log(LogLevel level, const std::string& line) const {
  options_.log(level, line);
}

std::shared_ptr<const Model> ReloadingScorer::model() const {
  std::lock_guard<std::mutex> lock(model_mutex_);
  return model_;
}

bool ReloadingScorer::reads_predicted_run_time() const {
  const std::shared_ptr<const Model> served = model();
  return served != nullptr && features::reads_predicted_run_time(served->feature_map().names());
}

void ReloadingScorer::score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
                            std::vector<double>& scores) const {
  // The copy keeps this model alive for the whole call even if a reload swaps it out meanwhile.
  if (const std::shared_ptr<const Model> current = model()) {
    const ScoreOutcome outcome = current->score(context, jobs, scores);
    if (outcome.nonfinite_replaced > 0) nonfinite_replaced_.fetch_add(outcome.nonfinite_replaced);
    if (outcome.status.ok()) return;
    forward_failures_.fetch_add(1);
    if (!forward_failure_logged_.exchange(true))
      log(LogLevel::kError, fmt::format("model failed while scoring {} jobs, fallback '{}' serves such calls: {}",
                                        jobs.size(), fallback_->name(), outcome.status.message()));
  }
  fallback_calls_.fetch_add(1);
  fallback_->score(context, jobs, scores);
}

bool ReloadingScorer::reload_if_changed() {
  std::lock_guard<std::mutex> lock(reload_mutex_);
  const std::shared_ptr<const Model> current = model();
  const std::string& path = options_.model_path;

  auto on_disk = stat_file(path);
  if (on_disk.ok()) {
    if (current && *on_disk == current->file()) return false;
    if (failed_version_ && *on_disk == *failed_version_) return false;
  } else if (!failed_version_ && failed_reason_ == on_disk.status().message()) {
    return false;  // still missing (or unreadable) as when last logged
  }

  Result<std::shared_ptr<const Model>> loaded =
      on_disk.ok() ? load_model(path, options_.load) : Result<std::shared_ptr<const Model>>(on_disk.status());
  if (!loaded.ok()) {
    load_failures_.fetch_add(1);
    failed_version_ = on_disk.ok() ? std::optional<FileIdentity>(*on_disk) : std::nullopt;
    failed_reason_ = loaded.status().message();
    if (current)
      log(LogLevel::kWarning, "keeping previous model: " + failed_reason_);
    else
      log(LogLevel::kWarning, fmt::format("serving fallback '{}': {}", fallback_->name(), failed_reason_));
    return false;
  }

  const std::shared_ptr<const Model>& fresh = *loaded;
  {
    std::lock_guard<std::mutex> swap(model_mutex_);
    model_ = fresh;
  }
  forward_failure_logged_.store(false);
  failed_version_.reset();
  failed_reason_.clear();
  loads_ok_.fetch_add(1);
  const ModelMetadata& meta = fresh->metadata();
  log(LogLevel::kInfo,
      fmt::format("loaded model {}: {}, {} features, weights sha256 {}{}", path,
                  meta.architecture.empty() ? "architecture not stated" : meta.architecture, meta.features.size(),
                  meta.weights_sha256.substr(0, 12), current ? " (replaces the previous model)" : ""));
  for (const std::string& note : fresh->notes()) log(LogLevel::kWarning, fmt::format("model {}: {}", path, note));
  if (loads_ok_.load() == 1) {
    if (const std::string blas = blas_performance_note(); !blas.empty()) log(LogLevel::kWarning, blas);
  }
  return true;
}

PolicyCounters ReloadingScorer::counters() const {
  PolicyCounters c;
  c.loads_ok = loads_ok_.load();
  c.load_failures = load_failures_.load();
  c.fallback_calls = fallback_calls_.load();
  c.nonfinite_replaced = nonfinite_replaced_.load();
  c.forward_failures = forward_failures_.load();
  return c;
}

}  // namespace rlsched::policy
