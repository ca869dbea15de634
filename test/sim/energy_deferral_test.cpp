// The simulator under rlsched.yaml's energy section: a deferrable job arriving in an expensive window becomes
// eligible at its planned begin time (job_submit/rlsched's begin time), others start at once, and a deferrable job
// still pending in an expensive window ranks below other work (site_factor/rlsched's site factor 0), one pending
// in a cheap window above it.
#include <catch2/catch.hpp>

#include "rlsched/energy.h"
#include "sim_fixtures.h"

namespace rlsched {
namespace {

using test::gpu_cluster;
using test::gpu_job;
constexpr Seconds kH = 3600;

// Every day (UTC): 00:00-06:00 at 0.10, 06:00-18:00 at 0.30, 18:00-24:00 at 0.50. Epoch 0 is a Thursday 00:00.
energy::EnergyConfig tariff(Seconds max_deferral) {
  energy::EnergyConfig c;
  std::vector<energy::Schedule::Step> steps;
  for (Seconds d = 0; d < 7; ++d)
    for (auto [at, value] : {std::pair<Seconds, double>{0, 0.10}, {6 * kH, 0.30}, {18 * kH, 0.50}})
      steps.push_back({d * 86400 + at, value});
  c.price = energy::Schedule::weekly(steps, 0);
  c.power.accelerators["h200"] = {700, 100};
  c.power.accelerators["a100"] = {400, 60};
  c.deferrable = {{{"sweep"}, {}, max_deferral}};
  return c;
}

Job on_a100(JobId id, Seconds submit, Seconds run, Seconds limit, const char* qos) {
  Job j = gpu_job(id, submit, run, 4, {"a100"}, limit);
  j.partitions = {"a100"};
  j.qos = qos;
  return j;
}

TEST_CASE("a deferrable job waits for the cheap window, a normal one beside it does not", "[sim][energy]") {
  const energy::EnergyConfig energy = tariff(12 * kH);
  sim::SimConfig config;
  config.energy = &energy;
  // Thursday 16:00: both ask for 2 GPUs of any type for at most 2 h. Started now the sweep's run costs 2 h x 0.3;
  // from midnight 2 h x 0.1, within its 12 h budget.
  std::vector<Job> jobs = {gpu_job(1, 16 * kH, kH, 2, {}, 2 * kH), gpu_job(2, 16 * kH, kH, 2, {}, 2 * kH)};
  jobs[0].qos = "sweep";
  jobs[1].qos = "normal";
  // Thursday 05:00, in the cheap window: a sweep job starts at once.
  jobs.push_back(gpu_job(3, 5 * kH, kH, 2, {}, 2 * kH));
  jobs[2].qos = "sweep";
  const sim::SimResult r = test::run(gpu_cluster(), jobs, "fcfs", config);
  CHECK(r.outcomes[0].start == 24 * kH);
  CHECK(r.outcomes[1].start == 16 * kH);
  CHECK(r.outcomes[2].start == 5 * kH);
  CHECK(r.counters.deferred == 1);

  SECTION("with a budget that ends before the cheap window, it starts in the expensive one") {
    const energy::EnergyConfig short_budget = tariff(4 * kH);
    config.energy = &short_budget;
    const sim::SimResult s = test::run(gpu_cluster(), jobs, "fcfs", config);
    CHECK(s.outcomes[0].start == 16 * kH);
    CHECK(s.counters.deferred == 0);
  }
  SECTION("without the energy section nothing waits") {
    config.energy = nullptr;
    CHECK(test::run(gpu_cluster(), jobs, "fcfs", config).outcomes[0].start == 16 * kH);
  }
}

TEST_CASE("a deferrable job pending in an expensive window ranks below the others", "[sim][energy]") {
  Cluster cluster = gpu_cluster();
  cluster.priority.age = 1;  // multifactor on: the site factor (FCFS rank at the default scale) decides the order
  cluster.priority.calc_period = 60;
  // Thursday 04:00: a normal job holds the A100 node (speed 1) until 07:00. 05:00: the sweep job arrives in the cheap
  // window (not deferred: nothing is cheaper than now) and waits. 05:30: a normal job arrives. At 07:00 the window is
  // expensive and the sweep job, within its 24 h budget of the next night, has site factor 0.
  const std::vector<Job> jobs = {on_a100(1, 4 * kH, 3 * kH, 3 * kH, "normal"), on_a100(2, 5 * kH, kH, kH, "sweep"),
                                 on_a100(3, 5 * kH + 1800, kH, kH, "normal")};
  const energy::EnergyConfig energy = tariff(24 * kH);
  sim::SimConfig config;
  config.backfill = sim::Backfill::kNone;
  SECTION("FCFS alone starts the sweep job first") {
    const sim::SimResult r = test::run(cluster, jobs, "fcfs", config);
    CHECK(r.outcomes[1].start == 7 * kH);
    CHECK(r.outcomes[2].start == 8 * kH);
  }
  SECTION("with the energy section the normal job goes first") {
    config.energy = &energy;
    const sim::SimResult r = test::run(cluster, jobs, "fcfs", config);
    CHECK(r.outcomes[2].start == 7 * kH);
    CHECK(r.outcomes[1].start == 8 * kH);
    CHECK(r.counters.deferred == 0);
  }
}

TEST_CASE("a deferrable job pending in a cheap window ranks above the others", "[sim][energy]") {
  Cluster cluster = gpu_cluster();
  cluster.priority.age = 1;
  cluster.priority.calc_period = 60;
  // Thursday 00:00-03:00 a normal job holds the A100 node. 01:00 a normal job, 02:00 a sweep job (nothing cheaper
  // within its budget than the night it arrives in: eligible at once) wait for it. At 03:00, in the cheap window,
  // the sweep job goes first although it came later.
  const std::vector<Job> jobs = {on_a100(1, 0, 3 * kH, 3 * kH, "normal"), on_a100(2, kH, kH, kH, "normal"),
                                 on_a100(3, 2 * kH, kH, kH, "sweep")};
  sim::SimConfig config;
  config.backfill = sim::Backfill::kNone;
  const sim::SimResult fcfs = test::run(cluster, jobs, "fcfs", config);
  CHECK(fcfs.outcomes[1].start == 3 * kH);
  CHECK(fcfs.outcomes[2].start == 4 * kH);
  const energy::EnergyConfig energy = tariff(12 * kH);
  config.energy = &energy;
  const sim::SimResult r = test::run(cluster, jobs, "fcfs", config);
  CHECK(r.outcomes[2].start == 3 * kH);
  CHECK(r.outcomes[1].start == 4 * kH);
  SECTION("the simple rule only sets begin times") {
    energy::EnergyConfig simple = tariff(12 * kH);
    simple.rule = energy::Rule::kCheapestWindow;
    config.energy = &simple;
    CHECK(test::run(cluster, jobs, "fcfs", config).outcomes[1].start == 3 * kH);
  }
}

}  // namespace
}  // namespace rlsched
