// A step function of time: a weekly table repeated forever, or a time series whose end values hold outside it.
#include <algorithm>
#include <limits>

#include "rlsched/energy.h"

namespace rlsched::energy {
namespace {

// 1970-01-01 was a Thursday: an epoch second plus three days is that many seconds after a Monday 00:00.
constexpr Seconds kEpochToMonday = 3 * 86400;

Seconds floor_mod(Seconds a, Seconds b) {
  const Seconds r = a % b;
  return r < 0 ? r + b : r;
}

}  // namespace

Schedule Schedule::weekly(std::vector<Step> steps, Seconds utc_offset) {
  Schedule s;
  s.steps_ = std::move(steps);
  s.utc_offset_ = utc_offset;
  return s;
}

Schedule Schedule::series(std::vector<Step> steps) {
  Schedule s;
  s.steps_ = std::move(steps);
  s.series_ = true;
  return s;
}

std::size_t Schedule::locate(Seconds t, Seconds& week_start) const {
  Seconds key = t;
  week_start = 0;
  if (!series_) {
    const Seconds local = t + utc_offset_ + kEpochToMonday;
    key = floor_mod(local, kWeek);
    week_start = t - key;
  }
  // The last step starting at or before key (a series before its first step: the first).
  auto it =
      std::upper_bound(steps_.begin(), steps_.end(), key, [](Seconds k, const Step& step) { return k < step.start; });
  return it == steps_.begin() ? 0 : static_cast<std::size_t>(it - steps_.begin() - 1);
}

double Schedule::at(Seconds t) const {
  if (steps_.empty()) return 0;
  Seconds week_start = 0;
  return steps_[locate(t, week_start)].value;
}

Seconds Schedule::next_change(Seconds t) const {
  if (steps_.empty()) return kNever;
  Seconds week_start = 0;
  const std::size_t i = locate(t, week_start);
  if (series_) {
    if (t < steps_.front().start) return steps_.front().start;
    return i + 1 < steps_.size() ? steps_[i + 1].start : kNever;
  }
  return week_start + (i + 1 < steps_.size() ? steps_[i + 1].start : kWeek);
}

double Schedule::integral(Seconds from, Seconds to) const {
  if (steps_.empty() || to <= from) return 0;
  double sum = 0;
  // Whole weeks of a weekly table at once: a long job must not cost a walk over every step it spans.
  if (!series_ && to - from >= kWeek) {
    double week = 0;
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      const Seconds end = i + 1 < steps_.size() ? steps_[i + 1].start : kWeek;
      week += steps_[i].value * static_cast<double>(end - steps_[i].start);
    }
    const Seconds weeks = (to - from) / kWeek;
    sum += week * static_cast<double>(weeks);
    from += weeks * kWeek;
  }
  for (Seconds t = from; t < to;) {
    const Seconds next = std::min(next_change(t), to);
    sum += at(t) * static_cast<double>(next - t);
    t = next;
  }
  return sum;
}

double cost_of(const Schedule& schedule, double watts, Seconds from, Seconds to) {
  return watts / 1000.0 * schedule.integral(from, to) / 3600.0;
}

}  // namespace rlsched::energy
