// rlsched: simulate and compare scheduling policies on workload traces.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"

namespace {

struct CommandSpec {
  const char* name;
  const char* description;
  rlsched::cli::CommandSetup setup;
};

// The one place that lists subcommands; `rlsched --help` shows them in this order.
const std::vector<CommandSpec>& command_table() {
  static const std::vector<CommandSpec> table = {
      {"evaluate", "Run several policies on one workload and compare them in a table", rlsched::cli::setup_evaluate},
      {"simulate", "Run one policy on one workload and report it in detail (optionally per job)",
       rlsched::cli::setup_simulate},
      {"train", "Train a ranking policy with PPO in the simulator and write it as a TorchScript model",
       rlsched::cli::setup_train},
      {"ensemble", "Combine trained models into one model file whose score is the mean of theirs",
       rlsched::cli::setup_ensemble},
      {"generate",
       "Write a synthetic workload family (cpu: an SWF; gpu: a sacct dump and a cluster YAML) for training and judging",
       rlsched::cli::setup_generate},
      {"import-sacct", "Check a sacct dump and summarise what it holds before training on it",
       rlsched::cli::setup_import_sacct},
      {"speeds", "Learn per-class accelerator speeds from sacct history, as rlsched.yaml job_classes",
       rlsched::cli::setup_speeds},
      {"estimate-replay",
       "Measure start-time estimates on a trace: forecast each job's start at its submit, compare with the run",
       rlsched::cli::setup_estimate_replay},
      {"promote", "Install a verified model where the Slurm plugin serves it (hot reload), keeping the current one",
       rlsched::cli::setup_promote},
      {"rollback", "Put back the model the last promote replaced", rlsched::cli::setup_rollback},
#ifdef RLSCHED_LIVE
      {"explain", "Why a pending job waits and when it may start, on the live cluster", rlsched::cli::setup_explain},
      {"estimate", "When a job not yet submitted would start, per accelerator type, on the live cluster",
       rlsched::cli::setup_estimate},
#endif
  };
  return table;
}

std::string g_invocation;

}  // namespace

const std::string& rlsched::cli::invocation() { return g_invocation; }

int main(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) g_invocation += (i == 0 ? "rlsched" : std::string(" ") + argv[i]);
  CLI::App app{"rlsched: a learned job scheduler for Slurm; simulate and compare scheduling policies on traces",
               "rlsched"};
  app.set_version_flag("--version", std::string("rlsched ") + RLSCHED_VERSION);
  app.require_subcommand(1);

  std::vector<std::pair<CLI::App*, rlsched::cli::CommandRunner>> runners;
  for (const CommandSpec& spec : command_table()) {
    CLI::App* sub = app.add_subcommand(spec.name, spec.description);
    runners.emplace_back(sub, spec.setup(*sub));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive as "errors" with exit code 0; everything else is a usage error. CLI11's own codes
    // (100+) would be unusual for a Unix tool, so usage errors all exit 2.
    const int code = app.exit(e);
    return code == 0 ? rlsched::cli::kExitOk : rlsched::cli::kExitUsage;
  }

  for (auto& [sub, run] : runners)
    if (sub->parsed()) return run();
  return rlsched::cli::kExitUsage;  // unreachable: require_subcommand(1)
}
