// `rlsched evaluate`: several policies on one workload, compared in one table.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "inputs.h"
#include "progress.h"
#include "report_json.h"
#include "report_table.h"
#include "rlsched/policy/torchscript_scorer.h"
#include "rlsched/scorer.h"
#include "run_options.h"

namespace rlsched::cli {

namespace {

struct EvaluateOptions {
  RunOptions run;
  std::string policies;
};

int run_evaluate(const EvaluateOptions& options) {
  auto inputs = load_inputs(options.run);
  if (!inputs.ok()) return fail(inputs.status());
  sim::EvaluationOptions evaluation = make_evaluation_options(options.run, *inputs);
  const bool report = !options.run.json_to_stdout();  // --json - owns stdout
  if (report) {
    print_inputs(stdout, *inputs, options.run, evaluation);
    std::fflush(stdout);  // show what is being run before the (possibly long) runs start
  }

  const std::vector<std::string> names = expand_policies(options.policies);
  const std::vector<sim::Placement> placements = options.run.parsed_placements();
  const std::size_t runs = names.size() * placements.size();
  std::vector<sim::PolicyResult> results;
  for (const sim::Placement placement : placements) {
    evaluation.sim.placement.mode = placement;
    for (const std::string& name : names) {
      auto scorer = policy::make_policy_scorer(name, scorer_settings(*inputs));
      if (!scorer.ok()) return fail(scorer.status());
      const std::string label = placements.size() > 1 ? fmt::format("{} / {}", name, sim::to_string(placement)) : name;
      // The bar lives only for the run, so it is erased before any error message is printed.
      auto result = [&] {
        ProgressBar bar(runs > 1 ? fmt::format("{} [{}/{}]", label, results.size() + 1, runs) : label);
        evaluation.progress = bar.callback();
        auto r = sim::evaluate_policy(inputs->workload, inputs->given_cluster(), **scorer, evaluation);
        evaluation.progress = nullptr;
        return r;
      }();
      if (!result.ok()) return fail(result.status());
      results.push_back(std::move(*result));
    }
  }

  if (report) {
    print_comparison(stdout, results);
    if (inputs->workload_has_accelerators()) print_placement_comparison(stdout, results);
  }
  if (!options.run.json.empty()) {
    Status written = write_json(document_json(*inputs, options.run, evaluation, results), options.run.json);
    if (!written.ok()) return fail(written);
  }
  return kExitOk;
}

}  // namespace

CommandRunner setup_evaluate(CLI::App& app) {
  auto options = std::make_shared<EvaluateOptions>();
  app.add_option("--policies", options->policies,
                 "Comma-separated policies to compare (e.g. fcfs,sjf,f1), or 'all' for every built-in one")
      ->type_name("LIST")
      ->required()
      ->check(policy_validator(/*list=*/true));
  add_run_options(app, options->run);
  return [options] { return run_evaluate(*options); };
}

}  // namespace rlsched::cli
