// What site_factor/rlsched's engine has learned of each user's ended jobs (the predicted run times of
// `run_time: predicted` and of schema v2 models), kept beside slurmctld's own job state (StateSaveLocation) so that
// a restart does not send every job back to its time limit until its user's next jobs end: slurmctld forgets ended
// jobs after MinJobAge, so they cannot be heard again. Loaded when the engine is created, replaced by its writer
// thread every few seconds and once more when it is destroyed, never under slurmctld's locks.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

#include "rlsched/predicted_run_times.h"
#include "rlsched/status.h"

namespace rlsched::capi {

/// The file's name in the state folder, without ".json" (HealthWriter adds it).
inline constexpr const char* kRunTimeHistoryName = "rlsched_run_times";

/// The ended jobs the engine heard at its last call that Slurm still kept: job id -> end time. Kept with what they
/// taught, so that a restarted slurmctld, which still keeps them, does not teach them twice.
using HeardJobs = std::unordered_map<std::uint32_t, Seconds>;

/// What the file holds, copied out of the engine under its lock so that rendering it holds no lock that slurmctld's
/// scoring calls wait for.
struct RunTimeHistory {
  RunTimeBasis basis = RunTimeBasis::kLimitShare;
  std::unordered_map<std::string, std::deque<double>> users;  ///< RunTimePredictor::history()
  HeardJobs heard;
};

/// The copy (cheap next to rendering it: no formatting, no sorting).
RunTimeHistory run_time_history_of(const RunTimePredictor& predictor, const HeardJobs& heard);

/// {"schema": 1, "basis": "limit_share", "users": {"<uid>": [latest, ...], ...}, "heard": [[job_id, end], ...]},
/// sorted: each user's values as RunTimePredictor remembers them (shares of their time limits used, in [0, 1]),
/// the latest first.
std::string run_time_history_json(const RunTimeHistory& history);

/// Reads run_time_history_json's output into `into` and `heard`, only when the whole record is valid. `name` is the
/// file as errors name it. \return the users read, or InvalidInput naming the file and what is wrong (the line of
/// a syntax error, the user and entry of a bad value, a basis other than the predictor's).
Result<std::size_t> restore_run_time_history(std::string_view text, const std::string& name, RunTimePredictor& into,
                                             HeardJobs& heard);

}  // namespace rlsched::capi
