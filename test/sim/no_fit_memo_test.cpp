// NoFitMemo (sim/src/resources.h): what the EASY backfill pass skips because a no larger demand fitted. It may only
// skip demands that find_allocation would reject on the same state.
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "resources.h"
#include "rlsched/sim/workload_generator.h"
#include "sim_fixtures.h"

namespace rlsched::sim {
namespace {

Demand gpus_on_nodes(int nodes, int gpus_per_node, int type, int cpus_per_node = 1) {
  Demand d;
  d.nodes = nodes;
  d.cpus_per_node = cpus_per_node;
  d.cpus = nodes * cpus_per_node;
  d.type = type;
  d.accel_per_node = gpus_per_node;
  return d;
}

Demand spread_cpus(int cpus) {
  Demand d;
  d.cpus = cpus;
  return d;
}

TEST_CASE("a demand at least as large as one that did not fit is known not to fit, on the same partition, type "
          "and bound only") {
  NoFitMemo memo;
  FreeState bound;
  const Demand two_h200 = gpus_on_nodes(1, 2, 0);
  memo.add(0, nullptr, two_h200);
  CHECK(memo.known(0, nullptr, two_h200));
  CHECK(memo.known(0, nullptr, gpus_on_nodes(1, 3, 0)));     // more GPUs on one node
  CHECK(memo.known(0, nullptr, gpus_on_nodes(2, 2, 0)));     // the same on two nodes
  CHECK(memo.known(0, nullptr, gpus_on_nodes(1, 2, 0, 4)));  // more CPUs beside them
  CHECK_FALSE(memo.known(0, nullptr, gpus_on_nodes(1, 1, 0)));  // smaller
  CHECK_FALSE(memo.known(1, nullptr, two_h200));                // another partition
  CHECK_FALSE(memo.known(0, nullptr, gpus_on_nodes(1, 2, 1)));  // another type
  CHECK_FALSE(memo.known(0, &bound, two_h200));                 // within a reservation's leftovers
  Demand more_memory = two_h200;
  more_memory.mem_per_node = 1024;
  CHECK(memo.known(0, nullptr, more_memory));

  // CPUs spread over nodes are placed by another walk: a per-node failure says nothing about them.
  CHECK_FALSE(memo.known(0, nullptr, spread_cpus(64)));
  memo.add(0, nullptr, spread_cpus(12));
  CHECK(memo.known(0, nullptr, spread_cpus(12)));
  CHECK(memo.known(0, nullptr, spread_cpus(13)));
  CHECK_FALSE(memo.known(0, nullptr, spread_cpus(11)));
  CHECK_FALSE(memo.known(0, nullptr, gpus_on_nodes(1, 0, -1, 12)));

  memo.clear();
  CHECK_FALSE(memo.known(0, nullptr, two_h200));
  CHECK_FALSE(memo.known(0, nullptr, spread_cpus(64)));
}

TEST_CASE("the memo never calls a demand unplaceable that find_allocation would place on the same state") {
  // Random states of a two-type cluster and random demands, recorded as find_allocation answers them: every
  // demand the memo then calls known must fail find_allocation too, and the memo must skip a share of them.
  Cluster cluster = test::gpu_cluster();
  cluster.nodes.push_back(Node{"h200-2", 16, 0, {GresCount{"gpu", "h200", 8}}});
  cluster.partitions[0].nodes.push_back(2);
  const Topology topology(cluster);
  std::mt19937 rng(7);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int skipped = 0, checked = 0;
  Allocation out;
  for (int state = 0; state < 200; ++state) {
    FreeState free = FreeState::AllFree(topology);
    for (int n = 0; n < topology.node_count(); ++n) free.cpus[n] = pick(0, topology.cpus[n]);
    for (std::size_t s = 0; s < free.slot_free.size(); ++s) free.slot_free[s] = pick(0, topology.slot_count[s]);
    FreeState bound = FreeState::AllFree(topology);
    for (std::size_t s = 0; s < bound.slot_free.size(); ++s) bound.slot_free[s] = pick(0, topology.slot_count[s]);
    NoFitMemo memo;
    for (int k = 0; k < 40; ++k) {
      const int partition = pick(0, 2);
      const FreeState* within = pick(0, 1) ? &bound : nullptr;
      const Demand d = pick(0, 3) == 0 ? spread_cpus(pick(1, 40)) : gpus_on_nodes(pick(1, 3), pick(1, 8), pick(0, 1),
                                                                                    pick(1, 8));
      const bool fits = find_allocation(topology, free, within, partition, d, out);
      if (memo.known(partition, within, d)) {
        ++skipped;
        INFO("state " << state << " demand " << k);
        CHECK_FALSE(fits);
      }
      if (!fits) memo.add(partition, within, d);
      ++checked;
    }
  }
  CHECK(skipped > checked / 10);
}

TEST_CASE("EASY backfill makes the same schedule with the memo and without it") {
  // Generated GPU and CPU sites, deep queues (load 1.5), under rules with and without ageing: every job starts at
  // the same second on the same nodes and type, and the backfill pass started jobs (it was exercised).
  for (const WorkloadFamily family : {WorkloadFamily::kGpu, WorkloadFamily::kCpu}) {
    GeneratorSpec spec;
    spec.family = family;
    spec.seed = 11;
    spec.jobs = 1500;
    spec.load = 1.5;
    spec.cpus = 512;
    auto generated = generate_workload(spec);
    REQUIRE(generated.ok());
    for (const char* policy : {"sjf", "wfp3", "area:1/1/0.5"}) {
      INFO(to_string(family) << " " << policy);
      SimConfig with, without;
      without.skip_known_no_fit = false;
      const SimResult a = test::run(generated->cluster, generated->workload.jobs, policy, with);
      const SimResult b = test::run(generated->cluster, generated->workload.jobs, policy, without);
      CHECK(a.counters.backfilled_jobs > 0);
      CHECK(a.counters.backfilled_jobs == b.counters.backfilled_jobs);
      REQUIRE(a.outcomes.size() == b.outcomes.size());
      std::size_t differing = 0;
      for (std::size_t i = 0; i < a.outcomes.size(); ++i) {
        const JobOutcome &x = a.outcomes[i], &y = b.outcomes[i];
        if (x.start != y.start || x.end != y.end || x.nodes != y.nodes || x.accelerator_type != y.accelerator_type ||
            x.partition != y.partition)
          ++differing;
      }
      CHECK(differing == 0);
    }
  }
}

}  // namespace
}  // namespace rlsched::sim
