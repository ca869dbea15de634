// `rlsched explain JOBID`: why a pending job waits and when it may start, on the live cluster. Slurm's reason in
// plain words (rlsched/pending_reason.h), the job's rank in each of its partitions with the jobs ahead, Slurm's
// priority factors with the SITE factor explained by per-input ablation (rlsched/attribution.h) under the policy in
// service, job_submit/rlsched's placement record, and the start as Slurm's backfill plan and rlsched's forward
// simulation estimate it. JSON fields: docs/estimates.md.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capi/c_snapshot.h"
#include "commands.h"
#include "live/live_inputs.h"
#include "live/live_report.h"
#include "rlsched/attribution.h"
#include "rlsched/pending_reason.h"
#include "text/duration.h"
#include "text/text.h"
#include "text/type_set.h"

namespace rlsched::cli {
namespace {

using live::JobPhase;
using live::LiveJob;
using nlohmann::json;

struct ExplainOptions {
  live::LiveOptions live;
  JobId job = 0;
};

// Pending jobs in partition p in Slurm's order (priority, then submit, then id), and where `job` stands.
json rank_in(const live::LiveCluster& live, const LiveJob& job, int p) {
  std::vector<const LiveJob*> queue;
  for (const LiveJob& j : live.jobs)
    if (j.phase == JobPhase::kPending && std::count(j.partitions.begin(), j.partitions.end(), p)) queue.push_back(&j);
  std::stable_sort(queue.begin(), queue.end(), [](const LiveJob* a, const LiveJob* b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    if (a->submit != b->submit) return a->submit < b->submit;
    return a->c.job_id < b->c.job_id;
  });
  json ahead = json::array();
  std::size_t rank = 0;
  while (rank < queue.size() && queue[rank] != &job) {
    const LiveJob& a = *queue[rank++];
    ahead.push_back({{"job_id", a.c.job_id}, {"user", a.user}, {"request", a.request()}, {"priority", a.priority}});
  }
  return {{"partition", live.cluster.partitions[p].name}, {"rank", rank + 1}, {"pending", queue.size()},
          {"ahead", ahead}};
}

// Accelerators of the job's GRES in every partition: the ones its request allows and the others, idle or not.
json accelerators_for(const live::LiveCluster& live, const LiveJob& job) {
  json out = json::array();
  if (job.c.accelerators <= 0) return out;
  for (int p = 0; p < live.cluster.n_partitions; ++p) {
    const rlsched_partition& part = live.cluster.partitions[p];
    for (int k = 0; k < part.n_accel; ++k) {
      const rlsched_accel& a = part.accel[k];
      if (job.gres != a.gres) continue;
      const bool allowed = text::type_set_allows(job.gres_type, a.type ? a.type : "") &&
                           std::count(job.partitions.begin(), job.partitions.end(), p);
      out.push_back({{"partition", part.name}, {"gres", a.gres}, {"type", a.type ? a.type : ""}, {"idle", a.idle},
                     {"total", a.total}, {"allowed", allowed}, {"fits", a.idle >= job.c.accelerators}});
    }
  }
  return out;
}

// The SITE factor explained: the job's score under the policy in service against the queue's, per input.
json site_attribution(const live::LiveInputs& in, const LiveJob& job) {
  const live::LiveCluster& live = *in.live;
  const config::PluginConfig& config = in.engine->config();
  std::vector<std::size_t> pending_of;
  const std::vector<rlsched_job> queue = live.pending(&pending_of);
  capi::BatchView batch(live.cluster, config);
  std::vector<PendingJob> views;
  std::size_t self = 0;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    views.push_back(capi::to_pending_job(queue[i], live.cluster, config, live.now, batch, capi::class_of(config, queue[i])));
    if (&live.jobs[pending_of[i]] == &job) self = i;
  }
  // Shown as site_factor/rlsched shows them: under run_time: predicted, with the run times its history and the
  // ended jobs slurmctld keeps predict (load_live).
  in.engine->show_run_times(queue.data(), views);
  const attribution::Attribution a = attribution::explain(
      *in.engine->policy(), batch.state.context(live.now, static_cast<int>(views.size())), views, self);
  json inputs = json::array();
  for (const attribution::InputEffect& e : a.effects)
    inputs.push_back({{"input", std::string(e.input)}, {"value", e.value}, {"median", e.median}, {"delta", e.delta}});
  return {{"policy", in.policy_name}, {"score", a.score}, {"median_score", a.median_score}, {"inputs", inputs}};
}

// The run time rlsched takes the job to need: what its estimates run it for, and what the policy is shown under
// run_time: predicted (or beside its limit, for a model that reads both).
json run_time_of(const live::LiveInputs& in, const LiveJob& job) {
  std::size_t ended = 0;
  const Seconds predicted = in.engine->predicted_run_time(job.c.user_id, job.c.time_limit, &ended);
  return {{"limit", job.c.time_limit > 0 ? json(job.c.time_limit) : json(nullptr)},
          {"predicted", predicted > 0 ? json(predicted) : json(nullptr)},
          {"ended_jobs", ended}};
}

// job_submit/rlsched's decisions: the "rlsched: ..." entries of the field rlsched.yaml has it record in.
json placement_record(const live::LiveInputs& in, const LiveJob& job) {
  const config::RecordField field = in.engine->config().placement.record;
  const std::string& text = field == config::RecordField::kComment ? job.comment : job.admin_comment;
  json out = json::array();
  for (std::string_view entry : text::split(text, ';'))
    if (text::trim(entry).rfind("rlsched:", 0) == 0) out.push_back(std::string(text::trim(entry)));
  return out;
}

json explain_pending(const live::LiveInputs& in, const LiveJob& job) {
  const live::LiveCluster& live = *in.live;
  const pending_reason::Explanation why = pending_reason::explain(job.reason, job.qos, job.account);
  json ranks = json::array();
  for (int p : job.partitions) ranks.push_back(rank_in(live, job, p));
  json factors = nullptr;
  if (job.has_factors)
    factors = {{"age", job.factors.age},        {"fairshare", job.factors.fairshare}, {"job_size", job.factors.job_size},
               {"partition", job.factors.partition}, {"qos", job.factors.qos},      {"assoc", job.factors.assoc},
               {"site", job.factors.site},      {"nice", job.factors.nice}};
  json out = {{"job_id", job.c.job_id},
              {"now", live.now},
              {"state", job.state},
              {"user", job.user},
              {"account", job.account},
              {"qos", job.qos},
              {"name", job.name},
              {"partitions", text::split_names(job.partition_list)},
              {"request", job.request()},
              {"submit", job.submit},
              {"reason", {{"code", job.reason}, {"text", why.what}, {"advice", why.advice}}},
              {"limit", pending_reason::limit_of(job.reason)},
              {"ranks", ranks},
              {"accelerators", accelerators_for(live, job)},
              {"priority", {{"total", job.priority}, {"factors", factors}}},
              {"run_time", run_time_of(in, job)},
              {"site", site_attribution(in, job)},
              {"placement", placement_record(in, job)},
              {"slurm_estimate", job.start > 0 ? json(job.start) : json(nullptr)}};
  if (pending_reason::forecast_models(job.reason))
    out["rlsched_estimate"] = live::estimate_json(live::forecast_starts(in, {job.c.job_id}), job.c.job_id);
  else
    out["rlsched_estimate"] = {{"available", false},
                               {"why", fmt::format("it waits for '{}' to be lifted, which the forward simulation "
                                                   "does not model",
                                                   job.reason)}};
  return out;
}

int run_explain(const ExplainOptions& options) {
  Result<live::LiveInputs> in = live::load_live(options.live);
  if (!in.ok()) return fail(in.status());
  const LiveJob* job = in->live->find(options.job);
  if (!job)
    return fail(Status::NotFound(fmt::format(
        "job {}: slurmctld knows no such job (a finished job is forgotten after MinJobAge; see sacct -j {})",
        options.job, options.job)));
  if (job->phase == JobPhase::kRunning)
    return fail(Status::InvalidInput(fmt::format("job {} is not pending: {} since {} on {}, expected to end by {}",
                                                 options.job, job->state, live::local_time(job->start),
                                                 job->node_list, live::local_time(job->end))));
  if (job->phase == JobPhase::kFinished)
    return fail(Status::InvalidInput(fmt::format("job {} is not pending: {}{}", options.job, job->state,
                                                 job->end > 0 ? " at " + live::local_time(job->end) : "")));
  const json out = explain_pending(*in, *job);
  if (options.live.json)
    fmt::print("{}\n", out.dump(2));
  else
    live::print_explanation(out);
  return kExitOk;
}

}  // namespace

CommandRunner setup_explain(CLI::App& app) {
  auto options = std::make_shared<ExplainOptions>();
  app.add_option("JOBID", options->job, "A pending job's id")->required();
  live::add_live_options(app, options->live);
  return [options] { return run_explain(*options); };
}

}  // namespace rlsched::cli
