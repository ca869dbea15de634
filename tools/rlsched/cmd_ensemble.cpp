// `rlsched ensemble`: several trained models as one model file whose score is the mean of theirs
// (rlsched/train/ensemble.h says how and why).
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "rlsched/train/ensemble.h"

namespace rlsched::cli {

namespace {

struct EnsembleOptions {
  std::vector<std::string> members;
  std::string output;
};

}  // namespace

CommandRunner setup_ensemble(CLI::App& app) {
  auto options = std::make_shared<EnsembleOptions>();
  app.add_option("members", options->members, "Model files `rlsched train` wrote (two or more, the same depth)")
      ->type_name("MODEL")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--output,-o", options->output, "The ensemble's model file (its card goes beside it, .md)")
      ->type_name("FILE")
      ->required();
  return [options] {
    auto written = train::write_ensemble(options->members, options->output, invocation());
    if (!written.ok()) return fail(written.status());
    fmt::print("{}: the mean of {} models, {}, weights sha256 {}\n", options->output, options->members.size(),
               written->architecture, written->weights_sha256);
    return kExitOk;
  };
}

}  // namespace rlsched::cli
