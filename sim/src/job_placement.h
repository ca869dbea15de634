// Where a job that allows several accelerator types runs, under each SimConfig::placement mode. The modes that
// decide at submit from the job alone (first fit's node order, recorded, fastest) rewrite its request once, before
// the run; the predictive mode asks rlsched/placement.h at the job's arrival (SlurmSim::place_at_submit), with the
// same model job_submit/rlsched uses in slurmctld.
#pragma once

#include "job_request.h"
#include "rlsched/sim/simulator.h"

namespace rlsched::sim {

/// Applies a static mode (kFirstFit, kRecorded, kFastest) to the request of `job`; the others leave it as it is.
void apply_static_placement(const Cluster& cluster, const Topology& topology, const FreeState& idle, const Job& job,
                            const PlacementSettings& settings, JobRequest& request);

/// Pins the request to accelerator type `type` on partition `partition` (-1: on every partition the job may use
/// that has the type: its own when it named some, else settings.partitions, else its eligible ones).
/// \return false (request unchanged) when no such partition can ever hold the job with that type.
bool pin(const Cluster& cluster, const Topology& topology, const FreeState& idle, const Job& job,
         const PlacementSettings& settings, int partition, int type, JobRequest& request);

/// Gives the request a placement set (partition, type) best first, as job_submit/rlsched writes it: one member
/// pins partition and type; two or more list the partitions and drop the type (each partition offers one type of
/// the GRES), so the scheduler starts the job in whichever member can start it first. Members that can never hold
/// the job are dropped. \return false (request unchanged) when none is left.
bool pin_set(const Cluster& cluster, const Topology& topology, const FreeState& idle, const Job& job,
             const std::vector<std::pair<int, int>>& set, JobRequest& request);

}  // namespace rlsched::sim
