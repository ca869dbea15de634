#include "run_options.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "rlsched/area_rule.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/energy.h"
#include "rlsched/sim/predicted_run_time.h"
#include "rlsched/sim/self_tuning.h"
#include "text/text.h"

namespace rlsched::cli {

namespace {

// Adapts the library's own parse_* functions so that the accepted words and messages stay in one place.
template <typename Parse>
CLI::Validator parse_validator(Parse parse) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        auto parsed = parse(text);
        return parsed.ok() ? std::string() : parsed.status().message();
      },
      "");  // the option's type name lists the choices
}

/// SHARE[:SEED]: a share in (0, 1] of `what` and an optional whole-number seed.
Result<std::pair<double, std::uint64_t>> parse_share_seed(const std::string& text, const char* what) {
  const std::size_t colon = text.find(':');
  const std::string share_text = text.substr(0, colon);
  const std::string seed_text = colon == std::string::npos ? "1" : text.substr(colon + 1);
  char* end = nullptr;
  const double share = std::strtod(share_text.c_str(), &end);
  if (share_text.empty() || *end != '\0' || !(share > 0 && share <= 1))
    return Status::InvalidInput(
        fmt::format("'{}': SHARE must be a number in (0, 1], the share of {} (e.g. 0.1 or 0.1:7)", text, what));
  if (seed_text.empty() || seed_text.find_first_not_of("0123456789") != std::string::npos || seed_text.size() > 19)
    return Status::InvalidInput(fmt::format("'{}': SEED after the colon must be a whole number (e.g. 0.1:7)", text));
  return std::make_pair(share, static_cast<std::uint64_t>(std::stoull(seed_text)));
}

/// --urgent SHARE[:SEED].
Result<std::pair<double, std::uint64_t>> parse_urgent(const std::string& text) {
  return parse_share_seed(text, "short jobs made urgent");
}

/// --deferrable SHARE[:SEED].
Result<std::pair<double, std::uint64_t>> parse_deferrable(const std::string& text) {
  return parse_share_seed(text, "jobs made deferrable");
}

/// --checkpoint interval=30m,cost=90s: the job comment's declaration (rlsched/preemption.h), prefix optional.
Result<preemption::Checkpoint> parse_checkpoint(const std::string& text) {
  const std::string word = text.rfind("checkpoint:", 0) == 0 ? text : "checkpoint:" + text;
  if (word.find_first_of(" \t") != std::string::npos)
    return Status::InvalidInput(fmt::format("'{}': no spaces (e.g. interval=30m,cost=90s)", text));
  auto parsed = preemption::parse_checkpoint_comment(word);
  if (!parsed.ok()) {  // the message names the sbatch option; here the word is an rlsched option's value
    const std::string message = parsed.status().message();
    const std::string sbatch = "--comment ";
    return Status::InvalidInput(message.rfind(sbatch, 0) == 0 ? message.substr(sbatch.size()) : message);
  }
  return **parsed;
}

}  // namespace

std::vector<sim::PreemptionMode> RunOptions::parsed_preemptions() const {
  std::vector<sim::PreemptionMode> out;
  for (const std::string& name : text::split_names(preemption))
    if (auto m = sim::parse_preemption_mode(name); m.ok() && std::find(out.begin(), out.end(), *m) == out.end())
      out.push_back(*m);
  return out;
}

std::pair<double, std::uint64_t> RunOptions::parsed_urgent() const {
  if (urgent.empty()) return {0.0, 1};
  return *parse_urgent(urgent);
}

std::pair<double, std::uint64_t> RunOptions::parsed_deferrable() const {
  if (deferrable.empty()) return {0.0, 1};
  return *parse_deferrable(deferrable);
}

std::vector<energy::Rule> RunOptions::parsed_energy_rules() const {
  std::vector<energy::Rule> out;
  for (const std::string& name : text::split_names(energy_rule))
    if (auto r = sim::parse_energy_rule(name); r.ok() && std::find(out.begin(), out.end(), *r) == out.end())
      out.push_back(*r);
  return out;
}

std::optional<preemption::Checkpoint> RunOptions::parsed_checkpoint() const {
  if (checkpoint.empty()) return std::nullopt;
  return *parse_checkpoint(checkpoint);
}

std::vector<sim::Placement> RunOptions::parsed_placements() const {
  std::vector<sim::Placement> out;
  for (const std::string& name : text::split_names(placement))
    if (auto p = sim::parse_placement(name); p.ok() && std::find(out.begin(), out.end(), *p) == out.end())
      out.push_back(*p);
  return out;
}

std::vector<std::string> RunOptions::parsed_placement_partitions() const {
  return text::split_names(placement_partitions);
}

namespace {

/// Why `name` is not a policy the scorers can build (a rule of thumb, an area rule, a model file, any of them on
/// predicted run times; with `list`, evaluate's self-tuning too), or "" when it is one. `rule`: the RULE of
/// predicted:RULE, which is none of the last three.
std::string policy_error(const std::string& name, bool list, bool rule = false) {
  std::vector<std::string> known = scorer_names();
  if (list && !rule) known.push_back("all");
  if (name.rfind("model:", 0) == 0 && name.size() > 6) return {};  // a model file: checked when loaded
  if (list && !rule && sim::is_self_tuning_spec(name)) {           // evaluate's: it replays the run's own jobs
    if (auto settings = sim::parse_self_tuning(name); !settings.ok()) return settings.status().message();
    return {};
  }
  if (!rule && sim::is_predicted_spec(name))  // any rule a scorer builds, on predicted run times
    return policy_error(std::string(sim::predicted_rule(name)), list, true);
  if (is_area_rule_spec(name)) {
    if (auto parsed = parse_area_rule(name); !parsed.ok()) return parsed.status().message();
    return {};
  }
  if (std::find(known.begin(), known.end(), name) == known.end())
    return fmt::format("unknown policy '{}' (known: {}, model:PATH, {}, {}RULE{})", name, fmt::join(known, ", "),
                       kAreaRuleGrammar, sim::kPredictedPrefix,
                       list ? fmt::format(", {}[:P1+P2+...]", sim::kSelfTuningName) : "");
  return {};
}

}  // namespace

CLI::Validator policy_validator(bool list) {
  return CLI::Validator(
      [list](std::string& text) -> std::string {
        const std::vector<std::string> names = list ? text::split_names(text) : std::vector<std::string>{text};
        if (names.empty())
          return fmt::format("no policy given (known: {}{})", fmt::join(scorer_names(), ", "), list ? ", all" : "");
        for (const std::string& name : names)
          if (std::string why = policy_error(name, list); !why.empty()) return why;
        return {};
      },
      "");  // the option's type name already says NAME or LIST
}

std::vector<std::string> expand_policies(const std::string& text) {
  std::vector<std::string> names;
  for (const std::string& part : text::split_names(text)) {
    const std::vector<std::string> expanded = part == "all" ? scorer_names() : std::vector<std::string>{part};
    for (const std::string& name : expanded)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

void add_run_options(CLI::App& app, RunOptions& options, std::vector<CLI::Option*> extra_full_only) {
  app.add_option("--trace", options.trace,
                 "Workload trace: SWF (.swf, .swf.gz), sacct --parsable2 output, Alibaba pod CSV, or a folder of "
                 "Gavel traces and throughputs (docs/placement.md); default: a built-in synthetic workload")
      ->type_name("FILE");
  app.add_option("--jobs", options.jobs,
                 "Only jobs FIRST..FIRST+COUNT-1 of the trace (0-based, file order), e.g. 300000:50000")
      ->type_name("FIRST:COUNT")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const auto colon = text.find(':');
            if (colon == std::string::npos || colon == 0 || colon + 1 == text.size() ||
                text.find_first_not_of("0123456789:") != std::string::npos ||
                text.find(':', colon + 1) != std::string::npos)
              return "expected FIRST:COUNT with whole numbers, e.g. 300000:50000";
            return {};
          },
          ""));
  app.add_option("--cluster", options.cluster,
                 "Cluster description: rlsched YAML (*.yaml) or slurm.conf (gres.conf beside it is read too); "
                 "default: the cluster the trace implies")
      ->type_name("FILE");
  app.add_option("--backfill", options.backfill,
                 "Backfill: easy (one reservation per partition), slurm (sched/backfill's cycle as slurmctld runs "
                 "it, with the cluster's bf_interval, bf_resolution, bf_max_job_test) or none")
      ->type_name("easy|slurm|none")
      ->check(parse_validator(sim::parse_backfill))
      ->capture_default_str();
  app.add_option("--protocol", options.protocol,
                 "full: the whole workload through the Slurm model; rlscheduler: RLScheduler's 10 sequences of "
                 "1,024 jobs")
      ->type_name("full|rlscheduler")
      ->check(parse_validator(sim::parse_protocol))
      ->capture_default_str();
  app.add_flag("--strict", options.strict, "Fail on the first malformed trace record instead of skipping it");
  CLI::Option* mtbf = app.add_option("--failures-mtbf", options.failures_mtbf_hours,
                                     "Random node failures: mean time between failures per node, hours")
                          ->type_name("HOURS")
                          ->check(CLI::PositiveNumber);
  CLI::Option* mttr =
      app.add_option("--failures-mttr", options.failures_mttr_hours, "Mean time to repair a failed node, hours")
          ->type_name("HOURS")
          ->check(CLI::PositiveNumber)
          ->capture_default_str()
          ->needs(mtbf);
  CLI::Option* seed = app.add_option("--seed", options.seed, "Seed of the failure schedule")
                          ->type_name("N")
                          ->capture_default_str()
                          ->needs(mtbf);
  CLI::Option* bf_max = app.add_option("--bf-max-job-test", options.bf_max_job_test,
                                       "Pending jobs tried per backfill pass (Slurm bf_max_job_test); 0 = all")
                            ->type_name("N")
                            ->check(CLI::NonNegativeNumber)
                            ->capture_default_str();
  CLI::Option* bf_phase =
      app.add_option("--bf-phase", options.bf_phase,
                     "With --backfill slurm: seconds after the first submit at which a backfill cycle runs (the "
                     "cycles' phase on the bf_interval grid, e.g. slurmctld's in a replay); default 1")
          ->type_name("S")
          ->check(CLI::NonNegativeNumber);
  CLI::Option* main_pass_delay =
      app.add_option("--main-pass-delay", options.main_pass_delay,
                     "With --backfill slurm: seconds from a submit to the main pass it asks for (slurmctld's "
                     "background thread runs it on its next tick, at most once per batch_sched_delay); default 1")
          ->type_name("S")
          ->check(CLI::NonNegativeNumber);
  CLI::Option* end_pass_delay =
      app.add_option("--end-pass-delay", options.end_pass_delay,
                     "With --backfill slurm: seconds from a job's end to the main pass it asks for (slurmctld runs "
                     "it from the RPC that reports the end); default 0")
          ->type_name("S")
          ->check(CLI::NonNegativeNumber);
  CLI::Option* placement =
      app.add_option("--placement", options.placement,
                     "How a job allowed several accelerator types gets one: fastest-free, first-fit, recorded, fastest "
                     "or predictive (job_submit/rlsched's decision); evaluate compares a comma-separated list")
          ->type_name("LIST")
          ->check(CLI::Validator(
              [](std::string& text) -> std::string {
                const std::vector<std::string> names = text::split_names(text);
                if (names.empty()) return "no placement given";
                for (const std::string& name : names)
                  if (auto p = sim::parse_placement(name); !p.ok()) return p.status().message();
                return {};
              },
              ""))
          ->capture_default_str();
  CLI::Option* placement_partitions =
      app.add_option("--placement-partitions", options.placement_partitions,
                     "Partitions a placed job that names none may go to (rlsched.yaml placement.partitions); "
                     "default: those it is eligible for")
          ->type_name("LIST");
  CLI::Option* placement_slack =
      app.add_option("--placement-slack", options.placement_slack,
                     "Predictive placement keeps every partition where the job, started when the earlier of it and "
                     "the best frees, finishes within this factor of the best's predicted completion (rlsched.yaml "
                     "placement.slack; 1: the best and every type at least as fast); default: the config's")
          ->type_name("FACTOR")
          ->check(CLI::Range(1.0, 10.0));
  app.add_option("--any-of", options.any_of,
                 "With a Gavel trace folder: Alibaba pod CSV whose gpu_spec sets restrict the jobs' types "
                 "(docs/placement.md)")
      ->type_name("CSV");
  app.add_option("--load", options.load,
                 "Scale the arrival times so that the offered load (accelerator- or CPU-seconds over capacity and "
                 "submit span) is this")
      ->type_name("RHO")
      ->check(CLI::PositiveNumber);
  app.add_option("--load-factor", options.load_factor,
                 "Multiply the offered load (the trace's own, or --load's) by this, compressing the arrival times by "
                 "it: the same jobs a little busier or quieter (bench/policy_protocol.py --load-factors)")
      ->type_name("F")
      ->check(CLI::PositiveNumber);
  CLI::Option* preemption =
      app.add_option(
             "--preemption", options.preemption,
             "Preemption: none, requeue (Slurm's preempt/qos, PreemptMode=REQUEUE: victims restart from scratch) "
             "or checkpoint (preempt/rlsched: checkpointable victims, grace, resume); evaluate compares a "
             "comma-separated list. Needs --urgent (docs/preemption.md)")
          ->type_name("LIST")
          ->check(CLI::Validator(
              [](std::string& text) -> std::string {
                const std::vector<std::string> names = text::split_names(text);
                if (names.empty()) return "no preemption mode given (known: none, requeue, checkpoint)";
                for (const std::string& name : names)
                  if (auto m = sim::parse_preemption_mode(name); !m.ok()) return m.status().message();
                return {};
              },
              ""))
          ->capture_default_str();
  CLI::Option* urgent =
      app.add_option(
             "--urgent", options.urgent,
             "Make a seeded random SHARE of the short jobs (recorded run <= 2 h) QOS urgent, which queues first "
             "and may preempt QOS normal (every other job); SEED defaults to 1")
          ->type_name("SHARE[:SEED]")
          ->check(parse_validator(parse_urgent));
  CLI::Option* checkpoint =
      app.add_option("--checkpoint", options.checkpoint,
                     "Long jobs (time limit above the interval, not urgent) declare this checkpoint, as "
                     "sbatch --comment=checkpoint:interval=30m,cost=90s does")
          ->type_name("interval=D,cost=D")
          ->check(parse_validator(parse_checkpoint));
  CLI::Option* checkpointable = app.add_option("--checkpointable", options.checkpointable,
                                               "Share of those long jobs that declare it (seeded with --urgent's SEED)")
                                    ->type_name("SHARE")
                                    ->check(CLI::Range(0.0, 1.0).description(""))
                                    ->capture_default_str()
                                    ->needs(checkpoint);
  CLI::Option* restart_overhead =
      app.add_option("--restart-overhead", options.restart_overhead,
                     "Seconds of extra run time a job pays when it resumes from a checkpoint")
          ->type_name("SECONDS")
          ->check(CLI::NonNegativeNumber)
          ->capture_default_str();
  CLI::Option* requeue_delay =
      app.add_option("--requeue-delay", options.requeue_delay,
                     "Seconds before a requeued job (node failure, preemption) is eligible again")
          ->type_name("SECONDS")
          ->check(CLI::NonNegativeNumber)
          ->capture_default_str();
  app.add_option("--config,--preemption-config", options.config,
                 "The plugins' rlsched.yaml, applied as site_factor/rlsched, job_submit/rlsched and preempt/rlsched "
                 "apply it: score_scale is the site factor's weight beside the cluster's multifactor weights, its "
                 "accelerator types' speeds and job classes set the speeds, its preemption section rules the "
                 "checkpoint mode. Default: the shipped slurm_conf_examples/rlsched.yaml (the report says so)")
      ->type_name("rlsched.yaml")
      ->check(CLI::ExistingFile);
  CLI::Option* energy =
      app.add_flag("--energy", options.energy,
                   "Meter each run's energy, electricity cost and carbon with the config's energy section (power "
                   "model, price, carbon), and defer deferrable jobs as job_submit/rlsched does (docs/energy.md)");
  CLI::Option* energy_rule =
      app.add_option("--energy-rule", options.energy_rule,
                     "Replace the config's energy.rule: none (meter only), cheapest-window or least-cost; evaluate "
                     "compares a comma-separated list")
          ->type_name("LIST")
          ->check(CLI::Validator(
              [](std::string& text) -> std::string {
                const std::vector<std::string> names = text::split_names(text);
                if (names.empty()) return "no energy rule given (known: none, cheapest-window, least-cost)";
                for (const std::string& name : names)
                  if (auto r = sim::parse_energy_rule(name); !r.ok()) return r.status().message();
                return {};
              },
              ""))
          ->needs(energy);
  CLI::Option* deferrable =
      app.add_option("--deferrable", options.deferrable,
                     "Give a seeded random SHARE of the jobs (each drawn alone, in trace order; not those --urgent "
                     "made urgent) the first QOS the config's energy.deferrable names; SEED defaults to 1")
          ->type_name("SHARE[:SEED]")
          ->check(parse_validator(parse_deferrable))
          ->needs(energy);
  CLI::Option* deferrable_max_limit =
      app.add_option("--deferrable-max-limit", options.deferrable_max_limit,
                     "--deferrable draws only among jobs whose time limit is at most this many seconds (exploratory "
                     "runs are the short ones); 0: among all")
          ->type_name("SECONDS")
          ->check(CLI::NonNegativeNumber)
          ->needs(deferrable);
  std::vector<CLI::Option*> full_only = std::move(extra_full_only);
  full_only.insert(full_only.end(), {mtbf,
                                     mttr,
                                     seed,
                                     bf_max,
                                     bf_phase,
                                     main_pass_delay,
                                     end_pass_delay,
                                     placement,
                                     placement_partitions,
                                     placement_slack,
                                     preemption,
                                     urgent,
                                     checkpoint,
                                     checkpointable,
                                     restart_overhead,
                                     requeue_delay,
                                     energy,
                                     energy_rule,
                                     deferrable,
                                     deferrable_max_limit});
  app.add_option("--json", options.json, "Write results as JSON to this file ('-': stdout, instead of the report)")
      ->type_name("OUT");

  // Under rlscheduler these would be silently ignored by the compat simulator, so say so instead.
  app.parse_complete_callback([&options, full_only, urgent] {
    const std::vector<sim::PreemptionMode> modes = options.parsed_preemptions();
    const bool preempting =
        std::any_of(modes.begin(), modes.end(), [](sim::PreemptionMode m) { return m != sim::PreemptionMode::kNone; });
    if (urgent->count() == 0 && preempting)
      throw CLI::ValidationError("--preemption", "needs urgent jobs to preempt for: add --urgent SHARE[:SEED]");
    if (options.parsed_protocol() != sim::Protocol::kRlScheduler) return;
    for (const CLI::Option* option : full_only)
      if (option->count() > 0)
        throw CLI::ValidationError(option->get_name(), "applies to --protocol full only, not rlscheduler");
  });
}

}  // namespace rlsched::cli
