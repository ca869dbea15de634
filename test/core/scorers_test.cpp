#include <catch2/catch.hpp>
#include <cmath>

#include "rlsched/scorer.h"

using namespace rlsched;

namespace {

PendingJob pending(JobId id, Seconds submit, Seconds wait, Seconds limit, int cpus) {
  PendingJob p;
  p.id = id;
  p.submit = submit;
  p.wait = wait;
  p.time_limit = limit;
  p.cpus = cpus;
  return p;
}

std::vector<double> scores_of(const char* name, const std::vector<PendingJob>& jobs,
                              const ScorerSettings& settings = {}) {
  auto scorer = make_scorer(name, settings);
  REQUIRE(scorer.ok());
  std::vector<double> out(jobs.size());
  (*scorer)->score(ScoringContext{}, jobs, out);
  return out;
}

}  // namespace

TEST_CASE("heuristic scorers follow their published formulas (higher runs first)") {
  const std::vector<PendingJob> jobs = {pending(1, 100, 50, 3600, 4), pending(2, 200, 10, 60, 64),
                                        pending(3, 300, 400, 600, 1)};
  SECTION("fcfs: earlier submit first") {
    auto s = scores_of("fcfs", jobs);
    CHECK(s[0] > s[1]);
    CHECK(s[1] > s[2]);
  }
  SECTION("sjf: shorter request first") {
    auto s = scores_of("sjf", jobs);
    CHECK(s[1] > s[2]);
    CHECK(s[2] > s[0]);
  }
  SECTION("f1: -(log10(r) * n + 870 * log10(s))") {
    auto s = scores_of("f1", jobs);
    CHECK(s[0] == Approx(-(std::log10(3600.0) * 4 + 870 * std::log10(100.0))));
    CHECK(s[2] == Approx(-(std::log10(600.0) * 1 + 870 * std::log10(300.0))));
  }
  SECTION("wfp3: (w / r)^3 * n") {
    auto s = scores_of("wfp3", jobs);
    CHECK(s[1] == Approx(std::pow(10.0 / 60, 3) * 64));
    CHECK(s[2] == Approx(std::pow(400.0 / 600, 3) * 1));
  }
  SECTION("unicep: w / (log2(n) * r); a one-CPU job ranks first") {
    auto s = scores_of("unicep", jobs);
    CHECK(s[0] == Approx(50.0 / (2 * 3600)));
    CHECK(s[2] > s[0]);
    CHECK(s[2] > s[1]);
  }
}

TEST_CASE("the multifactor scorer weights Slurm's normalised factors") {
  PendingJob a = pending(1, 0, 0, 60, 1);
  a.age_factor = 0.5;
  a.qos_factor = 1.0;
  PendingJob b = pending(2, 0, 0, 60, 1);
  b.fairshare_factor = 1.0;
  ScorerSettings settings;
  settings.multifactor = PriorityWeights{};
  settings.multifactor.age = 1000;
  settings.multifactor.qos = 10000;
  settings.multifactor.fairshare = 2000;
  auto s = scores_of("multifactor", {a, b}, settings);
  CHECK(s[0] == Approx(500 + 10000));
  CHECK(s[1] == Approx(2000));
}

TEST_CASE("unknown scorer names are refused with the known ones listed") {
  auto scorer = make_scorer("lifo");
  REQUIRE_FALSE(scorer.ok());
  CHECK(scorer.status().message() == "unknown policy 'lifo' (known: fcfs, sjf, wfp3, unicep, f1, multifactor)");
  CHECK(scorer_names().size() == 6);
  for (const auto& name : scorer_names()) CHECK(make_scorer(name).ok());
}

TEST_CASE("multifactor_priority is Slurm's weighted sum of the normalised factors (hand-worked)") {
  struct Case {
    PriorityWeights w;
    double age, fairshare, job_size, partition, qos;
    double expected;
  };
  PriorityWeights lab;  // test/e2e's lab: age 1000, fair-share 100, job size 100, partition 1000, QOS 10000
  lab.age = 1000, lab.fairshare = 100, lab.job_size = 100, lab.partition = 1000, lab.qos = 10000;
  PriorityWeights qos_only;
  qos_only.age = 0, qos_only.fairshare = 0, qos_only.job_size = 0, qos_only.partition = 0, qos_only.qos = 5;
  const Case cases[] = {
      // 1000*0.5 + 100*0.25 + 100*1 + 1000*0 + 10000*0.1 = 500 + 25 + 100 + 0 + 1000
      {lab, 0.5, 0.25, 1, 0, 0.1, 1625},
      {lab, 0, 0, 0, 0, 0, 0},
      {lab, 1, 1, 1, 1, 1, 12200},
      {qos_only, 1, 1, 1, 1, 0.5, 2.5},
  };
  for (const Case& c : cases) {
    PendingJob j;
    j.age_factor = c.age, j.fairshare_factor = c.fairshare, j.job_size_factor = c.job_size;
    j.partition_factor = c.partition, j.qos_factor = c.qos;
    CHECK(multifactor_priority(c.w, j) == Approx(c.expected));
    // The "multifactor" scorer scores exactly this.
    ScorerSettings settings;
    settings.multifactor = c.w;
    auto scorer = make_scorer("multifactor", settings);
    REQUIRE(scorer.ok());
    std::vector<double> out(1);
    (*scorer)->score(ScoringContext{}, {j}, out);
    CHECK(out[0] == multifactor_priority(c.w, j));
  }
}
