#include "rlsched/sim/predicted_sjf.h"

namespace rlsched::sim {

PredictedSjfScorer::PredictedSjfScorer(const std::vector<Job>& jobs, RunTimePredictorOptions options)
    : jobs_(jobs), started_at_(jobs.size(), -1), scored_limit_(jobs.size(), 0), predictor_(options) {
  index_of_.reserve(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) index_of_.emplace(jobs[i].id, static_cast<int>(i));
}

void PredictedSjfScorer::score(const ScoringContext&, const std::vector<PendingJob>& jobs,
                               std::vector<double>& scores) const {
  Job asked;  // what the predictor reads: the user and the limit the job waits with
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto it = index_of_.find(jobs[i].id);
    Seconds run = jobs[i].time_limit;
    if (it != index_of_.end()) {
      const auto job = static_cast<std::size_t>(it->second);
      scored_limit_[job] = jobs[i].time_limit;
      asked.user = jobs_[job].user;
      asked.time_limit = jobs[i].time_limit;
      if (const Seconds predicted = predictor_.predict(asked); predicted > 0) run = predicted;
    }
    scores[i] = -static_cast<double>(run);
  }
}

void PredictedSjfScorer::observe(const ScheduleEvent& event) {
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
        predictor_.record(jobs_[job].user, limit, event.time - started_at_[job]);
      }
      break;
    default:
      break;
  }
}

}  // namespace rlsched::sim
