// The exporter's metrics as Prometheus metric families, built on the poll thread from the last poll and handed to
// the HTTP server whole (Exposition), so that a scrape only copies them: no slurmctld call, no lock slurmctld holds.
// Names follow Slurm's words: slurm_jobs_pending{partition,qos,accelerator_type,reason}, slurm_accelerators_idle
// {gres,accelerator_type}; docs in slurm_conf_examples/monitoring/README.md.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "cluster_poll.h"

namespace rlsched::exporter {

using Families = std::vector<prometheus::MetricFamily>;

/// slurm_job_wait_seconds: the wait (start - eligible) of every job seen starting, by partition, qos and
/// accelerator_type. Buckets from a second to two weeks: queues for accelerators are often days long.
class WaitHistogram {
 public:
  static const std::vector<double>& bounds();
  void observe(const StartedJob& job);
  void append_to(Families& out) const;

 private:
  struct Series {
    std::vector<std::uint64_t> counts;  ///< per bucket, not cumulative; the last one is +Inf
    double sum = 0;
    std::uint64_t count = 0;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Series> series_;
};

/// Jobs pending and running, accelerators per type, fragmentation, and slurmctld's scheduler cycles.
void append_queue_families(const QueueSummary& summary, const SchedulerCycles& cycles, Families& out);

/// What the exporter knows of its own polls.
struct PollHealth {
  bool up = false;             ///< the last poll reached slurmctld
  double last_duration_s = 0;  ///< how long the last poll took
  Seconds last_success = 0;    ///< unix time of the last poll that reached slurmctld; 0 = never
  std::uint64_t polls = 0, failures = 0;
};
void append_poll_families(const PollHealth& health, Families& out);

/// The families served on /metrics; publish() replaces them all at once.
class Exposition : public prometheus::Collectable {
 public:
  void publish(Families families);
  Families Collect() const override;

 private:
  mutable std::mutex mutex_;
  Families families_;
};

/// A gauge family with one series per label set: helpers shared with the health file's metrics.
prometheus::MetricFamily gauge_family(std::string name, std::string help);
void add_sample(prometheus::MetricFamily& family, std::vector<prometheus::ClientMetric::Label> labels, double value);

}  // namespace rlsched::exporter
