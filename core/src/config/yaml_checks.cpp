#include "config/yaml_checks.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "text/duration.h"

namespace rlsched::config {

Status yaml_error(const std::string& name, const YAML::Mark& mark, const std::string& what) {
  if (mark.line >= 0) return Status::InvalidInput(fmt::format("{}:{}: {}", name, mark.line + 1, what));
  return Status::InvalidInput(fmt::format("{}: {}", name, what));
}

[[noreturn]] void YamlChecks::fail(const YAML::Node& node, const std::string& what) const {
  throw ConfigError{yaml_error(name_, node.Mark(), what)};
}

void YamlChecks::check_keys(const YAML::Node& map, const Keys& allowed, const std::string& where) const {
  if (!map.IsMap())
    fail(map, fmt::format("{} must be a mapping of keys to values", where.empty() ? "the file" : where));
  std::set<std::string> seen;
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string known;
      for (std::string_view k : allowed) known += (known.empty() ? "" : ", ") + std::string(k);
      fail(kv.first, fmt::format("unknown key '{}' (known keys{}: {})", path(where, key),
                                 where.empty() ? "" : " of " + where, known));
    }
    if (!seen.insert(key).second) fail(kv.first, fmt::format("key '{}' appears twice", path(where, key)));
  }
}

std::string YamlChecks::path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

std::string YamlChecks::scalar(const YAML::Node& node, const std::string& key) const {
  if (!node.IsScalar()) fail(node, fmt::format("{} must be a single value", key));
  return node.Scalar();
}

bool YamlChecks::boolean(const YAML::Node& node, const std::string& key) const {
  std::string text = scalar(node, key);
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  if (text == "true" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "no" || text == "off") return false;
  fail(node, fmt::format("{} must be true or false (got '{}')", key, node.Scalar()));
}

double YamlChecks::number(const YAML::Node& node, const std::string& key) const {
  const std::string text = scalar(node, key);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !std::isfinite(value))
    fail(node, fmt::format("{} must be a number (got '{}')", key, text));
  return value;
}

long long YamlChecks::integer(const YAML::Node& node, const std::string& key, long long lo, long long hi) const {
  const std::string text = scalar(node, key);
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0)
    fail(node, fmt::format("{} must be a whole number (got '{}')", key, text));
  if (value < lo || value > hi) fail(node, fmt::format("{} must be in [{}, {}] (got {})", key, lo, hi, value));
  return value;
}

Seconds YamlChecks::duration(const YAML::Node& node, const std::string& key) const {
  const auto seconds = text::parse_duration(scalar(node, key), {/*bare_unit=*/1, /*infinite=*/false});
  if (!seconds.ok() || *seconds > std::numeric_limits<int>::max())
    fail(node, fmt::format("{} must be a duration in seconds, or with a unit s, m, h or d, e.g. 30s or 5m "
                           "(got '{}')",
                           key, node.Scalar()));
  return *seconds;
}

std::vector<std::string> YamlChecks::names(const YAML::Node& node, const std::string& key) const {
  if (!node.IsSequence()) fail(node, fmt::format("{} must be a list of names, e.g. [a, b]", key));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string item = fmt::format("{}[{}]", key, i);
    std::string name = scalar(node[i], item);
    if (name.empty()) fail(node[i], fmt::format("{} must not be empty", item));
    if (std::find(out.begin(), out.end(), name) != out.end())
      fail(node[i], fmt::format("{}: '{}' is listed twice", key, name));
    out.push_back(std::move(name));
  }
  return out;
}

Status yaml_error_status(const std::string& name, const YAML::Exception& e) {
  return yaml_error(name, e.mark, e.msg);  // yaml-cpp's own syntax errors carry a 0-based mark
}

}  // namespace rlsched::config
