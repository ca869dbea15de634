#include "rlsched/policy/model_metadata.h"

#include <algorithm>
#include <cctype>
#include <ctime>

#include <fmt/format.h>

#include "rlsched/features.h"
#include "text/text.h"

namespace rlsched::policy {
namespace {

using nlohmann::json;

const char* type_name(const json& value) {
  return value.type_name();
}

Status wrong_type(std::string_view field, const char* expected, const json& value) {
  return Status::InvalidInput(
      fmt::format("field '{}' must be {} (got {} {})", field, expected, type_name(value), value.dump()));
}

bool is_lower_hex_sha256(const std::string& text) {
  return text.size() == 64 &&
         std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(c) || (c >= 'a' && c <= 'f'); });
}

Result<ModelFeature> feature_from_json(const json& entry, std::size_t index) {
  const std::string where = fmt::format("features[{}]", index);
  if (!entry.is_object()) return wrong_type(where, "an object {name, normalisation}", entry);
  auto name = entry.find("name");
  if (name == entry.end()) return Status::InvalidInput(fmt::format("{} has no 'name'", where));
  if (!name->is_string() || name->get_ref<const std::string&>().empty())
    return wrong_type(where + ".name", "a non-empty string", *name);
  ModelFeature feature{name->get<std::string>(), ""};
  if (auto norm = entry.find("normalisation"); norm != entry.end()) {
    if (!norm->is_string()) return wrong_type(where + ".normalisation", "a string", *norm);
    feature.normalisation = norm->get<std::string>();
  }
  return feature;
}

}  // namespace

ModelMetadata ModelMetadata::ForFeatures(const std::vector<std::string>& names, std::string architecture) {
  ModelMetadata metadata;
  // The oldest version that has every feature, so that a model over v1's features still loads in builds of v1.
  metadata.schema_version = features::reads_predicted_run_time(names) ? features::kSchemaVersion : 1;
  metadata.architecture = std::move(architecture);
  const auto& schema = features::schema();
  for (const std::string& name : names) {
    auto spec =
        std::find_if(schema.begin(), schema.end(), [&](const features::FeatureSpec& f) { return name == f.name; });
    metadata.features.push_back({name, spec == schema.end() ? "" : spec->normalisation});
  }
  return metadata;
}

std::vector<std::string> ModelMetadata::feature_names() const {
  std::vector<std::string> names;
  names.reserve(features.size());
  for (const ModelFeature& f : features) names.push_back(f.name);
  return names;
}

json ModelMetadata::to_json() const {
  json list = json::array();
  for (const ModelFeature& f : features) list.push_back({{"name", f.name}, {"normalisation", f.normalisation}});
  return json{{"schema_version", schema_version}, {"features", std::move(list)}, {"architecture", architecture},
              {"weights_sha256", weights_sha256}, {"training", training},        {"created", created}};
}

Result<ModelMetadata> ModelMetadata::FromJson(const json& in) {
  if (!in.is_object())
    return Status::InvalidInput(fmt::format("metadata must be a JSON object (got {})", type_name(in)));
  ModelMetadata m;

  auto version = in.find("schema_version");
  if (version == in.end()) return Status::InvalidInput("field 'schema_version' is missing");
  if (!version->is_number_integer()) return wrong_type("schema_version", "an integer", *version);
  const auto v = version->get<long long>();
  if (v < 0 || v > 1'000'000) return wrong_type("schema_version", "a small non-negative integer", *version);
  m.schema_version = static_cast<int>(v);

  auto list = in.find("features");
  if (list == in.end()) return Status::InvalidInput("field 'features' is missing");
  if (!list->is_array() || list->empty()) return wrong_type("features", "a non-empty array", *list);
  for (std::size_t i = 0; i < list->size(); ++i) {
    auto feature = feature_from_json((*list)[i], i);
    if (!feature.ok()) return feature.status();
    m.features.push_back(std::move(*feature));
  }

  auto sha = in.find("weights_sha256");
  if (sha == in.end()) return Status::InvalidInput("field 'weights_sha256' is missing");
  if (!sha->is_string() || !is_lower_hex_sha256(sha->get_ref<const std::string&>()))
    return wrong_type("weights_sha256", "64 lower-case hex digits", *sha);
  m.weights_sha256 = sha->get<std::string>();

  // Descriptive fields: optional, so that a hand-made model needs only what the loader checks.
  if (auto arch = in.find("architecture"); arch != in.end()) {
    if (!arch->is_string()) return wrong_type("architecture", "a string", *arch);
    m.architecture = arch->get<std::string>();
  }
  if (auto training = in.find("training"); training != in.end()) {
    if (!training->is_object()) return wrong_type("training", "an object", *training);
    m.training = *training;
  }
  if (auto created = in.find("created"); created != in.end()) {
    if (!created->is_string()) return wrong_type("created", "an ISO-8601 string", *created);
    m.created = created->get<std::string>();
  }
  return m;
}

Result<ModelMetadata> ModelMetadata::Parse(std::string_view text) {
  json parsed;
  try {
    parsed = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    return Status::InvalidInput(fmt::format("not valid JSON: {}", e.what()));
  }
  return FromJson(parsed);
}

std::string utc_now_iso8601() {
  return text::utc_iso8601(std::time(nullptr)) + "Z";
}

}  // namespace rlsched::policy
