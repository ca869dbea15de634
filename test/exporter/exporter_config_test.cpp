#include <catch2/catch.hpp>

#include <string>

#include "exporter_config.h"

using rlsched::exporter::parse_exporter_config;

TEST_CASE("an exporter config is read with its defaults") {
  const auto empty = parse_exporter_config("", "e.yaml");
  REQUIRE(empty.ok());
  CHECK(empty->listen == "127.0.0.1:9817");  // loopback unless told otherwise
  CHECK(empty->poll_interval == 30);

  const auto c = parse_exporter_config("listen: 0.0.0.0:9900\npoll_interval: 2m\nhealth_dir: /run/rlsched\n", "e.yaml");
  REQUIRE(c.ok());
  CHECK(c->listen == "0.0.0.0:9900");
  CHECK(c->poll_interval == 120);
  CHECK(c->health_dir == "/run/rlsched");
}

TEST_CASE("a malformed exporter config is refused with file:line and what was wrong") {
  struct Case {
    const char* text;
    const char* starts;  // file:line
    const char* says;
  };
  const Case cases[] = {
      {"listen: 127.0.0.1:9817\npoll_intervall: 30\n", "e.yaml:2:", "unknown key 'poll_intervall'"},
      {"poll_interval: 0\n", "e.yaml:1:", "poll_interval must be >= 1s"},
      {"\n\npoll_interval: soon\n", "e.yaml:3:", "poll_interval must be a duration"},
      {"listen: 9817\n", "e.yaml:1:", "listen must be host:port"},
      {"listen: localhost:70000\n", "e.yaml:1:", "port must be 1-65535"},
      {"health_dir: run/rlsched\n", "e.yaml:1:", "health_dir must be an absolute path"},
      {"listen: [a\n", "e.yaml:", ""},  // a YAML syntax error keeps yaml-cpp's line
      {"poll_interval: 5\npoll_interval: 6\n", "e.yaml:2:", "appears twice"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const auto r = parse_exporter_config(c.text, "e.yaml");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().rfind(c.starts, 0) == 0);
    CHECK(r.status().message().find(c.says) != std::string::npos);
  }
}
