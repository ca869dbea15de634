// Preemption in the Slurm model: small clusters where every start, loss and requeue is worked out by hand.
#include "rlsched/sim/preemption.h"

#include <catch2/catch.hpp>
#include <random>

#include "rlsched/sim/simulator.h"
#include "sim_fixtures.h"

using namespace rlsched;
using namespace rlsched::sim;
using rlsched::test::gpu_job;

namespace {

/// `nodes` nodes "n1", "n2", ... with 8 CPUs and 4 a100 GPUs each (speed 1), all in partition "gpu".
Cluster gpu_nodes(int nodes) {
  Cluster c;
  c.accelerator_types = {AcceleratorType{"a100", "gpu", 1.0, {}}};
  Partition all{"gpu", {}, 1, 1, 0, true};
  for (int n = 0; n < nodes; ++n) {
    c.nodes.push_back(Node{"n" + std::to_string(n + 1), 8, 0, {GresCount{"gpu", "a100", 4}}});
    all.nodes.push_back(n);
  }
  c.partitions = {all};
  return c;
}

/// A 4-GPU job of QOS normal, limit 2x its run.
Job normal_job(JobId id, Seconds submit, Seconds run) {
  Job j = gpu_job(id, submit, run, 4, {}, 2 * run);
  j.qos = "normal";
  return j;
}

Job checkpointing(Job j, Seconds interval, Seconds cost) {
  j.checkpoint_interval = interval;
  j.checkpoint_cost = cost;
  return j;
}

Job urgent_job(JobId id, Seconds submit, Seconds run, int gpus = 4) {
  Job j = gpu_job(id, submit, run, gpus, {}, 2 * run);
  j.qos = "urgent";
  return j;
}

/// urgent preempts normal; min run 600 s, at most 2 preemptions a day, grace = cost + 30 s.
SimConfig preempting(PreemptionMode mode) {
  SimConfig c;
  c.preemption.mode = mode;
  c.preemption.rules = {PreemptRule{"urgent", {"normal"}}};
  c.preemption.policy.min_run_time = 600;
  c.preemption.policy.max_preemptions = 2;
  c.preemption.policy.window = 86400;
  c.preemption.policy.grace_margin = 30;
  return c;
}

SimResult run(const Cluster& cluster, const std::vector<Job>& jobs, const SimConfig& config) {
  auto scorer = make_scorer("fcfs");
  REQUIRE(scorer.ok());
  auto result = simulate(cluster, jobs, **scorer, config);
  INFO(result.status().message());
  REQUIRE(result.ok());
  return std::move(*result);
}

}  // namespace

TEST_CASE("an urgent job preempts a checkpointable job: it starts after the victim's grace, the victim resumes") {
  // A (4 GPUs, 10,000 s, checkpoint every 30 min costing 90 s) runs from t=0; urgent U (4 GPUs, 500 s) arrives at
  // t=1,000 on the one full node.
  const std::vector<Job> jobs = {checkpointing(normal_job(1, 0, 10000), 1800, 90), urgent_job(2, 1000, 500)};
  const Cluster cluster = gpu_nodes(1);

  SECTION("checkpoint mode") {
    const auto r = run(cluster, jobs, preempting(PreemptionMode::kCheckpoint));
    // Grace 90 + 30 s: U starts at 1,120 and ends at 1,620; A keeps its progress up to the signal (1,000 s) and
    // runs its other 9,000 s from 1,620.
    CHECK(r.outcomes[1].start == 1120);
    CHECK(r.outcomes[0].preemptions == 1);
    CHECK(r.outcomes[0].restarts == 1);
    CHECK(r.outcomes[0].start == 1620);
    CHECK(r.outcomes[0].end == 10620);
    // Lost: the checkpoint's 90 s on 4 GPUs.
    CHECK(r.outcomes[0].lost_accelerator_seconds == 90 * 4);
    CHECK(r.metrics.lost_accelerator_hours == Approx(360.0 / 3600));
    // Held 1,120 + 9,000 s (A) + 500 s (U), useful 1,000 + 9,000 + 500 s, all on 4 GPUs.
    CHECK(r.metrics.goodput == Approx(10500.0 / 10620.0));
    CHECK(r.metrics.preemptions == 1);
    CHECK(r.counters.preemptions == 1);
  }
  SECTION("the grace time is the checkpoint cost plus the margin") {
    SimConfig config = preempting(PreemptionMode::kCheckpoint);
    config.preemption.policy.grace_margin = 0;
    const auto r = run(cluster, jobs, config);
    CHECK(r.outcomes[1].start == 1090);
  }
  SECTION("restart overhead and requeue delay") {
    SimConfig config = preempting(PreemptionMode::kCheckpoint);
    config.preemption.restart_overhead = 60;
    config.requeue_delay = 1000;  // A is requeued at 1,120, eligible at 2,120 (U is done at 1,620)
    const auto r = run(cluster, jobs, config);
    CHECK(r.outcomes[0].start == 2120);
    CHECK(r.outcomes[0].end == 2120 + 60 + 9000);
  }
  SECTION("requeue mode: at once, and the victim restarts from scratch") {
    const auto r = run(cluster, jobs, preempting(PreemptionMode::kRequeue));
    CHECK(r.outcomes[1].start == 1000);
    CHECK(r.outcomes[0].start == 1500);
    CHECK(r.outcomes[0].end == 11500);
    CHECK(r.outcomes[0].lost_accelerator_seconds == 1000 * 4);
    CHECK(r.metrics.goodput == Approx(10500.0 / 11500.0));
  }
  SECTION("no preemption: U waits for A") {
    const auto r = run(cluster, jobs, preempting(PreemptionMode::kNone));
    CHECK(r.outcomes[1].start == 10000);
    CHECK(r.outcomes[0].preemptions == 0);
    CHECK(r.metrics.goodput == 1.0);
    REQUIRE(r.metrics.per_qos.size() == 2);
    CHECK(r.metrics.per_qos[0].name == "normal");
    CHECK(r.metrics.per_qos[1].name == "urgent");
    CHECK(r.metrics.per_qos[1].avg_wait == 9000);
  }
}

TEST_CASE("a job that is not checkpointable is never a victim in checkpoint mode") {
  // Two nodes: A (not checkpointable) on n1 and B (checkpointable) on n2, both from t=0; U needs one node at 1,000.
  const std::vector<Job> jobs = {normal_job(1, 0, 10000), checkpointing(normal_job(2, 0, 10000), 1800, 90),
                                 urgent_job(3, 1000, 500)};
  const auto r = run(gpu_nodes(2), jobs, preempting(PreemptionMode::kCheckpoint));
  CHECK(r.outcomes[0].preemptions == 0);
  CHECK(r.outcomes[1].preemptions == 1);
  CHECK(r.outcomes[2].start == 1120);

  SECTION("with only such jobs running, the urgent job waits") {
    const std::vector<Job> plain = {normal_job(1, 0, 10000), urgent_job(2, 1000, 500)};
    const auto c = run(gpu_nodes(1), plain, preempting(PreemptionMode::kCheckpoint));
    CHECK(c.outcomes[1].start == 10000);
    CHECK(c.metrics.preemptions == 0);
    // Slurm's plain preempt/qos takes it anyway.
    const auto q = run(gpu_nodes(1), plain, preempting(PreemptionMode::kRequeue));
    CHECK(q.outcomes[1].start == 1000);
    CHECK(q.outcomes[0].preemptions == 1);
  }
  SECTION("unless its QOS is preemptable: then it loses its whole run, without grace") {
    const std::vector<Job> plain = {normal_job(1, 0, 10000), urgent_job(2, 1000, 500)};
    SimConfig config = preempting(PreemptionMode::kCheckpoint);
    config.preemption.policy.preemptable_qos = {"normal"};
    const auto c = run(gpu_nodes(1), plain, config);
    CHECK(c.outcomes[1].start == 1000);
    CHECK(c.outcomes[0].lost_accelerator_seconds == 1000 * 4);
    CHECK(c.outcomes[0].end == 1500 + 10000);
  }
}

TEST_CASE("a victim must have run the minimum run time") {
  // A starts at 0; U arrives at 300, before A's 600 s minimum: A is signalled at 600, U starts after the grace.
  const std::vector<Job> jobs = {checkpointing(normal_job(1, 0, 10000), 1800, 90), urgent_job(2, 300, 500)};
  const auto r = run(gpu_nodes(1), jobs, preempting(PreemptionMode::kCheckpoint));
  CHECK(r.outcomes[1].start == 600 + 120);
  CHECK(r.outcomes[0].preemptions == 1);
  // Resumed with the progress of its first 600 s.
  CHECK(r.outcomes[0].end == 720 + 500 + 9400);
}

TEST_CASE("a job is preempted at most max_preemptions times in the window") {
  // U1 at 1,000 preempts A (grace 120 s: U1 runs 1,120..1,220, A resumes at 1,220 with 9,000 s left). U2 arrives
  // at 2,000, when A has run 780 s of its new run.
  const std::vector<Job> jobs = {checkpointing(normal_job(1, 0, 10000), 1800, 90), urgent_job(2, 1000, 100),
                                 urgent_job(3, 2000, 100)};
  SECTION("cap 1: U2 waits for A to finish") {
    SimConfig config = preempting(PreemptionMode::kCheckpoint);
    config.preemption.policy.max_preemptions = 1;
    const auto r = run(gpu_nodes(1), jobs, config);
    CHECK(r.outcomes[0].preemptions == 1);
    CHECK(r.outcomes[2].start == 1220 + 9000);
  }
  SECTION("cap 2: U2 preempts A again") {
    const auto r = run(gpu_nodes(1), jobs, preempting(PreemptionMode::kCheckpoint));
    CHECK(r.outcomes[0].preemptions == 2);
    CHECK(r.outcomes[2].start == 2120);
    // A kept 1,000 + 780 s; it resumes when U2 ends at 2,220.
    CHECK(r.outcomes[0].end == 2220 + 10000 - 1780);
  }
}

TEST_CASE("the victim that loses the least work since its last checkpoint goes first") {
  // A on n1 checkpoints every 1,800 s, B on n2 every 650 s; at 2,000 A would lose 200 s, B 2,000 - 1,950 = 50 s.
  auto jobs_with = [](Seconds interval_a, Seconds interval_b) {
    return std::vector<Job>{checkpointing(normal_job(1, 0, 10000), interval_a, 90),
                            checkpointing(normal_job(2, 0, 10000), interval_b, 90), urgent_job(3, 2000, 500)};
  };
  const auto r = run(gpu_nodes(2), jobs_with(1800, 650), preempting(PreemptionMode::kCheckpoint));
  CHECK(r.outcomes[0].preemptions == 0);
  CHECK(r.outcomes[1].preemptions == 1);
  const auto swapped = run(gpu_nodes(2), jobs_with(650, 1800), preempting(PreemptionMode::kCheckpoint));
  CHECK(swapped.outcomes[0].preemptions == 1);
  CHECK(swapped.outcomes[1].preemptions == 0);
}

TEST_CASE("just enough victims are taken, only where the urgent job can run") {
  // Four 2-GPU checkpointable jobs fill two nodes (two per node); U needs 2 GPUs: one victim, not two.
  std::vector<Job> jobs;
  for (int i = 0; i < 4; ++i) {
    Job j = checkpointing(normal_job(i + 1, 0, 10000), 1800, 90);
    j.accel.count = 2;
    jobs.push_back(j);
  }
  jobs.push_back(urgent_job(5, 1000, 500, 2));
  const auto r = run(gpu_nodes(2), jobs, preempting(PreemptionMode::kCheckpoint));
  CHECK(r.metrics.preemptions == 1);
  CHECK(r.outcomes[4].start == 1120);

  SECTION("a victim on a partition the urgent job may not use is never taken") {
    Cluster cluster = gpu_nodes(2);
    cluster.partitions.push_back(Partition{"n2only", {1}, 1, 1, 0, false});
    std::vector<Job> pinned = jobs;
    pinned[4].partitions = {"n2only"};
    const auto p = run(cluster, pinned, preempting(PreemptionMode::kCheckpoint));
    CHECK(p.metrics.preemptions == 1);
    // Jobs 1 and 2 start first fit on n1, jobs 3 and 4 on n2: the victim is one of the latter.
    CHECK(p.outcomes[0].preemptions + p.outcomes[1].preemptions == 0);
  }
}

TEST_CASE("a checkpointable job on a failed node resumes from its last periodic checkpoint") {
  // A (10,000 s, checkpoint every 1,800 s) on n1 from t=0; n1 fails at 4,000: the checkpoint at 3,600 holds,
  // 400 s are lost; A restarts on n2 at once and pays a 60 s restart overhead.
  const std::vector<Job> jobs = {checkpointing(normal_job(1, 0, 10000), 1800, 90)};
  SimConfig config = preempting(PreemptionMode::kCheckpoint);
  config.preemption.restart_overhead = 60;
  config.failures = {NodeFailure{0, 4000, 5000}};
  const auto r = run(gpu_nodes(2), jobs, config);
  CHECK(r.outcomes[0].restarts == 1);
  CHECK(r.outcomes[0].preemptions == 0);
  CHECK(r.outcomes[0].start == 4000);
  CHECK(r.outcomes[0].end == 4000 + 60 + 6400);
  CHECK(r.outcomes[0].lost_accelerator_seconds == 400 * 4);

  SECTION("without checkpoint-restart (mode none) it restarts from scratch") {
    SimConfig none = config;
    none.preemption.mode = PreemptionMode::kNone;
    const auto s = run(gpu_nodes(2), jobs, none);
    CHECK(s.outcomes[0].end == 4000 + 10000);
    CHECK(s.outcomes[0].lost_accelerator_seconds == 4000 * 4);
  }
}

TEST_CASE("with preemption rules but mode none, urgent jobs queue first and preempt nothing") {
  // A runs; B (normal, earlier) and U (urgent, later) wait: U goes first when A ends.
  const std::vector<Job> jobs = {normal_job(1, 0, 1000), normal_job(2, 10, 1000), urgent_job(3, 20, 1000)};
  const auto r = run(gpu_nodes(1), jobs, preempting(PreemptionMode::kNone));
  CHECK(r.outcomes[2].start == 1000);
  CHECK(r.outcomes[1].start == 2000);
  CHECK(r.metrics.preemptions == 0);
}

TEST_CASE("preemption modes parse by name, and bad names say what is known") {
  CHECK(*parse_preemption_mode("none") == PreemptionMode::kNone);
  CHECK(*parse_preemption_mode("requeue") == PreemptionMode::kRequeue);
  CHECK(*parse_preemption_mode("checkpoint") == PreemptionMode::kCheckpoint);
  const auto bad = parse_preemption_mode("qos");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("none, requeue, checkpoint"));
  CHECK(std::string(to_string(PreemptionMode::kCheckpoint)) == "checkpoint");
}

TEST_CASE("injection marks short jobs urgent and long jobs checkpointable, the same way for a seed") {
  std::vector<Job> jobs;
  for (int i = 0; i < 1000; ++i) jobs.push_back(normal_job(i + 1, i, i % 2 == 0 ? 3600 : 36000));
  for (Job& j : jobs) j.qos.clear();
  std::vector<Job> again = jobs;
  const std::size_t urgent = mark_urgent(jobs, 0.2, 7);
  CHECK(mark_urgent(again, 0.2, 7) == urgent);
  CHECK(urgent > 60);   // 500 short jobs, share 0.2: about 100
  CHECK(urgent < 140);
  std::size_t declared = declare_checkpoints(jobs, preemption::Checkpoint{1800, 90}, 1.0, 7);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    CHECK(jobs[i].qos == again[i].qos);
    if (jobs[i].qos == "urgent") {
      CHECK(jobs[i].run_time <= 7200);
      CHECK(jobs[i].checkpoint_interval == 0);
    } else {
      CHECK(jobs[i].qos == "normal");
      CHECK(jobs[i].checkpoint_interval == 1800);  // every limit (2x run) is above 30 minutes
    }
  }
  CHECK(declared == jobs.size() - urgent);
}

TEST_CASE("on a random workload every mode finishes every job, and checkpoint mode takes only checkpointable victims") {
  // 400 GPU jobs of 1, 2 or 4 GPUs on 4 nodes; a fifth short and urgent, half the long ones checkpointing.
  std::mt19937_64 rng(5);
  std::vector<Job> jobs;
  for (int i = 0; i < 400; ++i) {
    const Seconds run = std::uniform_int_distribution<Seconds>(600, 20000)(rng);
    Job j = normal_job(i + 1, std::uniform_int_distribution<Seconds>(0, 200000)(rng), run);
    j.accel.count = 1 << std::uniform_int_distribution<int>(0, 2)(rng);
    j.qos.clear();
    jobs.push_back(j);
  }
  mark_urgent(jobs, 0.2, 3);
  declare_checkpoints(jobs, preemption::Checkpoint{1800, 90}, 0.5, 3);
  for (const PreemptionMode mode : {PreemptionMode::kNone, PreemptionMode::kRequeue, PreemptionMode::kCheckpoint}) {
    INFO(to_string(mode));
    SimConfig config = preempting(mode);
    config.preemption.restart_overhead = 60;
    config.requeue_delay = 30;
    const auto r = run(gpu_nodes(4), jobs, config);
    CHECK(r.metrics.completed == jobs.size());
    std::size_t preemptions = 0;
    for (const JobOutcome& o : r.outcomes) {
      const Job& j = jobs[o.job];
      preemptions += static_cast<std::size_t>(o.preemptions);
      CHECK(o.start >= j.submit);
      if (j.qos == "urgent") CHECK(o.preemptions == 0);
      if (mode == PreemptionMode::kCheckpoint && o.preemptions > 0) {
        CHECK(j.checkpoint_interval > 0);
        // Each preemption that ended in a requeue lost the checkpoint's 90 s on the job's GPUs, nothing more.
        CHECK(o.lost_accelerator_seconds == Approx(90.0 * j.accel.count * o.restarts));
      }
    }
    CHECK(preemptions == r.counters.preemptions);
    if (mode == PreemptionMode::kNone) CHECK(preemptions == 0);
    if (mode != PreemptionMode::kNone) CHECK(preemptions > 0);
  }
}
