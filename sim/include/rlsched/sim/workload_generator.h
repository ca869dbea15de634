// Synthetic workload families for training and judging policies on workloads no model was trained on
// (docs/workload-generator.md). A family and a seed give a cluster and its jobs; the seed also draws the family's
// parameters (load, size and run-time distributions, estimate habits, burstiness, cluster size), so that each seed
// is a different site.
//
// The CPU family follows Lublin and Feitelson (2003) for sizes, run times and the daily arrival cycle, and Tsafrir,
// Etsion and Feitelson (2005) for the time limits users ask for; the GPU family keeps that shape on a cluster of
// GPU partitions, one accelerator type each, with per-class speeds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/job.h"
#include "rlsched/status.h"

namespace rlsched::sim {

enum class WorkloadFamily { kCpu, kGpu };

const char* to_string(WorkloadFamily family);
/// "cpu" or "gpu". \return InvalidInput naming the known families otherwise.
Result<WorkloadFamily> parse_workload_family(const std::string& text);

struct GeneratorSpec {
  WorkloadFamily family = WorkloadFamily::kCpu;
  std::uint64_t seed = 1;
  std::size_t jobs = 10000;
  std::optional<double> load;  ///< offered load target, (0, 10]; default: drawn from the seed in [0.5, 0.95]
  std::optional<int> cpus;     ///< cluster size in CPUs, [8, 1048576]; default: drawn log-uniform in [64, 8192]
  /// Share of short runs among the widest jobs, [0, 1]; default: drawn in [0.05, 0.3], so that wider jobs run longer
  /// (Lublin and Feitelson's CPU machines). At about the share of the smallest jobs, run time does not depend on
  /// width, as in Gavel's Philly-derived GPU jobs (docs/workload-generator.md).
  std::optional<double> short_share_widest;
};

/// The parameters a seed drew (or the spec fixed), kept with the workload so a report can say what was generated.
struct GeneratorParams {
  double load = 0;  ///< offered load target
  int cpus = 0;     ///< CPUs of the cluster
  int cpus_per_node = 0;
  int users = 0;
  double serial_share = 0;        ///< CPU family: share of one-CPU jobs
  double power_of_two_share = 0;  ///< share of parallel sizes rounded to a power of two
  double size_low_share = 0;      ///< two-stage log-uniform: share of the lower stage
  double size_split = 0;          ///< log2 of the size where the stages meet
  double short_mean_log = 0;      ///< hyper-gamma: mean ln(run time) of the short component
  double long_mean_log = 0;       ///< ... of the long component
  double short_share_serial = 0;  ///< share of the short component for the smallest jobs ...
  double short_share_widest = 0;  ///< ... and for the widest (linear in log2 size between them)
  double daily_amplitude = 0;     ///< arrival rate swings between 1 - a and 1 + a of its mean over a day
  double burst_share = 0;         ///< share of submissions that are a batch of similar jobs (parameter sweeps)
  double max_limit_share = 0;     ///< share of jobs asking for the maximum time limit
  double killed_share = 0;        ///< share of jobs that run into their limit and are killed
  double habit_share = 0;         ///< share of a user's jobs drawn around that user's typical size and run time
  Seconds max_limit = 0;          ///< partition MaxTime: the longest limit anyone may ask for
  double typed_share = 0;         ///< GPU family: share of requests naming an accelerator type
  std::vector<std::string> accelerator_types;  ///< GPU family: the types, slowest first
};

struct GeneratedWorkload {
  Workload workload;  ///< jobs in submit order, submit times from 0 (midnight of day one)
  Cluster cluster;
  GeneratorParams params;
  double offered_load = 0;  ///< achieved, as sim::offered_load measures it (GPU-seconds for the GPU family)
};

/// The round time limits users ask for (Tsafrir et al. 2005 found ~20 values cover ~90% of requests), ascending.
const std::vector<Seconds>& round_time_limits();

/// Generates the workload and cluster of `spec`; the same spec gives the same result on every run, and with any
/// standard library: std::mt19937_64 with draws of its own, no std:: distributions, whose output the standard leaves
/// to the implementation (a libm whose log or exp differ in the last bit could still move a rounding).
/// \return InvalidInput for jobs == 0 or an override out of range.
Result<GeneratedWorkload> generate_workload(const GeneratorSpec& spec);

}  // namespace rlsched::sim
