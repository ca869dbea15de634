#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "rlsched/io/workload_readers.h"
#include "temp_dir.h"
#include "test_data.h"

using rlsched::Status;
using rlsched::io::read_workload;
using rlsched::io::ReadOptions;

namespace {

using rlsched::test::kData;

using rlsched::test::TempFile;

}  // namespace

TEST_CASE("read_workload picks the reader by name and content") {
  // Each fixture is recognized by what only its own reader produces.
  auto swf = read_workload(kData + "/swf/small.swf");
  REQUIRE(swf.ok());
  CHECK(swf->max_procs == 1728);
  CHECK(swf->jobs.size() == 4);

  auto swf_gz = read_workload(kData + "/swf/small.swf.gz");
  REQUIRE(swf_gz.ok());
  CHECK(swf_gz->jobs.size() == 4);
  CHECK(swf_gz->jobs[0].partitions.at(0) == "gpu");

  auto sacct = read_workload(kData + "/sacct/slurm22.05-lab.txt");
  REQUIRE(sacct.ok());
  CHECK(sacct->report.merged == 19);
  CHECK(sacct->jobs.size() == 15);

  auto pods = read_workload(kData + "/alibaba/pods.csv");
  REQUIRE(pods.ok());
  CHECK(pods->jobs.size() == 6);
  CHECK(pods->jobs[0].nodes == 1);

  // SWF under another name is known by its ';' header comments.
  std::ifstream in(kData + "/swf/small.swf");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  TempFile renamed("trace.txt", "\n" + text);
  auto swf_renamed = read_workload(renamed.path);
  REQUIRE(swf_renamed.ok());
  CHECK(swf_renamed->jobs.size() == 4);
  CHECK(swf_renamed->max_nodes == 24);

  // A sacct header need not start with JobIDRaw.
  TempFile reordered("reordered.txt",
                     "State|JobIDRaw|Submit|Start|End\nCOMPLETED|4|2026-03-01T10:00:00|2026-03-01T10:00:00|"
                     "2026-03-01T10:00:30\n");
  auto sacct_reordered = read_workload(reordered.path);
  REQUIRE(sacct_reordered.ok());
  REQUIRE(sacct_reordered->jobs.size() == 1);
  CHECK(sacct_reordered->jobs[0].run_time == 30);
}

TEST_CASE("read_workload passes options and errors through") {
  auto strict = read_workload(kData + "/swf/malformed.swf", ReadOptions{true});
  REQUIRE_FALSE(strict.ok());
  CHECK(strict.status().message() == kData + "/swf/malformed.swf:3: expected 18 fields, got 17");

  auto pods_without_times = read_workload(kData + "/alibaba/resources_only.csv");
  REQUIRE_FALSE(pods_without_times.ok());
  CHECK(pods_without_times.status().message() ==
        kData + "/alibaba/resources_only.csv:1: missing column 'creation_time'");

  auto missing = read_workload(kData + "/no_such_trace.csv");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == Status::Code::kNotFound);
  CHECK(missing.status().message().find("no_such_trace.csv") != std::string::npos);
}

TEST_CASE("read_workload rejects unknown and empty files, naming the supported formats") {
  TempFile markdown("notes.md", "# Not a trace\nsome text\n");
  auto unknown = read_workload(markdown.path);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == Status::Code::kInvalidInput);
  const std::string& message = unknown.status().message();
  CHECK(message.find(markdown.path + ":1: unknown workload format (first line '# Not a trace')") == 0);
  CHECK(message.find("SWF") != std::string::npos);
  CHECK(message.find("sacct") != std::string::npos);
  CHECK(message.find("Alibaba") != std::string::npos);

  TempFile binary("blob.bin", std::string("\x7f"
                                          "ELF\x02\x01\x01\0\0\0\xff\xfe\n",
                                          13));
  auto from_binary = read_workload(binary.path);
  REQUIRE_FALSE(from_binary.ok());
  CHECK(from_binary.status().code() == Status::Code::kInvalidInput);
  CHECK(from_binary.status().message().find("unknown workload format (first line '?ELF\?\?\?\?\?\?\?\?')") != std::string::npos);

  TempFile empty("empty.dat", " \n\n");
  auto from_empty = read_workload(empty.path);
  REQUIRE_FALSE(from_empty.ok());
  CHECK(from_empty.status().code() == Status::Code::kInvalidInput);
  CHECK(from_empty.status().message().find(empty.path + ": empty file; supported: SWF") == 0);

  // An empty file named like SWF goes to the SWF reader, which says so too.
  TempFile empty_swf("empty.swf", "");
  auto from_empty_swf = read_workload(empty_swf.path);
  REQUIRE_FALSE(from_empty_swf.ok());
  CHECK(from_empty_swf.status().message() == empty_swf.path + ": empty file");
}
