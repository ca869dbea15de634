// What the simulator must do as slurmctld 22.05 does (issue #14: one Slurm model). Each expected value is worked
// out by hand from Slurm's rules, quoted beside it; none is copied from the simulator's output.
#include <catch2/catch.hpp>

#include "rlsched/sim/simulator.h"
#include "sim_fixtures.h"

using namespace rlsched;
using namespace rlsched::sim;
using rlsched::test::cpu_job;
using rlsched::test::run;

namespace {


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

TEST_CASE("the job size factor is the mean of the node and CPU shares, as priority/multifactor 22.05 has it") {
  // Three 8-CPU nodes (the lab's shape): factor = (1/3 + cpus/24) / 2, so 1 CPU: 0.1875, 2 CPUs: 0.2083 (sprio's
  // 19 and 21 with weight 100; a CPU share alone would give 4 and 8). Age weight 1000 over 86400 s.
  Cluster c = Cluster::Homogeneous(3, 8);
  c.priority = PriorityWeights{};
  c.priority.age = 1000;
  c.priority.max_age = 86400;
  c.priority.job_size = 100;
  c.priority.calc_period = 10;
  // Blockers A (22 CPUs until 1000) and B (2 CPUs until 400) fill the cluster. X (1 CPU, submitted at 1) and
  // Y (2 CPUs, at 301) compete for B's 2 CPUs at t = 400, priorities last computed at the tick of t = 400:
  //   X: 100 x 0.1875 + 1000 x 399 / 86400 = 18.75 + 4.62 = 23.37 -> 23
  //   Y: 100 x 0.2083 + 1000 x  99 / 86400 = 20.83 + 1.15 = 21.98 -> 21
  // so X starts at 400 and Y, which no longer fits, when X's CPU frees at 450. (With the CPU share alone, Y's
  // 8.33 + 1.15 would beat X's 4.17 + 4.62: Y at 400, X at 450.)
  std::vector<Job> jobs = {cpu_job(1, 0, 1000, 22), cpu_job(2, 0, 400, 2), cpu_job(3, 1, 50, 1),
                           cpu_job(4, 301, 50, 2)};
  SimConfig config;
  config.backfill = Backfill::kNone;
  const auto r = run(c, jobs, "multifactor", config);
  CHECK(r.outcomes[2].start == 400);
  CHECK(r.outcomes[3].start == 450);
}

TEST_CASE("priorities are whole numbers: a fraction of a point does not beat an earlier submit") {
  // One 200-CPU node, job size weight 100 only: factor = (1/1 + cpus/200) / 2, so 1 CPU: 50.25 -> 50 and
  // 3 CPUs: 50.75 -> 50, a tie that the earlier submit wins. Blockers A (197 CPUs until 1000) and B (3 CPUs until
  // 100); X (1 CPU, submitted at 1, runs 50) and Y (3 CPUs, at 2) compete for B's 3 CPUs at t = 100: X starts
  // then, Y (3) no longer fits and starts when X ends at 150. Unrounded, Y's 50.75 would go first (Y at 100, X at
  // 150, when Y's 50 s end). The site weight keeps its default (score_scale 100000): the multifactor policy is
  // Slurm without a site factor plugin, so ranking its own scores must add nothing.
  Cluster c = Cluster::Homogeneous(1, 200);
  c.priority = PriorityWeights{};
  REQUIRE(c.priority.site_scale() == 100000);
  c.priority.job_size = 100;
  c.priority.calc_period = 10;
  std::vector<Job> jobs = {cpu_job(1, 0, 1000, 197), cpu_job(2, 0, 100, 3), cpu_job(3, 1, 50, 1),
                           cpu_job(4, 2, 50, 3)};
  SimConfig config;
  config.backfill = Backfill::kNone;
  const auto r = run(c, jobs, "multifactor", config);
  CHECK(r.outcomes[2].start == 100);
  CHECK(r.outcomes[3].start == 150);
}

TEST_CASE("a job that cannot start takes its partition's nodes out of the main pass") {
  // gpu_cluster: h200-1 and a100-1 (8 CPUs each), partitions gpu (both), h200, a100. A holds a100-1's CPUs,
  // B 6 of h200-1's; C (4 CPUs, partition gpu) cannot start, and slurmctld's main pass then removes both nodes
  // (fail_by_part), so D (1 CPU + 1 H200, which would fit on h200-1) waits although it fits.
  Cluster c = rlsched::test::gpu_cluster();
  Job a = cpu_job(1, 0, 100, 8);
  a.partitions = {"a100"};
  Job b = cpu_job(2, 0, 100, 6);
  b.partitions = {"h200"};
  Job blocked = cpu_job(3, 1, 50, 4);
  blocked.nodes = 1;
  Job d = rlsched::test::gpu_job(4, 2, 50, 1, {"h200"});
  d.partitions = {"h200"};
  SimConfig config;
  SECTION("no backfill: D starts when A and B end, at 100") {
    config.backfill = Backfill::kNone;
    const auto r = run(c, {a, b, blocked, d}, "fcfs", config);
    CHECK(r.outcomes[2].start == 100);
    CHECK(r.outcomes[3].start == 100);
  }
  SECTION("sched/backfill: D starts at the first cycle after its submit (bf_interval 30 from the first submit)") {
    config.main_pass_delay = 0;  // this rule alone; the delay has its own test
    // C's reservation at 100 is on a100-1 (best fit between two idle nodes: the first in slurmctld's node order,
    // by name), D needs h200-1.
    config.backfill = Backfill::kSlurm;
    const auto r = run(c, {a, b, blocked, d}, "fcfs", config);
    CHECK(r.outcomes[3].start == 30);
    CHECK(r.outcomes[2].start == 100);
  }
}

TEST_CASE("sched/backfill reserves whole nodes for every pending job, at bf_resolution") {
  // One 8-CPU node. A (6 CPUs) runs [0, 100). B (4 CPUs, limit 50) cannot start: the cycle at 30 reserves the node
  // for it over [floor(100/60)*60, floor(150/60)*60) = [60, 120). C (1 CPU, limit 200) fits in the 2 free CPUs and
  // would not delay B (EASY lets it in), but its [30, 230] overlaps B's node reservation: it is reserved from 120
  // instead, and the main pass starts it after B at 100. E (1 CPU, limit 20): [30, 50] misses every reservation and
  // starts in the cycle at 30. F (1 CPU, limit 40): [30, 70] touches B's [60, 120), so it waits for the main pass
  // at 100; with bf_resolution 1 B's reservation is [100, 150) and F starts at 30 too.
  Cluster c = Cluster::Homogeneous(1, 8);
  std::vector<Job> jobs = {cpu_job(1, 0, 100, 6), cpu_job(2, 1, 50, 4), cpu_job(3, 2, 200, 1), cpu_job(5, 3, 20, 1),
                           cpu_job(6, 4, 40, 1)};
  for (Job& j : jobs) j.nodes = 1;
  SimConfig config;
  config.backfill = Backfill::kSlurm;
  config.main_pass_delay = 0;  // these rules alone; the delay has its own test
  SECTION("bf_resolution 60 (Slurm's default)") {
    const auto r = run(c, jobs, "fcfs", config);
    CHECK(r.outcomes[1].start == 100);
    CHECK(r.outcomes[2].start == 100);
    CHECK(r.outcomes[3].start == 30);
    CHECK(r.outcomes[4].start == 100);
  }
  SECTION("bf_resolution 1") {
    c.backfill.resolution = 1;
    const auto r = run(c, jobs, "fcfs", config);
    CHECK(r.outcomes[3].start == 30);
    CHECK(r.outcomes[4].start == 30);
  }
  SECTION("EASY, for contrast: C and E take the 2 free CPUs at once (neither delays B's 4 of 8 CPUs at 100)") {
    config.backfill = Backfill::kEasy;
    const auto r = run(c, jobs, "fcfs", config);
    CHECK(r.outcomes[2].start == 2);
    CHECK(r.outcomes[3].start == 3);
  }
}

TEST_CASE("a one-node job goes to the node with the fewest CPUs left that fits (cons_tres best fit)") {
  // A (4 CPUs) runs on a100-1. B (4 CPUs, partition gpu): first fit would take h200-1, best fit takes a100-1's
  // last 4, leaving h200-1 whole for C (8 CPUs), which starts at once instead of at 100.
  Cluster c = rlsched::test::gpu_cluster();
  Job a = cpu_job(1, 0, 100, 4);
  a.partitions = {"a100"};
  Job b = cpu_job(2, 1, 100, 4);
  Job whole = cpu_job(3, 2, 100, 8);
  a.nodes = b.nodes = whole.nodes = 1;
  SimConfig config;
  config.backfill = Backfill::kNone;
  const auto r = run(c, {a, b, whole}, "fcfs", config);
  CHECK(r.outcomes[1].start == 1);
  CHECK(r.outcomes[2].start == 2);
}

TEST_CASE("nodes are taken in slurmctld's node order, by name, not as slurm.conf or the partition lists them") {
  // slurmctld sorts its node table by name (read_config.c, strnatcmp): a100-1, h200-1, npu-1, and node2 before
  // node10. The fixture's nodes and its partition `gpu` list h200-1 first; on an idle cluster best fit ties, and
  // the first node in slurmctld's order wins: a 1-CPU job runs on a100-1.
  Cluster c = rlsched::test::gpu_cluster();
  c.partitions.push_back(Partition{"mixed", {0, 1}});
  Job a = cpu_job(1, 0, 100, 1);
  a.partitions = {"mixed"};
  a.nodes = 1;
  SimConfig config;
  config.backfill = Backfill::kNone;
  const auto r = run(c, {a}, "fcfs", config);
  REQUIRE(r.outcomes[0].nodes.size() == 1);
  CHECK(c.nodes[r.outcomes[0].nodes[0]].name == "a100-1");

  // Natural order: node2 before node10, whatever the list says.
  Cluster ten = Cluster::Homogeneous(2, 8);
  ten.nodes[0].name = "node10";
  ten.nodes[1].name = "node2";
  const auto t = run(ten, {cpu_job(1, 0, 100, 1)}, "fcfs", config);
  REQUIRE(t.outcomes[0].nodes.size() == 1);
  CHECK(ten.nodes[t.outcomes[0].nodes[0]].name == "node2");
}

TEST_CASE("under sched/backfill a submit's main pass runs on the next tick, an end's at once") {
  // slurmctld's background thread runs the pass a submit asks for on its next tick, about once a second (on the
  // lab 0.03-2.2 s after the RPC; sacct keeps whole seconds); the RPC that reports a job's epilog complete calls
  // schedule() itself, unthrottled. One 8-CPU node: A (8 CPUs, 50 s) submitted at 10 starts at 11; B (8 CPUs) submitted at 20
  // starts when A ends at 61. With both delays 0: 10 and 60; with an end delay of 1 s: 11 and 62.
  Cluster c = Cluster::Homogeneous(1, 8);
  std::vector<Job> jobs = {cpu_job(1, 10, 50, 8), cpu_job(2, 20, 50, 8)};
  SimConfig config;
  config.backfill = Backfill::kSlurm;
  SECTION("default") {
    const auto r = run(c, jobs, "fcfs", config);
    CHECK(r.outcomes[0].start == 11);
    CHECK(r.outcomes[1].start == 61);
  }
  SECTION("main_pass_delay 0") {
    config.main_pass_delay = 0;
    const auto r = run(c, jobs, "fcfs", config);
    CHECK(r.outcomes[0].start == 10);
    CHECK(r.outcomes[1].start == 60);
  }
  SECTION("end_pass_delay 1") {
    config.end_pass_delay = 1;
    const auto r = run(c, jobs, "fcfs", config);
    CHECK(r.outcomes[0].start == 11);
    CHECK(r.outcomes[1].start == 62);
  }
}

TEST_CASE("a submit's main pass comes at most once per batch_sched_delay") {
  // controller.c: the background thread calls schedule() for queued submits only when batch_sched_delay (3 s by
  // default) has passed since it last did. Three 8-CPU nodes, backfill far away (bf_interval 300, phase 200):
  // A submitted at 10 starts on the tick at 11; B submitted at 12 waits for 11 + 3 = 14; C at 20 starts at 21.
  // With batch_sched_delay=0, B starts at 13.
  Cluster c = Cluster::Homogeneous(3, 8);
  c.backfill.interval = 300;
  std::vector<Job> jobs = {cpu_job(1, 10, 500, 8), cpu_job(2, 12, 500, 8), cpu_job(3, 20, 500, 8)};
  SimConfig config;
  config.backfill = Backfill::kSlurm;
  config.backfill_phase = 200;
  SECTION("default: 3 s") {
    const auto r = run(c, jobs, "fcfs", config);
    CHECK(r.outcomes[0].start == 11);
    CHECK(r.outcomes[1].start == 14);
    CHECK(r.outcomes[2].start == 21);
  }
  SECTION("batch_sched_delay=0") {
    c.backfill.batch_sched_delay = 0;
    const auto r = run(c, jobs, "fcfs", config);
    CHECK(r.outcomes[0].start == 11);
    CHECK(r.outcomes[1].start == 13);
    CHECK(r.outcomes[2].start == 21);
  }
}

TEST_CASE("a backfill plan's start is cons_tres's will-run estimate: running jobs taken away in widening batches") {
  // One 8-CPU node: A (4 CPUs) ends by its limit at 100, B (2 CPUs) at 115, C (2 CPUs) at 200; D (4 CPUs, limit
  // 50) waits. _will_run_test takes running jobs away in end order: the first batch reaches the first end's next
  // 30-s mark plus 30 s, 100 -> 120 + 30 = 150, so A and B go together (C's 200 is past it) and D fits on what
  // they leave; the start is the last one's end, 115, not the 100 at which A alone would make room.
  Cluster c = Cluster::Homogeneous(1, 8);
  std::vector<Job> jobs = {cpu_job(1, 0, 100, 4), cpu_job(2, 0, 115, 2), cpu_job(3, 0, 200, 2),
                           cpu_job(4, 1, 50, 4)};
  SimConfig config;
  config.backfill = Backfill::kSlurm;
  config.main_pass_delay = 0;
  Seconds planned = -1;
  config.observer = [&](const ScheduleEvent& e) {
    if (e.kind == ScheduleEvent::Kind::kReservation && e.job == 3 && planned < 0) planned = e.reserved_start;
  };
  const auto r = run(c, jobs, "fcfs", config);
  CHECK(planned == 115);
  CHECK(r.outcomes[3].start == 100);  // the main pass starts it when A's CPUs free
}

TEST_CASE("the backfill thread sees its second as it began, before that second's ends") {
  // Nodes n0 and n1 (8 CPUs each). X (8 CPUs, 30 s) runs on n0, Y (8 CPUs, 1000 s) on n1. Big (16 CPUs) cannot
  // start before Y ends, and the main pass, finding it blocked, takes every node of the partition out: S (1 CPU,
  // 10 s) can only be backfilled. At 30 X ends, in the same second as a backfill cycle (the grid is at 0, 30, 60,
  // ...): slurmctld's cycle woke at the start of that second, with X still running, so S starts at the next cycle,
  // 60, not at 30.
  Cluster c = Cluster::Homogeneous(2, 8);
  std::vector<Job> jobs = {cpu_job(1, 0, 30, 8), cpu_job(2, 0, 1000, 8), cpu_job(3, 1, 100, 16),
                           cpu_job(4, 2, 10, 1)};
  for (Job& j : jobs) j.nodes = j.cpus > 8 ? 2 : 1;
  SimConfig config;
  config.backfill = Backfill::kSlurm;
  config.main_pass_delay = 0;
  const auto r = run(c, jobs, "fcfs", config);
  CHECK(r.outcomes[0].start == 0);
  CHECK(r.outcomes[1].start == 0);
  CHECK(r.outcomes[3].start == 60);
  CHECK(r.outcomes[2].start == 1000);
}
