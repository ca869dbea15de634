// Loading what a run needs (workload trace, cluster) with errors that name the file, and turning the command line
// into the library's EvaluationOptions.
#pragma once

#include <optional>
#include <string>

#include "rlsched/cluster.h"
#include "rlsched/job.h"
#include "rlsched/plugin_config.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/evaluation.h"
#include "rlsched/sim/preemption.h"
#include "rlsched/status.h"
#include "run_options.h"

namespace rlsched::cli {

/// The built-in workload used without --trace, so that a fresh install can compare policies with no files at all.
inline constexpr std::size_t kSyntheticJobs = 10000;
inline constexpr int kSyntheticNodes = 256;
inline constexpr double kSyntheticLoad = 0.7;
inline constexpr std::uint64_t kSyntheticSeed = 1;
/// The QOS --urgent gives; it preempts kDefaultQos ("normal").
inline constexpr const char* kUrgentQos = "urgent";

struct Inputs {
  Workload workload;
  bool synthetic = false;
  std::string trace_label;  ///< the --trace path, or a description of the synthetic workload
  bool cluster_given = false;
  std::string cluster_label;  ///< the --cluster path, or where the machine comes from
  /// The machine the runs use: the --cluster one, or the one the workload implies under the chosen protocol.
  /// Used for the report, failure schedules and outcome names; evaluate_policy gets it only when given.
  Cluster cluster;
  /// What --urgent and --checkpoint did to the workload.
  sim::InjectionReport injected;
  /// The plugins' configuration the runs apply (--config, or the shipped example), and where it came from.
  config::PluginConfig plugin_config;
  std::string config_label;
  /// The checkpoint mode's rules: the config's preemption section.
  preemption::Policy preemption_policy;
  /// --energy: the config's energy section, its rule replaced by --energy-rule's first (evaluate sets each one).
  std::optional<energy::EnergyConfig> energy;
  std::size_t deferrable_jobs = 0;  ///< jobs --deferrable gave a deferrable QOS
  std::string deferrable_qos;       ///< the QOS --deferrable gave: the first one energy.deferrable names

  bool workload_has_accelerators() const {
    for (const Job& j : workload.jobs)
      if (j.accel.count > 0) return true;
    return false;
  }

  /// The full protocol runs on `cluster` as the config left it (its site weight, speeds), implied or given; the
  /// rlscheduler protocol takes the machine from the trace header unless one is given.
  bool simulate_on_cluster = false;
  /// What to pass to evaluate_policy (null: the library implies the machine itself).
  const Cluster* simulated_cluster() const { return simulate_on_cluster ? &cluster : nullptr; }
};

/// The plugins' rlsched.yaml at `path` (--config), or the shipped example when `path` is empty; `label` says which.
Result<config::PluginConfig> read_plugin_config(const std::string& path, std::string& label);

/// The configuration as the plugins apply it: score_scale is the site factor's scale (the simulator's
/// weights.site), the configured types' speeds and classes' speeds replace the cluster's, and each job gets the
/// first job class it matches (a trace's job name is matched as the job name).
void apply_plugin_config(const config::PluginConfig& config, Cluster& cluster, std::vector<Job>& jobs);

/// Reads the trace (or builds the synthetic workload, saying so on stderr) and the cluster.
/// \return the reader's error (which names file and line), or InvalidInput when no machine can be implied.
Result<Inputs> load_inputs(const RunOptions& options);

/// Protocol, backfill, bf_max_job_test, the failure schedule, preemption (the first --preemption mode; with
/// --urgent, QOS urgent preempts normal) and, with --energy, the meter and deferral (both inputs.energy, which must
/// outlive the options) for these inputs.
sim::EvaluationOptions make_evaluation_options(const RunOptions& options, const Inputs& inputs);

/// Settings for make_scorer: the multifactor scorer uses the simulated cluster's weights when it has any.
ScorerSettings scorer_settings(const Inputs& inputs);

}  // namespace rlsched::cli
