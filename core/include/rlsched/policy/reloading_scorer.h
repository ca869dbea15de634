// The policy as slurmctld runs it: the model at a path, reloaded when the file changes, with a heuristic fallback so
// that a missing or bad model never stops scheduling. Modelled on job_submit.lua's reload in Slurm: load the new file
// beside the old model, verify it, swap; on failure log once and keep serving what was served before.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rlsched/policy/model.h"
#include "rlsched/scorer.h"
#include "rlsched/status.h"

namespace rlsched::policy {

enum class LogLevel { kDebug, kInfo, kWarning, kError };
const char* log_level_name(LogLevel level);

/// Receives one line per event, without a trailing newline. Called from whichever thread scores or reloads, so it
/// must be thread-safe (Slurm's info()/error() are).
using LogSink = std::function<void(LogLevel, const std::string&)>;
/// Writes "rlsched: <level>: <line>\n" to stderr in one write.
LogSink stderr_log_sink();

struct ReloadingScorerOptions {
  std::string model_path;
  std::string fallback = "multifactor";  ///< a make_scorer name, used while there is no valid model
  ScorerSettings fallback_settings;
  LoadOptions load;  ///< load.require_private: refuse a model file writable by group or others
  LogSink log;       ///< empty: stderr_log_sink()
};

struct PolicyCounters {
  std::uint64_t loads_ok = 0;
  std::uint64_t load_failures = 0;       ///< one per bad file version, however often it is checked
  std::uint64_t fallback_calls = 0;      ///< score() calls the fallback served
  std::uint64_t nonfinite_replaced = 0;  ///< NaN/infinite model scores replaced by the lowest finite double
  std::uint64_t forward_failures = 0;    ///< score() calls whose forward threw (served by the fallback)
};

class ReloadingScorer final : public Scorer {
 public:
  /// Makes the fallback and tries the first load; a model that does not load is logged and the fallback serves.
  /// \return InvalidInput only when the fallback name is unknown.
  static Result<std::unique_ptr<ReloadingScorer>> Create(ReloadingScorerOptions options);
  /// The same without the first load: the fallback serves until reload_if_changed() is called (the engine loads a
  /// model file only once it has checked its owner and mode). \return InvalidInput only when the fallback is unknown.
  static Result<std::unique_ptr<ReloadingScorer>> CreateUnloaded(ReloadingScorerOptions options);

  /// "model:<path> (fallback <name>)"
  std::string_view name() const override { return name_; }
  /// Scores with the current model, or with the fallback when there has never been a valid model or when the
  /// model's forward fails on this batch. Thread-safe, also against a concurrent reload_if_changed().
  void score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
             std::vector<double>& scores) const override;
  bool is_static() const override { return false; }
  /// Whether the model being served reads it (the fallback, a built-in heuristic, never does).
  bool reads_predicted_run_time() const override;

  /// Compares the file (inode, size, mtime) with the model being served; when it changed, loads and verifies the new
  /// file beside the current model and swaps it in. A file that fails is logged once ("keeping previous model: <why>"
  /// or, before any model loaded, "serving fallback '<name>': <why>") and not retried until it changes again.
  /// Concurrent calls are serialised; scoring goes on meanwhile. \return true when a new model was swapped in.
  bool reload_if_changed();

  /// The model being served; null while the fallback serves.
  std::shared_ptr<const Model> model() const;
  const Scorer& fallback() const { return *fallback_; }
  PolicyCounters counters() const;

 private:
  ReloadingScorer(ReloadingScorerOptions options, std::unique_ptr<Scorer> fallback);
  void log(LogLevel level, const std::string& line) const;

  const ReloadingScorerOptions options_;
  const std::unique_ptr<Scorer> fallback_;
  const std::string name_;

  // Held only to copy or replace the pointer, never while loading or scoring. A mutex rather than std::atomic_load on
  // shared_ptr: libstdc++ implements those with locks inside the (uninstrumented) shared library, hidden from TSan.
  mutable std::mutex model_mutex_;
  std::shared_ptr<const Model> model_;

  std::mutex reload_mutex_;                     // serialises reload_if_changed()
  std::optional<FileIdentity> failed_version_;  // the file version that last failed (guarded by reload_mutex_)
  std::string failed_reason_;                   // its refusal, to log a vanished file once (reload_mutex_)

  mutable std::atomic<bool> forward_failure_logged_{false};
  std::atomic<std::uint64_t> loads_ok_{0};
  std::atomic<std::uint64_t> load_failures_{0};
  mutable std::atomic<std::uint64_t> fallback_calls_{0};
  mutable std::atomic<std::uint64_t> nonfinite_replaced_{0};
  mutable std::atomic<std::uint64_t> forward_failures_{0};
};

}  // namespace rlsched::policy
