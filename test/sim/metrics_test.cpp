#include "rlsched/sim/metrics.h"

#include <catch2/catch.hpp>

#include "sim_fixtures.h"

using namespace rlsched;
using namespace rlsched::sim;

namespace {
JobOutcome ran(std::size_t job, Seconds submit, Seconds start, Seconds end, int cpus = 1) {
  JobOutcome o;
  o.job = job;
  o.submit = submit;
  o.start = start;
  o.end = end;
  o.cpus = cpus;
  o.state = JobEnd::kCompleted;
  return o;
}
}  // namespace

TEST_CASE("bounded slowdown uses a 10 s threshold and never drops below 1") {
  CHECK(bounded_slowdown(0, 100) == 1.0);
  CHECK(bounded_slowdown(100, 100) == 2.0);
  CHECK(bounded_slowdown(20, 1) == 2.1);  // (20 + 1) / max(1, 10)
  CHECK(bounded_slowdown(0, 1) == 1.0);   // 1/10 floored at 1
}

TEST_CASE("percentiles interpolate between ranks") {
  CHECK(percentile({}, 99) == 0);
  CHECK(percentile({5}, 99) == 5);
  CHECK(percentile({1, 2, 3, 4}, 50) == 2.5);
  CHECK(percentile({10, 0, 20}, 100) == 20);
  CHECK(percentile({0, 10}, 99) == Approx(9.9));
}

TEST_CASE("metrics from outcomes: waits, slowdown, utilization, fairness, states") {
  std::vector<Job> jobs(4);
  jobs[0].user = "a";
  jobs[1].user = "a";
  jobs[2].user = "b";
  jobs[3].user = "b";
  std::vector<JobOutcome> out = {ran(0, 0, 0, 100, 2), ran(1, 0, 100, 200, 2), ran(2, 50, 50, 60, 1)};
  JobOutcome rejected;
  rejected.job = 3;
  rejected.state = JobEnd::kRejected;
  out.push_back(rejected);
  const Metrics m = compute_metrics(jobs, out, 4);
  CHECK(m.jobs == 3);
  CHECK(m.rejected == 1);
  CHECK(m.avg_wait == Approx(100.0 / 3));
  CHECK(m.max_wait == 100);
  CHECK(m.avg_bsld == Approx((1.0 + 2.0 + 1.0) / 3));
  CHECK(m.makespan == 200);
  CHECK(m.utilization == Approx((200.0 + 200.0 + 10.0) / (4 * 200.0)));
  // user a: bsld 1 and 2 -> 1.5; user b: 1. Jain = (2.5)^2 / (2 * (2.25 + 1)).
  CHECK(m.jain_fairness == Approx(6.25 / 6.5));
}

TEST_CASE("per-type utilization over the makespan and while jobs arrive") {
  std::vector<Job> jobs(3);
  std::vector<AcceleratorType> types = {{"h200", "gpu", 2.0, {}}, {"a100", "gpu", 1.0, {}}};
  // Submits 0..1000. h200 (4 accelerators): 4 busy over [0, 500), then 2 over [900, 3000). a100 (4): idle.
  std::vector<JobOutcome> out = {ran(0, 0, 0, 500), ran(1, 900, 900, 3000), ran(2, 1000, 1000, 1000)};
  out[0].accelerators = 4;
  out[0].accelerator_type = 0;
  out[1].accelerators = 2;
  out[1].accelerator_type = 0;
  const Metrics m = compute_metrics(jobs, out, 8, types, {4, 4});
  REQUIRE(m.per_type.size() == 2);
  CHECK(m.per_type[0].utilization == Approx((4 * 500.0 + 2 * 2100.0) / (4 * 3000.0)));
  CHECK(m.per_type[0].utilization_arriving == Approx((4 * 500.0 + 2 * 100.0) / (4 * 1000.0)));
  CHECK(m.per_type[1].utilization_arriving == 0.0);
}
