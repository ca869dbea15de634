#include "rlsched/sim/simulator.h"

#include <catch2/catch.hpp>
#include <map>
#include <random>

#include "sim_fixtures.h"

using namespace rlsched;
using namespace rlsched::sim;
using rlsched::test::cpu_job;
using rlsched::test::run;
using rlsched::test::gpu_job;

namespace {


}  // namespace

TEST_CASE("a job on an idle cluster starts at submit and runs its run time") {
  const auto r = run(Cluster::Homogeneous(2, 4), {cpu_job(1, 100, 50, 6)});
  REQUIRE(r.outcomes.size() == 1);
  CHECK(r.outcomes[0].start == 100);
  CHECK(r.outcomes[0].end == 150);
  CHECK(r.outcomes[0].state == JobEnd::kCompleted);
  CHECK(r.metrics.avg_wait == 0);
  CHECK(r.metrics.completed == 1);
}

TEST_CASE("jobs queue in priority order when the cluster is full") {
  // One 4-CPU node. FCFS runs 1, 2, 3 in submit order; SJF lets the shorter job 3 pass job 2.
  const std::vector<Job> jobs = {cpu_job(1, 0, 100, 4), cpu_job(2, 1, 50, 4), cpu_job(3, 2, 10, 4)};
  const auto fcfs = run(Cluster::Homogeneous(1, 4), jobs, "fcfs");
  CHECK(fcfs.outcomes[1].start == 100);
  CHECK(fcfs.outcomes[2].start == 150);
  const auto sjf = run(Cluster::Homogeneous(1, 4), jobs, "sjf");
  CHECK(sjf.outcomes[2].start == 100);
  CHECK(sjf.outcomes[1].start == 110);
}

TEST_CASE("a job is killed at its time limit") {
  const auto r = run(Cluster::Homogeneous(1, 4), {cpu_job(1, 0, 500, 2, 60), cpu_job(2, 0, 10, 4)});
  CHECK(r.outcomes[0].state == JobEnd::kTimeout);
  CHECK(r.outcomes[0].end == 60);
  CHECK(r.outcomes[1].start == 60);
  CHECK(r.metrics.timed_out == 1);
}

TEST_CASE("EASY backfill starts short jobs early but never delays the reservation") {
  // 4 CPUs. A holds 2 until t=100. B needs all 4: reserved for t=100. C (2 CPUs, ends by t=52) backfills at t=2.
  // D (2 CPUs, limit 200) would still run at t=100 and take CPUs B needs, so it waits until B is done.
  const std::vector<Job> jobs = {cpu_job(1, 0, 100, 2), cpu_job(2, 1, 50, 4), cpu_job(3, 2, 50, 2),
                                 cpu_job(4, 3, 200, 2)};
  std::vector<ScheduleEvent> events;
  SimConfig config;
  config.observer = [&](const ScheduleEvent& e) { events.push_back(e); };
  const auto easy = run(Cluster::Homogeneous(1, 4), jobs, "fcfs", config);
  CHECK(easy.outcomes[2].start == 2);
  CHECK(easy.outcomes[1].start == 100);
  CHECK(easy.outcomes[3].start == 150);
  CHECK(easy.counters.backfilled_jobs == 1);
  bool reserved_b = false;
  for (const auto& e : events)
    if (e.kind == ScheduleEvent::Kind::kReservation && e.job == 1) reserved_b = reserved_b || e.reserved_start == 100;
  CHECK(reserved_b);

  SimConfig none;
  none.backfill = Backfill::kNone;
  const auto strict = run(Cluster::Homogeneous(1, 4), jobs, "fcfs", none);
  CHECK(strict.outcomes[2].start == 150);  // C waits behind B without backfill
  CHECK(strict.counters.backfilled_jobs == 0);
}

TEST_CASE("a long job may backfill onto CPUs the reservation does not need") {
  // 8 CPUs. A holds 6 until t=100; B needs 4 (reserved at t=100, leaving 4 spare then); D (2 CPUs, long) fits in
  // both what is free now and what B leaves over, so it starts at once.
  const std::vector<Job> jobs = {cpu_job(1, 0, 100, 6), cpu_job(2, 1, 50, 4), cpu_job(3, 2, 1000, 2)};
  const auto r = run(Cluster::Homogeneous(1, 8), jobs);
  CHECK(r.outcomes[2].start == 2);
  CHECK(r.outcomes[1].start == 100);
}

TEST_CASE("backfilled jobs never delay any reservation (randomised, exact time limits)") {
  // With time limits equal to run times the reservation is exact, so under FCFS a job must start no later than
  // any reservation made for it. Per-node reservations (GPU jobs with node counts) and aggregate ones (CPU jobs).
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    const bool gpus = seed % 2 == 0;
    const Cluster cluster = gpus ? rlsched::test::gpu_cluster() : Cluster::Homogeneous(8, 4);
    std::vector<Job> jobs;
    Seconds t = 0;
    for (int i = 0; i < 300; ++i) {
      t += std::uniform_int_distribution<Seconds>(0, 30)(rng);
      const Seconds runtime = std::uniform_int_distribution<Seconds>(1, 400)(rng);
      if (gpus) {
        Job j = gpu_job(i + 1, t, runtime, std::uniform_int_distribution<int>(1, 4)(rng), {"a100"}, runtime);
        j.nodes = 1;
        j.cpus = std::uniform_int_distribution<int>(1, 8)(rng);
        j.partitions = {"a100"};
        jobs.push_back(j);
      } else {
        jobs.push_back(cpu_job(i + 1, t, runtime, std::uniform_int_distribution<int>(1, 32)(rng)));
      }
    }
    std::map<int, Seconds> earliest_reservation;
    SimConfig config;
    config.observer = [&](const ScheduleEvent& e) {
      if (e.kind != ScheduleEvent::Kind::kReservation) return;
      auto [it, inserted] = earliest_reservation.emplace(e.job, e.reserved_start);
      if (!inserted) it->second = std::min(it->second, e.reserved_start);
    };
    const auto r = run(cluster, jobs, "fcfs", config);
    CHECK(r.counters.backfilled_jobs > 0);
    for (const auto& [job, reserved] : earliest_reservation) {
      INFO("seed " << seed << " job " << jobs[job].id);
      CHECK(r.outcomes[job].start <= reserved);
    }
  }
}

TEST_CASE("typeless GPU jobs take the fastest free type, run time scales with its speed") {
  const Cluster c = rlsched::test::gpu_cluster();
  // Job 1 takes all h200s (runs 100/2 = 50 s); job 2 (typeless) finds h200 busy and runs on a100 for 100 s.
  // Job 3 asks for a100 only; job 4 is a ResNet-50, 4x faster on h200, submitted when h200 is free again.
  std::vector<Job> jobs = {gpu_job(1, 0, 100, 4), gpu_job(2, 0, 100, 2), gpu_job(3, 0, 100, 2, {"a100"}),
                           gpu_job(4, 60, 100, 2)};
  jobs[3].job_class = "ResNet-50";
  const auto r = run(c, jobs);
  const int h200 = 0, a100 = 1;
  CHECK(r.outcomes[0].accelerator_type == h200);
  CHECK(r.outcomes[0].run() == 50);
  CHECK(r.outcomes[1].accelerator_type == a100);
  CHECK(r.outcomes[1].run() == 100);
  CHECK(r.outcomes[2].accelerator_type == a100);
  CHECK(r.outcomes[2].start == 0);
  CHECK(r.outcomes[3].accelerator_type == h200);
  CHECK(r.outcomes[3].start == 60);
  CHECK(r.outcomes[3].run() == 25);
  REQUIRE(r.metrics.per_type.size() == 2);
  CHECK(r.metrics.per_type[h200].jobs == 2);
  CHECK(r.metrics.per_type[a100].jobs == 2);
}

TEST_CASE("a trace run time recorded on one type is rescaled to the type the job gets") {
  Cluster c = rlsched::test::gpu_cluster();
  Job j = gpu_job(1, 0, 100, 2, {"a100"});
  j.ran_on_type = "h200";  // 100 s on h200 (speed 2) is 200 s of work at speed 1
  const auto r = run(c, {j});
  CHECK(r.outcomes[0].run() == 200);
}

TEST_CASE("jobs that can never run are rejected with a reason, others still run") {
  Cluster c = rlsched::test::gpu_cluster();
  Job too_wide = gpu_job(1, 0, 10, 8, {"h200"});
  too_wide.nodes = 1;
  Job unknown_type = gpu_job(2, 0, 10, 1, {"v100"});
  Job unknown_partition = cpu_job(3, 0, 10, 1);
  unknown_partition.partitions = {"nope"};
  Job ok = cpu_job(4, 0, 10, 1);
  const auto r = run(c, {too_wide, unknown_type, unknown_partition, ok});
  CHECK(r.outcomes[0].state == JobEnd::kRejected);
  CHECK(r.outcomes[1].state == JobEnd::kRejected);
  CHECK(r.outcomes[2].state == JobEnd::kRejected);
  CHECK(r.outcomes[3].state == JobEnd::kCompleted);
  CHECK(r.metrics.rejected == 3);
  CHECK(r.counters.rejections.count("no partition named 'nope'") == 1);
}

TEST_CASE("a multi-partition job starts in whichever of its partitions has room") {
  Cluster c = rlsched::test::gpu_cluster();
  Job busy = cpu_job(1, 0, 100, 8);
  busy.partitions = {"h200"};
  Job either = cpu_job(2, 1, 10, 4);
  either.partitions = {"h200", "a100"};
  const auto r = run(c, {busy, either});
  CHECK(r.outcomes[1].start == 1);
  CHECK(c.partitions[r.outcomes[1].partition].name == "a100");
}

TEST_CASE("a node failure requeues its jobs, which restart from scratch") {
  // Two 4-CPU nodes; job 1 runs on n0 from t=0; n0 fails at t=30 and returns at t=1000.
  // Job 1 restarts at once on n1 and runs its full 100 s again; the 30 s done before are lost.
  SimConfig config;
  config.failures = {NodeFailure{0, 30, 1000}};
  const auto r = run(Cluster::Homogeneous(2, 4), {cpu_job(1, 0, 100, 4)}, "fcfs", config);
  CHECK(r.outcomes[0].restarts == 1);
  CHECK(r.outcomes[0].start == 30);
  CHECK(r.outcomes[0].end == 130);
  CHECK(r.outcomes[0].lost_cpu_seconds == 30 * 4);
  CHECK(r.counters.requeues == 1);
  CHECK(r.metrics.lost_cpu_hours == Approx(120.0 / 3600));
}

TEST_CASE("a job waits while the only node that can run it is down") {
  SimConfig config;
  config.failures = {NodeFailure{0, 0, 500}};
  const auto r = run(Cluster::Homogeneous(1, 4), {cpu_job(1, 10, 100, 4)}, "fcfs", config);
  CHECK(r.outcomes[0].start == 500);
}

TEST_CASE("multifactor priority: QOS and age order the queue, fair-share penalises heavy users") {
  Cluster c = Cluster::Homogeneous(1, 4);
  c.priority.qos = 10000;
  c.priority.age = 1000;
  c.priority.fairshare = 0;
  c.qos = {Qos{"normal", 0}, Qos{"high", 100}};
  std::vector<Job> jobs = {cpu_job(1, 0, 1000, 4), cpu_job(2, 1, 10, 4), cpu_job(3, 2, 10, 4)};
  jobs[2].qos = "high";
  const auto r = run(c, jobs, "multifactor");
  CHECK(r.outcomes[2].start == 1000);  // high QOS first, though submitted later
  CHECK(r.outcomes[1].start == 1010);

  Cluster fs = Cluster::Homogeneous(1, 4);
  fs.priority.fairshare = 10000;
  fs.priority.calc_period = 10;
  // heavy used the node for 1000 s; at t=1000 light's job outranks heavy's earlier one.
  std::vector<Job> share = {cpu_job(1, 0, 1000, 4, 0, "heavy"), cpu_job(2, 5, 10, 4, 0, "heavy"),
                            cpu_job(3, 6, 10, 4, 0, "light")};
  const auto f = run(fs, share, "multifactor");
  CHECK(f.outcomes[2].start == 1000);
  CHECK(f.outcomes[1].start == 1010);
}

TEST_CASE("higher partition PriorityTier is scheduled first") {
  Cluster c = Cluster::Homogeneous(1, 4);
  c.partitions.push_back(Partition{"urgent", {0}, 1, 5, 0, false});
  std::vector<Job> jobs = {cpu_job(1, 0, 100, 4), cpu_job(2, 1, 10, 4), cpu_job(3, 2, 10, 4)};
  jobs[2].partitions = {"urgent"};
  const auto r = run(c, jobs);
  CHECK(r.outcomes[2].start == 100);
  CHECK(r.outcomes[1].start == 110);
}

TEST_CASE("the simulator is deterministic and accounts for every job exactly once") {
  std::mt19937_64 rng(7);
  std::vector<Job> jobs;
  for (int i = 0; i < 500; ++i)
    jobs.push_back(cpu_job(i + 1, i * 7, std::uniform_int_distribution<Seconds>(0, 900)(rng),
                           std::uniform_int_distribution<int>(1, 40)(rng),
                           std::uniform_int_distribution<Seconds>(1, 1200)(rng), "u" + std::to_string(i % 9)));
  jobs.push_back(cpu_job(9999, 10, 10, 1000));  // wider than the cluster: rejected
  SimConfig config;
  config.failures = random_failures(Cluster::Homogeneous(8, 8), 0, 4000, 2.0, 0.1, 3);
  REQUIRE_FALSE(config.failures.empty());
  const auto a = run(Cluster::Homogeneous(8, 8), jobs, "wfp3", config);
  const auto b = run(Cluster::Homogeneous(8, 8), jobs, "wfp3", config);
  REQUIRE(a.outcomes.size() == jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    CHECK(a.outcomes[i].start == b.outcomes[i].start);
    CHECK(a.outcomes[i].end == b.outcomes[i].end);
  }
  CHECK(a.metrics.completed + a.metrics.timed_out + a.metrics.rejected + a.metrics.unfinished == jobs.size());
  CHECK(a.metrics.rejected == 1);
  CHECK(a.metrics.unfinished == 0);
}

TEST_CASE("the simulator refuses an invalid cluster") {
  Cluster c = Cluster::Homogeneous(1, 4);
  c.nodes[0].cpus = 0;
  auto scorer = make_scorer("fcfs");
  auto r = simulate(c, {cpu_job(1, 0, 1, 1)}, **scorer);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("cpus must be > 0") != std::string::npos);
}

TEST_CASE("the invariants are checked after every scheduling pass where the build asks for it") {
  std::vector<Job> jobs;
  for (int i = 0; i < 20; ++i) jobs.push_back(cpu_job(i + 1, i * 10, 100, 1 + i % 4));
  const auto r = run(Cluster::Homogeneous(2, 4), jobs);
  REQUIRE(r.counters.scheduling_passes > 1);
#if defined(RLSCHED_SIM_INVARIANTS) || !defined(NDEBUG)
  // The asan-ubsan preset (RLSCHED_SIM_INVARIANTS=ON) and Debug builds: CI runs the invariants per event.
  CHECK(r.counters.invariant_checks == r.counters.scheduling_passes);
#else
  CHECK(r.counters.invariant_checks == 0);
#endif
}
