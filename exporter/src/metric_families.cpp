#include "metric_families.h"

#include <algorithm>
#include <limits>

namespace rlsched::exporter {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

MetricFamily gauge_family(std::string name, std::string help) {
  MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = MetricType::Gauge;
  return f;
}

void add_sample(MetricFamily& family, Labels labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  if (family.type == MetricType::Counter)
    m.counter.value = value;
  else
    m.gauge.value = value;
  family.metric.push_back(std::move(m));
}

namespace {

MetricFamily counter_family(std::string name, std::string help) {
  MetricFamily f = gauge_family(std::move(name), std::move(help));
  f.type = MetricType::Counter;
  return f;
}

}  // namespace

const std::vector<double>& WaitHistogram::bounds() {
  static const std::vector<double> b = {1,    5,    15,    30,    60,    120,   300,    600,    900,    1800,
                                        3600, 7200, 14400, 28800, 43200, 86400, 172800, 345600, 604800, 1209600};
  return b;
}

void WaitHistogram::observe(const StartedJob& job) {
  Series& s = series_[{job.partition, job.qos, job.accelerator_type}];
  const auto& b = bounds();
  if (s.counts.empty()) s.counts.assign(b.size() + 1, 0);
  const double wait = static_cast<double>(job.wait);
  const std::size_t bucket = std::lower_bound(b.begin(), b.end(), wait) - b.begin();  // le: wait <= bound
  s.counts[bucket] += 1;
  s.sum += wait;
  s.count += 1;
}

void WaitHistogram::append_to(Families& out) const {
  MetricFamily f;
  f.name = "slurm_job_wait_seconds";
  f.help = "Wait of jobs that started, from eligible to start, each job counted once";
  f.type = MetricType::Histogram;
  const auto& b = bounds();
  for (const auto& [key, s] : series_) {
    ClientMetric m;
    m.label = {{"partition", std::get<0>(key)}, {"qos", std::get<1>(key)}, {"accelerator_type", std::get<2>(key)}};
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
      cumulative += s.counts[i];
      m.histogram.bucket.push_back({cumulative, b[i]});
    }
    m.histogram.bucket.push_back({s.count, std::numeric_limits<double>::infinity()});
    m.histogram.sample_count = s.count;
    m.histogram.sample_sum = s.sum;
    f.metric.push_back(std::move(m));
  }
  out.push_back(std::move(f));
}

void append_queue_families(const QueueSummary& summary, const SchedulerCycles& cycles, Families& out) {
  MetricFamily pending = gauge_family("slurm_jobs_pending",
                                      "Pending jobs (a job listing several partitions counts "
                                      "in each)");
  for (const auto& [k, n] : summary.pending)
    add_sample(pending,
               {{"partition", std::get<0>(k)},
                {"qos", std::get<1>(k)},
                {"accelerator_type", std::get<2>(k)},
                {"reason", std::get<3>(k)}},
               static_cast<double>(n));
  MetricFamily running = gauge_family("slurm_jobs_running", "Running and suspended jobs");
  for (const auto& [k, n] : summary.running)
    add_sample(running, {{"partition", std::get<0>(k)}, {"qos", std::get<1>(k)}, {"accelerator_type", std::get<2>(k)}},
               static_cast<double>(n));
  out.push_back(std::move(pending));
  out.push_back(std::move(running));

  struct TypeGauge {
    const char* name;
    const char* help;
    std::int64_t TypeUsage::*field;
  };
  const TypeGauge type_gauges[] = {
      {"slurm_accelerators_total", "Accelerators configured on nodes, per GRES type", &TypeUsage::total},
      {"slurm_accelerators_allocated", "Accelerators allocated to jobs (node GresUsed)", &TypeUsage::allocated},
      {"slurm_accelerators_idle", "Free accelerators on nodes that can take jobs (not down, drained or failed)",
       &TypeUsage::idle},
      {"slurm_accelerators_idle_while_fitting_jobs_wait",
       "Idle accelerators of a type while a pending job that fits them waits (fragmentation); 0 when none waits",
       &TypeUsage::idle_while_fitting_jobs_wait},
      {"slurm_jobs_pending_fitting_idle",
       "Pending jobs that ask for no more accelerators of this type than are idle in one of their partitions",
       &TypeUsage::fitting_jobs_waiting},
  };
  for (const TypeGauge& g : type_gauges) {
    MetricFamily f = gauge_family(g.name, g.help);
    for (const auto& [key, usage] : summary.types)
      add_sample(f, {{"gres", key.first}, {"accelerator_type", key.second.empty() ? "any" : key.second}},
                 static_cast<double>(usage.*(g.field)));
    out.push_back(std::move(f));
  }

  const std::pair<const char*, double> cycle_gauges[] = {
      {"slurm_scheduler_cycle_last_seconds", cycles.main_last_us / 1e6},
      {"slurm_scheduler_cycle_mean_seconds", cycles.main_mean_us / 1e6},
      {"slurm_backfill_cycle_last_seconds", cycles.backfill_last_us / 1e6},
      {"slurm_backfill_cycle_mean_seconds", cycles.backfill_mean_us / 1e6},
      {"slurm_scheduler_cycles", static_cast<double>(cycles.main_cycles)},
      {"slurm_backfill_cycles", static_cast<double>(cycles.backfill_cycles)},
  };
  for (const auto& [name, value] : cycle_gauges) {
    MetricFamily f = gauge_family(name, "slurmctld's scheduler statistics (sdiag; counters restart at midnight)");
    add_sample(f, {}, value);
    out.push_back(std::move(f));
  }
}

void append_poll_families(const PollHealth& h, Families& out) {
  MetricFamily up = gauge_family("slurm_up",
                                 "1 when the exporter's last poll reached slurmctld, else 0 (the other "
                                 "slurm_ metrics are then those of the last poll that did)");
  add_sample(up, {}, h.up ? 1 : 0);
  MetricFamily duration = gauge_family("slurm_exporter_poll_duration_seconds", "How long the last poll took");
  add_sample(duration, {}, h.last_duration_s);
  MetricFamily last = gauge_family("slurm_exporter_last_success_timestamp_seconds",
                                   "Unix time of the last poll that reached slurmctld (0: none yet)");
  add_sample(last, {}, static_cast<double>(h.last_success));
  MetricFamily polls = counter_family("slurm_exporter_polls_total", "Polls of slurmctld, by result");
  add_sample(polls, {{"result", "ok"}}, static_cast<double>(h.polls - h.failures));
  add_sample(polls, {{"result", "failed"}}, static_cast<double>(h.failures));
  for (auto* f : {&up, &duration, &last, &polls}) out.push_back(std::move(*f));
}

void Exposition::publish(Families families) {
  std::lock_guard<std::mutex> lock(mutex_);
  families_ = std::move(families);
}

Families Exposition::Collect() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return families_;
}

}  // namespace rlsched::exporter
