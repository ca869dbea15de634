// What the simulator must do as slurmctld 22.05 does (issue #14: one Slurm model). Each expected value is worked
// out by hand from Slurm's rules, quoted beside it; none is copied from the simulator's output.
#include <catch2/catch.hpp>

#include "rlsched/sim/simulator.h"
#include "sim_fixtures.h"

using namespace rlsched;
using namespace rlsched::sim;
using rlsched::test::cpu_job;

namespace {

SimResult run(const Cluster& cluster, const std::vector<Job>& jobs, const char* policy = "fcfs",
              SimConfig config = {}) {
  auto scorer = make_scorer(policy);
  REQUIRE(scorer.ok());
  auto result = simulate(cluster, jobs, **scorer, config);
  INFO(result.status().message());
  REQUIRE(result.ok());
  return std::move(*result);
}

Cluster one_node(std::int64_t mem_mb) {
  Cluster c = Cluster::Homogeneous(1, 8);
  c.nodes[0].mem_mb = mem_mb;
  return c;
}

}  // namespace

TEST_CASE("memory binds only on nodes that track it") {
  // Two 4-CPU jobs that each ask for the node's whole 8000 MiB (sacct's ReqTRES mem= under CR_Core).
  Job a = cpu_job(1, 0, 100, 4);
  Job b = cpu_job(2, 0, 100, 4);
  a.mem_mb = b.mem_mb = 8000;
  SECTION("mem_mb 0 (CR_Core, or a cluster YAML without memory): both run at once, neither is rejected") {
    const auto r = run(one_node(0), {a, b});
    CHECK(r.outcomes[0].start == 0);
    CHECK(r.outcomes[1].start == 0);
    CHECK(r.metrics.rejected == 0);
  }
  SECTION("mem_mb 8000 (CR_Core_Memory): the second waits for the first's memory, at t = 100") {
    const auto r = run(one_node(8000), {a, b});
    CHECK(r.outcomes[0].start == 0);
    CHECK(r.outcomes[1].start == 100);
  }
}
