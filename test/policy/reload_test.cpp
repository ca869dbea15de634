// Hot reload: a good new file replaces the model, a bad one is logged once and the previous model keeps serving;
// failures at run time fall back for that call only.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <limits>

#include "policy_fixtures.h"
#include "rlsched/features.h"
#include "rlsched/policy/reloading_scorer.h"
#include "rlsched/policy/torchscript_scorer.h"

using namespace rlsched;
using namespace rlsched::policy;
using namespace rlsched::policy::testing;

namespace {

/// Collects log lines; the tests run single-threaded here.
struct LogLines {
  std::vector<std::pair<LogLevel, std::string>> lines;
  LogSink sink() {
    return [this](LogLevel level, const std::string& line) { lines.emplace_back(level, line); };
  }
  int count_starting(const std::string& prefix) const {
    int n = 0;
    for (const auto& [level, line] : lines) n += line.rfind(prefix, 0) == 0;
    return n;
  }
};

std::vector<double> scores_of(const Scorer& scorer, const std::vector<PendingJob>& jobs, const ScoringContext& c) {
  std::vector<double> out(jobs.size());
  scorer.score(c, jobs, out);
  return out;
}

void check_close(const std::vector<double>& got, const std::vector<double>& expected) {
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(expected[i]).margin(1e-5));
}

}  // namespace

TEST_CASE("hot reload swaps good models and keeps the previous one on a bad file") {
  TempDir dir;
  const std::string path = dir.file("policy.pt");
  const PlainMlp a = PlainMlp::Random(features::schema_names(), {16}, 1);
  const PlainMlp b = PlainMlp::Random(features::schema_names(), {16, 16}, 2);
  write_model(path, a);
  LogLines log;
  auto created = ReloadingScorer::Create({path, "fcfs", {}, {}, log.sink()});
  REQUIRE(created.ok());
  ReloadingScorer& policy = **created;
  CHECK(policy.name() == "model:" + path + " (fallback fcfs)");

  const auto jobs = random_jobs(40, 4);
  const auto context = test_context(40);
  check_close(scores_of(policy, jobs, context), reference_scores(a, jobs, context));
  CHECK(log.count_starting("loaded model " + path) == 1);

  SECTION("an unchanged file is not reloaded") {
    const std::size_t lines = log.lines.size();
    for (int i = 0; i < 3; ++i) CHECK_FALSE(policy.reload_if_changed());
    CHECK(policy.counters().loads_ok == 1);
    CHECK(log.lines.size() == lines);
  }

  SECTION("a good new model replaces the old one; a bad one does not") {
    write_model(path, b);
    CHECK(policy.reload_if_changed());
    const auto with_b = scores_of(policy, jobs, context);
    check_close(with_b, reference_scores(b, jobs, context));
    CHECK(log.count_starting("loaded model " + path) == 2);
    CHECK_THAT(log.lines.back().second, Catch::EndsWith("(replaces the previous model)"));

    write_bad_model(path + ".new", BadModel::kWeightBytesFlipped);
    replace_file(path, read_bytes(path + ".new"));
    for (int i = 0; i < 5; ++i) CHECK_FALSE(policy.reload_if_changed());
    CHECK(scores_of(policy, jobs, context) == with_b);
    REQUIRE(log.count_starting("keeping previous model: ") == 1);
    CHECK_THAT(log.lines.back().second,
               Catch::StartsWith("keeping previous model: " + path + ": weights do not match weights_sha256"));
    CHECK(log.lines.back().first == LogLevel::kWarning);

    // Another bad version is another line, once.
    write_bad_model(path + ".new", BadModel::kOutputN1);
    replace_file(path, read_bytes(path + ".new"));
    for (int i = 0; i < 3; ++i) CHECK_FALSE(policy.reload_if_changed());
    CHECK(log.count_starting("keeping previous model: ") == 2);

    // The file disappears: still the previous model, one line.
    REQUIRE(::unlink(path.c_str()) == 0);
    for (int i = 0; i < 3; ++i) CHECK_FALSE(policy.reload_if_changed());
    CHECK(log.count_starting("keeping previous model: " + path + ": cannot stat") == 1);
    CHECK(scores_of(policy, jobs, context) == with_b);

    // And a good one comes back.
    write_model(path, a);
    CHECK(policy.reload_if_changed());
    check_close(scores_of(policy, jobs, context), reference_scores(a, jobs, context));

    const PolicyCounters c = policy.counters();
    CHECK(c.loads_ok == 3);
    CHECK(c.load_failures == 3);
    CHECK(c.fallback_calls == 0);
  }
}

TEST_CASE("without any valid model the fallback serves until a good file appears") {
  TempDir dir;
  const std::string path = dir.file("later.pt");
  LogLines log;
  auto created = ReloadingScorer::Create({path, "sjf", {}, {}, log.sink()});
  REQUIRE(created.ok());
  ReloadingScorer& policy = **created;
  const auto jobs = dyadic_jobs();  // so that the model's scores compare exactly
  const auto context = test_context(static_cast<int>(jobs.size()));
  auto sjf = make_scorer("sjf");
  REQUIRE(sjf.ok());
  for (int i = 0; i < 3; ++i) policy.reload_if_changed();
  CHECK(scores_of(policy, jobs, context) == scores_of(**sjf, jobs, context));
  REQUIRE(log.lines.size() == 1);
  CHECK(log.lines[0].second == "serving fallback 'sjf': " + path + ": cannot stat: No such file or directory");

  write_model(path, PlainMlp::Dyadic());
  CHECK(policy.reload_if_changed());
  CHECK(policy.model() != nullptr);
  CHECK(scores_of(policy, jobs, context) == reference_scores(PlainMlp::Dyadic(), jobs, context));
  CHECK(policy.counters().fallback_calls == 1);

  ReloadingScorerOptions unknown;
  unknown.model_path = path;
  unknown.fallback = "no-such-heuristic";
  CHECK_THAT(ReloadingScorer::Create(unknown).status().message(), Catch::StartsWith("fallback: unknown policy"));
}

TEST_CASE("a model that fails at run time: the fallback serves that call, NaN scores rank last") {
  TempDir dir;
  const auto jobs = random_jobs(20, 9);  // more rows than the smoke batch's 7
  const auto context = test_context(20);

  SECTION("forward throws on large batches") {
    const std::string path = dir.file("throws.pt");
    write_scripted_model(path,
                         "def forward(self, x: Tensor) -> Tensor:\n"
                         "    if x.size(0) > 7:\n"
                         "        return torch.mm(x, torch.ones([3, 1])).squeeze(1)\n"
                         "    return torch.mm(x, self.w).squeeze(1)\n");
    LogLines log;
    auto policy = ReloadingScorer::Create({path, "sjf", {}, {}, log.sink()});
    REQUIRE(policy.ok());
    REQUIRE((*policy)->model() != nullptr);
    auto sjf = make_scorer("sjf");
    for (int i = 0; i < 3; ++i) CHECK(scores_of(**policy, jobs, context) == scores_of(**sjf, jobs, context));
    CHECK((*policy)->counters().forward_failures == 3);
    CHECK((*policy)->counters().fallback_calls == 3);
    REQUIRE(log.count_starting("model failed while scoring 20 jobs") == 1);
    CHECK_THAT(log.lines.back().second, Catch::Contains("shapes cannot be multiplied (20x23 and 3x1)"));
    CHECK(log.lines.back().first == LogLevel::kError);

    auto direct = make_policy_scorer("model:" + path);
    REQUIRE(direct.ok());
    const auto lowest = scores_of(**direct, jobs, context);
    for (double s : lowest) CHECK(s == std::numeric_limits<double>::lowest());
    CHECK(dynamic_cast<const TorchScriptScorer&>(**direct).forward_failures() == 1);
  }

  SECTION("forward returns NaN for one row of large batches") {
    const std::string path = dir.file("nan.pt");
    write_scripted_model(path,
                         "def forward(self, x: Tensor) -> Tensor:\n"
                         "    s = torch.mm(x, self.w).squeeze(1)\n"
                         "    if x.size(0) > 7:\n"
                         "        s = torch.cat([torch.full([1], float('nan')), s[1:]])\n"
                         "    return s\n");
    auto policy = ReloadingScorer::Create({path, "sjf", {}, {}, [](LogLevel, const std::string&) {}});
    REQUIRE(policy.ok());
    const auto got = scores_of(**policy, jobs, context);
    CHECK(got[0] == std::numeric_limits<double>::lowest());
    for (std::size_t i = 1; i < got.size(); ++i) CHECK(std::isfinite(got[i]));
    for (std::size_t i = 1; i < got.size(); ++i) CHECK(got[i] > got[0]);
    CHECK((*policy)->counters().nonfinite_replaced == 1);
    CHECK((*policy)->counters().fallback_calls == 0);
  }
}
