// The teacher as a weighted sum of features (teacher.h: linear_form), the network set to compute one
// (networks.h: set_linear_policy), and how far apart a scorer puts the jobs of a decision (within_decision_spread).
#include <algorithm>
#include <cmath>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "networks.h"
#include "rlsched/features.h"
#include "rollout.h"
#include "teacher.h"

// Last: libtorch pulls in glog, whose CHECK would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace rlsched;
using namespace rlsched::train;

namespace {

/// Jobs of every shape the traces have: 1 to 4,096 CPUs, requests of 10 s to 7 days, waits of 0 to 2 days.
std::vector<PendingJob> varied_jobs(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<PendingJob> jobs(count);
  for (std::size_t i = 0; i < count; ++i) {
    jobs[i].id = static_cast<JobId>(i + 1);
    jobs[i].cpus = static_cast<int>(std::pow(4096.0, u(rng)));
    jobs[i].nodes = 1;
    jobs[i].time_limit = static_cast<Seconds>(10 * std::pow(60480.0, u(rng)));
    jobs[i].wait = static_cast<Seconds>(172800 * u(rng) * u(rng));
    jobs[i].submit = 1000000 - jobs[i].wait;
  }
  return jobs;
}

std::vector<double> linear_scores(const std::vector<PendingJob>& jobs, const ScoringContext& context,
                                  const std::vector<double>& weights) {
  std::vector<double> out;
  float row[features::kFeatureCount];
  for (const PendingJob& j : jobs) {
    features::extract_all(j, context, row);
    double s = 0;
    for (std::size_t k = 0; k < weights.size(); ++k) s += weights[k] * row[k];
    out.push_back(s);
  }
  return out;
}

}  // namespace

TEST_CASE("a teacher's linear form ranks jobs as the teacher does, through the features' own scaling") {
  ScoringContext context;
  context.total_cpus = 8192;
  context.total_nodes = 128;
  std::vector<PendingJob> jobs = varied_jobs(300, 3);
  // Two jobs in three with a predicted run time of 1% to 100% of their limit (at least 10 s, as the rule counts).
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (i % 3 != 0)
      jobs[i].predicted_run_time = std::max<Seconds>(10, jobs[i].time_limit * static_cast<Seconds>(1 + i % 100) / 100);

  std::vector<Teacher> teachers;
  for (const char* name : {"sjf", "fcfs"}) teachers.push_back(std::move(heuristic_teacher(name)).value());
  std::vector<AreaRule> rules = {AreaRule{1, 1, 0}, AreaRule{0.5, 1.5, 1}, AreaRule{2, 0, 0.25}};
  for (AreaRule rule : {AreaRule{1, 1, 0}, AreaRule{0.5, 1.5, 1}, AreaRule{2, 0, 0.25, true}}) {
    rule.predicted = true;  // r predicted: the predicted_log and wait_over_predicted features
    rules.push_back(rule);
  }
  for (const AreaRule& rule : rules) teachers.push_back(Teacher{make_area_scorer(rule), rule.describe(), 0, rule, {}});

  for (const Teacher& teacher : teachers) {
    INFO(teacher.description);
    const std::vector<double> weights = linear_form(teacher, context.total_cpus);
    REQUIRE(weights.size() == features::kFeatureCount);
    std::vector<double> rule(jobs.size());
    teacher.scorer->score(context, jobs, rule);
    const std::vector<double> linear = linear_scores(jobs, context, weights);
    // Every pair the rule tells apart by more than log1p's difference from ln at 10 s (and float rounding) is in the
    // same order; the area rules differ from their linear form by a constant there.
    const double slack = teacher.rule ? (teacher.rule->a + teacher.rule->g) * std::log1p(0.1) + 1e-3 : 0.0;
    std::size_t pairs = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i)
      for (std::size_t k = i + 1; k < jobs.size(); ++k) {
        if (teacher.rule ? std::abs(rule[i] - rule[k]) <= slack : rule[i] == rule[k]) continue;
        ++pairs;
        if ((rule[i] > rule[k]) != (linear[i] > linear[k])) FAIL_CHECK("jobs " << i << " and " << k << " swap");
      }
    CHECK(pairs > jobs.size() * jobs.size() / 4);
    if (teacher.rule) {
      const std::vector<std::string> names = features::schema_names();
      auto weight_of = [&](const char* name) {
        return weights[static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin())];
      };
      CHECK((weight_of("predicted_log") != 0) == teacher.rule->predicted);
      CHECK((weight_of("limit_log") != 0) == !teacher.rule->predicted);
    }
  }

  for (const char* name : {"wfp3", "unicep"}) {
    INFO(name);
    CHECK(linear_form(std::move(heuristic_teacher(name)).value(), context.total_cpus).empty());
  }
  CHECK_FALSE(heuristic_teacher("largest").ok());
}

TEST_CASE("a rule with a share or fair-share term is one weighted sum of the features, accelerators included") {
  ScoringContext context;
  context.total_cpus = 2048;
  context.total_nodes = 32;
  context.total_accelerators = 64;
  std::vector<PendingJob> jobs = varied_jobs(300, 7);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].cpus = std::min(jobs[i].cpus, 2048);
    jobs[i].accelerators = static_cast<int>(i % 9);  // 0 to 8 of the 64
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i].fairshare_factor = static_cast<double>(i % 11) / 10;
  for (const AreaRule rule :
       {AreaRule{1, 0.5, 0.25, true, 10}, AreaRule{0.5, 0, 0, false, 30}, AreaRule{0.5, 1.5, 0, true, 3, 8}}) {
    INFO(rule.describe());
    const Teacher teacher{make_area_scorer(rule), rule.describe(), 0, rule, {}};
    const std::vector<double> weights = linear_form(teacher, context.total_cpus);
    std::vector<double> scores(jobs.size());
    teacher.scorer->score(context, jobs, scores);
    const std::vector<double> linear = linear_scores(jobs, context, weights);
    const double slack = (rule.a + rule.g) * std::log1p(0.1) + 1e-3;
    std::size_t pairs = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i)
      for (std::size_t k = i + 1; k < jobs.size(); ++k) {
        if (std::abs(scores[i] - scores[k]) <= slack) continue;
        ++pairs;
        if ((scores[i] > scores[k]) != (linear[i] > linear[k])) FAIL_CHECK("jobs " << i << " and " << k << " swap");
      }
    CHECK(pairs > jobs.size() * jobs.size() / 4);
  }
}

TEST_CASE("a cluster-relative rule is one weighted sum of the features on clusters of every size") {
  const AreaRule relative{1, 1.5, 0.5, true};
  const Teacher teacher{make_area_scorer(relative), relative.describe(), 0, relative, {}};
  const std::vector<double> weights = linear_form(teacher, 256);
  CHECK(weights == linear_form(teacher, 8192));
  const AreaRule plain{1, 1.5, 0.5};
  CHECK(linear_form(Teacher{make_area_scorer(plain), plain.describe(), 0, plain, {}}, 256) !=
        linear_form(Teacher{make_area_scorer(plain), plain.describe(), 0, plain, {}}, 8192));

  const std::vector<PendingJob> jobs = varied_jobs(200, 5);
  for (int cpus : {256, 8192}) {
    INFO(cpus << " CPUs");
    ScoringContext context;
    context.total_cpus = cpus;
    context.total_nodes = cpus / 64;
    std::vector<double> rule(jobs.size());
    teacher.scorer->score(context, jobs, rule);
    const std::vector<double> linear = linear_scores(jobs, context, weights);
    const double slack = (relative.a + relative.g) * std::log1p(0.1) + 1e-3;
    for (std::size_t i = 0; i < jobs.size(); ++i)
      for (std::size_t k = i + 1; k < jobs.size(); ++k)
        if (std::abs(rule[i] - rule[k]) > slack && (rule[i] > rule[k]) != (linear[i] > linear[k]))
          FAIL_CHECK("jobs " << i << " and " << k << " swap");
    // On 1,024 CPUs the rule is the plain one; elsewhere its CPU term is scaled by ln 1024 / ln N.
    ScoringContext kilo = context;
    kilo.total_cpus = 1024;
    std::vector<double> at_kilo(jobs.size()), plain_scores(jobs.size());
    teacher.scorer->score(kilo, jobs, at_kilo);
    make_area_scorer(plain)->score(kilo, jobs, plain_scores);
    for (std::size_t i = 0; i < jobs.size(); ++i) CHECK(at_kilo[i] == Approx(plain_scores[i]));
    const double scale = std::log(1024.0) / std::log(static_cast<double>(cpus));
    for (std::size_t i = 1; i < jobs.size(); ++i)
      CHECK(rule[i] - at_kilo[i] == Approx(1.5 * (1 - scale) * std::log(std::max(jobs[i].cpus, 1))).margin(1e-9));
  }
}

TEST_CASE("a network set to a linear rule scores rows as scale * (weights . row) through its ReLU layers") {
  torch::manual_seed(11);
  PolicyNets nets(static_cast<int>(features::kFeatureCount), std::vector<int>{16, 8});
  const torch::Tensor rows = torch::rand({50, static_cast<int64_t>(features::kFeatureCount)}) * 3 - 1;
  nets->set_normalisation(rows.mean(0), rows.std(0));
  std::vector<char> used(features::kFeatureCount, 1);
  used[5] = 0;  // a feature the training data never varied: left out, weight and all
  nets->set_used_features(used);
  std::vector<double> weights(features::kFeatureCount, 0.0);
  weights[1] = -2.5;
  weights[2] = 0.75;
  weights[4] = -1;
  weights[5] = 100;
  REQUIRE(nets->set_linear_policy(weights, 3.0));

  torch::Tensor scores;
  {
    torch::NoGradGuard no_grad;
    scores = nets->scores(rows).contiguous();
  }
  const torch::Tensor r = rows.contiguous();
  auto expected = [&](int64_t i) {
    double s = 0;
    for (std::size_t k = 0; k < weights.size(); ++k)
      if (used[k]) s += 3.0 * weights[k] * r[i][static_cast<int64_t>(k)].item<double>();
    return s;
  };
  for (int64_t i = 1; i < rows.size(0); ++i)
    CHECK(scores[i].item<double>() - scores[0].item<double>() == Approx(expected(i) - expected(0)).margin(1e-4));
  // The plain loops the rollout workers run compute the same.
  const PlainMlp plain = nets->to_plain();
  std::vector<float> out(static_cast<std::size_t>(rows.size(0))), scratch;
  plain.forward(r.data_ptr<float>(), out.size(), out.data(), scratch);
  for (std::size_t i = 0; i < out.size(); ++i)
    CHECK(out[i] == Approx(scores[static_cast<int64_t>(i)].item<float>()).margin(1e-4));

  PolicyNets narrow(static_cast<int>(features::kFeatureCount), std::vector<int>{1});
  CHECK_FALSE(narrow->set_linear_policy(weights, 1.0));
}

TEST_CASE("a scorer's spread within decisions: the pooled deviation around each decision's mean") {
  // Two decisions over rows that differ in feature 1 only.
  Episode e;
  auto add_row = [&](float limit) {
    std::vector<float> row(features::kFeatureCount, 0.0f);
    row[1] = limit;
    row[3] = 5;  // a feature the weights read but the network does not use
    e.features.insert(e.features.end(), row.begin(), row.end());
  };
  for (float v : {0.1f, 0.5f, 0.9f}) add_row(v);
  e.decisions.push_back(Decision{0, 3, 0, 0, 1});
  for (float v : {0.3f, 0.2f}) add_row(v);
  e.decisions.push_back(Decision{3, 2, 1, 0, 1});
  std::vector<double> weights(features::kFeatureCount, 0.0);
  weights[1] = -2;
  weights[3] = 1;
  std::vector<char> used(features::kFeatureCount, 1);
  used[3] = 0;

  const std::vector<double> z = linear_scores({e}, weights, used);
  REQUIRE(z.size() == 5);
  CHECK(z[0] == Approx(-0.2));
  CHECK(z[4] == Approx(-0.4));
  // By hand: deviations -0.8, 0, 0.8 around -1.0, and 0.1, -0.1 around -0.5; 1.3 / 5 rows.
  CHECK(within_decision_spread({e}, z) == Approx(std::sqrt(1.3 / 5)));
  // A constant added per decision changes nothing; a scale scales it.
  CHECK(within_decision_spread({e}, {7, 7.8, 8.6, 1.1, 0.9}) == Approx(std::sqrt(1.3 / 5)));
  CHECK(within_decision_spread({e}, {0, 0, 0, 0, 0}) == 0);
}

// The search keeps the lowest cost but never a failed run's (cost 0), which would otherwise look best of all.
TEST_CASE("the teacher search chooses the lowest cost and never a failed run") {
  auto cost = [](const Scorer& scorer) {
    if (scorer.name() == "sjf") return 0.0;     // its run failed
    if (scorer.name() == "unicep") return 0.5;  // the lowest real cost
    return 0.9;
  };
  const Teacher best = search_teacher(cost, 2);
  CHECK(best.heuristic == "unicep");
  CHECK(best.cost_ratio == 0.5);
  CHECK_FALSE(best.rule.has_value());
}

namespace {

/// A search's cost function that costs the rule named `cheap` 0.5 and every other candidate 0.9, and records the
/// names of the candidates it was asked for (from the search's threads) in `seen`.
std::function<double(const Scorer&)> recording_cost(std::vector<std::string>& seen, std::mutex& lock,
                                                    std::string cheap) {
  return [&seen, &lock, cheap = std::move(cheap)](const Scorer& scorer) {
    std::lock_guard<std::mutex> hold(lock);
    seen.emplace_back(scorer.name());
    return scorer.name() == cheap ? 0.5 : 0.9;
  };
}

}  // namespace

TEST_CASE("the teacher family has rules on predicted run times only when asked for") {
  std::vector<std::string> seen;
  std::mutex lock;
  const auto cost = recording_cost(seen, lock, "area:1/0.5/0.25/predicted");
  const Teacher limits = search_teacher(cost, 2);
  CHECK(limits.cost_ratio == 0.9);  // that rule was not tried
  CHECK(std::none_of(seen.begin(), seen.end(), [](const std::string& s) { return s.find("predicted") != s.npos; }));
  const std::size_t plain = seen.size();
  seen.clear();
  const Teacher predicted = search_teacher(cost, 2, TeacherFamily{false, true});
  REQUIRE(predicted.rule.has_value());
  CHECK(predicted.rule->predicted);
  CHECK(predicted.cost_ratio == 0.5);
  CHECK(seen.size() == plain + 48);  // each of the 48 area rules once more, on predicted run times
}

TEST_CASE("the teacher family has rules with the share term only when asked for") {
  std::vector<std::string> seen;
  std::mutex lock;
  const auto cost = recording_cost(seen, lock, "area:2/0/0.5/10/relative");
  const Teacher plain = search_teacher(cost, 2, TeacherFamily{true, false});
  CHECK(plain.cost_ratio == 0.9);  // that rule was not tried
  const std::size_t without = seen.size();
  seen.clear();
  const Teacher shared = search_teacher(cost, 2, TeacherFamily{true, false, true});
  REQUIRE(shared.rule.has_value());
  CHECK(shared.rule->c == 10);
  CHECK(shared.rule->cluster_relative);
  CHECK(shared.cost_ratio == 0.5);
  CHECK(seen.size() == without + 96);  // each of the 48 area rules twice more: c = 3 and c = 10
  CHECK(std::count_if(seen.begin(), seen.end(), [](const std::string& s) { return s.rfind("area:", 0) == 0; }) ==
        3 * 48);
}

TEST_CASE("the Smith-width teacher family weighs width at most half as much as run time") {
  std::vector<std::string> seen;
  std::mutex lock;
  const auto heavy = recording_cost(seen, lock, "area:0.5/1.5/0.25");
  const Teacher full = search_teacher(heavy, 2);
  CHECK(full.cost_ratio == 0.5);  // the full family has the heavy-width rule
  seen.clear();
  const Teacher smith = search_teacher(heavy, 2, TeacherFamily{false, true, true, true});
  CHECK(smith.cost_ratio == 0.9);  // that rule was not tried
  std::size_t rules = 0;
  for (const std::string& name : seen) {
    if (name.rfind("area:", 0) != 0) continue;
    ++rules;
    auto rule = parse_area_rule(name);
    REQUIRE(rule.ok());
    CHECK(rule.value().b <= rule.value().a / 2);
  }
  // a = 0.5: b = 0; a = 1: b = 0, 0.5; a = 2: b = 0, 0.5, 1; four g each, three c, limits and predicted.
  CHECK(rules == 6 * 4 * 3 * 2);
  seen.clear();
  const auto smith_ratio = recording_cost(seen, lock, "area:2/1/0.25/predicted");
  const Teacher exact = search_teacher(smith_ratio, 2, TeacherFamily{false, true, true, true});
  REQUIRE(exact.rule.has_value());
  CHECK(exact.cost_ratio == 0.5);  // Smith's ratio itself stays in the family
}

// Gavel's jobs never wait in the compat simulator: every candidate costs the reference's, and the first tried, FCFS,
// was its teacher. With a margin the reference teaches unless a rule is that much cheaper.
TEST_CASE("with a margin the reference teaches wherever no rule beats it by that much") {
  const auto costing = [](std::string cheap, double ratio) {
    return [cheap = std::move(cheap), ratio](const Scorer& scorer) { return scorer.name() == cheap ? ratio : 1.0; };
  };
  const ReferenceMargin sjf_by_one_percent{"sjf", 0.01};
  const auto ties = costing("none", 1.0);
  CHECK(search_teacher(ties, 2).heuristic == "fcfs");  // the first tried, without a margin
  const Teacher tie = search_teacher(ties, 2, {}, ReferenceMargin{"sjf", 0});
  CHECK(tie.heuristic == "sjf");
  CHECK_FALSE(tie.rule.has_value());
  CHECK(tie.cost_ratio == 1.0);
  CHECK(tie.description.find("the reference") != std::string::npos);

  const auto slightly = costing("area:1/0.5/0.25", 0.995);  // 0.5% below the reference
  REQUIRE(search_teacher(slightly, 2).rule.has_value());
  CHECK(search_teacher(slightly, 2, {}, ReferenceMargin{"sjf", 0}).rule.has_value());
  const Teacher kept = search_teacher(slightly, 2, {}, sjf_by_one_percent);
  CHECK(kept.heuristic == "sjf");
  CHECK(kept.description.find("area:1/0.5/0.25") != std::string::npos);  // it says what it passed over

  const Teacher clearly = search_teacher(costing("area:1/0.5/0.25", 0.98), 2, {}, sjf_by_one_percent);
  REQUIRE(clearly.rule.has_value());
  CHECK(clearly.rule->spec() == "area:1/0.5/0.25");
  CHECK(clearly.cost_ratio == 0.98);
  // The reference itself the cheapest: it teaches, with no note.
  const Teacher itself = search_teacher(costing("sjf", 0.9), 2, {}, sjf_by_one_percent);
  CHECK(itself.heuristic == "sjf");
  CHECK(itself.description == "sjf");
  // Another reference the search tries.
  CHECK(search_teacher(ties, 2, {}, ReferenceMargin{"unicep", 0.01}).heuristic == "unicep");
}

TEST_CASE("a stretch's own teacher: the cheapest rule there, only where it beats its trace's teacher by the margin") {
  const auto cost = [](const Scorer& scorer) {
    if (scorer.name() == "sjf") return 0.85;
    if (scorer.name() == "area:1/0.5/0.25") return 0.95;
    return 1.0;
  };
  const std::optional<Teacher> sjf = better_teacher(cost, 1.0, 0.1);
  REQUIRE(sjf.has_value());
  CHECK(sjf->heuristic == "sjf");  // the cheapest, not the first below the margin
  CHECK(sjf->cost_ratio == Approx(0.85));
  CHECK_FALSE(better_teacher(cost, 1.0, 0.2).has_value());  // 15% below is not 20% below
  CHECK_FALSE(better_teacher(cost, 0.9, 0.1).has_value());  // the trace's teacher costs 0.9 there: 5.6% above sjf
  const std::optional<Teacher> rule = better_teacher(cost, 1.2, 0.1);  // 0.85 / 1.2: sjf still the cheapest
  REQUIRE(rule.has_value());
  CHECK(rule->cost_ratio == Approx(0.85 / 1.2));
  // A failed run (no cost) never teaches, and a teacher whose own run failed is not replaced by a guess.
  const auto failing = [](const Scorer& scorer) { return scorer.name() == "sjf" ? 0.0 : 1.0; };
  CHECK_FALSE(better_teacher(failing, 1.0, 0.1).has_value());
  CHECK_FALSE(better_teacher(cost, 0.0, 0.1).has_value());
}

TEST_CASE("only the heuristics the search tries can be the reference a margin keeps") {
  for (const char* name : {"fcfs", "sjf", "wfp3", "unicep"}) CHECK(is_teacher_heuristic(name));
  for (const char* name : {"f1", "multifactor", "nonesuch", "area:1/0/0"}) CHECK_FALSE(is_teacher_heuristic(name));
}
