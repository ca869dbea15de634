// `rlsched speeds`: per-class accelerator speeds learned from the cluster's own sacct history, printed as the
// job_classes section of rlsched.yaml.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "rlsched/io/speed_history.h"
#include "rlsched/io/workload_readers.h"
#include "rlsched/plugin_config.h"

namespace rlsched::cli {

namespace {

struct SpeedsOptions {
  std::string sacct;
  std::string config;
  std::size_t min_runs = 3;
  std::string output;
};

int run_speeds(const SpeedsOptions& options) {
  std::vector<AcceleratorType> defaults;
  if (!options.config.empty()) {
    auto config = config::load_plugin_config(options.config, {/*require_private=*/false});
    if (!config.ok()) return fail(config.status());
    defaults = config->accelerator_types;
  }
  auto dump = io::read_sacct(options.sacct);
  if (!dump.ok()) return fail(dump.status());
  auto history = io::learn_speeds(dump->jobs, defaults, options.min_runs);
  if (!history.ok()) return fail(Status::InvalidInput(fmt::format("{}: {}", options.sacct, history.status().message())));
  const std::string yaml = io::speeds_yaml(*history, options.sacct);
  fmt::print(stderr, "{}: {} records, {} jobs; {} accelerator jobs used; {} classes with speeds, {} left out\n",
             options.sacct, dump->report.records, dump->jobs.size(), history->jobs_used, history->classes.size(),
             history->left_out.size());
  if (options.output.empty()) {
    fmt::print("{}", yaml);
    return kExitOk;
  }
  std::ofstream out(options.output, std::ios::trunc);
  out << yaml;
  out.close();
  if (!out) return fail(Status::InvalidInput(fmt::format("{}: cannot write", options.output)));
  return kExitOk;
}

}  // namespace

CommandRunner setup_speeds(CLI::App& app) {
  auto options = std::make_shared<SpeedsOptions>();
  app.add_option("--sacct", options->sacct, "sacct --parsable2 dump of the cluster's jobs (docs/sacct.md)")
      ->type_name("FILE")
      ->required();
  app.add_option("--config", options->config,
                 "rlsched.yaml whose accelerator_types give the default speeds; without it they are learned too")
      ->type_name("FILE");
  app.add_option("--min-runs", options->min_runs, "Runs a class needs on a type, at one accelerator count")
      ->type_name("N")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--output", options->output, "Write the YAML here instead of stdout")->type_name("FILE");
  return [options] { return run_speeds(*options); };
}

}  // namespace rlsched::cli
