// Per-class accelerator speeds learned from a cluster's own accounting: the same job class (job name) run on
// several types, compared at equal accelerator counts. `rlsched speeds --sacct DUMP` prints the result as the
// job_classes section of rlsched.yaml (docs/placement.md).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/job.h"
#include "rlsched/status.h"

namespace rlsched::io {

struct TypeRuns {
  std::size_t runs = 0;
  double median_seconds = 0;  ///< over all its runs, whatever their accelerator count
};

struct ClassSpeeds {
  std::string job_class;
  std::string anchor;                   ///< the type it ran on most: its speed there is the type's default
  std::map<std::string, double> speed;  ///< type -> speed (same scale as the types' default speeds)
  std::map<std::string, TypeRuns> runs;
};

struct SpeedHistory {
  std::size_t jobs_used = 0;     ///< accelerator jobs with a class, a recorded type and a run time
  std::size_t jobs_ignored = 0;  ///< accelerator jobs lacking one of those
  std::vector<AcceleratorType> types;  ///< default speeds: the given ones, or learned (see learn_speeds)
  std::vector<ClassSpeeds> classes;    ///< classes with speeds on at least two types
  /// Classes left out, with why: "bert: ran on a100 only", "gpt: 2 runs on h200, needs 3".
  std::vector<std::string> left_out;
};

/// Learns speeds from `jobs` (Job::job_class, ran_on_type, run_time, accel.count). For each class, each type's
/// median run time is compared with the anchor type's at the same accelerator count; the ratios of the counts both
/// ran with are combined by geometric mean weighted by runs. A (class, type) pair needs `min_runs` runs.
/// `defaults` are the types' default speeds (rlsched.yaml accelerator_types); when empty they are learned: 1.0 for
/// the type with most runs, the geometric mean of the classes' ratios for the others.
/// \return InvalidInput when no job has what is needed.
Result<SpeedHistory> learn_speeds(const std::vector<Job>& jobs, const std::vector<AcceleratorType>& defaults,
                                  std::size_t min_runs = 3);

/// The accelerator_types (when learned) and job_classes sections of rlsched.yaml, with comments saying what each
/// speed rests on. Job names are matched literally (glob characters escaped).
std::string speeds_yaml(const SpeedHistory& history, const std::string& source);

}  // namespace rlsched::io
