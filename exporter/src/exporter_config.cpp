#include "exporter_config.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "config/yaml_checks.h"

namespace rlsched::exporter {
namespace {

const config::Keys kKeys = {"listen", "poll_interval", "slurm_conf", "health_dir"};

class Parser : public config::YamlChecks {
 public:
  using YamlChecks::YamlChecks;

  ExporterConfig parse(const YAML::Node& root) const {
    ExporterConfig c;
    if (!root || root.IsNull()) return c;  // an empty file: every default
    check_keys(root, kKeys, "");
    if (const YAML::Node n = root["listen"]) c.listen = listen(n);
    if (const YAML::Node n = root["poll_interval"]) {
      c.poll_interval = duration(n, "poll_interval");
      if (c.poll_interval < 1) fail(n, fmt::format("poll_interval must be >= 1s (got {})", n.Scalar()));
    }
    if (const YAML::Node n = root["slurm_conf"]) c.slurm_conf = absolute(n, "slurm_conf");
    if (const YAML::Node n = root["health_dir"]) c.health_dir = absolute(n, "health_dir");
    return c;
  }

 private:
  std::string listen(const YAML::Node& n) const {
    const std::string text = scalar(n, "listen");
    const std::size_t colon = text.rfind(':');
    const auto bad = [&](const char* why) {
      fail(n, fmt::format("listen must be host:port, e.g. 127.0.0.1:9817 ({}; got '{}')", why, text));
    };
    if (colon == std::string::npos || colon == 0) bad("no host");
    const std::string port = text.substr(colon + 1);
    if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5) bad("bad port");
    const long value = std::stol(port);
    if (value < 1 || value > 65535) bad("port must be 1-65535");
    return text;
  }

  std::string absolute(const YAML::Node& n, const char* key) const {
    const std::string path = scalar(n, key);
    if (path.empty() || path.front() != '/') fail(n, fmt::format("{} must be an absolute path (got '{}')", key, path));
    return path;
  }
};

}  // namespace

Result<ExporterConfig> parse_exporter_config(std::string_view text, const std::string& name) {
  return config::parse_yaml<ExporterConfig>(text, name,
                                            [&](const YAML::Node& root) { return Parser(name).parse(root); });
}

Result<ExporterConfig> load_exporter_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::IoError(fmt::format("{}: cannot read the exporter config: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_exporter_config(text.str(), path);
}

}  // namespace rlsched::exporter
