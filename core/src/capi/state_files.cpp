// What the engine keeps in slurmctld's StateSaveLocation across restarts: the preemption history (preempt.cpp) and
// what ended jobs taught the predicted run times. Both files are read the same way: a damaged one is reported and
// set aside, never fatal, never overwritten.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "capi/engine.h"
#include "capi/run_time_history.h"

namespace rlsched::capi {

void Engine::load_state(const std::string& name,
                        const std::function<Result<std::string>(std::string_view, const std::string&)>& restore,
                        const std::string& otherwise) {
  const std::string path = fmt::format("{}/{}.json", options_.state_dir, name);
  std::ifstream in(path, std::ios::binary);
  std::string problem;
  if (in) {
    std::ostringstream text;
    text << in.rdbuf();
    Result<std::string> restored = restore(text.str(), path);
    if (restored.ok()) {
      log(RLSCHED_LOG_INFO, *restored);
      return;
    }
    problem = restored.status().message();
  } else if (errno == ENOENT) {
    return;
  } else if (errno == EACCES && options_.state_read_only) {
    return;  // a user's rlsched explain where only SlurmUser may read: the ended jobs Slurm keeps serve
  } else {
    problem = fmt::format("{}: cannot read: {}", path, std::strerror(errno));
  }
  if (options_.state_read_only) {  // the file belongs to slurmctld's plugin: say so, leave it
    log(RLSCHED_LOG_ERROR, fmt::format("{}; {}", problem, otherwise));
    return;
  }
  errors_.fetch_add(1, std::memory_order_relaxed);
  std::error_code moved;
  std::filesystem::rename(path, path + ".damaged", moved);
  log(RLSCHED_LOG_ERROR, fmt::format("{}; {}{}", problem, otherwise,
                                     moved ? fmt::format(" (cannot set it aside: {})", moved.message())
                                           : fmt::format(" (set aside as {}.damaged)", path)));
}

void Engine::keep_run_time_history() {
  load_state(
      kRunTimeHistoryName,
      [this](std::string_view text, const std::string& path) -> Result<std::string> {
        std::lock_guard<std::mutex> lock(ended_mutex_);
        Result<std::size_t> users = restore_run_time_history(text, path, run_times_.predictor(), ended_known_);
        if (!users.ok()) return users.status();
        ended_version_.fetch_add(1, std::memory_order_release);
        return fmt::format("run-time history {}: the ended jobs of {} user{}, {} still kept by Slurm", path, *users,
                           *users == 1 ? "" : "s", ended_known_.size());
      },
      "predicted run times start from no history");
  run_times_writer_ =
      state_writer(kRunTimeHistoryName, 10, [this, rendered = std::string(), version = std::uint64_t{0}]() mutable {
        // Nothing heard and nothing forgotten since the last render: the same text, which the writer does not write
        // again. Otherwise a copy under the lock that scoring takes, rendered after it is released.
        if (!rendered.empty() && ended_version_.load(std::memory_order_acquire) == version) return rendered;
        RunTimeHistory copy;
        {
          std::lock_guard<std::mutex> lock(ended_mutex_);
          copy = run_time_history_of(run_times_.predictor(), ended_known_);
          version = ended_version_.load(std::memory_order_relaxed);
        }
        rendered = run_time_history_json(copy);
        return rendered;
      });
}

std::unique_ptr<HealthWriter> Engine::state_writer(const std::string& name, Seconds interval,
                                                   std::function<std::string()> render) {
  if (options_.state_read_only) return nullptr;  // the files belong to slurmctld's plugin
  return std::make_unique<HealthWriter>(options_.state_dir, name, interval, std::move(render),
                                        [this](const std::string& line) { log(RLSCHED_LOG_ERROR, line); });
}

}  // namespace rlsched::capi
