// Per-input ablation against the queue's median (rlsched/attribution.h), worked by hand with sjf (score =
// -time_limit) and fcfs (score = -submit).
#include "rlsched/attribution.h"

#include <catch2/catch.hpp>

namespace {

rlsched::PendingJob job(rlsched::JobId id, rlsched::Seconds submit, rlsched::Seconds limit, bool fits) {
  rlsched::PendingJob j;
  j.id = id;
  j.submit = submit;
  j.wait = 1000 - submit;
  j.time_limit = limit;
  j.fits_now = fits;
  return j;
}

const rlsched::attribution::InputEffect& effect(const rlsched::attribution::Attribution& a, std::string_view name) {
  for (const auto& e : a.effects)
    if (e.input == name) return e;
  FAIL("no input " << name);
  throw;
}

}  // namespace

TEST_CASE("attribution: sjf credits a short job's time limit, and nothing else") {
  // Time limits 600, 3600, 7200: median 3600. Job 1 (600 s): sjf scores -600; at the median -3600; delta +3000.
  const std::vector<rlsched::PendingJob> queue = {job(1, 100, 600, true), job(2, 200, 3600, false),
                                                  job(3, 300, 7200, false)};
  rlsched::ScoringContext context;
  context.now = 1000;
  const auto sjf = rlsched::make_scorer("sjf");
  REQUIRE(sjf.ok());
  const auto a = rlsched::attribution::explain(**sjf, context, queue, 0);
  CHECK(a.score == -600);
  CHECK(a.median_score == -3600);
  REQUIRE(a.effects.front().input == "time_limit");
  CHECK(a.effects.front().value == 600);
  CHECK(a.effects.front().median == 3600);
  CHECK(a.effects.front().delta == 3000);
  for (std::size_t i = 1; i < a.effects.size(); ++i) CHECK(a.effects[i].delta == 0);
  // fits_now: yes for 1 job of 3, so the median is "no"; sjf does not read it.
  CHECK(effect(a, "fits_now").median == 0);

  SECTION("the longest job is pushed down by the same input") {
    const auto c = rlsched::attribution::explain(**sjf, context, queue, 2);
    CHECK(c.effects.front().input == "time_limit");
    CHECK(c.effects.front().delta == -3600);  // -7200 - (-3600)
  }
}

TEST_CASE("attribution: replacing the wait moves the submit with it (fcfs reads the submit)") {
  // Waits 900, 800, 700 at now = 1000: median 800, i.e. submit 200. Job 1 (submit 100): -100 - (-200) = +100.
  const std::vector<rlsched::PendingJob> queue = {job(1, 100, 600, true), job(2, 200, 3600, false),
                                                  job(3, 300, 7200, false)};
  rlsched::ScoringContext context;
  context.now = 1000;
  const auto fcfs = rlsched::make_scorer("fcfs");
  REQUIRE(fcfs.ok());
  const auto a = rlsched::attribution::explain(**fcfs, context, queue, 0);
  REQUIRE(a.effects.front().input == "wait");
  CHECK(a.effects.front().value == 900);
  CHECK(a.effects.front().median == 800);
  CHECK(a.effects.front().delta == 100);
}
