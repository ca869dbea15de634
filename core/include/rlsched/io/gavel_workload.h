// A heterogeneous-GPU workload derived from two real sources, for judging accelerator placement (docs/placement.md):
//  - the jobs and their work from Gavel's Philly-derived traces (msr_seed0/*.trace: model, steps, GPUs, arrival),
//  - each job's speed on K80, P100 and V100 from Gavel's measured throughputs (simulation_throughputs.json),
//  - which types each job may use from the GPU-type constraints of Alibaba's openb pods (gpuspec CSV), optional.
// Gavel's traces were run on one GPU type and record none; Alibaba's pods record type constraints but no speeds.
// Together they give jobs with measured per-type speeds and realistic any-of sets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/io/workload_readers.h"
#include "rlsched/job.h"
#include "rlsched/status.h"

namespace rlsched::io {

struct GavelOptions {
  /// Alibaba openb pod list with a gpu_spec column (openb_pod_list_gpuspec33.csv); empty: every job may use any type.
  std::string any_of_pods;
  std::uint64_t seed = 1;  ///< draws the type each job "recorded" (see read_gavel_workload)
  ReadOptions read;
};

struct GavelWorkload {
  Workload workload;
  /// k80, p100, v100 (GRES gpu): class_speed per job class from the throughputs, speed = their geometric mean.
  std::vector<AcceleratorType> types;
  std::size_t constrained = 0;  ///< jobs whose any-of set excludes some usable type
};

/// Reads `dir` (a copy of Gavel's scheduler data: simulation_throughputs.json and msr_seed0/*.trace). Per job:
///  - job_class "MODEL (batch size B) xS": the throughput entry used, S the largest measured scale <= the job's GPUs
///    (1, 2, 4 or 8; larger jobs scale linearly from S);
///  - class speeds: the job's throughput on each type divided by its throughput on its slowest usable type (so the
///    slowest is 1.0); a type with throughput 0 cannot run the class and is left out of its any-of set;
///  - accel: {GPUs, "gpu", allowed types}, where the allowed types are the pod's gpu_spec mapped to Gavel's types
///    (P100, T4 -> p100; V100M16, V100M32, A10 -> v100; the undisclosed G1-G3 constrain nothing), pod k for job k in
///    arrival order, cycling through the GPU pods; empty (any type) when the set covers every usable type;
///  - ran_on_type ("the type the trace recorded"): one of the allowed types, drawn uniformly with `seed`;
///    run_time: steps / throughput on that type; time_limit: the run time on the slowest allowed type + 60 s;
///  - submit: the trace's arrival time (all VC traces merged), user and account: the VC (trace file name).
Result<GavelWorkload> read_gavel_workload(const std::string& dir, const GavelOptions& options = {});

/// Gives `cluster`'s k80, p100 and v100 (GRES gpu) the speeds Gavel measured (`GavelWorkload::types`), in place of
/// the speeds its file gives them. A cluster without one of them cannot run the workload: InvalidInput naming
/// `cluster_source` and the type, and the cluster is left as it was.
Status use_measured_speeds(const std::vector<AcceleratorType>& measured, Cluster& cluster,
                           const std::string& cluster_source);

}  // namespace rlsched::io
