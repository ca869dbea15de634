// job_submit/rlsched's decision, as a pure function of the config, the partition snapshot and the job's request
// strings: which of the job's accelerator requests to re-map, where to, and what to tell the user and the admin.
#pragma once

#include <string>
#include <vector>

#include "rlsched/placement.h"
#include "rlsched/plugin_config.h"
#include "rlsched/rlsched.h"

namespace rlsched::capi {

struct SubmitDecision {
  int action = RLSCHED_SUBMIT_UNCHANGED;
  bool set_partition = false;
  std::string partition;
  bool set_tres_per_job = false, set_tres_per_node = false, set_tres_per_task = false;
  std::string tres_per_job, tres_per_node, tres_per_task;
  std::string message;  ///< one line; empty when there is nothing worth saying (no accelerators asked)
  double wait = 0, run = 0;
  // MODIFIED: where the request went, in the snapshot's terms.
  int partition_index = -1;
  int accelerators = 0;
  std::string gres, type;
  std::string job_class;  ///< the job's class in config job_classes; "" for none
  /// The one accelerator request found (whatever the action): its total over the job and its types (empty: any).
  int asked_accelerators = 0;
  std::vector<std::string> asked_types;
};

SubmitDecision decide_submit(const config::PluginConfig& config,
                             const std::vector<placement::PartitionState>& partitions, const rlsched_submit& job);

}  // namespace rlsched::capi
