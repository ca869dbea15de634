// Options every simulating subcommand shares (trace, cluster, protocol, backfill, failures, JSON output), and the
// checks that tie them together.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "rlsched/energy.h"
#include "rlsched/preemption.h"
#include "rlsched/sim/evaluation.h"

namespace rlsched::cli {

struct RunOptions {
  std::string trace;    ///< empty: the built-in synthetic workload
  std::string cluster;  ///< empty: the cluster the workload implies
  std::string backfill = "easy";
  std::string protocol = "full";
  bool strict = false;
  std::string jobs;                ///< "FIRST:COUNT" window of the trace's jobs (in file order); empty: all
  /// The last share of the jobs by submit time that is run (evaluate --held-back); cut before --load scales them, so
  /// that the jobs judged offer that load.
  double recent_share = 1.0;
  double failures_mtbf_hours = 0;  ///< 0: no node failures
  double failures_mttr_hours = 1;
  std::uint64_t seed = 1;
  int bf_max_job_test = 0;
  int bf_phase = -1;                       ///< --bf-phase; -1: the simulator's default
  int main_pass_delay = -1;                ///< --main-pass-delay; -1: the simulator's default
  int end_pass_delay = -1;                 ///< --end-pass-delay; -1: the simulator's default
  std::string json;                        ///< empty: no JSON; "-": stdout
  std::string placement = "fastest-free";  ///< how multi-type jobs get a type; evaluate takes a comma list
  std::string placement_partitions;        ///< comma list: where pinned jobs that name no partition may go
  double placement_slack = 0;              ///< --placement-slack; 0: the config's placement.slack
  std::string any_of;                      ///< Alibaba pod CSV giving a Gavel workload's type constraints
  double load = 0;                         ///< offered load to scale arrivals to; 0: the trace's own arrivals
  double load_factor = 1;                  ///< --load-factor: the offered load (after --load) times this
  std::string preemption = "none";         ///< none|requeue|checkpoint; evaluate takes a comma list
  std::string urgent;                      ///< "SHARE[:SEED]": short jobs made QOS urgent; empty: none
  std::string checkpoint;                  ///< "interval=30m,cost=90s": what long normal jobs declare; empty: none
  double checkpointable = 1;               ///< share of the long jobs that declare --checkpoint
  Seconds restart_overhead = 0;            ///< seconds a job resuming from a checkpoint pays
  Seconds requeue_delay = 0;               ///< seconds before a requeued job is eligible again
  /// The plugins' rlsched.yaml (--config): score_scale weighs the site factor, its types' speeds, job classes and
  /// preemption section apply as in the plugins. Empty: the built-in copy of slurm_conf_examples/rlsched.yaml.
  std::string config;
  bool energy = false;      ///< --energy: meter energy and defer as the config's energy section says
  std::string energy_rule;  ///< --energy-rule: replaces the config's rule; evaluate takes a comma list; empty: none
  std::string deferrable;   ///< --deferrable "SHARE[:SEED]": jobs given the first deferrable QOS; empty: none
  Seconds deferrable_max_limit = 0;  ///< --deferrable-max-limit: only jobs with a time limit up to this; 0: any

  sim::Protocol parsed_protocol() const { return *sim::parse_protocol(protocol); }
  sim::Backfill parsed_backfill() const { return *sim::parse_backfill(backfill); }
  bool json_to_stdout() const { return json == "-"; }
  std::vector<sim::Placement> parsed_placements() const;
  std::vector<std::string> parsed_placement_partitions() const;
  std::vector<sim::PreemptionMode> parsed_preemptions() const;
  /// --urgent's share and seed (seed 1 when not given); {0, 1} without --urgent.
  std::pair<double, std::uint64_t> parsed_urgent() const;
  /// --deferrable's share and seed (seed 1 when not given); {0, 1} without --deferrable.
  std::pair<double, std::uint64_t> parsed_deferrable() const;
  /// --energy-rule's rules, duplicates dropped; empty without it (the config's rule).
  std::vector<energy::Rule> parsed_energy_rules() const;
  /// --checkpoint's declaration; nullopt without it.
  std::optional<preemption::Checkpoint> parsed_checkpoint() const;
};

/// Adds the shared options to `app`, bound to `options`, with validators that turn bad values into usage errors.
/// `extra_full_only` names options the caller added that, like --failures-mtbf, only make sense under
/// --protocol full; they are rejected (usage error) under rlscheduler.
void add_run_options(CLI::App& app, RunOptions& options, std::vector<CLI::Option*> extra_full_only = {});

/// A validator accepting the names of scorer_names(), comma-separated when `list` (then also "all").
CLI::Validator policy_validator(bool list);

/// Splits a --policies value into scorer names: "all" expands to scorer_names(), duplicates are dropped.
std::vector<std::string> expand_policies(const std::string& text);

}  // namespace rlsched::cli
