#include "rlsched/predicted_run_times.h"

#include <algorithm>

namespace rlsched {

const char* run_time_view_name(RunTimeView view) {
  return view == RunTimeView::kPredicted ? "predicted" : "limit";
}

PredictedRunTimes::PredictedRunTimes(RunTimePredictorOptions options) : predictor_(options) {}

void PredictedRunTimes::ended(const std::string& user, Seconds time_limit, Seconds run_time) {
  predictor_.record(user, time_limit, run_time);
}

Seconds PredictedRunTimes::predict(const std::string& user, Seconds time_limit) const {
  Job asked;  // what the predictor reads: the user and the limit the job waits with
  asked.user = user;
  asked.time_limit = time_limit;
  return predictor_.predict(asked);
}

void PredictedRunTimes::apply(const std::string& user, PendingJob& job) const {
  if (const Seconds predicted = predict(user, job.time_limit); predicted > 0) {
    job.time_limit = predicted;
    job.predicted_run_time = predicted;
  }
}

void PredictedRunTimes::annotate(const std::string& user, PendingJob& job) const {
  job.predicted_run_time = std::max<Seconds>(predict(user, job.time_limit), 0);
}

}  // namespace rlsched
