// What rlsched explain and estimate compute from libslurm's records without a cluster: an ended job's time
// suspended (live/live_cluster.h), which the plugin gets whole from slurmctld (tot_sus_time) and the live tools must
// rebuild, so that both learn the same run from it. The live tools themselves are tested on a real slurmctld
// (test/e2e/test_explain.py, test_predicted_run_times.py), where the plugin's kept history hides this figure.
#include "live/live_cluster.h"

#include <catch2/catch.hpp>

namespace rlsched::cli::live {

TEST_CASE("an ended job's time suspended is its elapsed time less what it ran before and after its last resume",
          "[cli][live]") {
  // Never suspended: libslurm's suspend_time is 0.
  CHECK(suspended_seconds(1000, 1600, 0, 0) == 0);
  // Suspended at its start for 20 s; its sleep had run out meanwhile, so it ended at the resume (as in the lab).
  CHECK(suspended_seconds(1000, 1020, 1020, 0) == 20);
  // 5 s, suspended 20 s, 5 s more.
  CHECK(suspended_seconds(1000, 1030, 1025, 5) == 20);
  // Twice: 5 s, 10 s suspended, 5 s, 10 s suspended, 5 s (pre_sus_time adds up the runs before the last resume).
  CHECK(suspended_seconds(1000, 1035, 1030, 10) == 20);
  // Ended while suspended (cancelled): the last suspension cannot be told from a run, and is counted as one.
  CHECK(suspended_seconds(1000, 1025, 1005, 5) == 0);
  // Records that cannot hold: never started, or a resume after the end.
  CHECK(suspended_seconds(0, 1025, 1005, 5) == 0);
  CHECK(suspended_seconds(1000, 1025, 1030, 5) == 0);
}

}  // namespace rlsched::cli::live
