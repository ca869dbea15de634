// Slurm's pending reasons (the REASON column of squeue, slurm_job_reason_string) in plain words, with what the user
// can do about each: the one table `rlsched explain` reads. Keyed by Slurm's reason text, which stays the same across
// Slurm versions where the enum's numbering does not.
#pragma once

#include <string>
#include <string_view>

namespace rlsched::pending_reason {

struct Explanation {
  std::string what;    ///< why the job waits, in plain words
  std::string advice;  ///< what the user can do; empty when nothing but waiting helps
};

/// Explains Slurm's `reason` for a job of QOS `qos` and account `account` (named in limit reasons). QOSMax*/QOSGrp*/
/// AssocMax*/AssocGrp* reasons name the limit from the reason text ("QOSMaxJobsPerUserLimit": MaxJobsPerUser).
/// Unknown reasons are passed through with a pointer to Slurm's documentation.
Explanation explain(std::string_view reason, std::string_view qos, std::string_view account);

/// The limit a QOS or association reason names ("QOSGrpGRES" -> "GrpGRES", "AssocMaxJobsLimit" -> "MaxJobs"); ""
/// when `reason` is not a limit.
std::string limit_of(std::string_view reason);

/// \return true when a job pending for `reason` waits only for its turn and resources (Priority, Resources, None,
/// BeginTime, ReqNodeNotAvail): what the forward simulation (sim/forecast.h) models. A job held by a limit, a hold
/// or a dependency starts when that is lifted, which the simulation cannot know.
bool forecast_models(std::string_view reason);

}  // namespace rlsched::pending_reason
