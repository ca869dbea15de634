// What `rlsched explain` and `rlsched estimate` read: the live cluster (libslurm), the policy in service (rlsched.yaml
// read as the plugins read it, the scorer made by the plugins' Engine), and the machine the forward simulation runs
// on (the live slurm.conf, read by the CLI's --cluster reader). The one call of sim::forecast is here too.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "capi/engine.h"
#include "live/live_cluster.h"
#include "rlsched/cluster.h"
#include "rlsched/sim/forecast.h"
#include "rlsched/status.h"

namespace rlsched::cli::live {

/// Up to this many pending jobs the forward simulation runs sched/backfill's own cycle (sim::Backfill::kSlurm, what
/// the lab comparison measured); beyond, EASY backfill over the cluster's bf_max_job_test, which answers a
/// 10,000-job queue in a few seconds (docs/estimates.md, Speed).
inline constexpr std::size_t kSlurmBackfillQueue = 1000;

struct LiveOptions {
  std::string config = "/etc/slurm/rlsched.yaml";  ///< --config: the plugins' rlsched.yaml
  bool json = false;
  std::string backfill = "auto";  ///< --backfill: auto (see kSlurmBackfillQueue), slurm or easy
};

/// --config, --json and --backfill.
void add_live_options(CLI::App& app, LiveOptions& options);

struct LiveInputs {
  std::unique_ptr<LiveCluster> live;
  std::unique_ptr<capi::Engine> engine;  ///< the policy in service: engine->policy(), engine->config()
  std::string policy_name;               ///< "model:<path>" or the fallback's name, as the health record says
  std::string slurm_conf;                ///< the slurm.conf the machine was read from
  Cluster cluster;                       ///< slurm.conf (and gres.conf beside it) with rlsched.yaml's speeds
  std::string cluster_error;             ///< why `cluster` could not be read ("" when it was)
  std::string backfill = "auto";         ///< LiveOptions::backfill
};

/// Reads all three. \return the first error that leaves nothing to say (slurmctld unreachable, rlsched.yaml
/// invalid); a slurm.conf that cannot be read only disables the start estimates (cluster_error).
Result<LiveInputs> load_live(const LiveOptions& options);

/// The job as the simulator knows it (its request; for a running job what it holds), with its job class.
Job job_of(const LiveJob& job, const LiveCluster& live, const config::PluginConfig& config);

/// Estimates the start of `targets` by a forward simulation of the live queue under the policy in service.
/// \return Unsupported when the live slurm.conf could not be read
/// (LiveInputs::cluster_error), else forecast's own errors.
Result<std::vector<sim::StartEstimate>> forecast_starts(const LiveInputs& inputs, const std::vector<JobId>& targets);

/// The start of a job not yet submitted, once for each of `alternatives` (the same request pinned to each
/// accelerator type it allows) added to the live queue: forecasts run at once (sim::forecast_each). \return one
/// result per alternative, in order.
std::vector<Result<std::vector<sim::StartEstimate>>> forecast_alternatives(
    const LiveInputs& inputs, const std::vector<sim::QueuedJob>& alternatives);

}  // namespace rlsched::cli::live
