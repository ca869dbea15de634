#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "rlsched/features.h"
#include "rlsched/policy/model.h"
#include "rlsched/policy/model_builder.h"
#include "rlsched/train/ensemble.h"
#include "temp_dir.h"

// Last: libtorch pulls in glog, whose CHECK would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace rlsched;
using rlsched::test::TempDir;

namespace {

/// A member as `rlsched train` could have written it: random weights over `columns` of the schema, with a
/// normalisation of its own (so that the ensemble has to re-express each member's inputs).
std::string member(const TempDir& dir, const std::string& name, const std::vector<std::size_t>& columns,
                   const std::vector<int>& hidden, std::uint64_t seed) {
  const std::vector<std::string> schema = features::schema_names();
  std::vector<std::string> names;
  for (std::size_t c : columns) names.push_back(schema.at(c));
  policy::MlpSpec spec = policy::MlpSpec::Random(names, hidden, seed);
  std::mt19937_64 rng(seed + 100);
  std::uniform_real_distribution<float> mean(-50.0f, 500.0f), std(0.5f, 200.0f);
  for (std::size_t i = 0; i < names.size(); ++i) {
    spec.input_mean[static_cast<int64_t>(i)] = mean(rng);
    spec.input_std[static_cast<int64_t>(i)] = std(rng);
  }
  auto module = policy::build_mlp_module(spec);
  REQUIRE(module.ok());
  const std::string path = dir.file(name + ".pt");
  REQUIRE(policy::save_model(path, *module, policy::ModelMetadata::ForFeatures(names, spec.architecture())).ok());
  return path;
}

std::vector<double> scores(const std::string& path) {
  auto model = policy::load_model(path);
  INFO(model.status().message());
  REQUIRE(model.ok());
  const std::vector<PendingJob> jobs = policy::smoke_jobs();
  std::vector<double> out(jobs.size());
  REQUIRE((*model)->score(policy::smoke_context(), jobs, out).status.ok());
  return out;
}

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("an ensemble scores every job with the mean of its members' scores") {
  TempDir dir;
  // Overlapping and distinct features, other widths, each its own normalisation.
  const std::string a = member(dir, "a", {0, 1, 2, 5}, {8, 4}, 1);
  const std::string b = member(dir, "b", {1, 2, 3, 7}, {6, 5}, 2);
  const std::string c = member(dir, "c", {0, 4, 5}, {3, 3}, 3);
  const std::string out = dir.file("abc.pt");
  const auto written = train::write_ensemble({a, b, c}, out, "rlsched ensemble a b c");
  INFO(written.status().message());
  REQUIRE(written.ok());

  const std::vector<double> sa = scores(a), sb = scores(b), sc = scores(c), mean = scores(out);
  double scale = 0;
  for (std::size_t j = 0; j < sa.size(); ++j)
    scale = std::max({scale, std::abs(sa[j]), std::abs(sb[j]), std::abs(sc[j])});
  REQUIRE(scale > 0);
  for (std::size_t j = 0; j < sa.size(); ++j) {
    INFO("job " << j);
    CHECK(mean[j] == Approx((sa[j] + sb[j] + sc[j]) / 3).margin(1e-5 * scale));
  }
  // The members' distinct orders matter: the mean is not any one of them.
  CHECK(mean != sa);

  auto model = policy::load_model(out);
  REQUIRE(model.ok());
  CHECK((*model)->metadata().architecture == "mlp 7-17-12-1 relu");       // features 0-5 and 7; 8+6+3 and 4+5+3 units
  CHECK(written->weights_sha256 == (*model)->metadata().weights_sha256);  // what the CLI prints is what was saved
  CHECK((*model)->metadata().training["ensemble"]["members"].size() == 3);
  const std::string card = text_of(dir.file("abc.md"));
  for (const std::string& m : {a, b, c}) {
    auto loaded = policy::load_model(m);
    REQUIRE(loaded.ok());
    CHECK_THAT(card, Catch::Contains((*loaded)->metadata().weights_sha256));
  }
}

TEST_CASE("an ensemble of one model with itself scores as that model") {
  TempDir dir;
  const std::string a = member(dir, "self", {0, 2, 6}, {5, 5}, 4);
  const std::string out = dir.file("self.pt");
  REQUIRE(train::write_ensemble({a, a}, out, "").ok());
  const std::vector<double> one = scores(a), two = scores(out);
  for (std::size_t j = 0; j < one.size(); ++j) CHECK(two[j] == Approx(one[j]).epsilon(1e-5).margin(1e-6));
}

TEST_CASE("an ensemble refuses members it cannot combine, naming the file") {
  TempDir dir;
  const std::string out = dir.file("refused.pt");
  const std::string two_layers = member(dir, "deep2", {0, 1}, {4, 4}, 5);
  const std::string one_layer = member(dir, "deep1", {0, 1}, {4}, 6);
  Status s = train::write_ensemble({two_layers, one_layer}, out, "").status();
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::StartsWith(one_layer + ": cannot be a member of this ensemble"));
  CHECK_THAT(s.message(), Catch::Contains("2 layers"));

  s = train::write_ensemble({two_layers}, out, "").status();
  CHECK(s.message() == "an ensemble needs at least two models (1 given)");

  const std::string not_a_model = dir.file("not_a_model.pt");
  std::ofstream(not_a_model) << "not a model\n";
  s = train::write_ensemble({two_layers, not_a_model}, out, "").status();
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::StartsWith(not_a_model));
  CHECK_FALSE(std::ifstream(out).good());  // nothing written
}
