// rlsched/metadata.json: round trip and the error for each malformed field.
#include <catch2/catch.hpp>

#include "rlsched/features.h"
#include "rlsched/policy/model_metadata.h"

using namespace rlsched;
using namespace rlsched::policy;

namespace {

nlohmann::json valid() {
  ModelMetadata m = ModelMetadata::ForFeatures({"wait_log", "cpus_share"}, "mlp 2-4-1 relu");
  m.weights_sha256 = std::string(64, 'a');
  m.created = "2025-01-31T12:00:00Z";
  m.training = {{"seed", 3}};
  return m.to_json();
}

std::string parse_error(const nlohmann::json& json) {
  auto m = ModelMetadata::FromJson(json);
  REQUIRE_FALSE(m.ok());
  return m.status().message();
}

}  // namespace

TEST_CASE("metadata round-trips through JSON") {
  auto m = ModelMetadata::Parse(valid().dump());
  REQUIRE(m.ok());
  CHECK(m->schema_version == 1);  // the oldest schema with both features, so that builds of v1 load it
  CHECK(m->feature_names() == std::vector<std::string>{"wait_log", "cpus_share"});
  CHECK(m->features[1].normalisation == "cpus / cluster CPUs");
  CHECK(m->architecture == "mlp 2-4-1 relu");
  CHECK(m->training["seed"] == 3);
  CHECK(m->to_json() == valid());
}

TEST_CASE("a model over a predicted run-time feature is of schema v2, one without of v1") {
  CHECK(ModelMetadata::ForFeatures({"wait_log", "predicted_log"}, "x").schema_version == 2);
  CHECK(ModelMetadata::ForFeatures({"wait_over_predicted"}, "x").schema_version == 2);
  CHECK(ModelMetadata::ForFeatures({"limit_log", "idle_accel_share"}, "x").schema_version == 1);
  CHECK(features::kSchemaVersion == 2);
}

TEST_CASE("ForFeatures copies each normalisation from the schema") {
  const auto m = ModelMetadata::ForFeatures(features::schema_names(), "x");
  REQUIRE(m.features.size() == features::kFeatureCount);
  for (std::size_t k = 0; k < m.features.size(); ++k)
    CHECK(m.features[k].normalisation == features::schema()[k].normalisation);
}

TEST_CASE("malformed metadata is refused with the field that is wrong") {
  nlohmann::json j = valid();
  SECTION("not JSON") {
    auto m = ModelMetadata::Parse("{\"schema_version\": 1,");
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.status().message(), Catch::StartsWith("not valid JSON"));
  }
  SECTION("not an object") {
    CHECK_THAT(parse_error(nlohmann::json::array()), Catch::Contains("must be a JSON object"));
  }
  SECTION("schema_version missing") {
    j.erase("schema_version");
    CHECK(parse_error(j) == "field 'schema_version' is missing");
  }
  SECTION("schema_version a string") {
    j["schema_version"] = "1";
    CHECK_THAT(parse_error(j), Catch::Contains("'schema_version' must be an integer (got string \"1\")"));
  }
  SECTION("features empty") {
    j["features"] = nlohmann::json::array();
    CHECK_THAT(parse_error(j), Catch::Contains("'features' must be a non-empty array"));
  }
  SECTION("feature without a name") {
    j["features"][1].erase("name");
    CHECK(parse_error(j) == "features[1] has no 'name'");
  }
  SECTION("weights_sha256 not hex") {
    j["weights_sha256"] = "xyz";
    CHECK_THAT(parse_error(j), Catch::Contains("'weights_sha256' must be 64 lower-case hex digits"));
  }
  SECTION("training not an object") {
    j["training"] = 5;
    CHECK_THAT(parse_error(j), Catch::Contains("'training' must be an object"));
  }
  SECTION("descriptive fields are optional") {
    j.erase("architecture");
    j.erase("training");
    j.erase("created");
    CHECK(ModelMetadata::FromJson(j).ok());
  }
}

TEST_CASE("utc_now_iso8601 is YYYY-MM-DDTHH:MM:SSZ") {
  const std::string now = utc_now_iso8601();
  REQUIRE(now.size() == 20);
  CHECK(now[4] == '-');
  CHECK(now[10] == 'T');
  CHECK(now.back() == 'Z');
}
