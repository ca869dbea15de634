#include "inputs.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>

#include <fmt/format.h>

#include <filesystem>

#include "example_config.h"
#include "report_table.h"
#include "rlsched/io/cluster_readers.h"
#include "rlsched/io/gavel_workload.h"
#include "rlsched/io/workload_readers.h"
#include "rlsched/plugin_config.h"
#include "rlsched/sim/energy.h"
#include "rlsched/sim/rlscheduler_compat.h"
#include "rlsched/sim/simulator.h"

namespace rlsched::cli {

namespace {

bool gavel_folder(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) &&
         std::filesystem::exists(std::filesystem::path(path) / "simulation_throughputs.json", ec);
}

// Nothing usable: say why, with the reader's first reasons, not only how many records were skipped.
std::string no_usable_jobs(const std::string& trace, const ReadReport& report) {
  std::string why = fmt::format("{}: no usable jobs ({} records, {} skipped)", trace, report.records, report.skipped);
  const std::string notes = read_notes(report);
  if (!notes.empty()) why += ":\n" + notes.substr(0, notes.size() - 1);
  return why;
}

// A Gavel workload brings measured speeds: they replace the speeds the cluster gives its k80, p100 and v100.
Result<Workload> load_gavel(const RunOptions& options, const io::ReadOptions& read, Inputs& inputs) {
  if (!inputs.cluster_given)
    return Status::InvalidInput(
        fmt::format("{}: a Gavel workload needs a cluster with k80, p100 and v100 GPUs (--cluster, e.g. "
                    "slurm_conf_examples/gavel-cluster.yaml)",
                    options.trace));
  io::GavelOptions gavel;
  gavel.any_of_pods = options.any_of;
  gavel.read = read;
  auto derived = io::read_gavel_workload(options.trace, gavel);
  if (!derived.ok()) return derived.status();
  if (Status s = io::use_measured_speeds(derived->types, inputs.cluster, options.cluster); !s.ok()) return s;
  std::set<std::string> classes;
  for (const AcceleratorType& t : derived->types)
    for (const auto& [name, speed] : t.class_speed) classes.insert(name);
  inputs.trace_label = fmt::format(
      "{} (Gavel msr_seed0 jobs, measured speeds of {} job classes{})", options.trace, classes.size(),
      options.any_of.empty()
          ? std::string(", any type")
          : fmt::format(", {} jobs restricted by the type sets of {}", derived->constrained, options.any_of));
  return std::move(derived->workload);
}

Result<Workload> load_workload(const RunOptions& options, Inputs& inputs) {
  if (options.trace.empty()) {
    inputs.synthetic = true;
    inputs.trace_label = fmt::format("built-in synthetic ({} jobs, {} nodes, load {}, seed {})", kSyntheticJobs,
                                     kSyntheticNodes, kSyntheticLoad, kSyntheticSeed);
    fmt::print(stderr,
               "no --trace: using the built-in synthetic workload ({} jobs, {} one-CPU nodes, load {}, seed {})\n",
               kSyntheticJobs, kSyntheticNodes, kSyntheticLoad, kSyntheticSeed);
    return sim::synthetic_workload(kSyntheticJobs, kSyntheticNodes, kSyntheticLoad, kSyntheticSeed);
  }
  inputs.trace_label = options.trace;
  io::ReadOptions read;
  read.strict = options.strict;
  auto workload =
      gavel_folder(options.trace) ? load_gavel(options, read, inputs) : io::read_workload(options.trace, read);
  if (!workload.ok()) return workload.status();
  if (!options.jobs.empty()) {
    const auto colon = options.jobs.find(':');
    const std::size_t first = std::stoull(options.jobs.substr(0, colon));
    const std::size_t count = std::stoull(options.jobs.substr(colon + 1));
    std::vector<Job>& jobs = workload->jobs;
    if (first >= jobs.size())
      return Status::InvalidInput(fmt::format("{}: --jobs starts at job {} but the trace has {} usable jobs",
                                              options.trace, first, jobs.size()));
    jobs.erase(jobs.begin() + static_cast<std::ptrdiff_t>(std::min(first + count, jobs.size())), jobs.end());
    jobs.erase(jobs.begin(), jobs.begin() + static_cast<std::ptrdiff_t>(first));
    inputs.trace_label += fmt::format(" (jobs {}..{})", first, first + jobs.size() - 1);
  }
  if (workload->jobs.empty()) return Status::InvalidInput(no_usable_jobs(options.trace, workload->report));
  if (!options.any_of.empty() && !gavel_folder(options.trace))
    return Status::InvalidInput("--any-of applies to a Gavel trace folder only");
  return workload;
}

// The machine evaluate_policy will use when no --cluster is given, so the report shows what is simulated.
Status imply_cluster(const RunOptions& options, Inputs& inputs) {
  if (options.parsed_protocol() == sim::Protocol::kRlScheduler) {
    auto compat = sim::prepare_compat_workload(inputs.workload);
    if (!compat.ok()) return compat.status();
    inputs.cluster = Cluster::Homogeneous(compat->nodes, compat->procs_per_node);
    inputs.cluster_label = "implied by the trace header (RLScheduler's machine)";
    return Status::Ok();
  }
  auto implied = sim::implied_cluster(inputs.workload);
  if (!implied.ok()) return implied.status();
  inputs.cluster = std::move(*implied);
  if (inputs.synthetic)
    inputs.cluster_label = "implied by the synthetic workload";
  else if (inputs.workload.max_nodes > 0)
    inputs.cluster_label = "implied by the trace header (MaxNodes, MaxProcs)";
  else
    inputs.cluster_label = "implied: one one-CPU node per CPU of the widest job";
  return Status::Ok();
}

// The plugins' rlsched.yaml, as the plugins apply it, on the inputs' cluster and workload.
Status apply_config_option(const RunOptions& options, Inputs& inputs) {
  auto parsed = read_plugin_config(options.config, inputs.config_label);
  if (!parsed.ok()) return parsed.status();
  inputs.plugin_config = std::move(*parsed);
  inputs.preemption_policy = inputs.plugin_config.preemption;
  apply_plugin_config(inputs.plugin_config, inputs.cluster, inputs.workload.jobs);
  return Status::Ok();
}

// --energy: the config's energy section must say what the cluster draws and what a kWh costs.
Status apply_energy_option(const RunOptions& options, Inputs& inputs) {
  if (!options.energy) return Status::Ok();
  energy::EnergyConfig energy = inputs.plugin_config.energy;
  const energy::PowerModel& power = energy.power;
  if (power.accelerators.empty() && power.node.busy_w <= 0 && power.node.idle_w <= 0 && power.suspended_w <= 0)
    return Status::InvalidInput(fmt::format(
        "--energy: {} has no energy.power (what nodes and accelerators draw; docs/energy.md)", inputs.config_label));
  if (energy.price.empty())
    return Status::InvalidInput(
        fmt::format("--energy: {} has no energy.price (a tariff; docs/energy.md)", inputs.config_label));
  if (const std::vector<energy::Rule> rules = options.parsed_energy_rules(); !rules.empty())
    energy.rule = rules.front();
  if (!options.deferrable.empty()) {
    for (const energy::DeferrableGroup& group : energy.deferrable)
      if (inputs.deferrable_qos.empty() && !group.qos.empty()) inputs.deferrable_qos = group.qos.front();
    if (inputs.deferrable_qos.empty())
      return Status::InvalidInput(
          fmt::format("--deferrable: {}'s energy.deferrable names no QOS, so there is none to give the drawn jobs",
                      inputs.config_label));
    const auto [share, seed] = options.parsed_deferrable();
    inputs.deferrable_jobs = sim::mark_deferrable(inputs.workload.jobs, share, seed, inputs.deferrable_qos, kUrgentQos,
                                                  options.deferrable_max_limit);
  }
  inputs.energy = std::move(energy);
  return Status::Ok();
}

}  // namespace

Result<config::PluginConfig> read_plugin_config(const std::string& path, std::string& label) {
  config::LoadConfigOptions trust;
  trust.require_private = false;  // read here, not run by slurmctld
  label = path.empty() ? fmt::format("{} (built in; no --config)", kExampleConfigName) : path;
  return path.empty() ? config::parse_plugin_config(kExampleConfig, kExampleConfigName)
                      : config::load_plugin_config(path, trust);
}

void apply_plugin_config(const config::PluginConfig& c, Cluster& cluster, std::vector<Job>& jobs) {
  cluster.priority.site = c.score_scale;
  for (AcceleratorType& t : cluster.accelerator_types) {
    const AcceleratorType* configured = c.find_type(t.name, t.gres);
    if (!configured) continue;
    t.speed = configured->speed;
    for (const auto& [job_class, speed] : configured->class_speed) t.class_speed[job_class] = speed;
  }
  if (c.job_classes.empty()) return;
  for (Job& j : jobs) {
    std::string job_class = c.classify(j.job_class, j.account, j.user);  // a trace's class is its job name
    if (!job_class.empty()) j.job_class = std::move(job_class);
  }
}

Result<Inputs> load_inputs(const RunOptions& options) {
  Inputs inputs;
  // The cluster first: a typo in its path should not wait for a large trace to load.
  if (!options.cluster.empty()) {
    auto cluster = io::read_cluster(options.cluster);
    if (!cluster.ok()) return cluster.status();
    inputs.cluster = std::move(*cluster);
    inputs.cluster_given = true;
    inputs.cluster_label = options.cluster;
  }
  auto workload = load_workload(options, inputs);
  if (!workload.ok()) return workload.status();
  inputs.workload = std::move(*workload);
  if (!inputs.cluster_given) {
    Status status = imply_cluster(options, inputs);
    if (!status.ok()) return status;
  }
  if (options.recent_share < 1.0) {
    inputs.workload.jobs = take_recent(inputs.workload, options.recent_share).jobs;
    if (inputs.workload.jobs.empty())
      return Status::InvalidInput(fmt::format("a held-back share of {} leaves no job to run", options.recent_share));
    inputs.trace_label += fmt::format(" (held back: the last {:.0f}% by submit time, {} jobs)",
                                      options.recent_share * 100, inputs.workload.jobs.size());
  }
  if (options.load > 0 || options.load_factor != 1) {
    const double before = sim::offered_load(inputs.workload.jobs, inputs.cluster);
    const double load = (options.load > 0 ? options.load : before) * options.load_factor;
    const std::string asked = options.load_factor == 1 ? fmt::format("--load {}", options.load)
                              : options.load > 0
                                  ? fmt::format("--load {} --load-factor {}", options.load, options.load_factor)
                                  : fmt::format("--load-factor {}", options.load_factor);
    // Without --load, a workload offering no load (no work, or every job submitted at once) has none to multiply.
    auto factor = load > 0 ? sim::scale_to_load(inputs.workload.jobs, inputs.cluster, load)
                           : Result<double>(Status::InvalidInput("the workload offers no load to multiply (no work, "
                                                                 "or all its jobs arrive at once)"));
    if (!factor.ok()) return Status::InvalidInput(fmt::format("{}: {}", asked, factor.status().message()));
    inputs.trace_label += fmt::format("; arrivals scaled x{:.3g} from load {:.3g} to {:.3g}{}", *factor, before, load,
                                      options.load_factor == 1 ? "" : fmt::format(" ({})", asked));
  }
  Status config = apply_config_option(options, inputs);
  if (!config.ok()) return config;
  inputs.simulate_on_cluster = inputs.cluster_given || options.parsed_protocol() == sim::Protocol::kFull;
  // After the time scaling: which jobs are urgent and which checkpoint does not depend on it.
  const auto [urgent_share, seed] = options.parsed_urgent();
  if (urgent_share > 0) inputs.injected.urgent = sim::mark_urgent(inputs.workload.jobs, urgent_share, seed, kUrgentQos);
  if (const auto checkpoint = options.parsed_checkpoint())
    inputs.injected.checkpointable =
        sim::declare_checkpoints(inputs.workload.jobs, *checkpoint, options.checkpointable, seed, kUrgentQos);
  if (Status energy = apply_energy_option(options, inputs); !energy.ok()) return energy;
  return inputs;
}

sim::EvaluationOptions make_evaluation_options(const RunOptions& options, const Inputs& inputs) {
  sim::EvaluationOptions evaluation;
  evaluation.protocol = options.parsed_protocol();
  evaluation.sim.backfill = options.parsed_backfill();
  evaluation.sim.bf_max_job_test = options.bf_max_job_test;
  if (options.bf_phase >= 0) evaluation.sim.backfill_phase = options.bf_phase;
  if (options.main_pass_delay >= 0) evaluation.sim.main_pass_delay = options.main_pass_delay;
  if (options.end_pass_delay >= 0) evaluation.sim.end_pass_delay = options.end_pass_delay;
  evaluation.sim.placement.mode = options.parsed_placements().front();
  evaluation.sim.placement.partitions = options.parsed_placement_partitions();
  const placement::Options rules = config::placement_options(inputs.plugin_config);
  evaluation.sim.placement.slack = options.placement_slack > 0 ? options.placement_slack : rules.slack;
  evaluation.sim.placement.gres_equivalence = rules.gres_equivalence;
  evaluation.sim.placement.gres_portable_classes = rules.gres_portable_classes;
  evaluation.sim.requeue_delay = options.requeue_delay;
  evaluation.sim.preemption.mode = options.parsed_preemptions().front();
  evaluation.sim.preemption.restart_overhead = options.restart_overhead;
  evaluation.sim.preemption.policy = inputs.preemption_policy;
  if (!options.urgent.empty()) evaluation.sim.preemption.rules = {sim::PreemptRule{kUrgentQos, {sim::kDefaultQos}}};
  if (inputs.energy) {
    evaluation.energy = &*inputs.energy;
    evaluation.sim.energy = &*inputs.energy;
  }
  if (options.failures_mtbf_hours > 0 && !inputs.workload.jobs.empty()) {
    const auto [first, last] = sim::workload_span(inputs.workload.jobs);
    evaluation.sim.failures = sim::random_failures(inputs.cluster, first, last, options.failures_mtbf_hours,
                                                   options.failures_mttr_hours, options.seed);
  }
  return evaluation;
}

ScorerSettings scorer_settings(const Inputs& inputs) {
  ScorerSettings settings;
  if (inputs.cluster.priority.multifactor_enabled()) settings.multifactor = inputs.cluster.priority;
  return settings;
}

}  // namespace rlsched::cli
