// The energy rule (rlsched/energy.h) on the C ABI's jobs: what site_factor/rlsched's batch and job_submit/rlsched's
// request tell of a job, as the energy::DeferrableJob the simulator builds from its own state.
#pragma once

#include <string>
#include <string_view>

#include "capi/submit.h"
#include "rlsched/energy.h"
#include "rlsched/plugin_config.h"
#include "rlsched/rlsched.h"

namespace rlsched::capi {

/// A pending job of a site_factor batch. Its budget counts from its submit (its begin time may be a deferral of
/// job_submit/rlsched's own).
energy::DeferrableJob deferrable_job(const rlsched_job& job, const rlsched_cluster& cluster,
                                     const config::PluginConfig& config, std::string_view job_class);

/// What job_submit/rlsched decides on energy for a job being submitted (placed as `placed` says).
struct DeferralDecision {
  Seconds begin = 0;    ///< > 0: the begin time to set (enforce only)
  std::string message;  ///< why it waits, or (shadow) when it would have; "" when it does not
  bool deferred = false;
};

DeferralDecision decide_deferral(const config::PluginConfig& config, const rlsched_cluster& cluster,
                                 const rlsched_submit& job, const SubmitDecision& placed, Seconds now);

}  // namespace rlsched::capi
