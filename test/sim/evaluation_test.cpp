#include "rlsched/sim/evaluation.h"

#include <catch2/catch.hpp>

#include "sim_fixtures.h"

using namespace rlsched;
using namespace rlsched::sim;
using rlsched::test::cpu_job;

TEST_CASE("the implied cluster comes from the SWF header, else from the widest job") {
  Workload w;
  w.max_nodes = 4;
  w.max_procs = 32;
  w.jobs = {cpu_job(1, 0, 10, 3)};
  auto c = implied_cluster(w);
  REQUIRE(c.ok());
  CHECK(c->nodes.size() == 4);
  CHECK(c->nodes[0].cpus == 8);
  REQUIRE(c->partitions.size() == 1);

  Workload headless;
  headless.jobs = {cpu_job(1, 0, 10, 3), cpu_job(2, 0, 10, 17)};
  auto h = implied_cluster(headless);
  REQUIRE(h.ok());
  CHECK(h->total_cpus() == 17);
}

TEST_CASE("every partition a trace names spans the implied machine, so no job is rejected for its partition") {
  Workload w;
  w.max_nodes = 2;
  w.jobs = {cpu_job(1, 0, 10, 1), cpu_job(2, 0, 10, 1)};
  w.jobs[0].partitions = {"gpu"};
  w.jobs[1].partitions = {"debug"};
  auto c = implied_cluster(w);
  REQUIRE(c.ok());
  REQUIRE(c->partitions.size() == 2);
  CHECK(c->partitions[0].name == "gpu");
  CHECK(c->partitions[0].is_default);
  CHECK(c->partitions[1].nodes.size() == 2);
  auto fcfs = make_scorer("fcfs");
  auto r = evaluate_policy(w, nullptr, **fcfs, {});
  REQUIRE(r.ok());
  CHECK(r->metrics.rejected == 0);
  CHECK(r->metrics.jobs == 2);
}

TEST_CASE("an accelerator workload needs an explicit cluster") {
  Workload w;
  w.report.source = "pods.csv";
  w.jobs = {rlsched::test::gpu_job(1, 0, 10, 1)};
  auto c = implied_cluster(w);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message() == "pods.csv: the workload asks for accelerators, so it needs a cluster description (--cluster)");
}

TEST_CASE("evaluate_policy (full) reports what simulate computes, and keeps outcomes on request") {
  const Workload w = synthetic_workload(300, 32, 0.8, 5);
  auto sjf = make_scorer("sjf");
  EvaluationOptions options;
  options.keep_outcomes = true;
  auto r = evaluate_policy(w, nullptr, **sjf, options);
  REQUIRE(r.ok());
  auto direct = simulate(*implied_cluster(w), w.jobs, **sjf);
  REQUIRE(direct.ok());
  CHECK(r->policy == "sjf");
  CHECK(r->metrics.avg_bsld == direct->metrics.avg_bsld);
  CHECK(r->metrics.p99_wait == direct->metrics.p99_wait);
  REQUIRE(r->outcomes.size() == w.jobs.size());
  CHECK(r->outcomes[17].start == direct->outcomes[17].start);
}

TEST_CASE("the synthetic workload is deterministic, valid and offers about the asked load") {
  const Workload a = synthetic_workload(2000, 64, 0.7, 42);
  const Workload b = synthetic_workload(2000, 64, 0.7, 42);
  const Workload c = synthetic_workload(2000, 64, 0.7, 43);
  REQUIRE(a.jobs.size() == 2000);
  double work = 0;
  bool same = true, differs = false;
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    const Job& j = a.jobs[i];
    CHECK(j.cpus >= 1);
    CHECK(j.cpus <= 64);
    CHECK(j.run_time >= 1);
    CHECK(j.time_limit >= j.run_time);
    if (i > 0) CHECK(j.submit >= a.jobs[i - 1].submit);
    same = same && j.submit == b.jobs[i].submit && j.cpus == b.jobs[i].cpus;
    differs = differs || j.run_time != c.jobs[i].run_time;
    work += static_cast<double>(j.cpus) * static_cast<double>(j.run_time);
  }
  CHECK(same);
  CHECK(differs);
  const double span = static_cast<double>(a.jobs.back().submit - a.jobs.front().submit);
  CHECK(work / (64 * span) == Approx(0.7).epsilon(0.15));
}

TEST_CASE("protocol and backfill names parse, and unknown ones are refused with the known ones") {
  CHECK(*parse_protocol("rlscheduler") == Protocol::kRlScheduler);
  CHECK(*parse_backfill("none") == Backfill::kNone);
  CHECK(parse_protocol("slurm").status().message() == "unknown protocol 'slurm' (known: full, rlscheduler)");
  CHECK(parse_backfill("conservative").status().message() == "unknown backfill 'conservative' (known: easy, slurm, none)");
}
