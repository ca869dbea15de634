// Line-precise checks of YAML config files, shared by the config readers (rlsched.yaml for the plugins,
// rlsched-exporter.yaml): every error names the file and the line of the offending key, unknown keys are refused.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "rlsched/job.h"
#include "rlsched/status.h"

namespace rlsched::config {

/// The one form of a config file error, for every YAML reader (rlsched.yaml, rlsched-exporter.yaml, cluster.yaml):
/// InvalidInput "name:line: what" with the 1-based line of `mark`, or "name: what" where the mark has no line.
Status yaml_error(const std::string& name, const YAML::Mark& mark, const std::string& what);

// YamlChecks throws its errors inside a config reader only, and parse_yaml returns them at the reader's boundary,
// so that the checks read as a straight list; the Status is built by yaml_error all the same.
struct ConfigError {
  Status status;
};

using Keys = std::vector<std::string_view>;

class YamlChecks {
 public:
  /// name: the file as errors name it ("rlsched.yaml", or its path).
  explicit YamlChecks(std::string name) : name_(std::move(name)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& what) const;
  /// Each key of `map` must be in `allowed` and appear once; `where` is the mapping's dotted path ("" for the root).
  void check_keys(const YAML::Node& map, const Keys& allowed, const std::string& where) const;
  static std::string path(const std::string& parent, std::string_view key);
  std::string scalar(const YAML::Node& node, const std::string& key) const;
  bool boolean(const YAML::Node& node, const std::string& key) const;
  double number(const YAML::Node& node, const std::string& key) const;
  long long integer(const YAML::Node& node, const std::string& key, long long lo, long long hi) const;
  /// The duration grammar of text/duration.h, a bare number in seconds: 90, "90s", "5m", "2h", "1d", "1:30:00".
  Seconds duration(const YAML::Node& node, const std::string& key) const;
  /// A list of distinct non-empty names.
  std::vector<std::string> names(const YAML::Node& node, const std::string& key) const;

 protected:
  std::string name_;
};

/// Loads `text` and runs parse(root) on it; ConfigError and yaml-cpp's syntax errors become InvalidInput statuses
/// with "name:line: ...".
template <typename T, typename Parse>
Result<T> parse_yaml(std::string_view text, const std::string& name, Parse&& parse);

Status yaml_error_status(const std::string& name, const YAML::Exception& e);

template <typename T, typename Parse>
Result<T> parse_yaml(std::string_view text, const std::string& name, Parse&& parse) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    return parse(root);
  } catch (const ConfigError& e) {
    return e.status;
  } catch (const YAML::Exception& e) {
    return yaml_error_status(name, e);
  } catch (const std::exception& e) {
    return Status::InvalidInput(name + ": " + e.what());
  }
}

}  // namespace rlsched::config
