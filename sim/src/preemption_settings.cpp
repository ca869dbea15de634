#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "rlsched/sim/preemption.h"

namespace rlsched::sim {

const char* to_string(PreemptionMode mode) {
  switch (mode) {
    case PreemptionMode::kNone: return "none";
    case PreemptionMode::kRequeue: return "requeue";
    case PreemptionMode::kCheckpoint: return "checkpoint";
  }
  return "?";
}

Result<PreemptionMode> parse_preemption_mode(const std::string& text) {
  if (text == "none") return PreemptionMode::kNone;
  if (text == "requeue") return PreemptionMode::kRequeue;
  if (text == "checkpoint") return PreemptionMode::kCheckpoint;
  return Status::InvalidInput(fmt::format("unknown preemption mode '{}' (known: none, requeue, checkpoint)", text));
}

bool PreemptionSettings::preemptor(const std::string& qos) const {
  return std::any_of(rules.begin(), rules.end(), [&](const PreemptRule& r) { return r.qos == qos; });
}

bool PreemptionSettings::may_preempt(const std::string& urgent, const std::string& victim) const {
  const std::string& v = victim.empty() ? std::string(kDefaultQos) : victim;
  for (const PreemptRule& r : rules)
    if (r.qos == urgent && std::find(r.preempts.begin(), r.preempts.end(), v) != r.preempts.end()) return true;
  return false;
}

std::size_t mark_urgent(std::vector<Job>& jobs, double share, std::uint64_t seed, const std::string& urgent_qos,
                        Seconds max_run) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::size_t marked = 0;
  for (Job& job : jobs) {
    const double draw = unit(rng);  // drawn for every job, so that a job's fate does not depend on the others
    if (job.run_time > 0 && job.run_time <= max_run && draw < share) {
      job.qos = urgent_qos;
      ++marked;
    } else if (job.qos.empty()) {
      job.qos = kDefaultQos;
    }
  }
  return marked;
}

std::size_t declare_checkpoints(std::vector<Job>& jobs, const preemption::Checkpoint& checkpoint, double share,
                                std::uint64_t seed, const std::string& urgent_qos) {
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);  // independent of mark_urgent's draw with the same seed
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::size_t declared = 0;
  for (Job& job : jobs) {
    const double draw = unit(rng);
    const Seconds limit = job.time_limit > 0 ? job.time_limit : job.run_time;
    if (job.qos == urgent_qos || limit <= checkpoint.interval || draw >= share) continue;
    job.checkpoint_interval = checkpoint.interval;
    job.checkpoint_cost = checkpoint.cost;
    ++declared;
  }
  return declared;
}

}  // namespace rlsched::sim
