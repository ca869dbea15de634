// Every bad model file is refused with its own one-line reason, and a policy given such a file serves its fallback.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "policy_fixtures.h"
#include "rlsched/features.h"
#include "rlsched/policy/model.h"
#include "rlsched/policy/reloading_scorer.h"
#include "rlsched/policy/torchscript_scorer.h"

using namespace rlsched;
using namespace rlsched::policy;
using namespace rlsched::policy::testing;

namespace {

struct Refusal {
  const char* file;
  BadModel kind;
  const char* reason;  ///< the distinctive part of the message
};

const std::vector<Refusal>& refusals() {
  static const std::vector<Refusal> table = {
      {"empty.pt", BadModel::kEmpty, "model file is empty"},
      {"script.pt", BadModel::kNotZip, "not a TorchScript archive (no zip header)"},
      {"directory.pt", BadModel::kCorruptDirectory,
       "corrupt TorchScript archive: PytorchStreamReader failed reading zip archive"},
      {"pickle.pt", BadModel::kCorruptPickle, "corrupt TorchScript archive: "},
      {"truncated.pt", BadModel::kTruncated, "truncated model archive (no zip end-of-archive record)"},
      {"bare.pt", BadModel::kNoMetadata, "no rlsched/metadata.json in the archive"},
      {"badjson.pt", BadModel::kInvalidJson, "invalid rlsched/metadata.json: not valid JSON"},
      {"schema3.pt", BadModel::kWrongSchema,
       "feature schema version 3 is not supported (this build reads versions 1 to 2)"},
      {"unknown.pt", BadModel::kUnknownFeature,
       "the model needs a feature this build cannot produce: feature 'gpu_temperature' is not in feature schema v2"},
      {"flipped.pt", BadModel::kWeightBytesFlipped, "weights do not match weights_sha256"},
      {"n1.pt", BadModel::kOutputN1, "forward returned shape [7, 1], expected [7]"},
      {"n2.pt", BadModel::kOutputN2, "forward returned shape [7, 2], expected [7]"},
      {"double.pt", BadModel::kOutputFloat64, "forward returned dtype float64, expected float32"},
      {"nan.pt", BadModel::kNaNWeight, "forward returned non-finite scores on the smoke batch"},
      {"throws.pt", BadModel::kForwardThrows, "forward failed on the smoke batch: "},
  };
  return table;
}

std::vector<double> fallback_scores(const std::string& name, const std::vector<PendingJob>& jobs,
                                    const ScoringContext& context) {
  auto fallback = make_scorer(name);
  REQUIRE(fallback.ok());
  std::vector<double> out(jobs.size());
  (*fallback)->score(context, jobs, out);
  return out;
}

}  // namespace

TEST_CASE("each bad model file is refused with its own one-line message") {
  TempDir dir;
  std::set<std::string> reasons;
  for (const Refusal& r : refusals()) {
    const std::string path = dir.file(r.file);
    write_bad_model(path, r.kind);
    auto model = load_model(path);
    INFO(r.file);
    REQUIRE_FALSE(model.ok());
    const std::string& message = model.status().message();
    CHECK_THAT(message, Catch::StartsWith(path + ": " + r.reason));
    CHECK(message.find('\n') == std::string::npos);
    reasons.insert(message.substr(path.size()));
  }
  CHECK(reasons.size() == refusals().size());

  SECTION("libtorch's own reasons are kept, on one line") {
    CHECK_THAT(load_model(dir.file("throws.pt")).status().message(), Catch::Contains("cannot be multiplied"));
  }
  SECTION("the weights digest is what catches flipped weight bytes: libtorch loads them silently") {
    CHECK(libtorch_loads(dir.file("flipped.pt")));
  }
}

TEST_CASE("a missing model file is refused") {
  TempDir dir;
  auto model = load_model(dir.file("nothing.pt"));
  REQUIRE_FALSE(model.ok());
  CHECK(model.status().code() == Status::Code::kNotFound);
  CHECK(model.status().message() == dir.file("nothing.pt") + ": cannot open model file: No such file or directory");
  auto scorer = make_policy_scorer("model:" + dir.file("nothing.pt"));
  CHECK_FALSE(scorer.ok());
  CHECK_THAT(make_policy_scorer("model:").status().message(), Catch::Contains("needs a path"));
  CHECK(make_policy_scorer("sjf").ok());
  CHECK_THAT(make_policy_scorer("nope").status().message(), Catch::Contains("unknown policy 'nope'"));
}

TEST_CASE("a policy given a bad model file serves the fallback's scores") {
  TempDir dir;
  const auto jobs = random_jobs(50, 8);
  const auto context = test_context(50);
  const auto expected = fallback_scores("sjf", jobs, context);
  for (const Refusal& r : refusals()) {
    INFO(r.file);
    const std::string path = dir.file(r.file);
    write_bad_model(path, r.kind);
    std::vector<std::string> lines;
    auto policy = ReloadingScorer::Create(
        {path, "sjf", {}, {}, [&](LogLevel, const std::string& line) { lines.push_back(line); }});
    REQUIRE(policy.ok());
    std::vector<double> got(jobs.size());
    (*policy)->score(context, jobs, got);
    CHECK(got == expected);
    CHECK((*policy)->model() == nullptr);
    const PolicyCounters counters = (*policy)->counters();
    CHECK(counters.load_failures == 1);
    CHECK(counters.fallback_calls == 1);
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], Catch::StartsWith("serving fallback 'sjf': " + path + ": " + r.reason));
  }
}

TEST_CASE("require_private refuses a model or config file writable by group or others") {
  TempDir dir;
  const std::string path = dir.file("open.pt");
  write_model(path, PlainMlp::Random(features::schema_names(), {4}, 1));
  REQUIRE(::chmod(path.c_str(), 0666) == 0);
  CHECK(load_model(path).ok());  // without the option the mode does not matter

  auto refused = load_model(path, LoadOptions{true});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message() == path +
                                          ": refusing model file writable by group or others (mode 0666); run "
                                          "chmod go-w " +
                                          path);
  auto policy = ReloadingScorer::Create({path, "fcfs", {}, LoadOptions{true}, [](LogLevel, const std::string&) {}});
  REQUIRE(policy.ok());
  CHECK((*policy)->model() == nullptr);

  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  CHECK(load_model(path, LoadOptions{true}).ok());
  CHECK((*policy)->reload_if_changed());  // fixing the mode is a new file version: hot reload tries it again

  const std::string config = dir.file("rlsched.yaml");
  write_bytes(config, "policy: model\n");
  REQUIRE(::chmod(config.c_str(), 0620) == 0);
  CHECK(check_private_file(config, "config file").message() ==
        config + ": refusing config file writable by group or others (mode 0620); run chmod go-w " + config);
  REQUIRE(::chmod(config.c_str(), 0600) == 0);
  CHECK(check_private_file(config, "config file").ok());
}
