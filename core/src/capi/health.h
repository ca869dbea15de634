// The plugins' health record: what rlsched-exporter turns into rlsched_* metrics (model, fallbacks and faults by
// kind, site_factor update durations, placements by type and reason, preemptions). Observations are counted in
// memory where they happen (atomics or a short lock); a writer thread of its own renders the record and replaces
// <health_dir>/<plugin>.json by an atomic rename every few seconds, so no file I/O runs under slurmctld's locks.
// The record's fields are documented in slurm_conf_examples/monitoring/README.md (schema 1).
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rlsched/job.h"
#include "rlsched/rlsched.h"
#include "rlsched/status.h"

namespace rlsched::capi {

class HealthRecorder {
 public:
  /// Upper bounds (seconds) of the site_factor update histogram; Slurm warns above 50 ms.
  static constexpr std::array<double, 10> kUpdateBounds = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1};

  void note_update(double seconds);
  void note_placement(const std::string& accelerator_type, const std::string& reason);
  /// A victim chosen: the grace time it was given, and the work it loses if it writes no checkpoint on the signal
  /// (run time since its last checkpoint times the accelerators, or CPUs, it holds).
  void note_preemption(Seconds grace, double lost_size_seconds);
  /// The last batch's two orders: the policy's scores and Slurm's own multifactor priority of the same jobs. Only
  /// copied here (under the job write lock); the writer thread measures their disagreement.
  void note_ranks(const std::vector<double>& policy, const std::vector<double>& slurm);

  struct ModelState {
    bool scores = false;       ///< the engine scores jobs (site_factor); else the record has no "model"
    std::string sha256, path;  ///< empty while the fallback serves
    bool fallback_active = true;
    bool enforce = false;      ///< the site factors are written (enforce) or only computed (shadow)
  };
  /// The record as JSON text. `loaded_at` of a model is when a record first saw its sha256 (within one write
  /// interval of the swap).
  std::string record(Seconds now, const rlsched_counters& counters, const ModelState& model);

 private:
  std::array<std::atomic<std::uint64_t>, kUpdateBounds.size() + 1> update_counts_{};
  std::atomic<std::uint64_t> update_sum_ns_{0};
  std::atomic<std::uint64_t> preemptions_{0};
  std::atomic<std::uint64_t> grace_seconds_{0};
  std::atomic<std::uint64_t> lost_size_seconds_{0};
  std::mutex mutex_;  // guards what follows
  std::map<std::pair<std::string, std::string>, std::uint64_t> placements_;
  std::string model_sha_;
  Seconds model_seen_at_ = 0;
  std::vector<double> policy_ranks_, slurm_ranks_;
};

/// Writes `text` to <dir>/<name>.json through a temporary file in the same folder and rename(2).
Status write_health_record(const std::string& dir, const std::string& name, const std::string& text);

/// "site_factor/rlsched" -> "site_factor": the record's file name for a plugin type.
std::string health_record_name(const std::string& plugin_type);

/// A thread that writes render() every `interval` seconds, and once more when it stops, unless it is the text it
/// last wrote and the file is still there. A failed write is logged once per distinct error.
class HealthWriter {
 public:
  HealthWriter(std::string dir, std::string name, Seconds interval, std::function<std::string()> render,
               std::function<void(const std::string&)> log);
  ~HealthWriter();
  HealthWriter(const HealthWriter&) = delete;
  HealthWriter& operator=(const HealthWriter&) = delete;

 private:
  void loop();
  void write_once();

  const std::string dir_, name_;
  const Seconds interval_;
  const std::function<std::string()> render_;
  const std::function<void(const std::string&)> log_;
  std::string last_error_;
  std::string written_;  // the text of the last successful write
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace rlsched::capi
