#include "rlsched/predicted_run_times.h"

namespace rlsched {

const char* run_time_view_name(RunTimeView view) {
  return view == RunTimeView::kPredicted ? "predicted" : "limit";
}

PredictedRunTimes::PredictedRunTimes(RunTimePredictorOptions options) : predictor_(options) {}

void PredictedRunTimes::ended(const std::string& user, Seconds time_limit, Seconds run_time) {
  predictor_.record(user, time_limit, run_time);
}

void PredictedRunTimes::apply(const std::string& user, PendingJob& job) const {
  Job asked;  // what the predictor reads: the user and the limit the job waits with
  asked.user = user;
  asked.time_limit = job.time_limit;
  if (const Seconds predicted = predictor_.predict(asked); predicted > 0) job.time_limit = predicted;
}

}  // namespace rlsched
