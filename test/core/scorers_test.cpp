#include <catch2/catch.hpp>
#include <cmath>

#include "rlsched/area_rule.h"
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
  CHECK(scorer.status().message() ==
        "unknown policy 'lifo' (known: fcfs, sjf, wfp3, unicep, f1, multifactor, "
        "area:A/B/G[/C[/F]][/relative][/predicted])");
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

TEST_CASE("area rules score -(a ln max(r,10) + b ln n) + g ln(1 + w/max(r,10)) from their policy spec") {
  // job 0: r = 3600 s, 4 CPUs, waited 50 s; job 1: r = 60 s, 64 CPUs, 10 s; job 2: r = 5 s (counted as 10), 1 CPU.
  const std::vector<PendingJob> jobs = {pending(1, 100, 50, 3600, 4), pending(2, 200, 10, 60, 64),
                                        pending(3, 300, 400, 5, 1)};
  SECTION("a plain rule, ageing included") {
    auto s = scores_of("area:1/0.5/2", jobs);
    CHECK(s[0] == Approx(-(std::log(3600.0) + 0.5 * std::log(4.0)) + 2 * std::log1p(50.0 / 3600)));
    CHECK(s[1] == Approx(-(std::log(60.0) + 0.5 * std::log(64.0)) + 2 * std::log1p(10.0 / 60)));
    CHECK(s[2] == Approx(-std::log(10.0) + 2 * std::log1p(400.0 / 10)));
  }
  SECTION("the share term: c (n/N + k/K), the job's share of the cluster's CPUs and accelerators") {
    std::vector<PendingJob> gpu = jobs;
    gpu[0].accelerators = 8;
    ScoringContext cluster;
    cluster.total_cpus = 256;
    cluster.total_accelerators = 32;
    const auto scorer = make_scorer("area:1/0/0/10");
    REQUIRE(scorer.ok());
    std::vector<double> out(gpu.size());
    (*scorer)->score(cluster, gpu, out);
    CHECK(out[0] == Approx(-(std::log(3600.0) + 10 * (4.0 / 256 + 8.0 / 32))));
    CHECK(out[1] == Approx(-(std::log(60.0) + 10 * (64.0 / 256))));
  }
  SECTION("the fair-share term: f F, F Slurm's fair-share factor") {
    std::vector<PendingJob> shared = jobs;
    shared[0].fairshare_factor = 0.9;
    shared[1].fairshare_factor = 0.1;
    auto s = scores_of("area:1/0/0/0/8", shared);
    CHECK(s[0] == Approx(-std::log(3600.0) + 8 * 0.9));
    CHECK(s[1] == Approx(-std::log(60.0) + 8 * 0.1));
    CHECK(s[0] > s[1]);  // the user who used little goes first, although the other job is 60 times shorter
    CHECK(scores_of("area:1/0/0", shared)[0] < scores_of("area:1/0/0", shared)[1]);
  }
  SECTION("b = 0 and g = 0 ranks as SJF does") {
    auto area = scores_of("area:1/0/0", jobs);
    auto sjf = scores_of("sjf", jobs);
    CHECK(area[2] > area[1]);
    CHECK(area[1] > area[0]);
    CHECK(sjf[2] > sjf[1]);
    CHECK(sjf[1] > sjf[0]);
  }
  SECTION("a cluster-relative rule weighs ln n by ln 1024 / ln N: as written on 1,024 CPUs, twice on 32") {
    const auto rule = parse_area_rule("area:1/1.5/0/relative");
    REQUIRE(rule.ok());
    CHECK(rule->cluster_relative);
    CHECK(rule->cpus_weight(1024) == Approx(1.5));
    CHECK(rule->cpus_weight(32) == Approx(3.0));
    const auto scorer = make_area_scorer(*rule);
    std::vector<double> out(jobs.size());
    ScoringContext small;
    small.total_cpus = 32;
    scorer->score(small, jobs, out);
    CHECK(out[1] == Approx(-(std::log(60.0) + 3.0 * std::log(64.0))));
    CHECK_FALSE(make_area_scorer(AreaRule{1, 1, 0.5})->is_static());
    CHECK(make_area_scorer(AreaRule{1, 1, 0})->is_static());
  }
  SECTION("the spec a rule writes reads back as the same rule, and names its scorer") {
    for (const AreaRule rule :
         {AreaRule{0.5, 1.5, 0.25, true}, AreaRule{2, 0, 1, false}, AreaRule{1, 0, 0.5, true, 10},
          AreaRule{0, 0, 0, false, 3}, AreaRule{1, 0, 0, true, 0, 8}, AreaRule{0.5, 1.5, 0, false, 3, 2}}) {
      const auto back = parse_area_rule(rule.spec());
      REQUIRE(back.ok());
      CHECK(back->a == rule.a);
      CHECK(back->b == rule.b);
      CHECK(back->g == rule.g);
      CHECK(back->cluster_relative == rule.cluster_relative);
      CHECK(back->c == rule.c);
      CHECK(back->f == rule.f);
      CHECK(make_area_scorer(rule)->name() == rule.spec());
    }
    CHECK(AreaRule{0.5, 1.5, 0.25, true}.spec() == "area:0.5/1.5/0.25/relative");
    CHECK(AreaRule{0.5, 1.5, 0.25, true, 10}.spec() == "area:0.5/1.5/0.25/10/relative");
    CHECK(AreaRule{1, 0, 0, true, 0, 8}.spec() == "area:1/0/0/0/8/relative");
    CHECK(AreaRule{1, 0, 0, false, 0, 8}.describe() == "-(1 ln max(r,10) + 0 ln n) + 0 ln(1 + w/max(r,10)) + 8 F");
  }
}

TEST_CASE("an area rule on predicted run times takes r from the prediction where there is one, and is never static") {
  // job 0: limit 3600 s, predicted 60 s, waited 50 s; job 1: limit 600 s, no prediction; job 2: a prediction above
  // its limit counts as the limit.
  std::vector<PendingJob> jobs = {pending(1, 100, 50, 3600, 4), pending(2, 200, 10, 600, 1), pending(3, 0, 0, 100, 1)};
  jobs[0].predicted_run_time = 60;
  jobs[2].predicted_run_time = 5000;
  auto s = scores_of("area:1/0/2/predicted", jobs);
  CHECK(s[0] == Approx(-std::log(60.0) + 2 * std::log1p(50.0 / 60)));
  CHECK(s[1] == Approx(-std::log(600.0) + 2 * std::log1p(10.0 / 600)));
  CHECK(s[2] == Approx(-std::log(100.0)));
  CHECK(s[0] > s[1]);                                                          // the predicted-short job first
  CHECK(scores_of("area:1/0/2", jobs)[0] < scores_of("area:1/0/2", jobs)[1]);  // on limits, the other way round
  const auto rule = parse_area_rule("area:1/1.5/0/relative/predicted");
  REQUIRE(rule.ok());
  CHECK(rule->predicted);
  CHECK(rule->cluster_relative);
  CHECK(rule->spec() == "area:1/1.5/0/relative/predicted");
  CHECK(make_area_scorer(*rule)->reads_predicted_run_time());
  CHECK_FALSE(make_area_scorer(*rule)->is_static());  // g = 0, but the prediction moves as jobs end
  CHECK_FALSE(make_area_scorer(AreaRule{1, 1, 0})->reads_predicted_run_time());
  CHECK(parse_area_rule("area:1/0/0/predicted")->spec() == "area:1/0/0/predicted");
  CHECK_THAT(rule->describe(), Catch::EndsWith(", r predicted"));
  CHECK_FALSE(parse_area_rule("area:1/0/0/predicted/relative").ok());  // the grammar's order
}

TEST_CASE("a malformed area rule spec is refused, saying which part is wrong") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"area:1/x/0", "B = 'x' is not a number"},
      {"area:1/2", "2 numbers, not 3 to 5"},
      {"area:1/2/3/4/5/6", "6 numbers, not 3 to 5"},
      {"area:1/2/3/4/5/6/relative", "6 numbers, not 3 to 5"},
      {"area:1/2/0/3/-1", "F = '-1' is not a finite number >= 0"},
      {"area:0/0/0/0/1", "A, B and C are all 0"},
      {"area:1/2/0/-3", "C = '-3' is not a finite number >= 0"},
      {"area:-1/1/0", "A = '-1' is not a finite number >= 0"},
      {"area:nan/1/0", "A = 'nan' is not a finite number >= 0"},
      {"area:1/1/", "G = '' is not a number"},
      {"area:1/1/0.5x", "G = '0.5x' is not a number"},
      {"area:0/0/1", "A, B and C are all 0"},
      {"area:0/0/1/0/relative", "A, B and C are all 0"},
      {"area:1/1/0/rel", "C = 'rel' is not a number"},
  };
  for (const auto& [spec, reason] : cases) {
    INFO(spec);
    const auto rule = parse_area_rule(spec);
    REQUIRE_FALSE(rule.ok());
    CHECK_THAT(rule.status().message(), Catch::Contains("policy '" + spec + "'"));
    CHECK_THAT(rule.status().message(), Catch::Contains(reason));
    CHECK_THAT(rule.status().message(), Catch::Contains("expected area:A/B/G[/C[/F]][/relative]"));
    const auto scorer = make_scorer(spec);
    REQUIRE_FALSE(scorer.ok());
    CHECK_THAT(scorer.status().message(), Catch::Contains(reason));
  }
  CHECK_THAT(make_scorer("areal").status().message(), Catch::Contains("area:A/B/G[/C[/F]][/relative]"));
}
