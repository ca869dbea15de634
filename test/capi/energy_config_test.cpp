// rlsched.yaml's energy section: what it reads, and the tariffs and schedules it refuses with file:line.
#include <catch2/catch.hpp>

#include <string>

#include "capi_fixtures.h"
#include "config/energy_config.h"
#include "rlsched/plugin_config.h"

namespace rlsched::config {
namespace {

using Catch::Contains;
using rlsched::testing::PrivateDir;

const std::string kTypes = R"(mode: enforce
accelerator_types:
  - {name: h200, gres: gpu, speed: 2}
  - {name: a100, gres: gpu, speed: 1}
job_classes:
  - {name: sweep, match: {job_name: 'lr-*'}, speeds: {h200: 2, a100: 1}}
)";

std::string with_energy(const std::string& energy) {
  return kTypes + "energy:\n" + energy;
}

const std::string kPower = R"(  power:
    accelerators: {h200: {busy_w: 700, idle_w: 100}, a100: {busy_w: 400, idle_w: 50}}
    node: {busy_w: 500, idle_w: 200}
    suspended_w: 10
)";

const std::string kWeekly = R"(  price:
    utc_offset: "+01:00"
    weekly:
      - {days: mon-fri, hours: "00:00-07:00", value: 0.12}
      - {days: mon-fri, hours: "07:00-22:00", value: 0.31}
      - {days: mon-fri, hours: "22:00-24:00", value: 0.12}
      - {days: "sat,sun", hours: "00:00-24:00", value: 0.12}
)";

std::string error_of(const std::string& text) {
  auto c = parse_plugin_config(text, "rlsched.yaml");
  REQUIRE_FALSE(c.ok());
  return c.status().message();
}

TEST_CASE("the energy section is read key by key", "[config][energy]") {
  auto c = parse_plugin_config(with_energy(kPower + kWeekly + R"(  currency: USD
  mode: shadow
  rule: cheapest-window
  min_saving: 0.1
  deferrable:
    - {qos: [scavenger], job_classes: [sweep], max_deferral: 8h}
    - {qos: [low], max_deferral: 30m}
)"),
                               "rlsched.yaml");
  REQUIRE(c.ok());
  const energy::EnergyConfig& e = c->energy;
  CHECK(c->mode == Mode::kEnforce);
  CHECK(c->energy_mode == Mode::kShadow);
  CHECK(e.currency == "USD");
  CHECK(e.rule == energy::Rule::kCheapestWindow);
  CHECK(e.min_saving == 0.1);
  CHECK(e.max_deferral_for("scavenger", "") == 8 * 3600);
  CHECK(e.max_deferral_for("normal", "sweep") == 8 * 3600);
  CHECK(e.max_deferral_for("low", "") == 1800);
  CHECK_FALSE(e.max_deferral_for("normal", ""));
  CHECK(e.power.accelerators.at("h200").busy_w == 700);
  CHECK(e.power.accelerators.at("a100").idle_w == 50);
  CHECK(e.power.node.idle_w == 200);
  CHECK(e.power.suspended_w == 10);
  // Monday 07:00 at UTC+01:00 is 06:00 UTC; epoch day 4 is a Monday. Adjacent equal values are one step.
  const Seconds monday = 4 * 86400;
  CHECK(e.price.at(monday + 6 * 3600 - 1) == 0.12);
  CHECK(e.price.at(monday + 6 * 3600) == 0.31);
  CHECK(e.price.steps().size() == 11);  // weekdays: 2 steps each after the first; Friday 22:00 runs into Monday
  CHECK(e.defers());
}

TEST_CASE("without an energy section nothing is deferred and energy follows mode", "[config][energy]") {
  auto c = parse_plugin_config(kTypes, "rlsched.yaml");
  REQUIRE(c.ok());
  CHECK_FALSE(c->energy.defers());
  CHECK(c->energy_mode == Mode::kEnforce);
}

TEST_CASE("weekly tables with gaps, overlaps or bad values are refused with their line", "[config][energy]") {
  const std::string head = kPower + "  price:\n    weekly:\n";
  SECTION("a gap") {
    // Lines 1-6 types and classes, 7 energy, 8-11 power, 12 price, 13 weekly: the entry after the gap is line 15.
    const std::string msg = error_of(with_energy(head + R"(      - {days: daily, hours: "00:00-07:00", value: 0.1}
      - {days: daily, hours: "08:00-24:00", value: 0.3}
)"));
    CHECK_THAT(msg, Contains("rlsched.yaml:15: energy.price.weekly leaves Mon 07:00 to Mon 08:00 without a value"));
  }
  SECTION("an overlap") {
    const std::string msg = error_of(with_energy(head + R"(      - {days: daily, hours: "00:00-12:00", value: 0.1}
      - {days: mon, hours: "11:00-24:00", value: 0.3}
      - {days: tue-sun, hours: "12:00-24:00", value: 0.3}
)"));
    CHECK_THAT(msg, Contains("overlaps another at Mon 11:00"));
  }
  SECTION("the end of the week uncovered") {
    CHECK_THAT(error_of(with_energy(head + "      - {days: mon-sat, hours: \"00:00-24:00\", value: 0.1}\n")),
               Contains("leaves Sun 00:00 to the week's end without a value"));
  }
  SECTION("a negative price") {
    CHECK_THAT(error_of(with_energy(head + "      - {days: daily, hours: \"00:00-24:00\", value: -0.02}\n")),
               Contains("must not be negative"));
  }
  SECTION("hours across midnight") {
    CHECK_THAT(error_of(with_energy(head + "      - {days: daily, hours: \"22:00-07:00\", value: 0.1}\n")),
               Contains("crosses midnight"));
  }
  SECTION("an unknown day") {
    CHECK_THAT(error_of(with_energy(head + "      - {days: mon-fry, hours: \"00:00-24:00\", value: 0.1}\n")),
               Contains("'mon-fry' is not a day"));
  }
}

TEST_CASE("power for unknown types and inconsistent sections are refused", "[config][energy]") {
  CHECK_THAT(error_of(with_energy("  power:\n    accelerators: {h100: {busy_w: 700}}\n")),
             Contains("rlsched.yaml:9: energy.power.accelerators: unknown accelerator type 'h100'"));
  CHECK_THAT(error_of(with_energy("  power:\n    accelerators: {h200: {busy_w: 100, idle_w: 700}}\n")),
             Contains("idle_w (700) is above busy_w (100)"));
  CHECK_THAT(error_of(with_energy(kPower + "  deferrable: {qos: [scavenger], max_deferral: 4h}\n")),
             Contains("needs energy.price"));
  CHECK_THAT(error_of(with_energy(kWeekly + "  deferrable: {qos: [scavenger], max_deferral: 4h}\n")),
             Contains("needs energy.power"));
  CHECK_THAT(error_of(with_energy(kPower + kWeekly + "  deferrable: {job_classes: [bert], max_deferral: 4h}\n")),
             Contains("energy.deferrable.job_classes: 'bert' is not a class of job_classes"));
  CHECK_THAT(
      error_of(with_energy(kPower + kWeekly + "  deferrable: [{qos: [a], max_deferral: 1h}, {max_deferral: 1h}]\n")),
      Contains("energy.deferrable[1] names no qos and no job_classes"));
  CHECK_THAT(error_of(with_energy(kPower + kWeekly + "  deferrable: {qos: [scavenger]}\n")),
             Contains("max_deferral is missing"));
  CHECK_THAT(error_of(with_energy(kPower + kWeekly + "  follow: carbon\n  deferrable: {qos: [a], max_deferral: 1h}\n")),
             Contains("with follow: carbon needs energy.carbon"));
  CHECK_THAT(error_of(with_energy(kPower + kWeekly + "  rule: greedy\n")),
             Contains("energy.rule must be least-cost, cheapest-window or none"));
}

TEST_CASE("a CSV series is read at its step, gaps, overlaps and bad rows are refused with file:line",
          "[config][energy]") {
  PrivateDir dir;
  SECTION("read") {
    const std::string path = dir.write("prices.csv", R"(timestamp,price
# day-ahead, EUR/kWh
2026-12-02T00:00:00Z,0.21
2026-12-02 01:00,0.19
2026-12-02T03:00:00+01:00,0.25
)");
    auto s = read_schedule_csv(path);
    REQUIRE(s.ok());
    // 2026-12-02 00:00 UTC is day 20,789 since the epoch.
    const Seconds midnight = 20789LL * 86400;
    CHECK(s->at(midnight) == 0.21);
    CHECK(s->at(midnight + 3600) == 0.19);
    CHECK(s->at(midnight + 7200) == 0.25);  // 03:00 at +01:00 is 02:00 UTC
    CHECK(s->at(midnight + 99 * 3600) == 0.25);
    auto c = parse_plugin_config(with_energy(kPower + "  price: {csv: " + path + "}\n"), "rlsched.yaml");
    REQUIRE(c.ok());
    CHECK(c->energy.price.at(midnight + 3600) == 0.19);
    CHECK(c->schedule_files == std::vector<std::string>{path});
  }
  SECTION("a gap") {
    const std::string path = dir.write("gap.csv", "0,0.1\n3600,0.2\n10800,0.3\n");
    CHECK_THAT(read_schedule_csv(path).status().message(),
               Contains("gap.csv:3: 2 h after line 2, but the series steps every 1 h (a gap: rows are missing)"));
  }
  SECTION("an overlap") {
    const std::string path = dir.write("dup.csv", "0,0.1\n3600,0.2\n3600,0.3\n");
    CHECK_THAT(read_schedule_csv(path).status().message(), Contains("dup.csv:3: 3600 is not after line 2"));
  }
  SECTION("a negative value") {
    const std::string path = dir.write("neg.csv", "0,0.1\n3600,-0.05\n");
    CHECK_THAT(read_schedule_csv(path).status().message(), Contains("neg.csv:2: negative value -0.05"));
  }
  SECTION("a malformed row") {
    const std::string path = dir.write("bad.csv", "0,0.1\nyesterday,0.2\n");
    CHECK_THAT(read_schedule_csv(path).status().message(), Contains("bad.csv:2: 'yesterday' is not a timestamp"));
    const std::string none = dir.write("none.csv", "# nothing\n");
    CHECK_THAT(read_schedule_csv(none).status().message(), Contains("no rows"));
  }
  SECTION("a relative path") {
    CHECK_THAT(error_of(with_energy(kPower + "  price: {csv: prices.csv}\n")),
               Contains("energy.price.csv must be an absolute path"));
  }
}

}  // namespace
}  // namespace rlsched::config
