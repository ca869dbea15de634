// The EnergyMeter against values worked out by hand, event by event; then wired into the simulator and
// evaluate_policy.
#include <catch2/catch.hpp>

#include "rlsched/sim/energy.h"
#include "rlsched/sim/evaluation.h"
#include "sim_fixtures.h"

using rlsched::Cluster;
using rlsched::GresCount;
using rlsched::Job;
using rlsched::Node;
using rlsched::Partition;
using rlsched::Seconds;
using rlsched::energy::EnergyConfig;
using rlsched::energy::Schedule;
using rlsched::sim::EnergyMeter;
using rlsched::sim::EnergyReport;
using rlsched::sim::ScheduleEvent;
using Kind = rlsched::sim::ScheduleEvent::Kind;

namespace {

constexpr Seconds kHour = 3600;
constexpr Seconds kMonday = 4 * 86400;  // 1970-01-05 00:00 UTC, a Monday

// Two nodes of 8 CPUs and 2 x h200 each; Slurm suspends a node idle for 30 minutes.
Cluster tiny_cluster() {
  Cluster c;
  c.accelerator_types = {rlsched::AcceleratorType{"h200", "gpu", 1.0, {}}};
  c.nodes = {Node{"n0", 8, 0, {GresCount{"gpu", "h200", 2}}}, Node{"n1", 8, 0, {GresCount{"gpu", "h200", 2}}}};
  c.partitions = {Partition{"p", {0, 1}, 1, 1, 0, true}};
  c.suspend_time = 1800;
  return c;
}

// h200 700 W busy, 100 W idle; host 500 W busy, 200 W idle; a suspended node 20 W. Price 0.30 on Monday before
// noon, 0.10 from Monday noon to the end of the week; carbon 400 g/kWh throughout.
EnergyConfig tiny_config() {
  EnergyConfig c;
  c.power.accelerators["h200"] = {700, 100};
  c.power.node = {500, 200};
  c.power.suspended_w = 20;
  c.price = Schedule::weekly({{0, 0.30}, {12 * kHour, 0.10}}, 0);
  c.carbon = Schedule::weekly({{0, 400}}, 0);
  c.deferrable = {{{"standby"}, {}, 8 * kHour}};
  return c;
}

ScheduleEvent event(Kind kind, Seconds clock, int job, std::vector<int> nodes = {}, int type = -1) {
  ScheduleEvent e;
  e.kind = kind;
  e.time = kMonday + clock;
  e.job = job;
  e.nodes = std::move(nodes);
  e.accelerator_type = type;
  return e;
}

// Job 0: 2 h200 and 4 CPUs on n0 from 11:00 to 14:00, across the noon price step. Job 1: 2 CPUs, no GPU, on n1
// from 11:00, chosen as a preemption victim at 11:20, requeued at 11:30 after its grace, started again at 12:30
// and ended at 13:30. The run is closed at 15:00.
EnergyReport tiny_run(const std::vector<Job>& jobs, const Cluster& cluster, const EnergyConfig& config) {
  EnergyMeter meter(cluster, jobs, config);
  meter.observe(event(Kind::kStart, 11 * kHour, 0, {0}, 0));
  meter.observe(event(Kind::kBackfillStart, 11 * kHour, 1, {1}));
  meter.observe(event(Kind::kPreempt, 11 * kHour + 1200, 1));
  meter.observe(event(Kind::kRequeue, 11 * kHour + 1800, 1));
  meter.observe(event(Kind::kStart, 12 * kHour + 1800, 1, {1}));
  meter.observe(event(Kind::kEnd, 13 * kHour + 1800, 1));
  meter.observe(event(Kind::kEnd, 14 * kHour, 0));
  return meter.finish(kMonday + 15 * kHour);
}

std::vector<Job> tiny_jobs() {
  Job gpu = rlsched::test::gpu_job(1, kMonday, 3 * kHour, 2, {"h200"});
  gpu.cpus = 4;
  gpu.qos = "standby";
  Job cpu = rlsched::test::cpu_job(2, kMonday, kHour, 2);
  return {gpu, cpu};
}

}  // namespace

TEST_CASE("EnergyMeter: a job's energy, cost and carbon across a price step, every run of a requeued job counted") {
  const std::vector<Job> jobs = tiny_jobs();
  const Cluster cluster = tiny_cluster();
  const EnergyConfig config = tiny_config();
  const EnergyReport r = tiny_run(jobs, cluster, config);
  REQUIRE(r.jobs.size() == 2);
  // Job 0 draws 2 x (700 - 100) + (500 - 200) x 4/8 = 1,350 W for 3 h: 4.05 kWh; 1.35 kWh before noon at 0.30
  // (0.405) and 2.7 kWh after at 0.10 (0.27): 0.675; 4.05 x 400 = 1,620 g.
  CHECK(r.jobs[0].kwh == Approx(4.05));
  CHECK(r.jobs[0].cost == Approx(0.675));
  CHECK(r.jobs[0].co2_g == Approx(1620));
  // Job 1 (no GPU) draws its host share (500 - 200) x 2/8 = 75 W, through its grace to the requeue (11:00-11:30,
  // at 0.30) and again 12:30-13:30 (at 0.10): 0.1125 kWh; 0.0375 x 0.30 + 0.075 x 0.10 = 0.01875; 45 g.
  CHECK(r.jobs[1].kwh == Approx(0.1125));
  CHECK(r.jobs[1].cost == Approx(0.01875));
  CHECK(r.jobs[1].co2_g == Approx(45));
  CHECK(r.currency == "EUR");
  CHECK(r.begin == kMonday + 11 * kHour);
  CHECK(r.end == kMonday + 15 * kHour);
}

TEST_CASE("EnergyMeter: busy, idle and suspended energy of the cluster and of each accelerator type") {
  const std::vector<Job> jobs = tiny_jobs();
  const Cluster cluster = tiny_cluster();
  const EnergyConfig config = tiny_config();
  const EnergyReport r = tiny_run(jobs, cluster, config);
  // Busy: the two jobs, 4.05 + 0.1125 kWh, 0.675 + 0.01875.
  CHECK(r.busy.kwh == Approx(4.1625));
  CHECK(r.busy.cost == Approx(0.69375));
  // A powered node idles at 200 + 2 x 100 = 400 W. n0 is powered 11:00-14:30 (idle from 14:00, suspended 30 min
  // later): 1.4 kWh, 0.4 x 0.30 + 1.0 x 0.10 = 0.22. n1 is idle from 11:30, suspended 12:00-12:30, powered
  // 12:30-14:00 (idle from 13:30), suspended again from 14:00: powered 2.5 h, 1.0 kWh, 0.4 x 0.30 + 0.6 x 0.10 =
  // 0.18. Idle: 2.4 kWh, 0.40, 960 g.
  CHECK(r.idle.kwh == Approx(2.4));
  CHECK(r.idle.cost == Approx(0.40));
  CHECK(r.idle.co2_g == Approx(960));
  // Suspended: n0 14:30-15:00, n1 12:00-12:30 and 14:00-15:00, 2 h at 20 W after noon: 0.04 kWh, 0.004.
  CHECK(r.suspended.kwh == Approx(0.04));
  CHECK(r.suspended.cost == Approx(0.004));
  CHECK(r.total().kwh == Approx(6.6025));
  CHECK(r.total().cost == Approx(1.09775));
  CHECK(r.total().price_per_kwh() == Approx(1.09775 / 6.6025));
  // h200: job 0's 2 x 600 W for 3 h = 3.6 kWh, 1.2 x 0.30 + 2.4 x 0.10 = 0.60; idle 200 W per powered node,
  // 3.5 h + 2.5 h: 1.2 kWh, (0.2 x 0.30 + 0.5 x 0.10) + (0.2 x 0.30 + 0.3 x 0.10) = 0.20.
  REQUIRE(r.accelerators.count("h200") == 1);
  CHECK(r.accelerators.at("h200").busy.kwh == Approx(3.6));
  CHECK(r.accelerators.at("h200").busy.cost == Approx(0.60));
  CHECK(r.accelerators.at("h200").idle.kwh == Approx(1.2));
  CHECK(r.accelerators.at("h200").idle.cost == Approx(0.20));
}

TEST_CASE("EnergyMeter: an hourly series of price, carbon, cluster power and busy accelerators") {
  const std::vector<Job> jobs = tiny_jobs();
  const Cluster cluster = tiny_cluster();
  const EnergyReport r = tiny_run(jobs, cluster, tiny_config());
  REQUIRE(r.series.size() == 4);  // 11:00, 12:00, 13:00, 14:00
  CHECK(r.series[0].start == kMonday + 11 * kHour);
  // 11-12: n0 400 + 1,350 W; n1 475 W for half the hour, 400 W for the other: 437.5. Two of four GPUs busy.
  CHECK(r.series[0].price == Approx(0.30));
  CHECK(r.series[0].carbon == Approx(400));
  CHECK(r.series[0].watts == Approx(2187.5));
  CHECK(r.series[0].busy_share == Approx(0.5));
  // 12-13: n0 1,750 W; n1 suspended (20 W) then 475 W: 247.5.
  CHECK(r.series[1].price == Approx(0.10));
  CHECK(r.series[1].watts == Approx(1997.5));
  CHECK(r.series[2].watts == Approx(2187.5));
  // 14-15: n0 400 W then 20 W (210); n1 20 W. No GPU busy.
  CHECK(r.series[3].watts == Approx(230));
  CHECK(r.series[3].busy_share == Approx(0));
}

TEST_CASE("EnergyMeter: a node never suspends without SuspendTime, and a multi-node job splits over its nodes") {
  Cluster cluster = tiny_cluster();
  cluster.suspend_time = -1;
  const EnergyConfig config = tiny_config();
  Job wide = rlsched::test::gpu_job(1, kMonday, kHour, 4, {"h200"});
  wide.cpus = 16;
  const std::vector<Job> jobs{wide};
  EnergyMeter meter(cluster, jobs, config);
  meter.observe(event(Kind::kStart, 13 * kHour, 0, {0, 1}, 0));
  meter.observe(event(Kind::kEnd, 14 * kHour, 0));
  const EnergyReport r = meter.finish(kMonday + 18 * kHour);
  // 4 x 600 W + 2 nodes x 300 W x 8/8 = 3,000 W for an hour at 0.10: 3 kWh, 0.30.
  CHECK(r.jobs[0].kwh == Approx(3.0));
  CHECK(r.jobs[0].cost == Approx(0.30));
  // Both nodes idle at 400 W for 5 h, never suspended: 4 kWh.
  CHECK(r.idle.kwh == Approx(4.0));
  CHECK(r.suspended.kwh == 0);
  CHECK(r.series.size() == 5);
  CHECK(r.series[0].busy_share == Approx(1.0));
}

TEST_CASE("split_by_deferral: deferrable and other jobs, their energy and their average wait") {
  const std::vector<Job> jobs = tiny_jobs();  // job 0 has QOS standby, which tiny_config makes deferrable
  EnergyReport r = tiny_run(jobs, tiny_cluster(), tiny_config());
  std::vector<rlsched::sim::JobOutcome> outcomes(2);
  outcomes[0].submit = 0;
  outcomes[0].start = 600;
  outcomes[1].submit = 100;
  outcomes[1].start = 400;
  rlsched::sim::split_by_deferral(r, jobs, outcomes, tiny_config());
  CHECK(r.deferrable.jobs == 1);
  CHECK(r.deferrable.energy.cost == Approx(0.675));
  CHECK(r.deferrable.average_wait == Approx(600));
  CHECK(r.other.jobs == 1);
  CHECK(r.other.energy.kwh == Approx(0.1125));
  CHECK(r.other.average_wait == Approx(300));
}

TEST_CASE("evaluate_policy meters energy beside the caller's observer, under the full protocol only") {
  Cluster cluster = rlsched::test::gpu_cluster();
  EnergyConfig config;
  config.power.node = {500, 200};
  config.price = Schedule::weekly({{0, 0.20}}, 0);
  // One CPU job of 4 CPUs for an hour: (500 - 200) x 4/8 = 150 W, 0.15 kWh at 0.20 = 0.03.
  rlsched::Workload workload;
  workload.jobs = {rlsched::test::cpu_job(1, 0, kHour, 4)};
  auto scorer = rlsched::make_scorer("fcfs");
  REQUIRE(scorer.ok());
  rlsched::sim::EvaluationOptions options;
  options.energy = &config;
  int seen = 0;
  options.sim.observer = [&seen](const ScheduleEvent&) { ++seen; };
  auto result = rlsched::sim::evaluate_policy(workload, &cluster, **scorer, options);
  REQUIRE(result.ok());
  REQUIRE(result->energy.has_value());
  CHECK(seen >= 2);  // its start and its end still reach the caller
  CHECK(result->energy->jobs[0].kwh == Approx(0.15));
  CHECK(result->energy->jobs[0].cost == Approx(0.03));
  CHECK(result->energy->other.jobs == 1);
  CHECK(result->energy->deferrable.jobs == 0);

  options.protocol = rlsched::sim::Protocol::kRlScheduler;
  auto refused = rlsched::sim::evaluate_policy(workload, &cluster, **scorer, options);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("full protocol"));
}

TEST_CASE("parse_energy_rule takes the config's words and names them on a mistake") {
  CHECK(*rlsched::sim::parse_energy_rule("none") == rlsched::energy::Rule::kNone);
  CHECK(*rlsched::sim::parse_energy_rule("cheapest-window") == rlsched::energy::Rule::kCheapestWindow);
  CHECK(*rlsched::sim::parse_energy_rule("least-cost") == rlsched::energy::Rule::kLeastCost);
  auto bad = rlsched::sim::parse_energy_rule("cheapest");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("'cheapest'") && Catch::Contains("least-cost"));
}

TEST_CASE("mark_deferrable: a seeded share of the jobs, never one of the skipped QOS, the same for a seed") {
  std::vector<Job> jobs;
  for (int i = 0; i < 1000; ++i) jobs.push_back(rlsched::test::cpu_job(i + 1, i, 60, 1));
  jobs[0].qos = "urgent";
  std::vector<Job> again = jobs;
  const std::size_t marked = rlsched::sim::mark_deferrable(jobs, 0.3, 7, "standby", "urgent");
  CHECK(marked > 240);  // 300 expected; the binomial's standard deviation is about 14.5
  CHECK(marked < 360);
  CHECK(jobs[0].qos == "urgent");
  std::size_t standby = 0;
  for (const Job& j : jobs) standby += j.qos == "standby" ? 1 : 0;
  CHECK(standby == marked);
  CHECK(rlsched::sim::mark_deferrable(again, 0.3, 7, "standby", "urgent") == marked);
  for (std::size_t i = 0; i < jobs.size(); ++i) CHECK(jobs[i].qos == again[i].qos);
  std::vector<Job> all = again;
  CHECK(rlsched::sim::mark_deferrable(all, 1.0, 7, "standby", "") == all.size());
}

TEST_CASE("EnergyMeter::start_at: the idle cluster counts from there, not from the first start") {
  Cluster cluster = tiny_cluster();
  cluster.suspend_time = -1;
  const std::vector<Job> jobs = tiny_jobs();
  const EnergyConfig config = tiny_config();
  EnergyMeter meter(cluster, jobs, config);
  meter.start_at(kMonday + 10 * kHour);
  meter.observe(event(Kind::kStart, 11 * kHour, 1, {1}));
  meter.observe(event(Kind::kEnd, 12 * kHour, 1));
  const EnergyReport r = meter.finish(0);  // closed at the last event, noon
  CHECK(r.begin == kMonday + 10 * kHour);
  CHECK(r.end == kMonday + 12 * kHour);
  // Two nodes at 400 W from 10:00 to noon, all at 0.30: 1.6 kWh, 0.48; job 1 adds 75 W for an hour.
  CHECK(r.idle.kwh == Approx(1.6));
  CHECK(r.idle.cost == Approx(0.48));
  CHECK(r.busy.kwh == Approx(0.075));
  REQUIRE(r.series.size() == 2);
  CHECK(r.series[0].watts == Approx(800));
  CHECK(r.series[1].watts == Approx(875));
}
