#include "rlsched/sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <unordered_map>

namespace rlsched::sim {

const char* to_string(JobEnd end) {
  switch (end) {
    case JobEnd::kCompleted: return "COMPLETED";
    case JobEnd::kTimeout: return "TIMEOUT";
    case JobEnd::kRejected: return "REJECTED";
    case JobEnd::kUnfinished: return "UNFINISHED";
  }
  return "?";
}

double bounded_slowdown(Seconds wait, Seconds run, Seconds tau) {
  const double denominator = static_cast<double>(std::max(run, tau));
  return std::max(1.0, static_cast<double>(wait + run) / denominator);
}

namespace {

/// The percentile by selection: reorders `values` (O(n) on average instead of a sort).
double percentile_in_place(std::vector<double>& values, double pct) {
  if (values.empty()) return 0;
  const double rank = pct / 100.0 * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lo), values.end());
  const double low = values[lo];
  if (lo + 1 >= values.size()) return low;
  const double high = *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lo) + 1, values.end());
  return low + (high - low) * (rank - static_cast<double>(lo));
}

}  // namespace

double percentile(std::vector<double> values, double pct) { return percentile_in_place(values, pct); }

Metrics compute_metrics(const std::vector<Job>& jobs, const std::vector<JobOutcome>& outcomes, int total_cpus,
                        const std::vector<AcceleratorType>& types, const std::vector<int>& accel_capacity) {
  Metrics m;
  std::vector<double> waits, completions;
  waits.reserve(outcomes.size());
  completions.reserve(outcomes.size());
  double sum_bsld = 0, busy_cpu = 0;
  Seconds first_submit = 0, last_end = 0;
  bool any = false;
  std::unordered_map<std::string_view, std::pair<double, std::size_t>> user_bsld;  // sum, count
  std::vector<double> type_busy(types.size(), 0), type_wait(types.size(), 0);
  std::vector<std::size_t> type_jobs(types.size(), 0);

  double allocated_cpu = 0, useful_cpu = 0, allocated_accel = 0, useful_accel = 0;
  std::map<std::string_view, std::vector<double>> qos_waits;
  for (const JobOutcome& o : outcomes) {
    m.restarts += static_cast<std::size_t>(o.restarts);
    m.preemptions += static_cast<std::size_t>(o.preemptions);
    m.lost_cpu_hours += o.lost_cpu_seconds / 3600.0;
    m.lost_accelerator_hours += o.lost_accelerator_seconds / 3600.0;
    allocated_cpu += o.allocated_cpu_seconds;
    useful_cpu += o.useful_cpu_seconds;
    allocated_accel += o.allocated_accelerator_seconds;
    useful_accel += o.useful_accelerator_seconds;
    switch (o.state) {
      case JobEnd::kRejected: ++m.rejected; continue;
      case JobEnd::kUnfinished: ++m.unfinished; continue;
      case JobEnd::kTimeout: ++m.timed_out; break;
      case JobEnd::kCompleted: ++m.completed; break;
    }
    ++m.jobs;
    const double wait = static_cast<double>(o.wait());
    const double bsld = bounded_slowdown(o.wait(), o.run());
    waits.push_back(wait);
    qos_waits[jobs[o.job].qos].push_back(wait);
    completions.push_back(static_cast<double>(o.wait() + o.run()));
    sum_bsld += bsld;
    busy_cpu += static_cast<double>(o.cpus) * static_cast<double>(o.run());
    auto& u = user_bsld[jobs[o.job].user];
    u.first += bsld;
    ++u.second;
    if (o.accelerator_type >= 0 && o.accelerator_type < static_cast<int>(types.size())) {
      const auto t = static_cast<std::size_t>(o.accelerator_type);
      type_busy[t] += static_cast<double>(o.accelerators) * static_cast<double>(o.run());
      type_wait[t] += wait;
      ++type_jobs[t];
    }
    first_submit = any ? std::min(first_submit, o.submit) : o.submit;
    last_end = any ? std::max(last_end, o.end) : o.end;
    any = true;
  }
  if (allocated_accel > 0) {
    m.goodput = useful_accel / allocated_accel;
  } else if (allocated_cpu > 0) {
    m.goodput = useful_cpu / allocated_cpu;
  }
  if (m.jobs == 0) return m;
  if (qos_waits.size() > 1) {
    for (auto& [name, qos] : qos_waits) {
      QosMetrics q;
      q.name = std::string(name);
      q.jobs = qos.size();
      for (double w : qos) q.avg_wait += w;
      q.avg_wait /= static_cast<double>(qos.size());
      q.p95_wait = percentile_in_place(qos, 95);
      m.per_qos.push_back(std::move(q));
    }
  }

  // Busy accelerator-time while jobs were still arriving: the steady state, free of the drain at the end (with
  // heavy-tailed jobs, one long job stretches the makespan and makes utilization over it say little).
  Seconds last_submit = first_submit;
  for (const JobOutcome& o : outcomes)
    if (o.ran()) last_submit = std::max(last_submit, o.submit);
  std::vector<double> type_busy_arriving(types.size(), 0.0);
  for (const JobOutcome& o : outcomes)
    if (o.ran() && o.accelerator_type >= 0 && o.accelerator_type < static_cast<int>(types.size())) {
      const Seconds from = std::max(o.start, first_submit), to = std::min(o.end, last_submit);
      if (to > from) type_busy_arriving[o.accelerator_type] += double(o.accelerators) * double(to - from);
    }

  const double n = static_cast<double>(m.jobs);
  double sum_wait = 0, sum_completion = 0;
  for (double w : waits) sum_wait += w;
  for (double c : completions) sum_completion += c;
  m.avg_wait = sum_wait / n;
  m.avg_bsld = sum_bsld / n;
  m.avg_completion = sum_completion / n;
  m.max_wait = *std::max_element(waits.begin(), waits.end());
  m.p99_wait = percentile_in_place(waits, 99);  // selection, not a full sort: metrics run after every episode
  m.p95_wait = percentile_in_place(waits, 95);
  m.p50_wait = percentile_in_place(waits, 50);
  m.p95_completion = percentile_in_place(completions, 95);
  m.makespan = static_cast<double>(last_end - first_submit);
  if (m.makespan > 0 && total_cpus > 0) m.utilization = busy_cpu / (total_cpus * m.makespan);

  double sum = 0, sum_sq = 0;
  for (const auto& [user, acc] : user_bsld) {
    const double avg = acc.first / static_cast<double>(acc.second);
    sum += avg;
    sum_sq += avg * avg;
  }
  m.jain_fairness = sum_sq > 0 ? sum * sum / (static_cast<double>(user_bsld.size()) * sum_sq) : 1.0;

  std::vector<std::vector<double>> errors(types.size());  // actual - predicted wait, per type started on
  for (const JobOutcome& o : outcomes)
    if (o.predicted_wait >= 0 && o.ran() && o.accelerator_type >= 0 && std::size_t(o.accelerator_type) < types.size())
      errors[o.accelerator_type].push_back(static_cast<double>(o.wait()) - o.predicted_wait);
  for (std::size_t t = 0; t < types.size(); ++t) {
    AcceleratorTypeMetrics tm;
    if (!errors[t].empty()) {
      tm.predicted = errors[t].size();
      double signed_sum = 0, sum_abs = 0;
      for (double& e : errors[t]) {
        signed_sum += e;
        sum_abs += std::abs(e);
        e = std::abs(e);
      }
      tm.wait_error_bias = signed_sum / double(tm.predicted);
      tm.wait_error_mean_abs = sum_abs / double(tm.predicted);
      tm.wait_error_median_abs = percentile_in_place(errors[t], 50);
    }
    tm.name = types[t].name;
    tm.jobs = type_jobs[t];
    tm.avg_wait = type_jobs[t] ? type_wait[t] / static_cast<double>(type_jobs[t]) : 0;
    const int capacity = t < accel_capacity.size() ? accel_capacity[t] : 0;
    if (capacity > 0 && m.makespan > 0) tm.utilization = type_busy[t] / (capacity * m.makespan);
    if (capacity > 0 && last_submit > first_submit)
      tm.utilization_arriving = type_busy_arriving[t] / (capacity * double(last_submit - first_submit));
    m.per_type.push_back(std::move(tm));
  }
  return m;
}

}  // namespace rlsched::sim
