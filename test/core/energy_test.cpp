// The energy model's schedule arithmetic and the deferral rule, with values worked by hand.
#include <catch2/catch.hpp>

#include <limits>

#include "rlsched/energy.h"

namespace rlsched::energy {
namespace {

using Catch::Matchers::WithinAbs;
constexpr Seconds kH = 3600;

// Every day: 00:00-06:00 at 0.10, 06:00-18:00 at 0.30, 18:00-24:00 at 0.50 (UTC unless an offset is given).
Schedule daily_tariff(Seconds utc_offset = 0) {
  std::vector<Schedule::Step> steps;
  for (Seconds d = 0; d < 7; ++d) {
    steps.push_back({d * 86400, 0.10});
    steps.push_back({d * 86400 + 6 * kH, 0.30});
    steps.push_back({d * 86400 + 18 * kH, 0.50});
  }
  return Schedule::weekly(steps, utc_offset);
}

EnergyConfig config_with(Schedule price, Rule rule) {
  EnergyConfig c;
  c.price = std::move(price);
  c.rule = rule;
  c.deferrable = {{{"sweep"}, {}, 12 * kH}};
  return c;
}

// Epoch second 0 is Thursday 1970-01-01 00:00 UTC.
TEST_CASE("a weekly schedule gives the value of the local time of the week", "[energy]") {
  const Schedule s = daily_tariff();
  CHECK(s.at(0) == 0.10);
  CHECK(s.at(6 * kH - 1) == 0.10);
  CHECK(s.at(6 * kH) == 0.30);
  CHECK(s.at(20 * kH) == 0.50);
  CHECK(s.at(-1) == 0.50);  // Wednesday 23:59:59
  CHECK(s.next_change(0) == 6 * kH);
  CHECK(s.next_change(20 * kH) == 24 * kH);
  // At UTC+01:00, 05:00 UTC is 06:00 local.
  const Schedule local = daily_tariff(kH);
  CHECK(local.at(5 * kH) == 0.30);
  CHECK(local.next_change(0) == 5 * kH);
}

TEST_CASE("integrals and costs sum the steps a span covers", "[energy]") {
  const Schedule s = daily_tariff();
  // 05:00-07:00: one hour at 0.10 and one at 0.30 = 0.40 value-hours.
  CHECK_THAT(s.integral(5 * kH, 7 * kH), WithinAbs(0.40 * kH, 1e-9));
  // 1 kW over those two hours: 1 kWh at 0.10 plus 1 kWh at 0.30.
  CHECK_THAT(cost_of(s, 1000, 5 * kH, 7 * kH), WithinAbs(0.40, 1e-12));
  // A day is 6 h x 0.1 + 12 h x 0.3 + 6 h x 0.5 = 7.2 value-hours; a week 50.4, from wherever it starts.
  CHECK_THAT(s.integral(0, kWeek), WithinAbs(50.4 * kH, 1e-6));
  CHECK_THAT(s.integral(100, 100 + kWeek), WithinAbs(50.4 * kH, 1e-6));
  CHECK_THAT(s.integral(0, 2 * kWeek + kH), WithinAbs((2 * 50.4 + 0.1) * kH, 1e-6));
  CHECK(s.integral(10, 10) == 0);
  CHECK(Schedule().integral(0, kH) == 0);
}

TEST_CASE("a series holds its end values outside its rows", "[energy]") {
  const Schedule s = Schedule::series({{1000, 1}, {1900, 2}, {2800, 3}});
  CHECK(s.at(0) == 1);
  CHECK(s.at(1899) == 1);
  CHECK(s.at(1900) == 2);
  CHECK(s.at(99999) == 3);
  CHECK(s.next_change(0) == 1000);
  CHECK(s.next_change(1000) == 1900);
  CHECK(s.next_change(3000) == std::numeric_limits<Seconds>::max());
  CHECK_THAT(s.integral(1900, 2800), WithinAbs(2 * 900.0, 1e-9));
  CHECK_THAT(s.integral(0, 1900), WithinAbs(1 * 1900.0, 1e-9));
}

TEST_CASE("least cost defers a run to the start of the cheapest window within the budget", "[energy]") {
  const EnergyConfig c = config_with(daily_tariff(), Rule::kLeastCost);
  SECTION("a 2 h run at Thursday 16:00 waits for midnight") {
    // Now: 16-18 at 0.3 = 0.6 per kW. Midnight: 2 h at 0.1 = 0.2, the whole window ahead of it.
    const StartPlan p = plan_start(c, {16 * kH, 28 * kH, 2 * kH, 1000});
    CHECK(p.deferred);
    CHECK(p.begin == 24 * kH);
    CHECK_THAT(p.cost_now, WithinAbs(0.6, 1e-12));
    CHECK_THAT(p.cost_planned, WithinAbs(0.2, 1e-12));
    CHECK(p.reason.find("1970-01-02T00:00:00Z") != std::string::npos);
  }
  SECTION("an 8 h run waits for midnight too, though it runs on into the 0.3 hours (0.6 + 0.6 against 3.6)") {
    const StartPlan p = plan_start(c, {16 * kH, 28 * kH, 8 * kH, 1000});
    CHECK(p.begin == 24 * kH);
    CHECK_THAT(p.cost_now, WithinAbs(3.6, 1e-12));
    CHECK_THAT(p.cost_planned, WithinAbs(1.2, 1e-12));
  }
  SECTION("no cheaper start before the deadline: it starts now") {
    // By 18:00 only the 0.5 peak is reachable.
    const StartPlan p = plan_start(c, {16 * kH, 18 * kH, 2 * kH, 1000});
    CHECK_FALSE(p.deferred);
    CHECK(p.begin == 16 * kH);
  }
  SECTION("already in the cheapest span: it starts now") {
    CHECK_FALSE(plan_start(c, {kH, 13 * kH, 2 * kH, 1000}).deferred);
  }
  SECTION("a job that draws nothing or whose budget is spent is never deferred") {
    CHECK_FALSE(plan_start(c, {16 * kH, 28 * kH, 2 * kH, 0}).deferred);
    CHECK_FALSE(plan_start(c, {16 * kH, 16 * kH, 2 * kH, 1000}).deferred);
  }
}

TEST_CASE("with follow_carbon the rule follows the carbon intensity, not the price", "[energy]") {
  EnergyConfig c = config_with(daily_tariff(), Rule::kLeastCost);
  // Clean at midday (solar), dirty at night: the opposite of the tariff.
  c.carbon = Schedule::weekly({{0, 400}, {10 * kH, 100}, {16 * kH, 400}}, 0);
  const StartRequest night{4 * 86400 + 1 * kH, 4 * 86400 + 13 * kH, 2 * kH, 1000};  // Monday 01:00
  CHECK_FALSE(plan_start(c, night).deferred);                                       // the price is lowest now
  c.follow_carbon = true;
  const StartPlan p = plan_start(c, night);
  CHECK(p.begin == 4 * 86400 + 10 * kH);
  CHECK(p.cost_now == 800);      // grams: 2 kWh x 400
  CHECK(p.cost_planned == 200);  // 2 kWh x 100
  CHECK(p.reason.find("gCO2") != std::string::npos);
}

TEST_CASE("least cost does not defer for a saving below min_saving", "[energy]") {
  // 0.30 now, 0.29 from 17:00: waiting saves 1/30 = 3.3% of a 1 h run.
  EnergyConfig c = config_with(Schedule::weekly({{0, 0.30}, {17 * kH, 0.29}, {18 * kH, 0.30}}, 0), Rule::kLeastCost);
  CHECK_FALSE(plan_start(c, {4 * 86400 + 16 * kH, 4 * 86400 + 20 * kH, kH, 1000}).deferred);  // epoch day 4: a Monday
  c.min_saving = 0.02;
  CHECK(plan_start(c, {4 * 86400 + 16 * kH, 4 * 86400 + 20 * kH, kH, 1000}).begin == 4 * 86400 + 17 * kH);
}

TEST_CASE("the cheapest-window rule starts in a short dip before a peak, least cost does not", "[energy]") {
  // Monday (epoch day 4, 345600 s): 0.30 all day but a dip at 0.05 from 17:00 to 18:00, then 0.50 to midnight.
  const Seconds monday = 4 * 86400;
  const Schedule s = Schedule::weekly({{0, 0.30}, {17 * kH, 0.05}, {18 * kH, 0.50}, {24 * kH, 0.30}}, 0);
  const StartRequest r{monday + 12 * kH, monday + 20 * kH, 4 * kH, 1000};
  // Cheapest window: start at 17:00, the lowest price within the budget: 1 h x 0.05 + 3 h x 0.5 = 1.55, more than
  // the 4 x 0.3 = 1.2 of starting now.
  const StartPlan simple = plan_start(config_with(s, Rule::kCheapestWindow), r);
  CHECK(simple.begin == monday + 17 * kH);
  CHECK_THAT(simple.cost_planned, WithinAbs(1.55, 1e-12));
  // Least cost: the run would cost more there, so it starts now, and ranks first (0.3 is below the day's mean of
  // 0.34 and the run ends before the 0.50 hours).
  const StartPlan least = plan_start(config_with(s, Rule::kLeastCost), r);
  CHECK_FALSE(least.deferred);
  CHECK_THAT(least.cost_now, WithinAbs(1.2, 1e-12));
  CHECK(rank_now(config_with(s, Rule::kLeastCost), r) == Rank::kFirst);
  CHECK(rank_now(config_with(s, Rule::kCheapestWindow), r) == Rank::kPolicy);  // the simple rule sets begin times only
  CHECK_FALSE(plan_start(config_with(s, Rule::kNone), r).deferred);
}

// A start a few hours later at the same price, only to miss the peak the run would overlap, is no cheaper window:
// moving such runs across a busy day idled the accelerators between them (docs/energy.md, the study).
TEST_CASE("least cost does not shift a run by hours to miss the peak it overlaps", "[energy]") {
  // The study's tariff shape: 0.308 00-07, 0.594 07-09, 0.88 09-11, 0.594 11-19, 0.88 19-24.
  const Seconds monday = 4 * 86400;
  const Schedule s = Schedule::weekly(
      {{0, 0.308}, {7 * kH, 0.594}, {9 * kH, 0.88}, {11 * kH, 0.594}, {19 * kH, 0.88}, {24 * kH, 0.308}}, 0);
  // 07:30, a 6 h run, 12 h of budget (to 19:30): from 11:00 it would cost 6 x 0.594 = 3.564 against 4.136 now, but
  // nothing within the budget opens below 0.594.
  const StartRequest r{monday + 7 * kH + 1800, monday + 19 * kH + 1800, 6 * kH, 1000};
  const StartPlan p = plan_start(config_with(s, Rule::kLeastCost), r);
  CHECK_FALSE(p.deferred);
  CHECK_THAT(p.cost_now, WithinAbs(4.136, 1e-9));
  CHECK(rank_now(config_with(s, Rule::kLeastCost), r) == Rank::kPolicy);
  // At 16:00 with the same budget the night opens at 0.308 within it: midnight.
  const StartRequest late{monday + 16 * kH, monday + 28 * kH, 6 * kH, 1000};
  CHECK(plan_start(config_with(s, Rule::kLeastCost), late).begin == monday + 24 * kH);
  CHECK(rank_now(config_with(s, Rule::kLeastCost), late) == Rank::kLast);
}

TEST_CASE("a deferrable job ranks first where its run is cheap against the next day's average", "[energy]") {
  const EnergyConfig c = config_with(daily_tariff(), Rule::kLeastCost);
  // The day's mean price is (6 x 0.1 + 12 x 0.3 + 6 x 0.5) / 24 = 0.3 from any moment.
  // Thursday 02:00, 2 h at 0.1, ending before the window closes at 06:00: first. 05:00, 2 h: a mean of 0.2 <= 0.95 x
  // 0.3, but it would run into the 0.3 hours: the policy ranks it.
  CHECK(rank_now(c, {2 * kH, 14 * kH, 2 * kH, 1000}) == Rank::kFirst);
  CHECK(rank_now(c, {4 * kH, 16 * kH, 2 * kH, 1000}) == Rank::kFirst);  // ends at 06:00 exactly
  CHECK(rank_now(c, {5 * kH, 17 * kH, 2 * kH, 1000}) == Rank::kPolicy);
  // 08:00 with a budget to 12:00: nothing cheaper within it, and 0.3 is the day's mean: the policy ranks it.
  CHECK(rank_now(c, {8 * kH, 12 * kH, 2 * kH, 1000}) == Rank::kPolicy);
  // 16:00 with a budget to 04:00: midnight is cheaper: last.
  CHECK(rank_now(c, {16 * kH, 28 * kH, 2 * kH, 1000}) == Rank::kLast);
  CHECK(ranked_score(Rank::kLast, 3.5) == -std::numeric_limits<double>::infinity());
  CHECK(ranked_score(Rank::kFirst, 3.5) == std::numeric_limits<double>::infinity());
  CHECK(ranked_score(Rank::kPolicy, 3.5) == 3.5);
}

TEST_CASE("deferrable jobs are named by QOS or job class, the first group's budget applies", "[energy]") {
  EnergyConfig c;
  c.deferrable = {{{"sweep"}, {}, 4 * kH}, {{"scavenger"}, {"ablation"}, 12 * kH}, {{}, {"ablation"}, kH}};
  CHECK(c.max_deferral_for("sweep", "") == 4 * kH);
  CHECK(c.max_deferral_for("sweep", "ablation") == 4 * kH);
  CHECK(c.max_deferral_for("normal", "ablation") == 12 * kH);
  CHECK_FALSE(c.max_deferral_for("normal", "pretrain"));
  CHECK_FALSE(c.max_deferral_for("", ""));
}

TEST_CASE("a job's draw is its devices' and its share of the host's, above idle", "[energy]") {
  PowerModel p;
  p.accelerators["h200"] = {700, 100};
  p.node = {500, 200};
  // 4 H200 x 600 W + 16 of 64 CPUs x 300 W = 2400 + 75.
  CHECK_THAT(p.job_watts("h200", 4, 16, 64), WithinAbs(2475, 1e-9));
  CHECK_THAT(p.job_watts("a100", 4, 0, 64), WithinAbs(0, 1e-9));  // a type without figures draws nothing
  CHECK_THAT(p.job_watts("", 0, 64, 64), WithinAbs(300, 1e-9));
}

TEST_CASE("a deferral request counts the budget from the job's eligible time", "[energy]") {
  EnergyConfig c = config_with(daily_tariff(), Rule::kLeastCost);
  c.power.accelerators["h200"] = {700, 100};
  c.power.accelerators["a100"] = {400, 100};
  c.power.node = {500, 200};
  DeferrableJob j;
  j.qos = "sweep";
  j.eligible = 1000;
  j.time_limit = 2 * kH;
  j.accelerators = 2;
  j.cpus = 8;
  j.node_cpus = 32;
  j.types = {"h200"};
  const auto r = deferral_request(c, j, 5000);
  REQUIRE(r);
  CHECK(r->now == 5000);
  CHECK(r->deadline == 1000 + 12 * kH);
  CHECK(r->run == 2 * kH);
  CHECK(r->watts == 2 * 600 + 300.0 * 8 / 32);  // 1275
  j.types = {};                                 // any type: the mean of h200's 600 and a100's 300
  CHECK(request_watts(c.power, j) == 2 * 450 + 75.0);
  j.types = {"910b"};  // no figures for it: the same mean
  CHECK(request_watts(c.power, j) == 2 * 450 + 75.0);
  j.qos = "normal";
  CHECK_FALSE(deferral_request(c, j, 5000));
  j.qos = "sweep";
  c.rule = Rule::kNone;
  CHECK_FALSE(deferral_request(c, j, 5000));
}

}  // namespace
}  // namespace rlsched::energy
