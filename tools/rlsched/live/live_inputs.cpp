#include "live/live_inputs.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include <fmt/format.h>

#include "inputs.h"
#include "rlsched/io/cluster_readers.h"
#include "rlsched/pending_reason.h"
#include "rlsched/preemption.h"
#include "text/type_set.h"

namespace rlsched::cli::live {

void add_live_options(CLI::App& app, LiveOptions& options) {
  app.add_option("--config", options.config, "The plugins' rlsched.yaml (the policy in service)")
      ->capture_default_str();
  app.add_flag("--json", options.json, "Print JSON (fields in docs/estimates.md) instead of text");
  app.add_option("--backfill", options.backfill,
                 "How the forward simulation backfills: slurm (sched/backfill's cycle), easy (one reservation per "
                 "partition, slurm.conf's bf_max_job_test), or auto: slurm up to " +
                     std::to_string(kSlurmBackfillQueue) + " pending jobs, easy beyond")
      ->check(CLI::IsMember({"auto", "slurm", "easy"}))
      ->capture_default_str();
}

Result<LiveInputs> load_live(const LiveOptions& options) {
  LiveInputs in;
  in.backfill = options.backfill;
  Result<std::unique_ptr<LiveCluster>> live = LiveCluster::load("");
  if (!live.ok()) return live.status();
  in.live = std::move(*live);

  capi::EngineOptions engine;
  engine.config_path = options.config;
  engine.no_reload_thread = true;
  engine.weights.age = in.live->weight_age;
  engine.weights.fairshare = in.live->weight_fairshare;
  engine.weights.job_size = in.live->weight_job_size;
  engine.weights.partition = in.live->weight_partition;
  engine.weights.qos = in.live->weight_qos;
  engine.log = [](int level, const std::string& line) {  // the config's summary is not news to the user
    if (level == RLSCHED_LOG_ERROR) fmt::print(stderr, "rlsched: {}\n", line);
  };
  // Run times predicted as site_factor/rlsched predicts them: from what it kept of the ended jobs slurmctld has
  // forgotten (read, never written), then the ended jobs slurmctld still keeps, heard as the plugin hears them.
  engine.state_dir = in.live->state_save_location;
  engine.keep_run_times = !engine.state_dir.empty();
  engine.state_read_only = true;
  Result<std::unique_ptr<capi::Engine>> made = capi::Engine::Create(std::move(engine));
  if (!made.ok()) return made.status();
  in.engine = std::move(*made);
  std::vector<rlsched_ended_job> ended;
  for (const LiveJob& j : in.live->jobs)
    if (j.phase == JobPhase::kFinished)
      ended.push_back({j.c.job_id, j.c.user_id, j.c.time_limit, j.start, j.end, j.suspended});
  std::size_t heard = 0;
  if (const Status st = in.engine->jobs_ended(ended.data(), ended.size(), heard); !st.ok()) return st;
  rlsched_engine_info info{};
  in.engine->info(info);
  in.policy_name = info.scorer ? info.scorer : "";

  const char* conf = std::getenv("SLURM_CONF");
  in.slurm_conf = conf && *conf ? conf : "/etc/slurm/slurm.conf";
  Result<Cluster> cluster = io::read_cluster(in.slurm_conf);
  if (cluster.ok()) {
    in.cluster = std::move(*cluster);
    std::vector<Job> none;
    apply_plugin_config(in.engine->config(), in.cluster, none);
  } else {
    in.cluster_error = cluster.status().message();
  }
  return in;
}

Job job_of(const LiveJob& j, const LiveCluster& live, const config::PluginConfig& config) {
  Job job;
  job.id = j.c.job_id;
  job.user = j.user;
  job.account = j.account;
  job.qos = j.qos;
  for (std::int32_t p : j.partitions) job.partitions.push_back(live.cluster.partitions[p].name);
  job.submit = j.submit;
  job.time_limit = j.c.time_limit;
  job.nodes = j.c.nodes;
  job.cpus = j.c.cpus;
  if (j.c.accelerators > 0) {
    job.accel.count = j.c.accelerators;
    job.accel.name = j.gres;
    job.accel.types = text::parse_type_set(j.gres_type);
  }
  if (const auto checkpoint = preemption::declared_checkpoint(j.comment.c_str())) {
    job.checkpoint_interval = checkpoint->interval;
    job.checkpoint_cost = checkpoint->cost;
  }
  job.restarts = j.c.restarts;
  job.job_class = config.classify(j.name, j.account, j.user);
  return job;
}

namespace {

sim::Snapshot snapshot_of(const LiveInputs& in) {
  const LiveCluster& live = *in.live;
  std::unordered_map<std::string, int> node_index;
  for (std::size_t n = 0; n < in.cluster.nodes.size(); ++n) node_index.emplace(in.cluster.nodes[n].name, int(n));
  sim::Snapshot snap;
  snap.now = live.now;
  for (const LiveJob& j : live.jobs) {
    if (j.phase == JobPhase::kFinished) continue;
    Job job = job_of(j, live, in.engine->config());
    job.run_time = in.engine->predicted_run_time(j.c.user_id, job.time_limit);  // as site_factor/rlsched predicts
    if (j.phase == JobPhase::kPending) {
      // A held job, or one waiting for a limit or a dependency, starts when that is lifted: not in the forecast.
      if (pending_reason::forecast_models(j.reason)) snap.pending.push_back({std::move(job), std::min(j.eligible, live.now)});
      continue;
    }
    sim::RunningJob r;
    r.job = std::move(job);
    r.start = j.start;
    r.partition = j.partition_list;
    r.accelerator_type = j.gres_type;
    for (const std::string& name : j.nodes)
      if (const auto it = node_index.find(name); it != node_index.end()) r.nodes.push_back(it->second);
    if (r.nodes.size() == j.nodes.size()) r.node_cpus = j.node_cpus;
    if (!r.nodes.empty()) snap.running.push_back(std::move(r));  // a job whose nodes slurm.conf lacks holds none
  }
  for (const LiveNode& node : live.nodes)
    if (const auto it = node_index.find(node.name); it != node_index.end() && !node.usable)
      snap.nodes_down.push_back(it->second);
  return snap;
}

}  // namespace

namespace {

/// How the forward simulation of a queue of `pending` jobs schedules (LiveOptions::backfill).
sim::ForecastOptions forecast_options(const LiveInputs& in, std::size_t pending, std::vector<JobId> targets) {
  sim::ForecastOptions options;
  const bool slurm_backfill = in.backfill == "slurm" || (in.backfill == "auto" && pending <= kSlurmBackfillQueue);
  options.sim.backfill = slurm_backfill ? sim::Backfill::kSlurm : sim::Backfill::kEasy;
  options.sim.bf_max_job_test = in.cluster.backfill.max_job_test;  // what slurmctld tests per cycle
  options.targets = std::move(targets);
  return options;
}

}  // namespace

Result<std::vector<sim::StartEstimate>> forecast_starts(const LiveInputs& in, const std::vector<JobId>& targets) {
  if (!in.cluster_error.empty()) return Status::Unsupported(in.cluster_error);
  const sim::Snapshot snap = snapshot_of(in);
  return sim::forecast(in.cluster, snap, *in.engine->policy(), forecast_options(in, snap.pending.size(), targets));
}

std::vector<Result<std::vector<sim::StartEstimate>>> forecast_alternatives(
    const LiveInputs& in, const std::vector<sim::QueuedJob>& alternatives) {
  if (!in.cluster_error.empty())
    return std::vector<Result<std::vector<sim::StartEstimate>>>(alternatives.size(),
                                                                 Status::Unsupported(in.cluster_error));
  const sim::Snapshot live = snapshot_of(in);
  std::vector<sim::Snapshot> snapshots(alternatives.size(), live);
  for (std::size_t i = 0; i < alternatives.size(); ++i) snapshots[i].pending.push_back(alternatives[i]);
  const JobId id = alternatives.empty() ? 0 : alternatives.front().job.id;
  return sim::forecast_each(in.cluster, snapshots, *in.engine->policy(),
                            forecast_options(in, live.pending.size() + 1, {id}));
}

}  // namespace rlsched::cli::live
