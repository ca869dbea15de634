// The promote/keep rule of `rlsched evaluate --candidate` (tools/rlsched/verdict.h) on hand-made results: every
// expectation below is worked out from the rule as docs/cli.md states it.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "verdict.h"
#include "text_checks.h"

namespace {

using rlsched::cli::decide;
using rlsched::cli::VerdictRule;
using rlsched::sim::PolicyResult;

PolicyResult result(std::string policy, double bsld, double p99) {
  PolicyResult r;
  r.policy = std::move(policy);
  r.metrics.avg_bsld = bsld;
  r.metrics.p99_wait = p99;
  return r;
}

using rlsched::test::contains;

const std::string kCandidate = "model:new.pt", kCurrent = "model:old.pt";

}  // namespace

TEST_CASE("verdict: a candidate that beats the current model but not the best heuristic is kept out") {
  const std::vector<PolicyResult> results = {result(kCandidate, 2.0, 100), result(kCurrent, 2.5, 100),
                                             result("fcfs", 5.0, 500), result("sjf", 1.8, 90),
                                             result("multifactor", 3.0, 200)};
  const auto v = decide(results, kCandidate, kCurrent);
  CHECK_FALSE(v.promote);
  REQUIRE(v.against.size() == 2);
  CHECK(v.against[0].policy == kCurrent);
  CHECK(v.against[0].beaten());  // 2.0 < 2.5, 100 <= 110
  CHECK(v.against[1].policy == "sjf");
  CHECK_FALSE(v.against[1].beaten());  // 2.0 > 1.8
  CHECK(contains(v.text, "verdict: KEEP model:old.pt: the candidate does not beat the best heuristic (sjf): "
                         "average bounded slowdown 2.000 against 1.800 (+11.1%)"));
  CHECK_FALSE(contains(v.text, "the current model (model:old.pt): average"));  // only what it failed is named
  // sjf beats the model in service too (1.8 < 2.5, p99 90 <= 110): it is the better fallback.
  REQUIRE(v.fallback);
  CHECK(*v.fallback == "sjf");
  CHECK(contains(v.text, "fallback: sjf also beats the current model here"));
  const auto doc = rlsched::cli::verdict_json(v);
  CHECK(doc.at("fallback") == "sjf");
  CHECK(doc.at("against")[1].at("beaten") == false);
}

TEST_CASE("verdict: promote only when both yardsticks are beaten, the tail included") {
  std::vector<PolicyResult> results = {result(kCandidate, 1.5, 95), result(kCurrent, 2.5, 100),
                                       result("sjf", 1.8, 90), result("f1", 1.9, 80)};
  auto v = decide(results, kCandidate, kCurrent);
  CHECK(v.promote);  // 1.5 < 2.5 and < 1.8; p99 95 <= 110 and <= 99
  CHECK(contains(v.text, "verdict: PROMOTE model:new.pt: it beats the current model (model:old.pt)"));
  CHECK(contains(v.text, "; and it beats the best heuristic (sjf)"));
  CHECK_FALSE(v.fallback);

  results[0] = result(kCandidate, 1.5, 105);  // 105 > 90 * 1.1 = 99: a worse tail than sjf's
  v = decide(results, kCandidate, kCurrent);
  CHECK_FALSE(v.promote);
  CHECK(contains(v.text, "the candidate has a worse tail than the best heuristic (sjf)"));
  CHECK(contains(v.text, "(more than 10% worse)"));

  results[0] = result(kCandidate, 1.7, 90);  // 1.7 > 1.8 * (1 - 0.1): not a 10% gain
  CHECK(decide(results, kCandidate, kCurrent).promote);
  CHECK_FALSE(decide(results, kCandidate, kCurrent, VerdictRule{0.1, 0.1}).promote);
}

TEST_CASE("verdict: a current model better than every heuristic is kept without a fallback") {
  const std::vector<PolicyResult> results = {result(kCandidate, 1.2, 60), result(kCurrent, 1.0, 50),
                                             result("sjf", 1.8, 90)};
  const auto v = decide(results, kCandidate, kCurrent);
  CHECK_FALSE(v.promote);
  CHECK(v.against[1].beaten());
  CHECK(contains(v.text, "verdict: KEEP model:old.pt: the candidate does not beat the current model (model:old.pt)"));
  CHECK_FALSE(contains(v.text, "best heuristic"));
  CHECK_FALSE(v.fallback);
}

TEST_CASE("verdict: without a current model the best heuristic is the yardstick and the fallback") {
  const std::vector<PolicyResult> results = {result(kCandidate, 2.0, 100), result("sjf", 1.8, 90),
                                             result("unicep", 1.9, 70), result("model:other.pt", 0.5, 10)};
  auto v = decide(results, kCandidate, "");
  CHECK_FALSE(v.promote);
  REQUIRE(v.against.size() == 1);  // another model in the run is no heuristic
  CHECK(v.against[0].policy == "sjf");
  CHECK(contains(v.text, "verdict: KEEP what serves now"));
  REQUIRE(v.fallback);
  CHECK(*v.fallback == "sjf");

  CHECK(decide({result(kCandidate, 1.0, 10)}, kCandidate, "").text ==
        "verdict: none (the candidate or what it is compared with did not run)");
}
