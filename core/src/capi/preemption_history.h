// preempt/rlsched's preemption history in a file beside slurmctld's own job state (StateSaveLocation), so that the
// preemption cap survives a restart of slurmctld: the engine loads it when it is created and its writer thread
// replaces it every few seconds and once more when the engine is destroyed (slurmctld's shutdown), never under
// slurmctld's locks.
#pragma once

#include <string>
#include <string_view>

#include "rlsched/preemption.h"
#include "rlsched/status.h"

namespace rlsched::capi {

/// The file's name in the state folder, without ".json" (HealthWriter adds it).
inline constexpr const char* kPreemptionHistoryName = "rlsched_preemptions";

/// {"schema": 1, "preemptions": [[job_id, time], ...]}, sorted by job and time.
std::string preemption_history_json(const preemption::History& history);

/// Reads preemption_history_json's output; `name` is the file as errors name it. \return InvalidInput naming the
/// file (and the line of a syntax error) when it is not such a record.
Result<preemption::History> parse_preemption_history(std::string_view text, const std::string& name);

}  // namespace rlsched::capi
