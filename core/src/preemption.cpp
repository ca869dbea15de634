#include "rlsched/preemption.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "text/duration.h"

namespace rlsched::preemption {
namespace {

constexpr std::string_view kPrefix = "checkpoint:";
constexpr std::string_view kExample = "checkpoint:interval=30m,cost=90s";

Status malformed(std::string_view word, const std::string& why) {
  return Status::InvalidInput(fmt::format("--comment {}: {} (declare it as {})", word, why, kExample));
}

/// The duration grammar of text/duration.h with a unit ("90s", "30m", "2h"), up to 30 days; nullopt otherwise.
std::optional<Seconds> duration(std::string_view text) {
  const auto seconds = text::parse_duration(text, {/*bare_unit=*/0, /*infinite=*/false});
  if (!seconds.ok() || *seconds > 30LL * 86400) return std::nullopt;
  return *seconds;
}

}  // namespace

Result<std::optional<Checkpoint>> parse_checkpoint_comment(std::string_view comment) {
  std::optional<std::string_view> found;
  for (std::size_t at = 0; at < comment.size();) {
    const std::size_t start = comment.find_first_not_of(" \t;", at);
    if (start == std::string_view::npos) break;
    const std::size_t end = std::min(comment.find_first_of(" \t;", start), comment.size());
    const std::string_view word = comment.substr(start, end - start);
    at = end;
    if (word.rfind("checkpoint=", 0) == 0) return malformed(word, "the declaration starts with 'checkpoint:'");
    if (word.rfind(kPrefix, 0) != 0) continue;
    if (found) return malformed(word, "a job declares its checkpoint once");
    found = word;
  }
  if (!found) return std::optional<Checkpoint>();

  const std::string_view word = *found;
  std::optional<Seconds> interval, cost;
  std::string_view rest = word.substr(kPrefix.size());
  if (rest.empty()) return malformed(word, "give interval= and cost=");
  while (!rest.empty()) {
    const std::size_t comma = std::min(rest.find(','), rest.size());
    const std::string_view item = rest.substr(0, comma);
    rest = comma < rest.size() ? rest.substr(comma + 1) : std::string_view();
    const std::size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    if (eq == std::string_view::npos) return malformed(word, fmt::format("'{}' is not key=value", item));
    std::optional<Seconds>* slot = key == "interval" ? &interval : key == "cost" ? &cost : nullptr;
    if (slot == nullptr) return malformed(word, fmt::format("unknown key '{}' (known: interval, cost)", key));
    if (slot->has_value()) return malformed(word, fmt::format("'{}' is given twice", key));
    const std::string_view value = item.substr(eq + 1);
    *slot = duration(value);
    if (!*slot) return malformed(word, fmt::format("'{}' is not a duration: use 90s, 30m or 2h", value));
  }
  if (!interval) return malformed(word, "interval= is missing");
  if (!cost) return malformed(word, "cost= is missing");
  if (*interval < 10) return malformed(word, "the interval must be at least 10s");
  if (*cost < 1) return malformed(word, "the cost must be at least 1s");
  if (*cost >= *interval) return malformed(word, "the cost must be less than the interval");
  if (*cost > 3600) return malformed(word, "the cost may be at most 1h (it becomes the job's grace time)");
  return std::optional<Checkpoint>(Checkpoint{*interval, *cost});
}

std::optional<Checkpoint> declared_checkpoint(const char* comment) {
  if (comment == nullptr) return std::nullopt;
  auto declared = parse_checkpoint_comment(comment);
  return declared.ok() ? *declared : std::nullopt;
}

const char* refusal_text(Refusal refusal) {
  switch (refusal) {
    case Refusal::kNone: return "preemptable";
    case Refusal::kNotCheckpointable: return "not checkpointable and not of a preemptable QOS";
    case Refusal::kTooYoung: return "has not run the minimum run time";
    case Refusal::kCapReached: return "already preempted the most times allowed in the window";
  }
  return "?";
}

void History::record(JobId job, Seconds when) { times_[job].push_back(when); }

int History::recent(JobId job, Seconds now, Seconds window) const {
  const auto it = times_.find(job);
  if (it == times_.end()) return 0;
  return static_cast<int>(
      std::count_if(it->second.begin(), it->second.end(), [&](Seconds t) { return t > now - window && t <= now; }));
}

void History::prune(Seconds now, Seconds window) {
  for (auto it = times_.begin(); it != times_.end();) {
    auto& times = it->second;
    times.erase(std::remove_if(times.begin(), times.end(), [&](Seconds t) { return t <= now - window; }), times.end());
    it = times.empty() ? times_.erase(it) : std::next(it);
  }
}

Refusal refusal(const Policy& policy, const Candidate& job, const History& history, Seconds now) {
  const bool by_qos = std::find(policy.preemptable_qos.begin(), policy.preemptable_qos.end(), job.qos) !=
                      policy.preemptable_qos.end();
  if (!job.checkpoint && !by_qos) return Refusal::kNotCheckpointable;
  if (now - job.run_start < policy.min_run_time) return Refusal::kTooYoung;
  if (policy.max_preemptions > 0 && history.recent(job.id, now, policy.window) >= policy.max_preemptions)
    return Refusal::kCapReached;
  return Refusal::kNone;
}

Seconds run_time_lost(const Candidate& job, Seconds now) {
  const Seconds ran = std::max<Seconds>(now - job.run_start, 0);
  return job.checkpoint ? ran % job.checkpoint->interval : ran;
}

double work_lost(const Candidate& job, Seconds now) {
  return static_cast<double>(run_time_lost(job, now)) * std::max(job.size, 1.0);
}

std::uint32_t victim_order(const Candidate& job, Seconds now) {
  const double minutes = std::ceil(work_lost(job, now) / 60.0);
  const auto lost = static_cast<std::uint32_t>(std::min(minutes, 65535.0));
  const auto rank = static_cast<std::uint32_t>(std::lround(std::clamp(job.rank, 0.0, 1.0) * 65535.0));
  return lost << 16 | rank;
}

Seconds grace_time(const Policy& policy, const Candidate& job) {
  return job.checkpoint ? job.checkpoint->cost + policy.grace_margin : 0;
}

std::vector<std::size_t> victims_in_order(const Policy& policy, const std::vector<Candidate>& candidates,
                                          const History& history, Seconds now) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (refusal(policy, candidates[i], history, now) == Refusal::kNone) out.push_back(i);
  std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) {
    return victim_order(candidates[a], now) < victim_order(candidates[b], now);
  });
  return out;
}

}  // namespace rlsched::preemption
