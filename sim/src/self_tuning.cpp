#include "rlsched/sim/self_tuning.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "job_request.h"
#include "resources.h"
#include "text/text.h"

namespace rlsched::sim {

std::vector<std::string> default_self_tuning_candidates() {
  return {"area:0.5/1.5/0/3/relative",
          "area:0.5/1.5/0.25/relative",
          "area:0.5/0.5/0/3/relative",
          "area:1/0/0/10/relative",
          "area:0.25/0.25/0/relative",
          "area:1/1.5/0/10/relative",
          "fcfs",
          "sjf",
          "wfp3",
          "unicep",
          "f1",
          "multifactor"};
}

bool is_self_tuning_spec(std::string_view spec) {
  return spec == kSelfTuningName ||
         (spec.size() > kSelfTuningName.size() && spec.substr(0, kSelfTuningName.size()) == kSelfTuningName &&
          spec[kSelfTuningName.size()] == ':');
}

Result<SelfTuningSettings> parse_self_tuning(std::string_view spec, const ScorerSettings& scorers) {
  if (!is_self_tuning_spec(spec))
    return Status::InvalidInput(fmt::format("policy '{}' is not {}[:P1+P2+...]", spec, kSelfTuningName));
  SelfTuningSettings settings;
  if (spec == kSelfTuningName) {
    settings.candidates = default_self_tuning_candidates();
    return settings;
  }
  for (std::string_view part : text::split(spec.substr(kSelfTuningName.size() + 1), '+')) {
    if (part.empty())
      return Status::InvalidInput(
          fmt::format("policy '{}': an empty candidate (expected {}:P1+P2+...)", spec, kSelfTuningName));
    if (auto scorer = make_scorer(part, scorers); !scorer.ok())
      return Status::InvalidInput(fmt::format("policy '{}': {}", spec, scorer.status().message()));
    settings.candidates.emplace_back(part);
  }
  return settings;
}

Result<std::unique_ptr<SelfTuningScorer>> SelfTuningScorer::Make(const Cluster& cluster, const std::vector<Job>& jobs,
                                                                 const SimConfig& config, SelfTuningSettings settings,
                                                                 const ScorerSettings& scorers) {
  if (settings.candidates.empty()) return Status::InvalidInput("a self-tuning policy needs at least one candidate");
  if (settings.window == 0 || settings.every == 0)
    return Status::InvalidInput("a self-tuning policy needs a window and a choice interval of at least one job");
  std::vector<std::unique_ptr<Scorer>> made;
  for (const std::string& name : settings.candidates) {
    auto scorer = make_scorer(name, scorers);
    if (!scorer.ok()) return scorer.status();
    made.push_back(std::move(*scorer));
  }
  return std::unique_ptr<SelfTuningScorer>(
      new SelfTuningScorer(cluster, jobs, config, std::move(settings), std::move(made)));
}

SelfTuningScorer::SelfTuningScorer(const Cluster& cluster, const std::vector<Job>& jobs, const SimConfig& config,
                                   SelfTuningSettings settings, std::vector<std::unique_ptr<Scorer>> scorers)
    : cluster_(cluster),
      jobs_(jobs),
      replay_config_(config),
      settings_(std::move(settings)),
      scorers_(std::move(scorers)),
      name_(std::string(kSelfTuningName)),
      known_(jobs.size(), kWaiting),
      started_at_(jobs.size(), 0) {
  // The replays are quiet: no progress bar, no events, no decisions recorded.
  replay_config_.progress = nullptr;
  replay_config_.observer = nullptr;
  replay_config_.on_scoring = nullptr;
  // A job the cluster can never run ends at once, without an event.
  const Topology topology(cluster);
  const FreeState idle = FreeState::AllFree(topology);
  for (std::size_t j = 0; j < jobs.size(); ++j)
    known_[j] = make_request(cluster, topology, idle, jobs[j], 0).rejection.empty() ? kWaiting : kEnded;
  by_submit_.resize(jobs.size());
  std::iota(by_submit_.begin(), by_submit_.end(), 0);
  std::stable_sort(by_submit_.begin(), by_submit_.end(), [&](int a, int b) { return jobs[a].submit < jobs[b].submit; });
  choices_.push_back({0, 0, 0});
  advance();
}

void SelfTuningScorer::observe(const ScheduleEvent& event) {
  const bool started = event.kind == ScheduleEvent::Kind::kStart || event.kind == ScheduleEvent::Kind::kBackfillStart;
  if (!started && event.kind != ScheduleEvent::Kind::kEnd) return;
  const auto job = static_cast<std::size_t>(event.job);
  if (job >= known_.size()) return;
  known_[job] = std::max(known_[job], started ? kStarted : kEnded);
  if (started) started_at_[job] = event.time;
  advance();
}

void SelfTuningScorer::advance() {
  while (resolved_ < by_submit_.size() && known_[by_submit_[resolved_]] != kWaiting) ++resolved_;
}

bool SelfTuningScorer::reads_predicted_run_time() const {
  return std::any_of(scorers_.begin(), scorers_.end(),
                     [](const std::unique_ptr<Scorer>& s) { return s->reads_predicted_run_time(); });
}

void SelfTuningScorer::score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
                             std::vector<double>& scores) const {
  if (resolved_ >= settings_.warm_up && resolved_ >= resolved_at_last_choice_ + settings_.every) {
    resolved_at_last_choice_ = resolved_;
    choose(context.now);
  }
  scorers_[in_service_]->score(context, jobs, scores);
}

std::vector<Job> SelfTuningScorer::known_jobs(Seconds now) const {
  const std::size_t first = resolved_ > settings_.window ? resolved_ - settings_.window : 0;
  std::vector<Job> window;
  window.reserve(resolved_ - first);
  for (std::size_t k = first; k < resolved_; ++k) {
    const int j = by_submit_[k];
    window.push_back(jobs_[j]);
    // A job still running has run this long so far, and may end at any moment.
    if (known_[j] == kStarted) window.back().run_time = std::max<Seconds>(now - started_at_[j], 1);
  }
  return window;
}

void SelfTuningScorer::choose(Seconds now) const {
  ++replays_;
  const std::vector<Job> window = known_jobs(now);
  std::vector<double> cost(scorers_.size(), -1);
  for (std::size_t k = 0; k < scorers_.size(); ++k) {
    auto run = simulate(cluster_, window, *scorers_[k], replay_config_);
    if (run.ok()) cost[k] = run->metrics.avg_bsld;  // a candidate that cannot replay the window is not chosen
  }
  std::size_t best = in_service_;
  for (std::size_t k = 0; k < scorers_.size(); ++k)
    if (cost[k] >= 0 && (cost[best] < 0 || cost[k] < cost[best])) best = k;
  // The one in service stays unless another is clearly better: a switch on noise costs as much as it gains.
  if (best == in_service_ || (cost[in_service_] >= 0 && cost[best] >= cost[in_service_] * (1 - settings_.margin)))
    return;
  in_service_ = best;
  choices_.push_back({now, best, window.size()});
}

}  // namespace rlsched::sim
