// `rlsched evaluate`: several policies (and placements, preemption modes) on one workload, compared in one table;
// with --candidate, a verdict on a new model.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "evaluation_report.h"
#include "inputs.h"
#include "progress.h"
#include "report_energy.h"
#include "report_json.h"
#include "report_table.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/self_tuning.h"
#include "run_options.h"
#include "served_policy.h"
#include "verdict.h"

namespace rlsched::cli {

namespace {

struct EvaluateOptions {
  RunOptions run;
  std::string policies;
  std::string candidate;  ///< model file judged for promotion
  std::string current;    ///< the model in service
  double held_back = -1;  ///< share of the last jobs (by submit) to evaluate on; <0: 0.2 with --candidate, else all
  std::string report;     ///< folder for report.json, outcomes, figures and index.html; empty: none
};

/// What a self-tuning policy chose, on stderr (stdout may be --json's).
void print_self_tuning(const sim::SelfTuningScorer& scorer, bool report) {
  if (!report) return;
  std::vector<std::size_t> times(scorer.candidates().size(), 0);
  for (const auto& choice : scorer.choices()) ++times[choice.candidate];
  fmt::print(stderr, "{}: chose {} times, switched {} times; in service:", scorer.name(), scorer.replays(),
             scorer.choices().size() - 1);
  for (std::size_t k = 0; k < times.size(); ++k)
    if (times[k] > 0) fmt::print(stderr, " {} x{}", scorer.candidates()[k], times[k]);
  fmt::print(stderr, "\n");
}

int run_evaluate(const EvaluateOptions& options) {
  RunOptions run = options.run;
  run.recent_share = options.held_back >= 0 ? options.held_back : options.candidate.empty() ? 1.0 : 0.2;
  auto inputs = load_inputs(run);
  if (!inputs.ok()) return fail(inputs.status());
  sim::EvaluationOptions evaluation = make_evaluation_options(options.run, *inputs);
  if (!options.report.empty()) {
    if (evaluation.protocol != sim::Protocol::kFull)
      return fail(Status::InvalidInput("--report needs --protocol full: the figures are drawn from per-job outcomes"));
    evaluation.keep_outcomes = true;
  }
  const bool report = !options.run.json_to_stdout();  // --json - owns stdout
  if (report) {
    print_inputs(stdout, *inputs, options.run, evaluation);
    std::fflush(stdout);  // show what is being run before the (possibly long) runs start
  }

  std::vector<std::string> names;
  const std::string candidate = options.candidate.empty() ? "" : "model:" + options.candidate;
  const std::string current = options.current.empty() ? "" : "model:" + options.current;
  for (const std::string& model : {candidate, current})
    if (!model.empty()) names.push_back(model);
  for (const std::string& name :
       expand_policies(options.policies.empty() && !candidate.empty() ? "all" : options.policies))
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  const std::vector<sim::Placement> placements = options.run.parsed_placements();
  const std::vector<sim::PreemptionMode> preemptions = options.run.parsed_preemptions();
  // --energy-rule's rules, each on a copy of the energy section (the config's own rule without the option).
  std::vector<energy::EnergyConfig> energies;
  if (inputs->energy) {
    const std::vector<energy::Rule> rules = options.run.parsed_energy_rules();
    for (const energy::Rule rule : rules.empty() ? std::vector<energy::Rule>{inputs->energy->rule} : rules) {
      energies.push_back(*inputs->energy);
      energies.back().rule = rule;
    }
  }
  const std::size_t rule_runs = std::max<std::size_t>(energies.size(), 1);
  const std::size_t runs = names.size() * placements.size() * preemptions.size() * rule_runs;
  std::vector<sim::PolicyResult> results;
  struct Setup {
    sim::Placement placement;
    sim::PreemptionMode preemption;
    const energy::EnergyConfig* energy;
  };
  std::vector<Setup> setups;  // every placement under every mode and energy rule
  for (const sim::Placement placement : placements)
    for (const sim::PreemptionMode preemption : preemptions)
      for (std::size_t e = 0; e < rule_runs; ++e)
        setups.push_back({placement, preemption, energies.empty() ? nullptr : &energies[e]});
  for (const auto& [placement, preemption, energy] : setups) {
    evaluation.sim.placement.mode = placement;
    evaluation.sim.preemption.mode = preemption;
    evaluation.energy = energy;
    evaluation.sim.energy = energy;
    for (const std::string& name : names) {
      // A self-tuning policy replays the run's own past, so it needs the run's jobs, cluster and config, and to
      // hear of every job's start and end; a policy on predicted run times hears of them too (served_policy.h).
      sim::SelfTuningScorer* self_tuning = nullptr;
      std::function<void(const sim::ScheduleEvent&)> hears;
      std::unique_ptr<Scorer> scorer;
      if (sim::is_self_tuning_spec(name)) {
        if (evaluation.protocol != sim::Protocol::kFull)
          return fail(Status::InvalidInput(fmt::format("policy '{}' runs under --protocol full only", name)));
        auto settings = sim::parse_self_tuning(name, scorer_settings(*inputs));
        if (!settings.ok()) return fail(settings.status());
        auto made = sim::SelfTuningScorer::Make(inputs->cluster, inputs->workload.jobs, evaluation.sim,
                                                std::move(*settings), scorer_settings(*inputs));
        if (!made.ok()) return fail(made.status());
        self_tuning = made->get();
        hears = [self_tuning](const sim::ScheduleEvent& e) { self_tuning->observe(e); };
        scorer = std::move(*made);
      } else {
        auto served = make_served_policy(name, *inputs, evaluation.protocol);
        if (!served.ok()) return fail(served.status());
        scorer = std::move(served->scorer);
        hears = std::move(served->hears);
      }
      const auto observer = evaluation.sim.observer;
      evaluation.sim.observer = also_hears(hears, observer);
      std::string label = placements.size() > 1 ? fmt::format("{} / {}", name, sim::to_string(placement)) : name;
      if (preemptions.size() > 1) label += fmt::format(" / {}", sim::to_string(preemption));
      if (energies.size() > 1) label += fmt::format(" / {}", energy::to_string(energy->rule));
      // The bar lives only for the run, so it is erased before any error message is printed.
      auto result = [&] {
        ProgressBar bar(runs > 1 ? fmt::format("{} [{}/{}]", label, results.size() + 1, runs) : label);
        evaluation.progress = bar.callback();
        auto r = sim::evaluate_policy(inputs->workload, inputs->simulated_cluster(), *scorer, evaluation);
        evaluation.progress = nullptr;
        return r;
      }();
      evaluation.sim.observer = observer;
      if (!result.ok()) return fail(result.status());
      if (self_tuning != nullptr) print_self_tuning(*self_tuning, report);
      results.push_back(std::move(*result));
    }
  }

  std::optional<Verdict> verdict;
  if (!candidate.empty()) {
    std::vector<sim::PolicyResult> first_placement;
    for (const sim::PolicyResult& r : results)
      if (r.placement == placements.front() && r.preemption == preemptions.front() &&
          (!r.energy || energies.empty() || r.energy->deferral == energies.front().rule))
        first_placement.push_back(r);
    verdict = decide(first_placement, candidate, current);
  }
  if (report) {
    print_comparison(stdout, results);
    if (inputs->workload_has_accelerators()) print_placement_comparison(stdout, results);
    if (inputs->injected.urgent > 0) print_preemption_comparison(stdout, results);
    if (inputs->energy) print_energy_comparison(stdout, results);
    if (verdict) fmt::print("\n{}\n", verdict->text);
  }
  if (!options.run.json.empty() || !options.report.empty()) {
    auto doc = document_json(*inputs, options.run, evaluation, results);
    if (verdict) doc["verdict"] = verdict_json(*verdict);
    if (!options.run.json.empty()) {
      Status written = write_json(doc, options.run.json);
      if (!written.ok()) return fail(written);
    }
    if (!options.report.empty()) {
      Status written = write_evaluation_report(options.report, doc, inputs->workload.jobs, results, inputs->cluster);
      if (!written.ok()) return fail(written);
      if (report) fmt::print("\nreport: {}/index.html\n", options.report);
    }
  }
  return kExitOk;
}

}  // namespace

CommandRunner setup_evaluate(CLI::App& app) {
  auto options = std::make_shared<EvaluateOptions>();
  auto* policies = app.add_option("--policies", options->policies,
                                   "Comma-separated policies to compare (e.g. fcfs,sjf,f1), or 'all' for every "
                                   "built-in one; with --candidate: the heuristics beside it, the best of which the candidate "
                                   "must also beat (default: all)")
                      ->type_name("LIST")
                      ->check(policy_validator(/*list=*/true));
  auto* candidate = app.add_option("--candidate", options->candidate,
                                   "A new model to judge: ends with a verdict, PROMOTE only when it beats the current model and the best "
                                   "heuristic of the run, else KEEP (docs/cli.md)")
                        ->type_name("MODEL");
  app.add_option("--current", options->current, "The model in service, which the candidate must beat")
      ->type_name("MODEL")
      ->needs(candidate);
  app.add_option("--held-back", options->held_back,
                 "Evaluate on the last SHARE of the trace's jobs by submit time (default 0.2 with --candidate: what "
                 "rlsched train holds back; else 1, all); --load then scales these jobs")
      ->type_name("SHARE")
      ->check(CLI::Range(0.0, 1.0).description(""));
  app.add_option("--report", options->report,
                 "Also write report.json, per-job outcomes, PNG figures (wait CDF, queue length and utilisation over "
                 "time, placements, preemptions; with --energy price against load over time) and index.html into "
                 "this folder")
      ->type_name("DIR");
  app.callback([policies, candidate] {
    if (policies->count() == 0 && candidate->count() == 0) throw CLI::RequiredError("--policies or --candidate");
  });
  add_run_options(app, options->run);
  return [options] { return run_evaluate(*options); };
}

}  // namespace rlsched::cli
