// `rlsched promote` and `rlsched rollback`: put a verified model where the Slurm plugin serves it from, keeping the
// one it replaces, so slurmctld's hot reload switches models without a restart (rlsched/policy/model_install.h).
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "rlsched/plugin_config.h"
#include "rlsched/policy/model_install.h"

namespace rlsched::cli {

namespace {

struct InstallOptions {
  std::string candidate;  // promote only
  std::string model;
  std::string config;
};

/// The model path: --model, or the `model:` of the plugins' rlsched.yaml.
Result<std::string> model_path(const InstallOptions& options) {
  if (!options.model.empty()) return options.model;
  auto config = config::load_plugin_config(options.config, {/*require_private=*/false});
  if (!config.ok()) return config.status();
  if (config->model.empty())
    return Status::InvalidInput(fmt::format("{}: no model: key, so there is no model path to install to", options.config));
  return config->model;
}

void report(const char* what, const policy::InstallResult& r) {
  fmt::print("{}: {} now serves weights sha256 {}\n", what, r.model, r.sha256);
  if (!r.kept.empty())
    fmt::print("kept the model it replaced as {}{}\n", r.kept,
               r.kept_sha256.empty() ? " (it did not verify)" : fmt::format(" (sha256 {})", r.kept_sha256));
  fmt::print("slurmctld picks it up at its next model check (reload_check_interval in rlsched.yaml), no restart\n");
}

void add_target_options(CLI::App& app, InstallOptions& options) {
  auto* model = app.add_option("--model", options.model, "Model path the plugin serves (rlsched.yaml model:)")
                    ->type_name("PATH");
  auto* config = app.add_option("--config", options.config, "Take the model path from this rlsched.yaml")
                     ->type_name("FILE")
                     ->check(CLI::ExistingFile);
  model->excludes(config);
  app.callback([model, config] {
    if (model->count() == 0 && config->count() == 0) throw CLI::RequiredError("--model or --config");
  });
}

}  // namespace

CommandRunner setup_promote(CLI::App& app) {
  auto options = std::make_shared<InstallOptions>();
  app.add_option("candidate", options->candidate, "The model to install (verified first)")
      ->type_name("CANDIDATE")
      ->required();
  add_target_options(app, *options);
  return [options] {
    auto path = model_path(*options);
    if (!path.ok()) return fail(path.status());
    auto r = policy::promote_model(options->candidate, *path);
    if (!r.ok()) return fail(r.status());
    report("promoted", *r);
    return kExitOk;
  };
}

CommandRunner setup_rollback(CLI::App& app) {
  auto options = std::make_shared<InstallOptions>();
  add_target_options(app, *options);
  return [options] {
    auto path = model_path(*options);
    if (!path.ok()) return fail(path.status());
    auto r = policy::rollback_model(*path);
    if (!r.ok()) return fail(r.status());
    report("rolled back", *r);
    return kExitOk;
  };
}

}  // namespace rlsched::cli
