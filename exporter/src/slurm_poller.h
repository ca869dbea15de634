// One poll of slurmctld through libslurm: jobs, nodes and scheduler statistics, copied into a ClusterPoll. It runs on
// the exporter's own poll thread, never per scrape. Each poll loads the whole tables (see refresh() for why not
// "changes since"): one squeue's and one sinfo's worth of work for slurmctld per poll interval.
#pragma once

#include <memory>
#include <string>

#include "cluster_poll.h"
#include "rlsched/status.h"

namespace rlsched::exporter {

class SlurmPoller {
 public:
  /// slurm_conf: passed to slurm_init (empty: SLURM_CONF or Slurm's default). One per process: libslurm's
  /// configuration is global.
  explicit SlurmPoller(const std::string& slurm_conf);
  ~SlurmPoller();
  SlurmPoller(const SlurmPoller&) = delete;
  SlurmPoller& operator=(const SlurmPoller&) = delete;

  /// \return what slurmctld holds now, or IoError with libslurm's message (slurmctld down or unreachable).
  Result<ClusterPoll> poll();

 private:
  struct Tables;
  std::unique_ptr<Tables> tables_;
};

/// Parses a node's Gres= or GresUsed string as libslurm reports them ("gpu:h200:4(S:0-1),npu:910b:8",
/// "gpu:h200:2(IDX:0-1)"); shared GRES (mps, shard) are left out. Entries it cannot read are skipped.
std::vector<NodeAccelerators> parse_node_gres(const char* gres, const char* gres_used);

/// The accelerators a job asks for from its tres_per_* strings ("gres:gpu:h200:2"), in total.
AcceleratorAsk parse_job_ask(const char* per_job, const char* per_node, const char* per_task, std::int64_t nodes,
                             std::int64_t tasks);

}  // namespace rlsched::exporter
