#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "rlsched/io/cluster_readers.h"

using rlsched::Seconds;
using rlsched::io::expand_hostlist;
using rlsched::io::parse_slurm_duration;
using Hosts = std::vector<std::string>;

TEST_CASE("expand_hostlist expands ranges, lists, padding and products") {
  struct Case {
    const char* hostlist;
    Hosts expected;
  };
  const Case cases[] = {
      {"h200-[1-3,7],a100-[01-02],login", {"h200-1", "h200-2", "h200-3", "h200-7", "a100-01", "a100-02", "login"}},
      {"login", {"login"}},
      {"n[8-11]", {"n8", "n9", "n10", "n11"}},         // no padding when the start has one digit
      {"n[08-11]", {"n08", "n09", "n10", "n11"}},      // padding follows the width of the range start
      {"n[001-002,10]x", {"n001x", "n002x", "n10x"}},  // each range keeps its own width; suffix after brackets
      {"rack[1-2]-n[1-2]", {"rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"}},
      {"[3-4]", {"3", "4"}},
      {"/dev/nvidia[0-3]", {"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"}},
      {" a , b ", {"a", "b"}},
      {"c[5]", {"c5"}},
  };
  for (const auto& c : cases) {
    INFO(c.hostlist);
    auto hosts = expand_hostlist(c.hostlist);
    REQUIRE(hosts.ok());
    CHECK(*hosts == c.expected);
  }
}

TEST_CASE("expand_hostlist allows exactly one million hosts") {
  auto hosts = expand_hostlist("h[1-1000]-[1-1000]");
  REQUIRE(hosts.ok());
  CHECK(hosts->size() == 1'000'000);
  CHECK(hosts->back() == "h1000-1000");
}

TEST_CASE("expand_hostlist rejects malformed hostlists with a reason") {
  struct Case {
    const char* hostlist;
    const char* message;
  };
  const Case cases[] = {
      {"h[1-2", "unbalanced '['"},
      {"h1-2]", "unbalanced ']' at column 5"},
      {"h[1-[2]]", "nested '['"},
      {"h[3-1]", "reversed range '3-1'"},
      {"a,,b", "empty item at column 3"},
      {"a,", "empty item"},
      {"", "empty hostlist"},
      {"h[]", "empty brackets"},
      {"h[1,,2]", "empty range"},
      {"h[a-b]", "'a-b' is not a number"},
      {"h[1-2-3]", "'1-2-3' is not a number"},
      {"h[1-1000001]", "more than 1000000 hosts"},
      {"h[1-1000]x[1-1001]", "more than 1000000 hosts"},
      {"a b", "contains a space"},
  };
  for (const auto& c : cases) {
    INFO(c.hostlist);
    auto hosts = expand_hostlist(c.hostlist);
    REQUIRE_FALSE(hosts.ok());
    CHECK(hosts.status().code() == rlsched::Status::Code::kInvalidInput);
    CHECK_THAT(hosts.status().message(), Catch::Contains(c.message));
    CHECK_THAT(hosts.status().message(), Catch::Contains(std::string("'") + c.hostlist + "'"));
  }
}

TEST_CASE("parse_slurm_duration reads every Slurm time format") {
  struct Case {
    const char* text;
    Seconds expected;
  };
  const Case cases[] = {
      {"30", 30 * 60},                           // MM
      {"30:15", 30 * 60 + 15},                   // MM:SS
      {"1:00:00", 3600},                         // HH:MM:SS
      {"10:20:30", 10 * 3600 + 20 * 60 + 30},    // HH:MM:SS
      {"2-00:00:00", 2 * 86400},                 // D-HH:MM:SS
      {"7-0", 7 * 86400},                        // D-HH
      {"1-12", 86400 + 12 * 3600},               // D-HH
      {"1-12:30", 86400 + 12 * 3600 + 30 * 60},  // D-HH:MM
      {"1-0:0:5", 86400 + 5},                    // D-HH:MM:SS
      {"90", 90 * 60},                           // minutes may exceed 59, as in Slurm
      {"0", 0},
      {" 5 ", 300},
      {"INFINITE", 0},
      {"unlimited", 0},
      {"5m", 300},  // units, as everywhere rlsched reads durations (text/duration.h)
      {"1d", 86400},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto seconds = parse_slurm_duration(c.text);
    REQUIRE(seconds.ok());
    CHECK(*seconds == c.expected);
  }
}

TEST_CASE("parse_slurm_duration rejects negative and malformed times") {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"-1", "negative"},       {"-5:00", "negative"},      {"", "empty"},
      {"abc", "whole numbers"}, {"1.5", "whole numbers"},   {"+5", "whole numbers"},
      {"5x", "whole numbers"},  {"1:2:3:4", "too many"},    {"1-", "whole numbers"},
      {"x-1", "days"},          {"1-2-3", "whole numbers"}, {"1::2", "whole numbers"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto seconds = parse_slurm_duration(c.text);
    REQUIRE_FALSE(seconds.ok());
    CHECK(seconds.status().code() == rlsched::Status::Code::kInvalidInput);
    CHECK_THAT(seconds.status().message(), Catch::Contains(c.message));
  }
}
