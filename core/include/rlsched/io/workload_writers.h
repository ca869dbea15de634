// Writers for the formats the readers take, so that a generated workload (sim/workload_generator.h) reaches
// simulate, evaluate and train through the readers every trace goes through. Each writer's output reads back
// through its reader to the same jobs (test/sim/workload_generator_test.cpp checks it).
#pragma once

#include <string>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/job.h"
#include "rlsched/status.h"

namespace rlsched::io {

/// Standard Workload Format with a header (Version, Computer, MaxJobs, MaxRecords, MaxNodes, MaxProcs, MaxRuntime,
/// UnixStartTime, Note), so that the SWF reader implies `cluster` (homogeneous, CPU only) from MaxNodes/MaxProcs.
/// Users "uN" and accounts "gN" become the numbers N (as read_swf names them); other names are numbered in order of
/// appearance. Status is 1 (completed), or 0 for a job whose run time reached its limit (killed).
/// Submit times are written as they are (seconds from the start of the log, so >= 0); `unix_start` > 0 gives the
/// UnixStartTime line, `note` a "; Note:" line.
/// \return IoError naming the file, InvalidInput for jobs with accelerators or a negative submit time.
Status write_swf(const std::vector<Job>& jobs, const Cluster& cluster, const std::string& path, Seconds unix_start = 0,
                 const std::string& note = {});

/// `sacct --parsable2` with a header line, one record per job (no steps), fields JobIDRaw, JobName (the job class),
/// User, Account, Partition, QOS, Submit, Start, End, Elapsed, TimelimitRaw, ReqTRES, AllocTRES (the type the job
/// ran on), NNodes, NCPUS, State (COMPLETED, or TIMEOUT where the run reached the limit). Times are `epoch` plus the
/// job's submit in UTC. A workload is demand, not a schedule: Start is the submit time (no wait), End = Start + run.
/// Limits are written in whole minutes, rounded up. \return IoError naming the file.
Status write_sacct(const std::vector<Job>& jobs, const std::string& path, Seconds epoch = 0);

/// rlsched cluster YAML (docs/cluster-yaml.md): accelerator types with speeds and class speeds, nodes grouped into
/// hostlists, partitions, QOS and priority weights. \return IoError naming the file.
Status write_cluster_yaml(const Cluster& cluster, const std::string& path);

}  // namespace rlsched::io
