// The engine's scoring (site_factor/rlsched): C jobs to pending-job views (with run_time: predicted, each as its
// user's ended jobs predict; for a model that reads predicted run times, with them beside the limits), one batched call
// of the policy (or its fallback), and the site factors ranked against the last batch.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "capi/c_snapshot.h"
#include "capi/deferral.h"
#include "capi/engine.h"
#include "rlsched/site_factor.h"

namespace rlsched::capi {

void Engine::score(const Settings& s, const ScoringContext& context, const std::vector<PendingJob>& jobs,
                   std::vector<double>& scores) {
  if (!s.policy) throw std::logic_error("scoring needs an engine created without RLSCHED_ENGINE_NO_POLICY");
  s.policy->scorer->score(context, jobs, scores);
}

namespace {

bool ranks_by_energy(const config::PluginConfig& c) {
  return c.energy.defers() && c.energy_mode == config::Mode::kEnforce;
}

}  // namespace

void Engine::rank_deferrable(const Settings& s, Seconds now, const rlsched_cluster& cluster, const rlsched_job* jobs,
                             const std::vector<std::string>& classes, std::vector<double>& scores) {
  const config::PluginConfig& c = s.config;
  if (!ranks_by_energy(c)) return;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (!c.energy.max_deferral_for(view(jobs[i].qos), classes[i])) continue;  // most jobs: nothing to build
    const auto request = energy::deferral_request(c.energy, deferrable_job(jobs[i], cluster, c, classes[i]), now);
    if (!request) continue;
    const energy::Rank rank = energy::rank_now(c.energy, *request);
    if (rank == energy::Rank::kPolicy) continue;
    scores[i] = energy::ranked_score(rank, scores[i]);
    (rank == energy::Rank::kLast ? sunk_jobs_ : boosted_jobs_).fetch_add(1, std::memory_order_relaxed);
  }
}

Status Engine::jobs_ended(const rlsched_ended_job* jobs, std::size_t n, std::size_t& fresh) {
  fresh = 0;
  if (n > 0 && !jobs) return Status::InvalidInput("jobs is NULL");
  if (n > 10'000'000) return Status::InvalidInput(fmt::format("{} ended jobs in one call is not plausible", n));
  std::unordered_map<std::uint32_t, Seconds> known;
  known.reserve(n);
  std::vector<const rlsched_ended_job*> heard;
  std::lock_guard<std::mutex> lock(ended_mutex_);
  for (std::size_t i = 0; i < n; ++i) {
    const rlsched_ended_job& j = jobs[i];
    if (j.start_time <= 0 || j.end_time < j.start_time) continue;  // never ran, or a record out of order
    known[j.job_id] = j.end_time;
    const auto last = ended_known_.find(j.job_id);
    if (last == ended_known_.end() || last->second != j.end_time) heard.push_back(&j);
  }
  // Learned in the order they ended, as the simulator hears them.
  std::sort(heard.begin(), heard.end(), [](const rlsched_ended_job* a, const rlsched_ended_job* b) {
    return a->end_time != b->end_time ? a->end_time < b->end_time : a->job_id < b->job_id;
  });
  for (const rlsched_ended_job* j : heard) {
    const Seconds ran = std::max<Seconds>(0, j->end_time - j->start_time - std::max<Seconds>(0, j->suspended));
    run_times_.ended(std::to_string(j->user_id), std::max<Seconds>(0, j->time_limit), ran);
  }
  // A changed set either holds a job not heard before (fresh) or has lost some (Slurm forgot them).
  if (!heard.empty() || known.size() != ended_known_.size()) ended_version_.fetch_add(1, std::memory_order_release);
  ended_known_ = std::move(known);
  fresh = heard.size();
  ended_jobs_.fetch_add(fresh, std::memory_order_relaxed);
  return Status::Ok();
}

void Engine::show_run_times(const rlsched_job* jobs, std::vector<PendingJob>& pending) {
  predict_run_times(*settings(), jobs, pending);
}

Seconds Engine::predicted_run_time(std::uint32_t user_id, Seconds time_limit, std::size_t* ended_jobs) {
  const std::string user = std::to_string(user_id);
  std::lock_guard<std::mutex> lock(ended_mutex_);
  if (ended_jobs) {
    const auto& history = run_times_.predictor().history();
    const auto it = history.find(user);
    *ended_jobs = it == history.end() ? 0 : it->second.size();
  }
  return run_times_.predict(user, time_limit);
}

void Engine::predict_run_times(const Settings& s, const rlsched_job* jobs, std::vector<PendingJob>& pending) {
  if (!s.reads_ended_jobs()) return;
  const bool replace = s.config.run_time == RunTimeView::kPredicted;
  std::lock_guard<std::mutex> lock(ended_mutex_);
  for (std::size_t i = 0; i < pending.size(); ++i) {
    const std::string user = std::to_string(jobs[i].user_id);
    if (replace) {
      run_times_.apply(user, pending[i]);
    } else {
      run_times_.annotate(user, pending[i]);
    }
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
  thread_local std::vector<std::string> job_classes;
  pending.clear();
  // Only the energy rank reads the classes again: copied only when it runs.
  const bool energy_ranks = ranks_by_energy(s->config);
  job_classes.resize(energy_ranks ? n : 0);
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
    if (energy_ranks) job_classes[i] = job_class;
    pending.push_back(to_pending_job(j, cluster, s->config, now, batch, job_class));
  }
  if (classes) classes_lock.unlock();
  predict_run_times(*s, jobs, pending);
  scores.assign(n, 0.0);
  factors.assign(n, 0);
  score(*s, batch.state.context(now, static_cast<int>(n)), pending, scores);
  rank_deferrable(*s, now, cluster, jobs, job_classes, scores);
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
  const std::vector<std::string> job_class = {class_of(s->config, job)};
  std::vector<PendingJob> one = {to_pending_job(job, cluster, s->config, now, batch, job_class.front())};
  predict_run_times(*s, &job, one);
  std::vector<double> score_out(1, 0.0);
  std::uint32_t factor = 0;
  int pending = 1;
  {
    std::lock_guard<std::mutex> lock(batch_mutex_);
    pending += static_cast<int>(sorted_.size());
  }
  score(*s, batch.state.context(now, pending), one, score_out);
  rank_deferrable(*s, now, cluster, &job, job_class, score_out);
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

}  // namespace rlsched::capi
