// Building, saving and loading MLP models: the scores are the network's, exactly; the file round-trips bit for bit.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "policy_fixtures.h"
#include "rlsched/features.h"
#include "rlsched/policy/model.h"
#include "rlsched/policy/model_builder.h"
#include "rlsched/policy/torchscript_scorer.h"

using namespace rlsched;
using namespace rlsched::policy;
using namespace rlsched::policy::testing;

namespace {

torch::Tensor floats(std::vector<float> values) {
  return torch::from_blob(values.data(), {static_cast<std::int64_t>(values.size())}, torch::kFloat32).clone();
}

std::vector<double> score_with(const Scorer& scorer, const std::vector<PendingJob>& jobs, const ScoringContext& c) {
  std::vector<double> out(jobs.size(), -1.0);
  scorer.score(c, jobs, out);
  return out;
}

}  // namespace

TEST_CASE("a model with known weights scores exactly what the reference loop computes") {
  TempDir dir;
  const PlainMlp mlp = PlainMlp::Dyadic();
  write_model(dir.file("dyadic.pt"), mlp);
  auto scorer = make_policy_scorer("model:" + dir.file("dyadic.pt"));
  REQUIRE(scorer.ok());
  CHECK((*scorer)->name() == "model:" + dir.file("dyadic.pt"));
  CHECK_FALSE((*scorer)->is_static());

  const auto jobs = dyadic_jobs();
  const auto context = test_context(static_cast<int>(jobs.size()));
  const auto expected = reference_scores(mlp, jobs, context);
  int relu_cut = 0;  // the reference really exercises ReLU: some scores differ from the pre-activation network's
  for (double e : expected) relu_cut += e != expected.front();
  REQUIRE(relu_cut > 0);
  // Twice: the first call and a warm one must agree (no re-optimisation between them).
  for (int round = 0; round < 2; ++round) CHECK(score_with(**scorer, jobs, context) == expected);
}

TEST_CASE("a random 23-32-32-1 model agrees with the reference loop to float precision") {
  TempDir dir;
  const PlainMlp mlp = PlainMlp::Random(features::schema_names(), {32, 32}, 42);
  write_model(dir.file("random.pt"), mlp);
  auto model = load_model(dir.file("random.pt"));
  REQUIRE(model.ok());
  CHECK((*model)->frozen());
  for (const std::string& note : (*model)->notes()) CHECK(note.rfind("not frozen", 0) == std::string::npos);
  CHECK((*model)->metadata().architecture == "mlp 23-32-32-1 relu");

  TorchScriptScorer scorer(*model);
  const auto jobs = random_jobs(1000, 3);
  const auto context = test_context(1000);
  const auto expected = reference_scores(mlp, jobs, context);
  const auto got = score_with(scorer, jobs, context);
  for (std::size_t i = 0; i < jobs.size(); ++i) CHECK(got[i] == Approx(expected[i]).margin(1e-5).epsilon(1e-5));
  CHECK(scorer.nonfinite_replaced() == 0);
  CHECK(scorer.forward_failures() == 0);

  SECTION("rows are independent: one job alone scores as it does in the batch") {
    for (std::size_t i : {0, 17, 999}) {
      const auto alone = score_with(scorer, {jobs[i]}, context);
      CHECK(alone[0] == Approx(got[i]).margin(1e-6));
    }
  }
  SECTION("an empty queue is no forward call and no error") {
    std::vector<double> none;
    scorer.score(context, {}, none);
    CHECK(scorer.forward_failures() == 0);
  }
}

TEST_CASE("save and load round-trip bit for bit") {
  TempDir dir;
  const PlainMlp mlp = PlainMlp::Random(features::schema_names(), {16, 8}, 5);
  MlpSpec spec;
  spec.features = mlp.features;
  spec.input_mean = floats(mlp.mean);
  spec.input_std = floats(mlp.std);
  for (const auto& l : mlp.layers) spec.layers.push_back({floats(l.weight).reshape({l.out, l.in}), floats(l.bias)});
  auto built = build_mlp_module(spec);
  REQUIRE(built.ok());
  ModelMetadata meta = ModelMetadata::ForFeatures(mlp.features, spec.architecture());
  meta.training = {{"data", "lublin_256"}, {"seed", 5}, {"metrics", {{"bsld", 3.25}}}};
  const std::string path = dir.file("roundtrip.pt");
  REQUIRE(save_model(path, *built, meta).ok());

  // The raw archive: every tensor and the metadata come back exactly.
  torch::jit::Module reloaded = torch::jit::load(path);
  for (const auto& p : built->named_parameters()) CHECK(torch::equal(p.value, reloaded.attr(p.name).toTensor()));
  for (const auto& b : built->named_buffers()) CHECK(torch::equal(b.value, reloaded.attr(b.name).toTensor()));
  CHECK(weights_sha256(reloaded) == weights_sha256(*built));

  auto model = load_model(path);
  REQUIRE(model.ok());
  const ModelMetadata& back = (*model)->metadata();
  CHECK(back.weights_sha256 == weights_sha256(*built));
  CHECK(back.training == meta.training);
  CHECK(back.schema_version == features::kSchemaVersion);
  CHECK(back.feature_names() == mlp.features);
  CHECK(back.features[0].normalisation == features::schema()[0].normalisation);
  CHECK(back.created.size() == 20);  // YYYY-MM-DDTHH:MM:SSZ
  CHECK((*model)->file().size == static_cast<std::int64_t>(read_bytes(path).size()));

  // The loaded (frozen) model computes what the module the trainer built computes, bit for bit.
  const auto jobs = random_jobs(64, 11);
  const auto context = test_context(64);
  std::vector<float> rows(jobs.size() * mlp.features.size());
  (*model)->feature_map().extract(jobs, context, rows.data());
  built->eval();
  torch::NoGradGuard no_grad;
  const auto input = torch::from_blob(rows.data(), {64, static_cast<std::int64_t>(mlp.features.size())});
  const torch::Tensor direct = built->forward({input}).toTensor();
  std::vector<float> loaded(jobs.size());
  REQUIRE((*model)->forward(rows.data(), jobs.size(), loaded.data()).ok());
  CHECK(std::memcmp(loaded.data(), direct.data_ptr<float>(), loaded.size() * sizeof(float)) == 0);
}

TEST_CASE("build_mlp_module makes a trainable module and refuses malformed specs") {
  MlpSpec spec = MlpSpec::Random(features::schema_names(), {32, 32}, 1);
  CHECK(spec.architecture() == "mlp 23-32-32-1 relu");
  auto module = build_mlp_module(spec);
  REQUIRE(module.ok());
  CHECK(module->is_training());
  int trainable = 0;
  for (const auto& p : module->named_parameters()) trainable += p.value.requires_grad();
  CHECK(trainable == 6);
  const auto x = torch::rand({5, 23});
  const torch::Tensor y = module->forward({x}).toTensor();
  CHECK(y.sizes() == c10::IntArrayRef{5});
  y.sum().backward();  // gradients reach the parameters: the trainer can optimise the module itself
  CHECK(module->attr("fc0_weight").toTensor().grad().defined());

  SECTION("the spec's tensors are copied, not shared") {
    spec.layers[0].weight.fill_(0.0f);
    CHECK(module->attr("fc0_weight").toTensor().abs().sum().item<float>() > 0);
  }
  SECTION("wrong input width") {
    spec.layers[0].weight = torch::zeros({32, 20});
    auto bad = build_mlp_module(spec);
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.status().message(), Catch::Contains("layers[0].weight must have shape [out, 23] (got [32, 20])"));
  }
  SECTION("last layer not 1 wide") {
    spec.layers[2] = {torch::zeros({2, 32}), torch::zeros({2})};
    CHECK_THAT(build_mlp_module(spec).status().message(), Catch::Contains("must have out = 1 (got 2)"));
  }
  SECTION("float64") {
    spec.input_mean = torch::zeros({23}, torch::kFloat64);
    CHECK_THAT(build_mlp_module(spec).status().message(), Catch::Contains("must be float32 (got float64)"));
  }
  SECTION("zero std") {
    spec.input_std[4] = 0.0f;
    CHECK_THAT(build_mlp_module(spec).status().message(), Catch::Contains("input_std must be > 0"));
  }
}

TEST_CASE("weights_sha256 covers names, shapes and every byte") {
  auto a = build_mlp_module(MlpSpec::Random(features::schema_names(), {4}, 9));
  auto b = build_mlp_module(MlpSpec::Random(features::schema_names(), {4}, 9));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  const std::string digest = weights_sha256(*a);
  CHECK(digest.size() == 64);
  CHECK(weights_sha256(*b) == digest);
  torch::NoGradGuard no_grad;
  float& w = a->attr("fc1_weight").toTensor().data_ptr<float>()[2];
  w = std::nextafter(w, 2.0f);
  CHECK(weights_sha256(*a) != digest);
}

TEST_CASE("save_model refuses to write a model that would not load, and leaves no temporary file") {
  TempDir dir;
  auto module = build_mlp_module(MlpSpec::Random(features::schema_names(), {4}, 2));
  REQUIRE(module.ok());
  ModelMetadata meta = ModelMetadata::ForFeatures(features::schema_names(), "mlp");
  meta.features.pop_back();  // the network still reads 23 columns
  const Status s = save_model(dir.file("m.pt"), *module, meta);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(),
             Catch::StartsWith("refusing to save " + dir.file("m.pt") + ": forward failed on the smoke batch"));
  CHECK(std::filesystem::is_empty(dir.file("")));
}
