#include "capi/deferral.h"

#include <algorithm>

#include <fmt/format.h>

#include "capi/c_snapshot.h"
#include "capi/job_classes.h"
#include "text/type_set.h"

namespace rlsched::capi {
namespace {

int node_cpus(const rlsched_cluster& cluster) {
  return cluster.nodes_total > 0 ? cluster.cpus_total / cluster.nodes_total : 0;
}

// A job without a time limit runs as long as its partition allows, else placement.default_time_limit.
Seconds limit_of(std::int64_t time_limit, int partition, const rlsched_cluster& cluster,
                 const config::PluginConfig& config) {
  if (time_limit > 0) return time_limit;
  if (partition >= 0 && partition < cluster.n_partitions && cluster.partitions[partition].max_time > 0)
    return cluster.partitions[partition].max_time;
  return config.placement.default_time_limit;
}

}  // namespace

energy::DeferrableJob deferrable_job(const rlsched_job& job, const rlsched_cluster& cluster,
                                     const config::PluginConfig& config, std::string_view job_class) {
  energy::DeferrableJob d;
  d.qos = view(job.qos);
  d.job_class = job_class;
  // From the submit: a begin time may be this plugin's own deferral, which must not restart the budget.
  d.eligible = job.submit_time;
  d.time_limit = limit_of(job.time_limit, job.partition, cluster, config);
  if (job.accelerators > 0) d.types = text::parse_type_set(view(job.gres_type));
  d.accelerators = std::max(job.accelerators, 0);
  d.cpus = std::max(job.cpus, 1);
  d.node_cpus = node_cpus(cluster);
  return d;
}

DeferralDecision decide_deferral(const config::PluginConfig& config, const rlsched_cluster& cluster,
                                 const rlsched_submit& job, const SubmitDecision& placed, Seconds now) {
  DeferralDecision out;
  if (!config.energy.defers() || placed.action == RLSCHED_SUBMIT_REJECTED) return out;
  const std::string job_class =
      config.classify(view(job.job_name), view(job.account), user_name_for_classes(config, job.user_id));
  energy::DeferrableJob d;
  d.qos = view(job.qos);
  d.job_class = job_class;
  d.eligible = std::max<Seconds>(now, job.begin_time);
  d.time_limit = limit_of(job.time_limit, placed.partition_index, cluster, config);
  if (placed.action == RLSCHED_SUBMIT_MODIFIED) {
    d.accelerators = placed.accelerators;
    if (!placed.type.empty()) d.types = {placed.type};
  } else {
    d.accelerators = placed.asked_accelerators;
    d.types = placed.asked_types;
  }
  d.cpus = std::max(job.cpus, 1);
  d.node_cpus = node_cpus(cluster);
  const auto request = energy::deferral_request(config.energy, d, d.eligible);
  if (!request) return out;
  const energy::StartPlan plan = energy::plan_start(config.energy, *request);
  if (!plan.deferred) return out;
  out.deferred = true;
  if (config.energy_mode == config::Mode::kEnforce) {
    out.begin = plan.begin;
    out.message = "rlsched: " + plan.reason;
  } else {
    out.message = "rlsched (energy shadow mode, not applied): would be " + plan.reason;
  }
  return out;
}

}  // namespace rlsched::capi
