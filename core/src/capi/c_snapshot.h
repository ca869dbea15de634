// The C ABI's structs (rlsched.h) in the core's terms: what the engine's scoring and submit paths, and the parity
// tests, build from a C cluster snapshot and C jobs (c_snapshot.cpp); and the config values the C side reads back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capi/job_classes.h"
#include "rlsched/job_view.h"
#include "rlsched/placement.h"
#include "rlsched/plugin_config.h"
#include "rlsched/rlsched.h"
#include "rlsched/status.h"

namespace rlsched::capi {

/// A C string as a view; NULL reads as "".
std::string_view view(const char* s);

/// A job's class without a cache (one job at a time); "" when no class is configured or matches.
std::string class_of(const config::PluginConfig& config, const rlsched_job& job);

/// \return rlsched.h's RLSCHED_RECORD_* for where the config has job_submit record its decision.
int32_t c_record_field(config::RecordField field);

/// \return InvalidInput naming the first NULL array or name, or negative count, in a C cluster snapshot.
Status check_cluster(const rlsched_cluster& c);

/// What every job of a batch shares: the cluster snapshot in job_view's terms, and the speeds of its pools per job
/// class, looked up once per class and batch (the rest of the batch reads them through a pointer).
class BatchView {
 public:
  BatchView(const rlsched_cluster& cluster, const config::PluginConfig& config);
  /// Speeds of state.pools for jobs of `job_class` ("" : the types' own speeds); valid while this view lives.
  const double* speeds_for(const std::string& job_class);

  job_view::ClusterState state;

 private:
  const config::PluginConfig& config_;
  std::vector<std::pair<std::string, std::vector<double>>> speeds_;  // a handful of classes per batch
};

/// The pending-job view the policy scores, from a C job and the cluster snapshot: the C side of job_view::build
/// (feature schema v1 inputs). `job_class` is the job's class (ClassCache), "" for none. Exposed for the parity
/// tests: the plugin's numbers must equal what the simulator computes for the same state.
PendingJob to_pending_job(const rlsched_job& job, const rlsched_cluster& cluster, const config::PluginConfig& config,
                          Seconds now, BatchView& batch, const std::string& job_class);
/// The same for one job (a view of its own; classes are looked up without a cache).
PendingJob to_pending_job(const rlsched_job& job, const rlsched_cluster& cluster, const config::PluginConfig& config,
                          Seconds now);

/// The placement snapshot of a cluster: its partitions and pools, with the queue's pending and running work added.
std::vector<placement::PartitionState> to_partition_states(const rlsched_cluster& cluster, const rlsched_job* queue,
                                                           std::size_t n_queue, Seconds now,
                                                           const config::PluginConfig& config, ClassCache& classes);

}  // namespace rlsched::capi
