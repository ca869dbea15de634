#include "rlsched/run_time_prediction.h"

#include <algorithm>
#include <cmath>

namespace rlsched {

RunTimePredictor::RunTimePredictor(RunTimePredictorOptions options) : options_(options) {
  options_.history = std::max(options_.history, 1);
}

void RunTimePredictor::record(const std::string& user, Seconds time_limit, Seconds run_time) {
  if (run_time < 0) return;
  double value = static_cast<double>(run_time);
  if (options_.basis == RunTimeBasis::kLimitShare) {
    if (time_limit <= 0) return;  // no share to learn from
    value = std::min(value / static_cast<double>(time_limit), 1.0);
  }
  std::deque<double>& last = history_[user];
  last.push_front(value);
  if (static_cast<int>(last.size()) > options_.history) last.pop_back();
}

void RunTimePredictor::restore(const std::string& user, std::deque<double> latest_first) {
  if (static_cast<int>(latest_first.size()) > options_.history) latest_first.resize(options_.history);
  history_[user] = std::move(latest_first);
}

Seconds RunTimePredictor::predict(const Job& job) const {
  const Seconds limit = job.time_limit > 0 ? job.time_limit : -1;
  const auto it = history_.find(job.user);
  if (it == history_.end() || it->second.empty()) return limit;
  double mean = 0;
  for (double v : it->second) mean += v;
  mean /= static_cast<double>(it->second.size());
  if (options_.basis == RunTimeBasis::kLimitShare) {
    if (limit < 0) return -1;
    mean *= static_cast<double>(limit);
  }
  Seconds predicted = std::max<Seconds>(1, std::llround(mean));
  if (limit > 0) predicted = std::min(predicted, limit);
  return predicted;
}

}  // namespace rlsched
