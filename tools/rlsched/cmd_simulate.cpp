// `rlsched simulate`: one policy on one workload, reported in detail, optionally job by job.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "inputs.h"
#include "outcomes_csv.h"
#include "progress.h"
#include "report_energy.h"
#include "report_json.h"
#include "report_table.h"
#include "rlsched/area_rule.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/simulator.h"
#include "run_options.h"
#include "served_policy.h"

namespace rlsched::cli {

namespace {

struct SimulateOptions {
  RunOptions run;
  std::string policy;
  std::string outcomes;  ///< CSV path; empty: none
  std::string events;    ///< CSV path of the scheduler's events; empty: none
};

int run_simulate(const SimulateOptions& options) {
  if (options.run.parsed_placements().size() != 1)
    return fail(Status::InvalidInput("simulate runs one --placement (evaluate compares several)"));
  if (options.run.parsed_preemptions().size() != 1)
    return fail(Status::InvalidInput("simulate runs one --preemption (evaluate compares several)"));
  if (options.run.parsed_energy_rules().size() > 1)
    return fail(Status::InvalidInput("simulate runs one --energy-rule (evaluate compares several)"));
  auto inputs = load_inputs(options.run);
  if (!inputs.ok()) return fail(inputs.status());
  sim::EvaluationOptions evaluation = make_evaluation_options(options.run, *inputs);
  const bool report = !options.run.json_to_stdout();
  if (report) {
    print_inputs(stdout, *inputs, options.run, evaluation);
    std::fflush(stdout);
  }

  // A model as rlsched.yaml's run_time serves it.
  auto served = make_served_policy(options.policy, *inputs, evaluation.protocol);
  if (!served.ok()) return fail(served.status());
  EventLog events;
  if (!options.events.empty()) {
    if (Status opened = events.open(options.events, inputs->workload.jobs, inputs->cluster); !opened.ok())
      return fail(opened);
    evaluation.sim.observer = [&events](const sim::ScheduleEvent& e) { events.write(e); };
  }
  evaluation.sim.observer = also_hears(served->hears, evaluation.sim.observer);
  auto result = [&]() -> Result<sim::PolicyResult> {
    ProgressBar bar(options.policy);
    evaluation.progress = bar.callback();
    evaluation.keep_outcomes = !options.outcomes.empty();
    auto r = sim::evaluate_policy(inputs->workload, inputs->simulated_cluster(), *served->scorer, evaluation);
    evaluation.progress = nullptr;
    return r;
  }();
  if (!result.ok()) return fail(result.status());
  if (!options.events.empty())
    if (Status closed = events.close(); !closed.ok()) return fail(closed);
  if (!options.outcomes.empty()) {
    Status written = write_outcomes_csv(options.outcomes, inputs->workload.jobs, result->outcomes, inputs->cluster,
                                        result->energy ? &*result->energy : nullptr);
    if (!written.ok()) return fail(written);
  }

  if (report) print_details(stdout, *result);
  if (report && result->energy) print_energy(stdout, *result->energy);
  if (!options.run.json.empty()) {
    Status written = write_json(document_json(*inputs, options.run, evaluation, {*result}), options.run.json);
    if (!written.ok()) return fail(written);
  }
  return kExitOk;
}

}  // namespace

CommandRunner setup_simulate(CLI::App& app) {
  auto options = std::make_shared<SimulateOptions>();
  app.add_option("--policy", options->policy,
                 fmt::format("The policy to run (fcfs, sjf, wfp3, unicep, f1, multifactor, {})", kAreaRuleGrammar))
      ->type_name("NAME")
      ->required()
      ->check(policy_validator(/*list=*/false));
  CLI::Option* outcomes =
      app.add_option("--outcomes", options->outcomes, "Write one CSV row per job to this file (full protocol only)")
          ->type_name("CSV");
  CLI::Option* events =
      app.add_option("--events", options->events,
                     "Write the scheduler's events to this CSV: each start (main pass or backfill) with its nodes, "
                     "each backfill reservation with its expected start and nodes, each end and requeue "
                     "(full protocol only)")
          ->type_name("CSV");
  add_run_options(app, options->run, {outcomes, events});
  return [options] { return run_simulate(*options); };
}

}  // namespace rlsched::cli
