#include "speed_schema.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace rlsched::config {

std::optional<SpeedProblem> read_speed(const YAML::Node& value, const std::string& where, double& out) {
  const std::string text = value.IsScalar() ? value.Scalar() : "";
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (!value.IsScalar() || text.empty() || end != text.c_str() + text.size() || errno != 0 || !std::isfinite(v))
    return SpeedProblem{value, fmt::format("expected a number (got '{}')", text), where};
  if (!(v > 0)) return SpeedProblem{value, fmt::format("speed must be > 0 (got {})", text), where};
  out = v;
  return std::nullopt;
}

std::optional<SpeedProblem> read_speed_map(const YAML::Node& map, const std::string& where,
                                           std::map<std::string, double>& out) {
  if (!map.IsMap()) return SpeedProblem{map, "expected a mapping of names to speeds, e.g. {h200: 2.0}", where};
  for (const auto& kv : map) {
    if (!kv.first.IsScalar() || kv.first.Scalar().empty())
      return SpeedProblem{kv.first, "expected a name as the key", where};
    const std::string name = kv.first.Scalar();
    const std::string key = where + "." + name;
    if (out.count(name) != 0) return SpeedProblem{kv.first, fmt::format("'{}' is given twice", name), where};
    double speed = 0;
    if (auto problem = read_speed(kv.second, key, speed)) return problem;
    out[name] = speed;
  }
  return std::nullopt;
}

}  // namespace rlsched::config
