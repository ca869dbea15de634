// The metadata record a model file carries (extra file "rlsched/metadata.json"): what the network expects as input,
// how it was made, and a digest of its weights. docs/model-file.md describes every field.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rlsched/status.h"

namespace rlsched::policy {

/// Name of the extra file inside the TorchScript archive.
inline constexpr const char* kMetadataFile = "rlsched/metadata.json";

/// One input column of the network, in the order the network reads them.
struct ModelFeature {
  std::string name;           ///< a feature of schema `schema_version` (features::schema())
  std::string normalisation;  ///< FeatureSpec::normalisation at training time, kept so a reader knows the formula
};

struct ModelMetadata {
  int schema_version = 0;
  std::vector<ModelFeature> features;
  std::string architecture;    ///< free text, e.g. "mlp 21-32-32-1 relu"
  std::string weights_sha256;  ///< lower-case hex; save_model fills it (see weights_sha256())
  /// Free object the trainer fills: data, protocol, metrics, seed, duration...
  nlohmann::json training = nlohmann::json::object();
  std::string created;  ///< ISO-8601 UTC, e.g. "2025-01-31T12:00:00Z"; save_model fills it when empty

  /// Metadata for a network over `names` (schema features, in input order) under the current schema version, with
  /// each normalisation copied from the schema (names the schema does not know get an empty normalisation).
  static ModelMetadata ForFeatures(const std::vector<std::string>& names, std::string architecture);

  std::vector<std::string> feature_names() const;

  nlohmann::json to_json() const;
  /// \return InvalidInput naming the field that is missing or has the wrong type.
  static Result<ModelMetadata> FromJson(const nlohmann::json& json);
  /// Parses the text of rlsched/metadata.json. \return InvalidInput saying why it is not valid JSON or metadata.
  static Result<ModelMetadata> Parse(std::string_view text);
};

/// The current time as ISO-8601 UTC ("YYYY-MM-DDTHH:MM:SSZ").
std::string utc_now_iso8601();

}  // namespace rlsched::policy
