// Small builders for simulator tests: jobs and clusters written out in one line each.
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rlsched/cluster.h"
#include "rlsched/job.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/simulator.h"

namespace rlsched::test {

inline Job cpu_job(JobId id, Seconds submit, Seconds run, int cpus, Seconds limit = 0, std::string user = "u1") {
  Job j;
  j.id = id;
  j.submit = submit;
  j.run_time = run;
  j.time_limit = limit > 0 ? limit : run;
  j.cpus = cpus;
  j.user = std::move(user);
  return j;
}

inline Job gpu_job(JobId id, Seconds submit, Seconds run, int gpus, std::vector<std::string> types = {},
                   Seconds limit = 0) {
  Job j = cpu_job(id, submit, run, 1, limit > 0 ? limit : 10 * run);
  j.accel.count = gpus;
  j.accel.name = "gpu";
  j.accel.types = std::move(types);
  return j;
}

/// Two GPU nodes: "h200-1" (4 x h200, speed 2) and "a100-1" (4 x a100, speed 1), 8 CPUs each, in partition "gpu";
/// plus partitions "h200" and "a100" with one node each.
inline Cluster gpu_cluster() {
  Cluster c;
  c.accelerator_types = {AcceleratorType{"h200", "gpu", 2.0, {{"ResNet-50", 4.0}}},
                         AcceleratorType{"a100", "gpu", 1.0, {}}};
  c.nodes = {Node{"h200-1", 8, 0, {GresCount{"gpu", "h200", 4}}}, Node{"a100-1", 8, 0, {GresCount{"gpu", "a100", 4}}}};
  Partition all{"gpu", {0, 1}, 1, 1, 0, true};
  Partition h200{"h200", {0}, 1, 1, 0, false};
  Partition a100{"a100", {1}, 1, 1, 0, false};
  c.partitions = {all, h200, a100};
  return c;
}

/// Simulates `jobs` on `cluster` under a built-in scorer; the run must succeed.
inline sim::SimResult run(const Cluster& cluster, const std::vector<Job>& jobs, const char* policy = "fcfs",
                          sim::SimConfig config = {}) {
  auto scorer = make_scorer(policy);
  REQUIRE(scorer.ok());
  auto result = sim::simulate(cluster, jobs, **scorer, config);
  INFO(result.status().message());
  REQUIRE(result.ok());
  return std::move(*result);
}

}  // namespace rlsched::test
