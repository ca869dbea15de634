#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "rlsched/io/workload_readers.h"
#include "temp_dir.h"
#include "test_data.h"

using rlsched::Status;
using rlsched::io::read_swf;
using rlsched::io::ReadOptions;

namespace {

using rlsched::test::kData;

using rlsched::test::TempFile;

}  // namespace

TEST_CASE("SWF: tab- and space-separated records map to jobs with header partition names") {
  for (const std::string& path : {kData + "/swf/small.swf", kData + "/swf/small.swf.gz"}) {
    INFO(path);
    auto workload = read_swf(path);
    REQUIRE(workload.ok());
    CHECK(workload->max_nodes == 24);
    CHECK(workload->max_procs == 1728);
    const auto& report = workload->report;
    CHECK(report.source == path);
    CHECK(report.records == 4);
    CHECK(report.used == 4);
    CHECK(report.skipped == 0);
    CHECK(report.reasons.empty());
    REQUIRE(workload->jobs.size() == 4);

    // File order is kept (ids 7, 3, 5, 4), not sorted by id.
    const auto& tab = workload->jobs[0];
    CHECK(tab.id == 7);
    CHECK(tab.submit == 0);
    CHECK(tab.run_time == 99);
    CHECK(tab.cpus == 88);
    CHECK(tab.time_limit == 3600);
    CHECK(tab.user == "u62");
    CHECK(tab.account == "g62");
    CHECK(tab.priority_tier == 0);
    CHECK(tab.partitions == std::vector<std::string>{"gpu"});  // "; Partition: 0 gpu " (trailing blank trimmed)
    CHECK(tab.accel.empty());

    const auto& no_request = workload->jobs[1];
    CHECK(no_request.id == 3);
    CHECK(no_request.submit == 1136);
    CHECK(no_request.cpus == 128);                                  // f5 is -1: f8 gives the processors
    CHECK(no_request.time_limit == 244682);                         // f9 -1: the run time stands in
    CHECK(no_request.user.empty());                                 // f12 -1
    CHECK(no_request.account.empty());                              // f13 -1
    CHECK(no_request.partitions == std::vector<std::string>{"2"});  // "; Partition: 2" names nothing

    const auto& zero_run = workload->jobs[2];
    CHECK(zero_run.id == 5);
    CHECK(zero_run.run_time == 0);  // kept: consumers decide what a 0 s job means
    CHECK(zero_run.priority_tier == 2);
    CHECK(zero_run.user == "u4");
    CHECK(zero_run.account == "g2");
    CHECK(zero_run.partitions == std::vector<std::string>{"serial"});

    const auto& last = workload->jobs[3];
    CHECK(last.id == 4);
    CHECK(last.cpus == 32);  // max(16 allocated, 32 requested)
    CHECK(last.time_limit == 7200);
    CHECK(last.priority_tier == 1);
    CHECK(last.partitions.empty());
  }
}

TEST_CASE("SWF: each malformed record is skipped with its line and what is wrong") {
  const std::string path = kData + "/swf/malformed.swf";
  auto workload = read_swf(path);
  REQUIRE(workload.ok());
  const auto& report = workload->report;
  CHECK(report.records == 12);
  CHECK(report.used == 3);
  CHECK(report.skipped == 9);
  REQUIRE(workload->jobs.size() == 3);
  CHECK(workload->jobs[0].id == 1);
  CHECK(workload->jobs[1].id == 8);  // a fractional value in unused field 6 does not matter
  CHECK(workload->jobs[2].id == 12);
  CHECK(workload->jobs[2].submit == 100);
  const std::vector<std::string> expected = {
      path + ":3: expected 18 fields, got 17",
      path + ":4: field 4 (run time) is not an integer (got 'abc')",
      path + ":5: unknown run time (got '-1')",
      path + ":6: no processors (got '-1' allocated, '0' requested)",
      path + ":7: field 2 (submit time) is not an integer (got '99999999999999999999')",
      path + ":8: expected 18 fields, got 4",
      path + ":10: negative submit time (got '-80')",
      path + ":11: field 14 (executable) is not a number (got 'x7')",
      path + ":12: processor count out of range (got '99999999999')",
  };
  CHECK(report.reasons == expected);
}

TEST_CASE("SWF: strict mode fails on the first skipped record") {
  const std::string path = kData + "/swf/malformed.swf";
  auto workload = read_swf(path, ReadOptions{true});
  REQUIRE_FALSE(workload.ok());
  CHECK(workload.status().code() == Status::Code::kInvalidInput);
  CHECK(workload.status().message() == path + ":3: expected 18 fields, got 17");
  CHECK(read_swf(kData + "/swf/small.swf", ReadOptions{true}).ok());
}

TEST_CASE("SWF: fields after the 18th are ignored with a counted warning, strict or not") {
  // Record 1 has one extra trailing column, record 2 three, record 3 none, record 4 is short.
  TempFile file("extra.swf",
                "; MaxProcs: 64\n"
                "1 0 5 100 4 -1 -1 4 200 -1 1 3 4 -1 1 1 -1 -1 site-column\n"
                "2 10 0 50 8 -1 -1 8 60 -1 1 3 4 -1 1 1 -1 -1 7 8 9\n"
                "3 20 0 70 2 -1 -1 2 90 -1 1 3 4 -1 1 1 -1 -1\n"
                "4 30 0 70 2 -1 -1 2 90 -1 1 3 4 -1 1 1\n");
  for (const bool strict : {false, true}) {
    INFO("strict " << strict);
    auto workload = read_swf(file.path, ReadOptions{strict});
    if (strict) {
      REQUIRE_FALSE(workload.ok());
      CHECK(workload.status().message() == file.path + ":5: expected 18 fields, got 16");
      continue;
    }
    REQUIRE(workload.ok());
    const auto& report = workload->report;
    CHECK(report.records == 4);
    CHECK(report.used == 3);
    CHECK(report.skipped == 1);
    CHECK(report.warned == 2);
    const std::vector<std::string> expected = {
        file.path + ":2: 19 fields, the format has 18: the last 1 ignored",
        file.path + ":3: 21 fields, the format has 18: the last 3 ignored",
    };
    CHECK(report.warnings == expected);
    REQUIRE(workload->jobs.size() == 3);
    CHECK(workload->jobs[0].id == 1);
    CHECK(workload->jobs[0].run_time == 100);
    CHECK(workload->jobs[0].time_limit == 200);
    CHECK(workload->jobs[1].cpus == 8);
    CHECK(workload->jobs[2].id == 3);
  }
  TempFile no_short("extra_only.swf", "1 0 5 100 4 -1 -1 4 200 -1 1 3 4 -1 1 1 -1 -1 x\n");
  auto strict = read_swf(no_short.path, ReadOptions{true});
  REQUIRE(strict.ok());
  CHECK(strict->jobs.size() == 1);
  CHECK(strict->report.warned == 1);
}

TEST_CASE("SWF: missing, empty and junk files") {
  auto missing = read_swf(kData + "/swf/no_such_file.swf");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == Status::Code::kNotFound);
  CHECK(missing.status().message().find("no_such_file.swf") != std::string::npos);

  TempFile empty("empty.swf", "\n  \n");
  auto from_empty = read_swf(empty.path);
  REQUIRE_FALSE(from_empty.ok());
  CHECK(from_empty.status().code() == Status::Code::kInvalidInput);
  CHECK(from_empty.status().message() == empty.path + ": empty file");

  // Binary junk (control bytes, bytes >= 0x80, a line far longer than the reader's chunk, NULs) is skipped, never a
  // crash.
  std::string junk =
      "\x7f"
      "ELF\xff\xfe garbage\n";
  junk += std::string(10000, 'x') + "\n";
  junk += "1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 0 -1 -1 \x01\n";
  junk += std::string("\0\0\xff 2 3\n", 9);
  TempFile binary("junk.swf", junk);
  auto from_junk = read_swf(binary.path);
  REQUIRE(from_junk.ok());
  CHECK(from_junk->jobs.empty());
  CHECK(from_junk->report.records == from_junk->report.skipped);
  REQUIRE(from_junk->report.reasons.size() >= 3);
  CHECK(from_junk->report.reasons[0] == binary.path + ":1: expected 18 fields, got 2");
  CHECK(from_junk->report.reasons[1] == binary.path + ":2: expected 18 fields, got 1");
  CHECK(from_junk->report.reasons[2] == binary.path + ":3: field 18 (think time) is not a number (got '?')");

  // A header alone is a valid, empty trace.
  TempFile header_only("header_only.swf", "; MaxNodes: 8\n");
  auto from_header = read_swf(header_only.path);
  REQUIRE(from_header.ok());
  CHECK(from_header->jobs.empty());
  CHECK(from_header->max_nodes == 8);
}

TEST_CASE("SWF: a truncated gzip file is an I/O error, not a short trace") {
  std::ifstream in(kData + "/swf/small.swf.gz", std::ios::binary);
  const std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(gz.size() > 40);
  TempFile truncated("truncated.swf.gz", gz.substr(0, gz.size() - 30));
  auto workload = read_swf(truncated.path);
  REQUIRE_FALSE(workload.ok());
  CHECK(workload.status().code() == Status::Code::kIoError);
  CHECK(workload.status().message().find(truncated.path) == 0);
}
