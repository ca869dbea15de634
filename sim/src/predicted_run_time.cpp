#include "rlsched/sim/predicted_run_time.h"

#include <utility>

namespace rlsched::sim {

bool is_predicted_spec(std::string_view spec) {
  return spec.size() > kPredictedPrefix.size() && spec.substr(0, kPredictedPrefix.size()) == kPredictedPrefix;
}

std::string_view predicted_rule(std::string_view spec) {
  return spec.substr(kPredictedPrefix.size());
}

PredictedRunTimeScorer::PredictedRunTimeScorer(const std::vector<Job>& jobs, std::unique_ptr<Scorer> rule,
                                               RunTimePredictorOptions options)
    : jobs_(jobs),
      rule_(std::move(rule)),
      name_(std::string(kPredictedPrefix) + std::string(rule_->name())),
      started_at_(jobs.size(), -1),
      scored_limit_(jobs.size(), 0),
      view_(options) {
  index_of_.reserve(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) index_of_.emplace(jobs[i].id, static_cast<int>(i));
}

void PredictedRunTimeScorer::score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
                                   std::vector<double>& scores) const {
  predicted_ = jobs;
  for (PendingJob& job : predicted_) {
    const auto it = index_of_.find(job.id);
    if (it == index_of_.end()) continue;
    const auto index = static_cast<std::size_t>(it->second);
    scored_limit_[index] = job.time_limit;
    view_.apply(jobs_[index].user, job);
  }
  rule_->score(context, predicted_, scores);
}

void PredictedRunTimeScorer::observe(const ScheduleEvent& event) {
  const auto job = static_cast<std::size_t>(event.job);
  if (job >= started_at_.size()) return;
  switch (event.kind) {
    case ScheduleEvent::Kind::kStart:
    case ScheduleEvent::Kind::kBackfillStart:
      started_at_[job] = event.time;
      break;
    case ScheduleEvent::Kind::kEnd:
      if (started_at_[job] >= 0) {
        const Seconds limit = scored_limit_[job] > 0 ? scored_limit_[job] : jobs_[job].time_limit;
        view_.ended(jobs_[job].user, limit, event.time - started_at_[job]);
      }
      break;
    default:
      break;
  }
}

}  // namespace rlsched::sim
