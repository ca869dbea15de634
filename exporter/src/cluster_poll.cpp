#include "cluster_poll.h"

#include <algorithm>

#include "text/type_set.h"

namespace rlsched::exporter {

std::string accelerator_label(const AcceleratorAsk& ask) {
  if (ask.gres.empty() || ask.count <= 0) return "none";
  if (ask.types.empty()) return "any";
  std::vector<std::string> types = ask.types;
  std::sort(types.begin(), types.end());
  return text::format_type_set(types);
}

namespace {

bool may_use(const AcceleratorAsk& ask, const TypeKey& type) {
  if (ask.gres != type.first || ask.count <= 0) return false;
  return ask.types.empty() || std::find(ask.types.begin(), ask.types.end(), type.second) != ask.types.end();
}

}  // namespace

QueueSummary summarize(const ClusterPoll& poll) {
  QueueSummary s;
  // Idle accelerators per (partition, type), for the fit test of pending jobs.
  std::map<std::pair<std::string, TypeKey>, std::int64_t> idle_in;
  for (const PolledNode& node : poll.nodes) {
    for (const NodeAccelerators& a : node.accelerators) {
      TypeUsage& u = s.types[{a.gres, a.type}];
      u.total += a.total;
      u.allocated += a.allocated;
      const std::int64_t idle = node.usable ? std::max<std::int64_t>(0, a.total - a.allocated) : 0;
      u.idle += idle;
      for (const auto& p : node.partitions) idle_in[{p, {a.gres, a.type}}] += idle;
    }
  }
  std::map<TypeKey, std::int64_t> fitting;
  for (const PolledJob& job : poll.jobs) {
    const std::string type = accelerator_label(job.ask);
    if (job.phase == JobPhase::kRunning) {
      s.running[{job.partitions.empty() ? "" : job.partitions.front(), job.qos, type}] += 1;
      continue;
    }
    if (job.phase != JobPhase::kPending) continue;
    for (const auto& p : job.partitions) s.pending[{p, job.qos, type, job.reason}] += 1;
    for (const auto& [key, usage] : s.types) {
      if (!may_use(job.ask, key)) continue;
      const bool fits = std::any_of(job.partitions.begin(), job.partitions.end(), [&](const std::string& p) {
        const auto it = idle_in.find({p, key});
        return it != idle_in.end() && it->second >= job.ask.count;
      });
      if (fits) fitting[key] += 1;
    }
  }
  for (auto& [key, usage] : s.types) {
    const auto it = fitting.find(key);
    usage.fitting_jobs_waiting = it == fitting.end() ? 0 : it->second;
    usage.idle_while_fitting_jobs_wait = usage.fitting_jobs_waiting > 0 ? usage.idle : 0;
  }
  return s;
}

std::vector<StartedJob> StartTracker::newly_started(const ClusterPoll& poll) {
  std::vector<StartedJob> started;
  std::set<std::uint32_t> present;
  for (const PolledJob& job : poll.jobs) {
    present.insert(job.id);
    if (job.start <= 0 || job.phase == JobPhase::kPending || !seen_.insert(job.id).second) continue;
    const Seconds from = job.eligible > 0 ? job.eligible : job.start;
    started.push_back({job.partitions.empty() ? "" : job.partitions.front(), job.qos, accelerator_label(job.ask),
                       std::max<Seconds>(0, job.start - from)});
  }
  for (auto it = seen_.begin(); it != seen_.end();) it = present.count(*it) ? std::next(it) : seen_.erase(it);
  return started;
}

}  // namespace rlsched::exporter
