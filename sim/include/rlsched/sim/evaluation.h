// Judging a policy on a workload under a protocol: what `rlsched simulate` and `rlsched evaluate` run.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/job.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/energy.h"
#include "rlsched/sim/metrics.h"
#include "rlsched/sim/rlscheduler_compat.h"
#include "rlsched/sim/simulator.h"
#include "rlsched/status.h"

namespace rlsched::sim {

enum class Protocol {
  kFull,         ///< the whole workload through the Slurm model
  kRlScheduler,  ///< RLScheduler's 10 sequences of 1,024 jobs in its own simulator semantics (compat mode)
};

const char* to_string(Protocol protocol);
const char* to_string(Backfill backfill);
Result<Protocol> parse_protocol(const std::string& text);
Result<Backfill> parse_backfill(const std::string& text);

struct EvaluationOptions {
  Protocol protocol = Protocol::kFull;
  SimConfig sim;  ///< backfill, failures, ... (kFull); only sim.backfill applies to kRlScheduler
  CompatProtocol compat;
  bool keep_outcomes = false;  ///< fill PolicyResult::outcomes (kFull only)
  /// Meter the run's energy with this configuration (EnergyMeter, beside any sim.observer) and fill
  /// PolicyResult::energy, split by EnergyConfig::deferrable; nullptr: no meter. kFull only. Metering does not
  /// defer jobs: sim.energy does.
  const energy::EnergyConfig* energy = nullptr;
  Seconds energy_series_step = 3600;  ///< EnergyReport::series_step
  /// Share of work done (0..1), for progress bars.
  std::function<void(double)> progress;
};

struct PolicyResult {
  std::string policy;
  Protocol protocol = Protocol::kFull;
  Backfill backfill = Backfill::kEasy;
  Placement placement = Placement::kFastestFree;  ///< kFull only
  PreemptionMode preemption = PreemptionMode::kNone;  ///< kFull only
  /// kFull: metrics of the run. kRlScheduler: averages are means over sequences (every sequence has the same
  /// number of jobs, so also the mean over all jobs); percentiles and maxima are over all jobs of all sequences;
  /// utilization and makespan are means over sequences.
  Metrics metrics;
  std::vector<double> sequence_bsld;  ///< kRlScheduler: average bounded slowdown of each sequence
  SimCounters counters;               ///< kFull only
  std::vector<JobOutcome> outcomes;   ///< kFull with keep_outcomes: one per workload job, same order
  std::optional<EnergyReport> energy;  ///< with EvaluationOptions::energy
  double wall_seconds = 0;            ///< time the simulation took
};

/// The cluster a workload implies when none is given: SWF traces state their machine in the header (MaxNodes,
/// MaxProcs); otherwise one node per CPU of the largest job. Its priority is multifactor with the weights of
/// slurm_conf_examples/slurm.conf (PriorityWeights::Typical) plus the site factor at weights.site, as a site runs
/// Slurm with site_factor/rlsched. \return InvalidInput for accelerator workloads, which need an explicit cluster.
Result<Cluster> implied_cluster(const Workload& workload);

/// Offered load of a workload on a cluster: the accelerator-seconds its jobs ran (on the type the trace recorded)
/// over the cluster's accelerators times the submit span (first to last submit); CPU-seconds over CPUs for a
/// workload without accelerators. Jobs without a run time do not count.
double offered_load(const std::vector<Job>& jobs, const Cluster& cluster);

/// Stretches or compresses the submit times (keeping the first and the order) so that offered_load == `load`.
/// \return the factor applied to the gaps, or InvalidInput (load <= 0, fewer than two distinct submit times, no work).
Result<double> scale_to_load(std::vector<Job>& jobs, const Cluster& cluster, double load);

/// Runs one policy. `cluster` may be null: the implied cluster is used.
Result<PolicyResult> evaluate_policy(const Workload& workload, const Cluster* cluster, const Scorer& scorer,
                                     const EvaluationOptions& options);

/// A built-in synthetic workload (no trace needed): `jobs` jobs on a cluster of `nodes` one-CPU nodes, with
/// shapes after Lublin and Feitelson's model (a quarter serial, sizes mostly powers of two, run times log-uniform
/// with a long tail, users over-estimating their time limits) and Poisson arrivals at about `load` offered
/// utilisation. Deterministic for a given seed.
Workload synthetic_workload(std::size_t jobs, int nodes, double load, std::uint64_t seed);

}  // namespace rlsched::sim
