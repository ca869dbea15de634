#include "capi/health.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "rlsched/site_factor.h"

namespace rlsched::capi {

void HealthRecorder::note_update(double seconds) {
  std::size_t bucket = 0;
  while (bucket < kUpdateBounds.size() && seconds > kUpdateBounds[bucket]) ++bucket;
  update_counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  if (std::isfinite(seconds) && seconds > 0)
    update_sum_ns_.fetch_add(static_cast<std::uint64_t>(seconds * 1e9), std::memory_order_relaxed);
}

void HealthRecorder::note_placement(const std::string& accelerator_type, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++placements_[{accelerator_type, reason}];
}

void HealthRecorder::note_preemption(Seconds grace, double lost_size_seconds) {
  preemptions_.fetch_add(1, std::memory_order_relaxed);
  if (grace > 0) grace_seconds_.fetch_add(static_cast<std::uint64_t>(grace), std::memory_order_relaxed);
  if (std::isfinite(lost_size_seconds) && lost_size_seconds > 0)
    lost_size_seconds_.fetch_add(static_cast<std::uint64_t>(lost_size_seconds), std::memory_order_relaxed);
}

void HealthRecorder::note_ranks(const std::vector<double>& policy, const std::vector<double>& slurm) {
  std::lock_guard<std::mutex> lock(mutex_);
  policy_ranks_.assign(policy.begin(), policy.end());
  slurm_ranks_.assign(slurm.begin(), slurm.end());
}

std::string HealthRecorder::record(Seconds now, const rlsched_counters& c, const ModelState& model) {
  nlohmann::json j;
  j["schema"] = 1;
  j["written_at"] = now;
  nlohmann::json placements = nlohmann::json::array();
  std::vector<double> policy_ranks, slurm_ranks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (model.sha256 != model_sha_) {
      model_sha_ = model.sha256;
      model_seen_at_ = model.sha256.empty() ? 0 : now;
    }
    if (model.scores)
      j["model"] = {{"sha256", model.sha256},
                    {"path", model.path},
                    {"loaded_at", model_seen_at_},
                    {"fallback_active", model.fallback_active}};
    for (const auto& [key, n] : placements_)
      placements.push_back({{"accelerator_type", key.first}, {"reason", key.second}, {"count", n}});
    policy_ranks.swap(policy_ranks_);
    slurm_ranks.swap(slurm_ranks_);
  }
  if (model.scores && !policy_ranks.empty()) {
    // How much of Slurm's own order the learned rank overturns: in shadow mode what enforce would change. Measured
    // outside the lock: note_ranks runs under slurmctld's job write lock and must not wait for this sort.
    const RankDisagreement r = rank_disagreement(policy_ranks, slurm_ranks);
    j["rank_disagreement"] = {{"share", r.share},
                              {"pairs", r.pairs},
                              {"jobs", policy_ranks.size()},
                              {"mode", model.enforce ? "enforce" : "shadow"}};
    std::lock_guard<std::mutex> lock(mutex_);
    if (policy_ranks_.empty()) {  // no newer batch meanwhile: keep this one for the next record
      policy_ranks_.swap(policy_ranks);
      slurm_ranks_.swap(slurm_ranks);
    }
  }
  j["placements"] = std::move(placements);
  j["fallbacks"] = {{"model_load_failed", c.model_load_failures},
                    {"model_untrusted", c.model_untrusted},
                    {"forward_failed", c.forward_failures}};
  j["faults"] = {{"nonfinite_scores", c.nonfinite_scores}, {"call_errors", c.errors}};
  j["energy"] = {{"deferred", c.deferrals}, {"would_defer", c.deferrals_shadow}, {"sunk", c.sunk_jobs}, {"boosted", c.boosted_jobs}};
  j["preemptions"] = preemptions_.load(std::memory_order_relaxed);
  j["grace_seconds"] = grace_seconds_.load(std::memory_order_relaxed);
  j["lost_accelerator_hours"] = static_cast<double>(lost_size_seconds_.load(std::memory_order_relaxed)) / 3600.0;
  nlohmann::json counts = nlohmann::json::array();
  for (const auto& n : update_counts_) counts.push_back(n.load(std::memory_order_relaxed));
  j["site_factor_update_seconds"] = {{"bounds", kUpdateBounds},
                                     {"counts", std::move(counts)},
                                     {"sum", static_cast<double>(update_sum_ns_.load()) / 1e9}};
  return j.dump();
}

std::string health_record_name(const std::string& plugin_type) {
  const std::string name = plugin_type.substr(0, plugin_type.find('/'));
  return name.empty() ? std::string("rlsched") : name;
}

Status write_health_record(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = fmt::format("{}/{}.json", dir, name);
  const std::string tmp = fmt::format("{}/.{}.json.tmp", dir, name);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError(fmt::format("{}: cannot write the health record: {}", tmp, std::strerror(errno)));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return Status::IoError(fmt::format("{}: cannot write the health record: {}", tmp, std::strerror(err)));
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Status::IoError(fmt::format("{}: cannot replace the health record: {}", path, std::strerror(err)));
  }
  return Status::Ok();
}

HealthWriter::HealthWriter(std::string dir, std::string name, Seconds interval, std::function<std::string()> render,
                           std::function<void(const std::string&)> log)
    : dir_(std::move(dir)),
      name_(std::move(name)),
      interval_(interval > 0 ? interval : 10),
      render_(std::move(render)),
      log_(std::move(log)),
      thread_([this] { loop(); }) {}

HealthWriter::~HealthWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HealthWriter::write_once() {
  std::string error;
  try {
    std::string text = render_();
    // The same text as the last write, and the file still there: nothing to replace (a state file that has not
    // changed is not rewritten every few seconds).
    if (text == written_ && ::access(fmt::format("{}/{}.json", dir_, name_).c_str(), F_OK) == 0) return;
    const Status st = write_health_record(dir_, name_, text);
    if (st.ok()) {
      written_ = std::move(text);
    } else {
      error = st.message();
    }
  } catch (const std::exception& e) {
    error = std::string("health record: ") + e.what();
  } catch (...) {
    error = "health record: unknown exception";
  }
  if (!error.empty() && error != last_error_) log_(error);
  last_error_ = error;
}

void HealthWriter::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    lock.unlock();
    write_once();
    lock.lock();
    if (!stop_) cv_.wait_for(lock, std::chrono::seconds(interval_));
  }
  lock.unlock();
  // The final counts, always: a stop that came while a record was being written (the first one, slow under load)
  // used to end the loop without one, losing what was scored after that record was rendered.
  write_once();
}

}  // namespace rlsched::capi
