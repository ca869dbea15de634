// The one definition of each text rule (core/src/text): trim, split, digits, the duration grammar, type sets.
#include <catch2/catch.hpp>

#include "text/duration.h"
#include "text/text.h"
#include "text/type_set.h"

using rlsched::Seconds;
using namespace rlsched::text;

TEST_CASE("trim, split, all_digits and iequals", "[text]") {
  CHECK(trim(" \t a b \r\n") == "a b");
  CHECK(trim("   ").empty());
  CHECK(split("a,,b", ',') == std::vector<std::string_view>{"a", "", "b"});
  CHECK(split("", ',') == std::vector<std::string_view>{""});
  CHECK(split("a|", '|') == std::vector<std::string_view>{"a", ""});
  CHECK(split_names(" a100, h200 ,") == std::vector<std::string>{"a100", "h200"});
  CHECK(split_names("sjf,,fcfs") == std::vector<std::string>{"sjf", "fcfs"});
  CHECK(split_names("").empty());
  CHECK(split_names("a|b", '|') == std::vector<std::string>{"a", "b"});
  CHECK(all_digits("0123"));
  CHECK_FALSE(all_digits(""));
  CHECK_FALSE(all_digits("+1"));
  CHECK_FALSE(all_digits("1 "));
  CHECK(iequals("INFINITE", "infinite"));
  CHECK_FALSE(iequals("INFINITE", "infinit"));
}

TEST_CASE("one duration grammar for every surface", "[text]") {
  const DurationSyntax yaml{1, false};     // rlsched.yaml, exporter config
  const DurationSyntax conf{60, true};     // slurm.conf
  const DurationSyntax limit{1, true};     // cluster YAML limits
  const DurationSyntax comment{0, false};  // --comment checkpoint:...
  struct Case {
    const char* text;
    DurationSyntax syntax;
    Seconds expected;  // -1: refused
    const char* why;   // part of the refusal's message
  };
  const Case cases[] = {
      // units, worked out by hand
      {"90s", yaml, 90, ""},
      {"30m", comment, 1800, ""},
      {"2h", yaml, 7200, ""},
      {"1d", conf, 86400, ""},
      {" 5m ", yaml, 300, ""},
      // a bare number is in the surface's unit
      {"90", yaml, 90, ""},
      {"90", conf, 5400, ""},
      {"90", comment, -1, "give a unit"},
      // Slurm's time format, the same everywhere
      {"30:15", yaml, 1815, ""},
      {"1:00:00", comment, 3600, ""},
      {"10:20:30", conf, 37230, ""},
      {"2-00:00:00", yaml, 172800, ""},
      {"7-0", conf, 604800, ""},
      {"1-12:30", limit, 131400, ""},
      {"1-0:0:5", conf, 86405, ""},
      // INFINITE only where a limit may be absent
      {"INFINITE", conf, 0, ""},
      {"unlimited", limit, 0, ""},
      {"INFINITE", yaml, -1, "a limit is required"},
      // malformed
      {"", yaml, -1, "empty"},
      {"-1", conf, -1, "negative"},
      {"-5m", comment, -1, "negative"},
      {"-5:00", conf, -1, "negative"},
      {"abc", yaml, -1, "whole numbers"},
      {"1.5", yaml, -1, "whole numbers"},
      {"+5", conf, -1, "whole numbers"},
      {"30x", comment, -1, "whole numbers"},
      {"m", comment, -1, "whole numbers"},
      {"5 m", yaml, -1, "whole numbers"},
      {"1:2:3:4", conf, -1, "too many"},
      {"1-", conf, -1, "whole numbers"},
      {"x-1", conf, -1, "days"},
      {"1-2-3", conf, -1, "whole numbers"},
      {"1::2", conf, -1, "whole numbers"},
      {"1234567890s", yaml, -1, "whole numbers"},  // ten digits: refused before it could overflow
  };
  for (const Case& c : cases) {
    INFO(c.text << " bare_unit=" << c.syntax.bare_unit << " infinite=" << c.syntax.infinite);
    const auto seconds = parse_duration(c.text, c.syntax);
    if (c.expected >= 0) {
      REQUIRE(seconds.ok());
      CHECK(*seconds == c.expected);
    } else {
      REQUIRE_FALSE(seconds.ok());
      CHECK_THAT(seconds.status().message(), Catch::Contains(c.why));
    }
  }
}

TEST_CASE("accelerator type sets: a|b", "[text]") {
  struct Case {
    const char* text;
    std::vector<std::string> types;
    const char* formatted;
  };
  const Case cases[] = {
      {"", {}, ""},
      {"h200", {"h200"}, "h200"},
      {"a100|h200", {"a100", "h200"}, "a100|h200"},
      {" a100 | h200 ", {"a100", "h200"}, "a100|h200"},
      {"V100M16|V100M32|V100M32", {"V100M16", "V100M32"}, "V100M16|V100M32"},
      {"|a100||", {"a100"}, "a100"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    CHECK(parse_type_set(c.text) == c.types);
    CHECK(format_type_set(c.types) == c.formatted);
  }
  CHECK(type_set_allows("", "h200"));
  CHECK(type_set_allows("a100|h200", "h200"));
  CHECK(type_set_allows("a100 | h200", "h200"));
  CHECK_FALSE(type_set_allows("a100|h200", "h20"));
  CHECK_FALSE(type_set_allows("a100|h200", "a100|h200"));
}

TEST_CASE("epoch seconds print as ISO 8601 in UTC, whatever the local zone") {
  CHECK(rlsched::text::utc_iso8601(0) == "1970-01-01T00:00:00");
  // 20,789 days and 18 hours after the epoch.
  CHECK(rlsched::text::utc_iso8601(20789LL * 86400 + 18 * 3600) == "2026-12-02T18:00:00");
  CHECK(rlsched::text::utc_iso8601(-1) == "1969-12-31T23:59:59");
}
