// The one schema of accelerator speeds, shared by every file that gives them: rlsched.yaml (a type's `speed`, a job
// class's `speeds: {TYPE: SPEED}`), the cluster YAML and `rlsched speeds` files (a type's `speed` and
// `class_speed: {CLASS: SPEED}`). A speed is a finite number > 0 relative to the other types; a mapping names each
// key once. Each reader reports a problem in its own way (Status or exception) with the same words.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

namespace rlsched::config {

/// What is wrong with a value, and the node to point at (its line).
struct SpeedProblem {
  YAML::Node at;
  std::string what;  ///< e.g. "speed must be > 0 (got 0)"; the reader adds the file, line and key
  std::string key;   ///< the key the problem is at (where, or where.NAME of a mapping)
};

/// `value` as a speed into `out`.
std::optional<SpeedProblem> read_speed(const YAML::Node& value, const std::string& where, double& out);

/// `map` as NAME: SPEED pairs into `out` (names as written; a name given twice is a problem).
std::optional<SpeedProblem> read_speed_map(const YAML::Node& map, const std::string& where,
                                           std::map<std::string, double>& out);

}  // namespace rlsched::config
