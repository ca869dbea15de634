// `rlsched estimate`: when a job not yet submitted would start, like `sbatch --test-only` but with the policy in
// service and one forward simulation of the live queue per accelerator type the request allows ("on h200 about ...,
// on a100 about ..."), the hypothetical job pinned to that type. JSON fields: docs/estimates.md.
#include <unistd.h>
#include <pwd.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capi/tres.h"
#include "commands.h"
#include "live/live_inputs.h"
#include "live/live_report.h"
#include "text/duration.h"
#include "text/text.h"
#include "text/type_set.h"

namespace rlsched::cli {
namespace {

using nlohmann::json;

struct EstimateOptions {
  live::LiveOptions live;
  std::string gres;   // --gres gpu[:type]:N, per node
  std::string gpus;   // --gpus [type:]N, per job
  int nodes = 1;
  int ntasks = 1;
  int cpus_per_task = 1;
  std::string time = "1:00:00";
  std::string partition, qos, account;
};

// The request as the simulator's Job, its accelerator types left as asked (pinned per forecast below).
Result<Job> hypothetical_job(const EstimateOptions& o, const live::LiveCluster& live) {
  Job job;
  for (const live::LiveJob& j : live.jobs) job.id = std::max<JobId>(job.id, j.c.job_id);
  job.id += 1;  // an id slurmctld has not given yet
  const passwd* pw = getpwuid(getuid());
  job.user = pw ? pw->pw_name : std::to_string(getuid());
  job.account = o.account;
  job.qos = o.qos;
  job.partitions = text::split_names(o.partition);
  job.submit = live.now;
  job.nodes = std::max(o.nodes, 1);
  job.cpus = std::max(o.ntasks, 1) * std::max(o.cpus_per_task, 1);
  Result<Seconds> limit = text::parse_duration(o.time, {/*bare_unit=*/60, /*infinite=*/false});
  if (!limit.ok()) return Status::InvalidInput(fmt::format("--time {}: {}", o.time, limit.status().message()));
  job.time_limit = *limit;
  const bool per_node = !o.gres.empty();
  const std::string ask = per_node ? "gres:" + o.gres : o.gpus.empty() ? std::string() : "gres:gpu:" + o.gpus;
  if (!ask.empty()) {
    const auto entries = capi::parse_tres(ask);
    if (entries.size() != 1 || !entries[0].gres)
      return Status::InvalidInput(fmt::format("{}: expected {}", per_node ? "--gres " + o.gres : "--gpus " + o.gpus,
                                              per_node ? "gpu[:type]:N" : "[type:]N"));
    job.accel.name = entries[0].name;
    job.accel.types = text::parse_type_set(entries[0].type);
    job.accel.count = static_cast<int>(entries[0].count * (per_node ? job.nodes : 1));
  }
  return job;
}

// The types to try: those the request names, else every type of its GRES on the cluster ("" for a CPU job).
std::vector<std::string> types_to_try(const Job& job, const live::LiveCluster& live) {
  if (job.accel.empty()) return {""};
  if (!job.accel.types.empty()) return job.accel.types;
  std::vector<std::string> types;
  for (int k = 0; k < live.cluster.n_accel; ++k) {
    const rlsched_accel& a = live.cluster.accel[k];
    const std::string type = a.type ? a.type : "";
    if (job.accel.name == a.gres && std::find(types.begin(), types.end(), type) == types.end()) types.push_back(type);
  }
  return types.empty() ? std::vector<std::string>{""} : types;
}

std::string request_text(const Job& job) {
  std::string out;
  if (!job.accel.empty())
    out = fmt::format("{}:{}{}, ", job.accel.name,
                      job.accel.types.empty() ? "" : text::format_type_set(job.accel.types) + ":", job.accel.count);
  return out + fmt::format("{} cpu{}, {} node{}, for {}", job.cpus, job.cpus == 1 ? "" : "s", job.nodes,
                           job.nodes == 1 ? "" : "s",
                           text::format_duration(job.time_limit));
}

int run_estimate(const EstimateOptions& options) {
  Result<live::LiveInputs> in = live::load_live(options.live);
  if (!in.ok()) return fail(in.status());
  Result<Job> job = hypothetical_job(options, *in->live);
  if (!job.ok()) return fail(job.status());
  const std::vector<std::string> types = types_to_try(*job, *in->live);
  std::vector<sim::QueuedJob> pinned;
  for (const std::string& type : types) {
    pinned.push_back({*job, in->live->now});
    if (!type.empty()) pinned.back().job.accel.types = {type};
    pinned.back().job.job_class = in->engine->config().classify("", job->account, job->user);
  }
  const auto forecasts = live::forecast_alternatives(*in, pinned);
  json estimates = json::array();
  for (std::size_t i = 0; i < types.size(); ++i)
    estimates.push_back(
        {{"accelerator_type", types[i]}, {"estimate", live::estimate_json(forecasts[i], job->id)}});
  const json out = {{"now", in->live->now}, {"request", request_text(*job)}, {"estimates", estimates}};
  if (options.live.json)
    fmt::print("{}\n", out.dump(2));
  else
    live::print_estimate(out);
  return kExitOk;
}

}  // namespace

CommandRunner setup_estimate(CLI::App& app) {
  auto o = std::make_shared<EstimateOptions>();
  app.add_option("--gres", o->gres, "Accelerators per node, as sbatch: gpu[:type]:N");
  app.add_option("--gpus,-G", o->gpus, "Accelerators per job, as sbatch: [type:]N");
  app.add_option("--nodes,-N", o->nodes, "Nodes")->capture_default_str();
  app.add_option("--ntasks,-n", o->ntasks, "Tasks")->capture_default_str();
  app.add_option("--cpus-per-task,-c,--cpus", o->cpus_per_task, "CPUs per task")->capture_default_str();
  app.add_option("--time,-t", o->time, "Time limit, as sbatch (minutes, H:MM:SS, D-HH:MM)")->capture_default_str();
  app.add_option("--partition,-p", o->partition, "Partitions, comma-separated (default: the cluster's default)");
  app.add_option("--qos,-q", o->qos, "QOS");
  app.add_option("--account,-A", o->account, "Account");
  live::add_live_options(app, o->live);
  return [o] { return run_estimate(*o); };
}

}  // namespace rlsched::cli
