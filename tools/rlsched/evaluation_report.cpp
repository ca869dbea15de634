#include "evaluation_report.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "outcomes_csv.h"
#include "report_json.h"

extern char** environ;

namespace rlsched::cli {

std::string report_script() {
  if (const char* env = std::getenv("RLSCHED_REPORT_SCRIPT"); env && *env) return env;
  std::error_code ec;
  if (std::filesystem::exists(RLSCHED_REPORT_SCRIPT_INSTALLED, ec)) return RLSCHED_REPORT_SCRIPT_INSTALLED;
  return RLSCHED_REPORT_SCRIPT_SOURCE;
}

namespace {

/// Runs the plot script with `args`, its output into `log`; `what` names the job in the error.
Status run_plot_script(const std::string& script, std::vector<std::string> args, const std::string& log,
                       const std::string& what) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  // Debian's python3, which has python3-matplotlib (a python3 found first on PATH, e.g. pyenv's, may not).
  std::string python = "python3";
  if (const char* env = std::getenv("RLSCHED_PYTHON"); env && *env)
    python = env;
  else if (::access("/usr/bin/python3", X_OK) == 0)
    python = "/usr/bin/python3";
  std::vector<char*> argv = {python.data(), const_cast<char*>(script.c_str())};
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return Status::IoError(fmt::format("cannot run {} {}: {}", python, script, std::strerror(rc)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Status::IoError(
        fmt::format("{} failed drawing {} (exit {}); its output is in {} "
                    "(it needs python3-matplotlib: scripts/setup)",
                    script, what, WIFEXITED(status) ? WEXITSTATUS(status) : -1, log));
  std::error_code ec;  // a clean run leaves no empty log beside what it drew
  if (std::filesystem::file_size(log, ec) == 0 && !ec) std::filesystem::remove(log, ec);
  return Status::Ok();
}

}  // namespace

Status write_evaluation_report(const std::string& dir, const nlohmann::ordered_json& doc, const std::vector<Job>& jobs,
                               const std::vector<sim::PolicyResult>& results, const Cluster& cluster) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IoError(fmt::format("{}: cannot create the report folder: {}", dir, ec.message()));
  if (Status st = write_json(doc, dir + "/report.json"); !st.ok()) return st;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const sim::EnergyReport* energy = results[i].energy ? &*results[i].energy : nullptr;
    Status st =
        write_outcomes_csv(fmt::format("{}/outcomes-{}.csv", dir, i), jobs, results[i].outcomes, cluster, energy);
    if (!st.ok()) return st;
  }
  return run_plot_script(report_script(), {dir}, dir + "/plot_report.log", "the report in " + dir);
}

Status draw_learning_curve(const std::string& csv, const std::string& png) {
  return run_plot_script(report_script(), {"--learning-curve", csv, png}, png + ".log", png);
}

}  // namespace rlsched::cli
