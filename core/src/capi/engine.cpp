// The engine's lifecycle: create from rlsched.yaml, reconfigure, the model's trust check and hot reload, its
// counters, info and health record. Scoring is engine_scoring.cpp, submit engine_submit.cpp, preemption preempt.cpp.
#include "capi/engine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace rlsched::capi {
namespace {

int c_level(policy::LogLevel level) {
  switch (level) {
    case policy::LogLevel::kDebug:
      return RLSCHED_LOG_DEBUG;
    case policy::LogLevel::kInfo:
      return RLSCHED_LOG_INFO;
    case policy::LogLevel::kWarning:
    case policy::LogLevel::kError:
      return RLSCHED_LOG_ERROR;
  }
  return RLSCHED_LOG_ERROR;
}

}  // namespace

Engine::Engine(EngineOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<Engine>> Engine::Create(EngineOptions options) {
  std::unique_ptr<Engine> engine(new Engine(std::move(options)));
  config::LoadConfigOptions load;
  load.require_private = !engine->options_.trust_any_file;
  Result<config::PluginConfig> config = config::load_plugin_config(engine->options_.config_path, load);
  if (!config.ok()) return config.status();
  Result<std::shared_ptr<Settings>> settings = engine->build(std::move(*config), nullptr);
  if (!settings.ok()) return settings.status();
  engine->settings_ = std::move(*settings);
  const config::PluginConfig& c = engine->settings_->config;
  engine->log(RLSCHED_LOG_INFO,
              fmt::format("config {}: mode {}, model {}, fallback {}, score_scale {}, run_time {}, {} accelerator "
                          "types, placement {}",
                          c.path, config::mode_name(c.mode), c.model.empty() ? "none" : c.model, c.fallback,
                          c.score_scale, run_time_view_name(c.run_time), c.accelerator_types.size(),
                          c.placement.enabled ? "on" : "off"));
  for (const std::string& warning : c.warnings) engine->log(RLSCHED_LOG_INFO, "warning: " + warning);
  if (engine->settings_->policy) engine->report_model_check(engine->check_model(*engine->settings_->policy));
  if (!engine->options_.no_policy && !engine->options_.no_reload_thread)
    engine->reload_thread_ = std::thread([e = engine.get()] { e->reload_loop(); });
  if (!c.health_dir.empty() && !engine->options_.plugin_type.empty()) {
    Engine* e = engine.get();
    ScorerSettings slurm_weights;
    slurm_weights.multifactor = e->options_.weights;
    if (auto slurm = make_scorer("multifactor", slurm_weights); slurm.ok()) e->slurm_order_ = std::move(*slurm);
    e->health_writer_ = std::make_unique<HealthWriter>(
        c.health_dir, health_record_name(e->options_.plugin_type), 10, [e] { return e->health_record(); },
        [e](const std::string& line) { e->log(RLSCHED_LOG_ERROR, line); });
  }
  if (!engine->options_.state_dir.empty() && engine->options_.keep_preemptions)
    engine->keep_preemption_history(std::time(nullptr));
  if (!engine->options_.state_dir.empty() && engine->options_.keep_run_times) engine->keep_run_time_history();
  return engine;
}

Engine::~Engine() {
  history_writer_.reset();  // its last write: the history as slurmctld stops
  run_times_writer_.reset();
  health_writer_.reset();
  {
    std::lock_guard<std::mutex> lock(thread_mutex_);
    stop_ = true;
  }
  thread_cv_.notify_all();
  if (reload_thread_.joinable()) reload_thread_.join();
}

void Engine::log(int level, const std::string& line) const {
  if (options_.log) {
    options_.log(level, line);
    return;
  }
  static const char* const names[] = {"error", "info", "debug"};
  const std::string text = fmt::format("rlsched: {}: {}\n", names[level >= 0 && level <= 2 ? level : 0], line);
  std::fwrite(text.data(), 1, text.size(), stderr);
}

Result<std::shared_ptr<Engine::Settings>> Engine::build(config::PluginConfig config, const Settings* previous) {
  auto s = std::make_shared<Settings>();
  s->config = std::move(config);
  s->model_name = "model:" + s->config.model;
  s->fallback_name = options_.no_policy ? "none (placement only)" : s->config.fallback;
  if (options_.no_policy) return s;
  // Keep the loaded model across a reconfigure that does not touch the policy: no reload, no gap.
  if (previous && previous->policy && previous->config.model == s->config.model &&
      previous->config.fallback == s->config.fallback) {
    s->policy = previous->policy;
    return s;
  }
  auto policy = std::make_shared<Policy>();
  policy->model_path = s->config.model;
  policy::ReloadingScorerOptions ro;
  ro.model_path = s->config.model;
  ro.fallback = s->config.fallback;
  ro.fallback_settings.multifactor = options_.weights;
  ro.load.require_private = !options_.trust_any_file;
  ro.log = [this](policy::LogLevel level, const std::string& line) { log(c_level(level), line); };
  Result<std::unique_ptr<policy::ReloadingScorer>> scorer = policy::ReloadingScorer::CreateUnloaded(std::move(ro));
  if (!scorer.ok()) return Status::InvalidInput(fmt::format("{}: {}", s->config.path, scorer.status().message()));
  policy->scorer = std::move(*scorer);
  s->policy = std::move(policy);
  return s;
}

const Scorer* Engine::policy() const {
  const std::shared_ptr<Settings> s = settings();
  return s->policy ? s->policy->scorer.get() : nullptr;
}

const config::PluginConfig& Engine::config() const { return settings()->config; }

std::shared_ptr<Engine::Settings> Engine::settings() const {
  std::lock_guard<std::mutex> lock(settings_mutex_);
  return settings_;
}

Status Engine::reconfigure() {
  config::LoadConfigOptions load;
  load.require_private = !options_.trust_any_file;
  Result<config::PluginConfig> config = config::load_plugin_config(options_.config_path, load);
  // Failures are returned, not logged: the caller says what it keeps (and a plugin logs where the admin looks).
  if (!config.ok()) return config.status();
  const std::shared_ptr<Settings> previous = settings();
  Result<std::shared_ptr<Settings>> fresh = build(std::move(*config), previous.get());
  if (!fresh.ok()) return fresh.status();
  const bool new_policy = (*fresh)->policy != previous->policy;
  if (new_policy && (*fresh)->policy) report_model_check(check_model(*(*fresh)->policy));  // load before the swap
  {
    std::lock_guard<std::mutex> lock(settings_mutex_);
    settings_ = *fresh;
  }
  if (new_policy) retire(*previous);
  thread_cv_.notify_all();  // the reload interval may have changed
  const config::PluginConfig& c = (*fresh)->config;
  log(RLSCHED_LOG_INFO,
      fmt::format("reconfigured from {}: mode {}, model {}, fallback {}, score_scale {}", c.path,
                  config::mode_name(c.mode), c.model.empty() ? "none" : c.model, c.fallback, c.score_scale));
  if (!new_policy && (*fresh)->policy) report_model_check(check_model(*(*fresh)->policy));
  return Status::Ok();
}

void Engine::retire(const Settings& old) {
  if (!old.policy) return;
  const policy::PolicyCounters c = old.policy->scorer->counters();
  std::lock_guard<std::mutex> lock(retired_mutex_);
  retired_.loads_ok += c.loads_ok;
  retired_.load_failures += c.load_failures;
  retired_.fallback_calls += c.fallback_calls;
  retired_.nonfinite_replaced += c.nonfinite_replaced;
  retired_.forward_failures += c.forward_failures;
}

Status Engine::check_model() {
  const std::shared_ptr<Settings> s = settings();
  if (!s->policy) return Status::Ok();
  return check_model(*s->policy);
}

Status Engine::check_model(Policy& p) {
  if (p.model_path.empty()) return Status::Ok();
  // Owner and permissions first: slurmctld must not run a network any local user could have replaced. The policy
  // runtime checks the mode again when it loads (require_private).
  const Status trusted =
      options_.trust_any_file ? Status::Ok() : config::check_trusted_file(p.model_path, "model file");
  bool seen = false;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    if (!trusted.ok()) {
      if (p.untrusted == trusted.message()) return Status::Ok();  // logged already
      p.untrusted = trusted.message();
      seen = p.trusted_seen;
    } else {
      p.untrusted.clear();
      p.trusted_seen = true;
    }
  }
  if (!trusted.ok()) {
    if (trusted.code() != Status::Code::kNotFound) model_untrusted_.fetch_add(1, std::memory_order_relaxed);
    log(RLSCHED_LOG_ERROR,
        seen ? "keeping previous model: " + trusted.message()
             : fmt::format("serving fallback '{}': {}", p.scorer->fallback().name(), trusted.message()));
    return Status::Ok();
  }
  p.scorer->reload_if_changed();
  return Status::Ok();
}

void Engine::report_model_check(const Status& status) {
  if (status.ok()) return;
  errors_.fetch_add(1, std::memory_order_relaxed);
  log(RLSCHED_LOG_ERROR, "model check failed: " + status.message());
}

void Engine::reload_loop() {
  std::unique_lock<std::mutex> lock(thread_mutex_);
  while (!stop_) {
    const Seconds interval = settings()->config.reload_check_interval;
    if (interval > 0)
      thread_cv_.wait_for(lock, std::chrono::seconds(interval));
    else
      thread_cv_.wait(lock);
    if (stop_) break;
    if (interval <= 0 || settings()->config.reload_check_interval != interval) continue;  // changed: re-read
    lock.unlock();
    try {
      report_model_check(check_model());
    } catch (const std::exception& e) {
      errors_.fetch_add(1, std::memory_order_relaxed);
      log(RLSCHED_LOG_ERROR, std::string("model check failed: ") + e.what());
    } catch (...) {
      errors_.fetch_add(1, std::memory_order_relaxed);
      log(RLSCHED_LOG_ERROR, "model check failed: unknown exception");
    }
    lock.lock();
  }
}

void Engine::info(rlsched_engine_info& out) {
  const std::shared_ptr<Settings> s = settings();
  const config::PluginConfig& c = s->config;
  out.mode = c.mode == config::Mode::kEnforce ? RLSCHED_MODE_ENFORCE : RLSCHED_MODE_SHADOW;
  out.debug = c.debug ? 1 : 0;
  out.score_scale = c.score_scale;
  out.placement_enabled = c.placement.enabled ? 1 : 0;
  out.record = c_record_field(c.placement.record);
  out.reload_check_interval = c.reload_check_interval;
  out.job_classes = static_cast<int32_t>(c.job_classes.size());
  out.energy_defers = c.energy.defers() ? 1 : 0;
  out.run_time_predicted = c.run_time == RunTimeView::kPredicted ? 1 : 0;
  out.reads_ended_jobs = s->reads_ended_jobs() ? 1 : 0;
  out.config_path = c.path.c_str();
  out.model_path = c.model.c_str();
  out.scorer = s->fallback_name.c_str();
  if (s->policy && s->policy->scorer->model()) out.scorer = s->model_name.c_str();
}

std::string Engine::health_record() {
  HealthRecorder::ModelState model;
  const std::shared_ptr<Settings> s = settings();
  if (s->policy) {
    model.scores = true;
    model.enforce = s->config.mode == config::Mode::kEnforce;
    // Falling back means a configured model is not serving; heuristics chosen on purpose (no model) are not that.
    model.fallback_active = !s->policy->model_path.empty();
    if (const std::shared_ptr<const policy::Model> m = s->policy->scorer->model()) {
      model.sha256 = m->metadata().weights_sha256;
      model.path = m->path();
      model.fallback_active = false;
    }
  }
  return health_.record(static_cast<Seconds>(std::time(nullptr)), counters(), model);
}

rlsched_counters Engine::counters() const {
  rlsched_counters c{};
  policy::PolicyCounters p;
  {
    std::lock_guard<std::mutex> lock(retired_mutex_);
    p = retired_;
  }
  const std::shared_ptr<Settings> s = settings();
  if (s->policy) {
    const policy::PolicyCounters now = s->policy->scorer->counters();
    p.loads_ok += now.loads_ok;
    p.load_failures += now.load_failures;
    p.fallback_calls += now.fallback_calls;
    p.nonfinite_replaced += now.nonfinite_replaced;
    p.forward_failures += now.forward_failures;
  }
  c.score_calls = score_calls_.load();
  c.jobs_scored = jobs_scored_.load();
  c.fallback_calls = p.fallback_calls;
  c.model_loads = p.loads_ok;
  c.model_load_failures = p.load_failures;
  c.model_untrusted = model_untrusted_.load();
  c.forward_failures = p.forward_failures;
  c.nonfinite_scores = p.nonfinite_replaced;
  c.placements = placements_.load();
  c.rejections = rejections_.load();
  c.errors = errors_.load();
  c.deferrals = deferrals_.load();
  c.deferrals_shadow = deferrals_shadow_.load();
  c.sunk_jobs = sunk_jobs_.load();
  c.boosted_jobs = boosted_jobs_.load();
  c.ended_jobs = ended_jobs_.load();
  return c;
}

}  // namespace rlsched::capi
