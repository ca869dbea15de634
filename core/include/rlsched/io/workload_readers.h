// Readers that turn workload traces into Workloads. Every reader:
//  - keeps jobs in file order (consumers sort as their protocol demands);
//  - skips a malformed record with a reason "file:line: what is wrong" and counts it (ReadReport), never silently;
//  - fails as a whole (Status) only when the file cannot be read or its structure is unusable (no header, ...),
//    or when options.strict is set and any record was skipped.
#pragma once

#include <string>

#include "rlsched/job.h"
#include "rlsched/status.h"

namespace rlsched::io {

struct ReadOptions {
  bool strict = false;  ///< any skipped record fails the read (first reason as the message)
};

/// Standard Workload Format (Parallel Workloads Archive), plain or gzip; whitespace- or tab-separated 18 fields.
/// Mapping: id=f1, submit=f2, run_time=f4, cpus=max(f5,f8), time_limit=f9 (-1: use run time), user=f12,
/// account=f13 (group), priority_tier=f15 (queue), partitions={name of f16 from "; Partition: N name" header, or N}.
/// Header lines "; MaxNodes:" and "; MaxProcs:" fill Workload::max_nodes/max_procs.
/// Skipped: wrong field count, non-numeric field, unknown run time (f4 < 0), no processors.
Result<Workload> read_swf(const std::string& path, const ReadOptions& options = {});

/// `sacct --parsable2` output with a header line (see docs/sacct.md for the exact command).
/// Fields are found by header name; unknown fields are ignored; required: JobIDRaw, Submit, Start, End, State.
/// Job steps (JobIDRaw "N.batch", "N.0") are merged into their job; repeated JobIDRaw records (requeues with -D)
/// become one job whose last record is its final state and whose earlier records count as restarts.
/// Jobs that never started (PENDING, CANCELLED before start) or have not ended (RUNNING) are skipped with a reason.
Result<Workload> read_sacct(const std::string& path, const ReadOptions& options = {});

/// Alibaba cluster-trace-gpu-v2023 pod list CSV (openb_pod_list_*.csv).
/// Mapping: id=row index, submit=creation_time, run_time=deletion_time-scheduled_time, cpus=ceil(cpu_milli/1000),
/// mem_mb=memory_mib, accel={num_gpu, "gpu", gpu_spec split on '|'}, qos=qos. A fractional GPU (gpu_milli < 1000)
/// asks for one whole GPU (Slurm does not share). Pods never scheduled (Pending) are skipped with a reason.
Result<Workload> read_alibaba_pods(const std::string& path, const ReadOptions& options = {});

/// Picks the reader by content and name: ".swf"/".swf.gz" -> SWF, a header starting "JobIDRaw|" or containing
/// "|" with JobIDRaw -> sacct, a header starting "name,cpu_milli" -> Alibaba pods.
Result<Workload> read_workload(const std::string& path, const ReadOptions& options = {});

}  // namespace rlsched::io
