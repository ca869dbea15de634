#include "capi/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "capi/submit.h"
#include "capi/tres.h"
#include "rlsched/site_factor.h"

namespace rlsched::capi {
namespace {

std::string_view view(const char* s) {
  return s ? std::string_view(s) : std::string_view();
}

/// A job's class without a cache (one job at a time); "" when no class is configured or matches.
std::string class_of(const config::PluginConfig& config, const rlsched_job& job) {
  if (config.job_classes.empty()) return {};
  return config.classify(view(job.job_name), view(job.account), user_name_for_classes(config, job.user_id));
}

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

Seconds limit_of(const rlsched_job& job, const rlsched_cluster& cluster, Seconds default_limit) {
  if (job.time_limit > 0) return job.time_limit;
  if (job.partition >= 0 && job.partition < cluster.n_partitions && cluster.partitions[job.partition].max_time > 0)
    return cluster.partitions[job.partition].max_time;
  return default_limit;
}

Status check_cluster(const rlsched_cluster& c) {
  if (c.n_partitions < 0 || (c.n_partitions > 0 && !c.partitions) || c.n_accel < 0 || (c.n_accel > 0 && !c.accel))
    return Status::InvalidInput("cluster: partitions/accel count negative or array NULL");
  for (int p = 0; p < c.n_partitions; ++p) {
    const rlsched_partition& part = c.partitions[p];
    if (!part.name) return Status::InvalidInput(fmt::format("cluster: partitions[{}].name is NULL", p));
    if (part.n_accel < 0 || (part.n_accel > 0 && !part.accel))
      return Status::InvalidInput(fmt::format("cluster: partition {}: accel count negative or array NULL", part.name));
    for (int k = 0; k < part.n_accel; ++k)
      if (!part.accel[k].gres)
        return Status::InvalidInput(fmt::format("cluster: partition {}: accel[{}].gres is NULL", part.name, k));
  }
  for (int k = 0; k < c.n_accel; ++k)
    if (!c.accel[k].gres) return Status::InvalidInput(fmt::format("cluster: accel[{}].gres is NULL", k));
  return Status::Ok();
}

}  // namespace

BatchView::BatchView(const rlsched_cluster& cluster, const config::PluginConfig& config) : config_(config) {
  auto pools_of = [](const rlsched_accel* accel, int n) {
    std::vector<job_view::Pool> pools;
    pools.reserve(static_cast<std::size_t>(std::max(n, 0)));
    for (int k = 0; k < n; ++k)
      pools.push_back({view(accel[k].gres), view(accel[k].type), std::max(accel[k].total, 0),
                       std::max(accel[k].idle, 0)});
    return pools;
  };
  state.cpus_total = cluster.cpus_total;
  state.cpus_idle = cluster.cpus_idle;
  state.nodes_total = cluster.nodes_total;
  state.pools = pools_of(cluster.accel, cluster.n_accel);
  state.partitions.reserve(static_cast<std::size_t>(std::max(cluster.n_partitions, 0)));
  for (int p = 0; p < cluster.n_partitions; ++p)
    state.partitions.push_back(
        {cluster.partitions[p].cpus_idle, pools_of(cluster.partitions[p].accel, cluster.partitions[p].n_accel)});
}

const double* BatchView::speeds_for(const std::string& job_class) {
  for (const auto& [name, speeds] : speeds_)
    if (name == job_class) return speeds.data();
  std::vector<double> speeds;
  speeds.reserve(state.pools.size());
  for (const job_view::Pool& pool : state.pools) {
    const AcceleratorType* type = config_.find_type(pool.type, pool.gres);
    speeds.push_back(type ? type->speed_for(job_class) : 1.0);
  }
  speeds_.emplace_back(job_class, std::move(speeds));
  return speeds_.back().second.data();
}

PendingJob to_pending_job(const rlsched_job& job, const rlsched_cluster& cluster, const config::PluginConfig& config,
                          Seconds now, BatchView& batch, const std::string& job_class) {
  job_view::JobState s;
  s.id = job.job_id;
  s.submit = job.submit_time;
  s.eligible = std::max<Seconds>(job.submit_time, job.begin_time);
  s.time_limit = limit_of(job, cluster, config.placement.default_time_limit);
  s.cpus = job.cpus;
  s.nodes = job.nodes;
  s.accelerators = job.accelerators;
  if (job.accelerators > 0 && job.gres) {
    s.gres = job.gres;
    s.types = view(job.gres_type);
  }
  if (job.partitions && job.n_partitions > 0) {
    s.partitions = job.partitions;
    s.n_partitions = job.n_partitions;
  } else {
    s.partitions = &job.partition;
    s.n_partitions = 1;
  }
  s.pool_speeds = batch.speeds_for(job_class);
  s.restarts = job.restarts;
  s.checkpointable = preemption::declared_checkpoint(job.comment).has_value();
  s.age_factor = job.age_factor;
  s.fairshare_factor = job.fairshare_factor;
  s.job_size_factor = job.job_size_factor;
  s.partition_factor = job.partition_factor;
  s.qos_factor = job.qos_factor;
  return job_view::build(s, batch.state, now);
}

PendingJob to_pending_job(const rlsched_job& job, const rlsched_cluster& cluster, const config::PluginConfig& config,
                          Seconds now) {
  BatchView batch(cluster, config);
  return to_pending_job(job, cluster, config, now, batch, class_of(config, job));
}

std::vector<placement::PartitionState> to_partition_states(const rlsched_cluster& cluster, const rlsched_job* queue,
                                                           std::size_t n_queue, Seconds now,
                                                           const config::PluginConfig& config, ClassCache& classes) {
  const placement::Options options = placement_options(config);
  std::vector<placement::PartitionState> parts(static_cast<std::size_t>(std::max(cluster.n_partitions, 0)));
  for (int p = 0; p < cluster.n_partitions; ++p) {
    const rlsched_partition& cp = cluster.partitions[p];
    placement::PartitionState& ps = parts[p];
    ps.name = cp.name;
    ps.accepts_jobs = cp.accepts_jobs != 0;
    ps.max_time = std::max<Seconds>(cp.max_time, 0);
    for (int k = 0; k < cp.n_accel; ++k) {
      placement::AcceleratorPool pool;
      pool.gres = cp.accel[k].gres;
      pool.type = view(cp.accel[k].type);
      pool.total = std::max(cp.accel[k].total, 0);
      pool.idle = std::min(std::max(cp.accel[k].idle, 0), pool.total);
      pool.max_per_node = std::max(cp.accel[k].max_per_node, 0);
      pool.nodes = std::max(cp.accel[k].nodes, 0);
      ps.pools.push_back(std::move(pool));
    }
  }
  // The C ABI carries no node lists, so two partitions with the same type on disjoint nodes count each other's
  // work too (QueueLoad spreads a job's work over every partition holding its type): a pessimistic wait estimate,
  // never an optimistic one.
  placement::QueueLoad load(options);
  std::vector<int> job_partitions;  // reused: one allocation for the whole queue
  for (std::size_t i = 0; i < n_queue; ++i) {
    const rlsched_job& j = queue[i];
    if (j.accelerators <= 0 || !j.gres || j.partition < 0 || j.partition >= cluster.n_partitions) continue;
    const Seconds limit_s = limit_of(j, cluster, options.default_time_limit);
    const double limit = double(limit_s);
    const std::string& job_class = classes.classify(config, view(j.job_name), view(j.account), j.user_id);
    if (j.state == RLSCHED_JOB_PENDING) {
      // Where it may start (sbatch -p a,b: every partition of its list), for its share of each type's work.
      job_partitions.clear();
      if (j.partitions && j.n_partitions > 0) {
        for (int32_t k = 0; k < j.n_partitions; ++k)
          if (j.partitions[k] >= 0 && j.partitions[k] < cluster.n_partitions) job_partitions.push_back(j.partitions[k]);
      } else {
        job_partitions.push_back(j.partition);
      }
      load.add_pending(view(j.gres), view(j.gres_type), j.accelerators, limit, job_class, job_partitions);
    } else if (j.state == RLSCHED_JOB_RUNNING)
      // Slurm's end_time is start + time limit: the elapsed time is what the limit has used up.
      load.add_running(view(j.gres), view(j.gres_type), j.accelerators, limit,
                       double(now - (j.end_time - limit_s)), job_class);
  }
  load.apply(parts);
  return parts;
}

// ---- Engine ----------------------------------------------------------------------------------------------------

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
              fmt::format("config {}: mode {}, model {}, fallback {}, score_scale {}, {} accelerator types, "
                          "placement {}",
                          c.path, config::mode_name(c.mode), c.model.empty() ? "none" : c.model, c.fallback,
                          c.score_scale, c.accelerator_types.size(), c.placement.enabled ? "on" : "off"));
  for (const std::string& warning : c.warnings) engine->log(RLSCHED_LOG_INFO, "warning: " + warning);
  if (engine->settings_->policy) engine->check_model(*engine->settings_->policy);
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
  if (!engine->options_.state_dir.empty()) engine->keep_preemption_history(std::time(nullptr));
  return engine;
}

Engine::~Engine() {
  history_writer_.reset();  // its last write: the history as slurmctld stops
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
  ScorerSettings scorer_settings;
  scorer_settings.multifactor = options_.weights;
  Result<std::unique_ptr<Scorer>> fallback = make_scorer(s->config.fallback, scorer_settings);
  if (!fallback.ok())
    return Status::InvalidInput(fmt::format("{}: fallback: {}", s->config.path, fallback.status().message()));
  policy->fallback = std::move(*fallback);
  s->policy = std::move(policy);
  return s;
}

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
  if (new_policy && (*fresh)->policy) check_model(*(*fresh)->policy);  // load before the swap: no gap
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
  if (!new_policy && (*fresh)->policy) check_model(*(*fresh)->policy);
  return Status::Ok();
}

void Engine::retire(const Settings& old) {
  if (!old.policy) return;
  std::shared_ptr<policy::ReloadingScorer> r;
  {
    std::lock_guard<std::mutex> lock(old.policy->mutex);
    r = old.policy->reloading;
  }
  if (!r) return;
  const policy::PolicyCounters c = r->counters();
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
  std::shared_ptr<policy::ReloadingScorer> reloading;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    if (!trusted.ok()) {
      if (p.untrusted == trusted.message()) return Status::Ok();  // logged already
      p.untrusted = trusted.message();
      reloading = p.reloading;
    } else {
      p.untrusted.clear();
      reloading = p.reloading;
    }
  }
  if (!trusted.ok()) {
    if (trusted.code() != Status::Code::kNotFound) model_untrusted_.fetch_add(1, std::memory_order_relaxed);
    log(RLSCHED_LOG_ERROR, reloading ? "keeping previous model: " + trusted.message()
                                     : fmt::format("serving fallback '{}': {}", p.fallback->name(), trusted.message()));
    return Status::Ok();
  }
  if (reloading) {
    reloading->reload_if_changed();
    return Status::Ok();
  }
  policy::ReloadingScorerOptions ro;
  ro.model_path = p.model_path;
  ro.fallback = std::string(p.fallback->name());
  ro.fallback_settings.multifactor = options_.weights;
  ro.load.require_private = !options_.trust_any_file;
  ro.log = [this](policy::LogLevel level, const std::string& line) { log(c_level(level), line); };
  Result<std::unique_ptr<policy::ReloadingScorer>> created = policy::ReloadingScorer::Create(std::move(ro));
  if (!created.ok()) return created.status();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (!p.reloading) p.reloading = std::move(*created);
  return Status::Ok();
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
      check_model();
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

void Engine::score(const Settings& s, const ScoringContext& context, const std::vector<PendingJob>& jobs,
                   std::vector<double>& scores) {
  if (!s.policy) throw std::logic_error("scoring needs an engine created without RLSCHED_ENGINE_NO_POLICY");
  std::shared_ptr<policy::ReloadingScorer> reloading;
  {
    std::lock_guard<std::mutex> lock(s.policy->mutex);
    reloading = s.policy->reloading;
  }
  if (reloading) {
    reloading->score(context, jobs, scores);
  } else {
    fallback_calls_.fetch_add(1, std::memory_order_relaxed);
    s.policy->fallback->score(context, jobs, scores);
  }
}

Status Engine::score_batch(Seconds now, const rlsched_cluster& cluster, const rlsched_job* jobs, std::size_t n,
                           double* out_scores, std::uint32_t* out_factors) {
  if (n > 0 && !jobs) return Status::InvalidInput("jobs is NULL");
  if (n > 10'000'000) return Status::InvalidInput(fmt::format("{} jobs in one batch is not plausible", n));
  if (Status c = check_cluster(cluster); !c.ok()) return c;
  const std::shared_ptr<Settings> s = settings();
  if (!s->policy) return Status::InvalidInput("this engine was created for placement only (NO_POLICY)");
  // Per-thread buffers: the decay thread reuses them every cycle without allocating.
  thread_local std::vector<PendingJob> pending;
  thread_local std::vector<double> scores;
  thread_local std::vector<std::uint32_t> factors;
  pending.clear();
  BatchView batch(cluster, s->config);
  const bool classes = !s->config.job_classes.empty();
  const std::string no_class;
  std::unique_lock<std::mutex> classes_lock(classes_mutex_, std::defer_lock);
  if (classes) classes_lock.lock();
  for (std::size_t i = 0; i < n; ++i) {
    const rlsched_job& j = jobs[i];
    if (j.state != RLSCHED_JOB_PENDING)
      return Status::InvalidInput(fmt::format("jobs[{}] (job {}) is not pending", i, j.job_id));
    const std::string& job_class =
        classes ? classes_.classify(s->config, view(j.job_name), view(j.account), j.user_id) : no_class;
    pending.push_back(to_pending_job(j, cluster, s->config, now, batch, job_class));
  }
  if (classes) classes_lock.unlock();
  scores.assign(n, 0.0);
  factors.assign(n, 0);
  score(*s, batch.state.context(now, static_cast<int>(n)), pending, scores);
  {
    std::lock_guard<std::mutex> lock(batch_mutex_);
    site_factors_of(scores, s->config.score_scale, sorted_, factors.data());
  }
  if (health_writer_ && slurm_order_) {
    // Slurm's own priority of the same jobs (multifactor with slurm.conf's weights), for the health record's
    // rank disagreement; measured by the writer thread, not here.
    thread_local std::vector<double> slurm;
    slurm.assign(n, 0.0);
    slurm_order_->score(batch.state.context(now, static_cast<int>(n)), pending, slurm);
    health_.note_ranks(scores, slurm);
  }
  if (out_scores) std::copy(scores.begin(), scores.end(), out_scores);
  if (out_factors) std::copy(factors.begin(), factors.end(), out_factors);
  score_calls_.fetch_add(1, std::memory_order_relaxed);
  jobs_scored_.fetch_add(n, std::memory_order_relaxed);
  return Status::Ok();
}

Status Engine::score_one(Seconds now, const rlsched_cluster& cluster, const rlsched_job& job, double* out_score,
                         std::uint32_t* out_factor) {
  if (Status c = check_cluster(cluster); !c.ok()) return c;
  const std::shared_ptr<Settings> s = settings();
  if (!s->policy) return Status::InvalidInput("this engine was created for placement only (NO_POLICY)");
  BatchView batch(cluster, s->config);
  std::vector<PendingJob> one = {to_pending_job(job, cluster, s->config, now, batch, class_of(s->config, job))};
  std::vector<double> score_out(1, 0.0);
  std::uint32_t factor = 0;
  int pending = 1;
  {
    std::lock_guard<std::mutex> lock(batch_mutex_);
    pending += static_cast<int>(sorted_.size());
  }
  score(*s, batch.state.context(now, pending), one, score_out);
  {
    std::lock_guard<std::mutex> lock(batch_mutex_);
    factor = site_factor_of(score_out[0], sorted_, s->config.score_scale);
  }
  if (out_score) *out_score = score_out[0];
  if (out_factor) *out_factor = factor;
  score_calls_.fetch_add(1, std::memory_order_relaxed);
  jobs_scored_.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

void Engine::info(rlsched_engine_info& out) {
  const std::shared_ptr<Settings> s = settings();
  const config::PluginConfig& c = s->config;
  out.mode = c.mode == config::Mode::kEnforce ? RLSCHED_MODE_ENFORCE : RLSCHED_MODE_SHADOW;
  out.debug = c.debug ? 1 : 0;
  out.score_scale = c.score_scale;
  out.placement_enabled = c.placement.enabled ? 1 : 0;
  switch (c.placement.record) {
    case config::RecordField::kNone:
      out.record = RLSCHED_RECORD_NONE;
      break;
    case config::RecordField::kAdminComment:
      out.record = RLSCHED_RECORD_ADMIN_COMMENT;
      break;
    case config::RecordField::kComment:
      out.record = RLSCHED_RECORD_COMMENT;
      break;
  }
  out.reload_check_interval = c.reload_check_interval;
  out.job_classes = static_cast<int32_t>(c.job_classes.size());
  out.config_path = c.path.c_str();
  out.model_path = c.model.c_str();
  out.scorer = s->fallback_name.c_str();
  if (s->policy) {
    std::shared_ptr<policy::ReloadingScorer> r;
    {
      std::lock_guard<std::mutex> lock(s->policy->mutex);
      r = s->policy->reloading;
    }
    if (r && r->model()) out.scorer = s->model_name.c_str();
  }
}

std::string Engine::health_record() {
  HealthRecorder::ModelState model;
  const std::shared_ptr<Settings> s = settings();
  if (s->policy) {
    model.scores = true;
    model.enforce = s->config.mode == config::Mode::kEnforce;
    // Falling back means a configured model is not serving; heuristics chosen on purpose (no model) are not that.
    model.fallback_active = !s->policy->model_path.empty();
    std::shared_ptr<policy::ReloadingScorer> r;
    {
      std::lock_guard<std::mutex> lock(s->policy->mutex);
      r = s->policy->reloading;
    }
    if (const std::shared_ptr<const policy::Model> m = r ? r->model() : nullptr) {
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
    std::shared_ptr<policy::ReloadingScorer> r;
    {
      std::lock_guard<std::mutex> lock(s->policy->mutex);
      r = s->policy->reloading;
    }
    if (r) {
      const policy::PolicyCounters now = r->counters();
      p.loads_ok += now.loads_ok;
      p.load_failures += now.load_failures;
      p.fallback_calls += now.fallback_calls;
      p.nonfinite_replaced += now.nonfinite_replaced;
      p.forward_failures += now.forward_failures;
    }
  }
  c.score_calls = score_calls_.load();
  c.jobs_scored = jobs_scored_.load();
  c.fallback_calls = fallback_calls_.load() + p.fallback_calls;
  c.model_loads = p.loads_ok;
  c.model_load_failures = p.load_failures;
  c.model_untrusted = model_untrusted_.load();
  c.forward_failures = p.forward_failures;
  c.nonfinite_scores = p.nonfinite_replaced;
  c.placements = placements_.load();
  c.rejections = rejections_.load();
  c.errors = errors_.load();
  return c;
}

}  // namespace rlsched::capi

namespace rlsched::capi {

Status Engine::submit_map(Seconds now, const rlsched_cluster& cluster, const rlsched_job* queue, std::size_t n_queue,
                          const rlsched_submit& job, rlsched_submit_result& out) {
  if (n_queue > 0 && !queue) return Status::InvalidInput("queue is NULL");
  if (Status c = check_cluster(cluster); !c.ok()) return c;
  const std::shared_ptr<Settings> s = settings();
  std::vector<placement::PartitionState> parts;
  {
    std::lock_guard<std::mutex> lock(classes_mutex_);
    parts = to_partition_states(cluster, queue, n_queue, now, s->config, classes_);
  }
  const SubmitDecision d = decide_submit(s->config, parts, job);
  // Copy into malloc'ed strings only once everything that can throw is done; a failed malloc frees what was made.
  rlsched_submit_result r{};
  bool ok = true;
  auto dup = [&ok](const std::string& text) -> char* {
    char* p = static_cast<char*>(std::malloc(text.size() + 1));
    if (!p) {
      ok = false;
      return nullptr;
    }
    std::memcpy(p, text.c_str(), text.size() + 1);
    return p;
  };
  r.action = d.action;
  if (d.set_partition) r.partition = dup(d.partition);
  if (d.set_tres_per_job) r.tres_per_job = dup(d.tres_per_job);
  if (d.set_tres_per_node) r.tres_per_node = dup(d.tres_per_node);
  if (d.set_tres_per_task) r.tres_per_task = dup(d.tres_per_task);
  if (!d.message.empty()) r.message = dup(d.message);
  r.partition_index = d.partition_index;
  r.accelerators = d.accelerators;
  if (d.action == RLSCHED_SUBMIT_MODIFIED) {
    r.gres = dup(d.gres);
    if (!d.type.empty()) r.gres_type = dup(d.type);
  }
  if (!ok) {
    rlsched_submit_result_free(&r);
    throw std::bad_alloc();
  }
  switch (s->config.placement.record) {
    case config::RecordField::kNone:
      r.record = RLSCHED_RECORD_NONE;
      break;
    case config::RecordField::kAdminComment:
      r.record = RLSCHED_RECORD_ADMIN_COMMENT;
      break;
    case config::RecordField::kComment:
      r.record = RLSCHED_RECORD_COMMENT;
      break;
  }
  r.predicted_wait = d.wait;
  r.predicted_run = d.run;
  if (d.action == RLSCHED_SUBMIT_MODIFIED) {
    placements_.fetch_add(1, std::memory_order_relaxed);
    // The placement rule is one (earliest predicted completion); whether it moved the job to another partition is
    // the distinction worth a label.
    health_.note_placement(d.type.empty() ? "any" : d.type, d.set_partition ? "moved_partition" : "typed_in_place");
  }
  if (d.action == RLSCHED_SUBMIT_REJECTED) {
    rejections_.fetch_add(1, std::memory_order_relaxed);
    health_.note_placement("none", "rejected_impossible");  // no partition can ever hold the request
  }
  out = r;
  return Status::Ok();
}

}  // namespace rlsched::capi
