// The subcommands of `rlsched`. Each lives in its own cmd_*.cpp and is listed once in main.cpp's command table, so
// adding one (train, explain, import-sacct, check-config) touches only its own file and that table.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "rlsched/status.h"

namespace rlsched::cli {

/// Runs a parsed subcommand. \return the process exit code (0 ok, 1 error; usage errors never get this far).
using CommandRunner = std::function<int()>;

/// Adds a subcommand's options to `app` and returns what runs it once the command line is parsed. The options are
/// bound to storage the runner owns, so the runner must outlive parsing (main keeps it).
using CommandSetup = CommandRunner (*)(CLI::App& app);

CommandRunner setup_estimate_replay(CLI::App& app);
CommandRunner setup_ensemble(CLI::App& app);
CommandRunner setup_evaluate(CLI::App& app);
#ifdef RLSCHED_LIVE  // libslurm: tools/CMakeLists.txt
CommandRunner setup_explain(CLI::App& app);
CommandRunner setup_estimate(CLI::App& app);
#endif
CommandRunner setup_generate(CLI::App& app);
CommandRunner setup_import_sacct(CLI::App& app);
CommandRunner setup_promote(CLI::App& app);
CommandRunner setup_rollback(CLI::App& app);
CommandRunner setup_simulate(CLI::App& app);
CommandRunner setup_speeds(CLI::App& app);
CommandRunner setup_train(CLI::App& app);

/// The command line rlsched was started with, words joined by spaces (for records such as model cards).
const std::string& invocation();

/// Exit codes shared by every subcommand (documented in docs/cli.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  ///< bad input file, cluster, policy run, unwritable output
inline constexpr int kExitUsage = 2;  ///< the command line itself is wrong

/// Reports a failed run the one way every subcommand does; the message already names file and line.
/// \return kExitError.
inline int fail(const Status& status) {
  fmt::print(stderr, "rlsched: error: {}\n", status.message());
  return kExitError;
}

}  // namespace rlsched::cli
