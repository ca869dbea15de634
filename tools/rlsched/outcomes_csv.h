// Per-job outcomes as CSV (`simulate --outcomes`), for analysis outside rlsched.
#pragma once

#include <string>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/job.h"
#include "rlsched/sim/outcome.h"
#include "rlsched/status.h"

namespace rlsched::cli {

/// Writes a header and one row per outcome: id, user, submit, start, end, wait, run, state, partition,
/// accelerator_type, cpus, accelerators, restarts. Times are the trace's seconds; start/end/wait/run are empty for
/// a job that never started (end and run also for one still running). `jobs` is what outcome.job indexes.
/// \return IoError naming the file when it cannot be written.
Status write_outcomes_csv(const std::string& path, const std::vector<Job>& jobs,
                          const std::vector<sim::JobOutcome>& outcomes, const Cluster& cluster);

}  // namespace rlsched::cli
