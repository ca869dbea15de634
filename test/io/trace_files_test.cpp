// The readers on the real traces in ../shared/traces (see its README for the counts checked here).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "rlsched/io/workload_readers.h"

using rlsched::Job;
using rlsched::io::read_workload;

namespace {

const std::string kTraces = RLSCHED_SHARED_TRACES;

long count_jobs(const std::vector<Job>& jobs, bool (*predicate)(const Job&)) {
  return static_cast<long>(std::count_if(jobs.begin(), jobs.end(), predicate));
}

}  // namespace

TEST_CASE("the readers on the shared real traces") {
  if (!std::filesystem::is_directory(kTraces)) {
    FAIL("shared traces not found at " << kTraces
                                       << ": this test needs the ../shared/traces folder next to the repository");
  }

  SECTION("Lublin-1: 10,000 jobs, no requested times") {
    auto lublin = read_workload(kTraces + "/lublin/lublin_256.swf");
    REQUIRE(lublin.ok());
    CHECK(lublin->report.records == 10000);
    CHECK(lublin->report.used == 10000);
    CHECK(lublin->max_nodes == 256);
    REQUIRE(lublin->jobs.size() == 10000);
    const Job& first = lublin->jobs.front();
    CHECK(first.id == 1);
    CHECK(first.submit == 5094);
    CHECK(first.run_time == 12072);
    CHECK(first.time_limit == 12072);
    CHECK(first.cpus == 16);
    CHECK(count_jobs(lublin->jobs, [](const Job& j) { return j.time_limit != j.run_time; }) == 0);
    CHECK(lublin->jobs.back().id == 10000);
  }

  SECTION("RICC-2010-2: 447,794 records, gzip") {
    auto ricc = read_workload(kTraces + "/ricc/RICC-2010-2.swf.gz");
    REQUIRE(ricc.ok());
    CHECK(ricc->report.records == 447794);
    CHECK(ricc->report.used == 447794);
    CHECK(ricc->report.skipped == 0);
    CHECK(ricc->max_nodes == 1024);
    CHECK(ricc->max_procs == 8192);
    REQUIRE(ricc->jobs.size() == 447794);
    const Job& first = ricc->jobs.front();
    CHECK(first.id == 1);
    CHECK(first.run_time == 222);
    CHECK(first.time_limit == 14400);
    CHECK(first.cpus == 80);
    CHECK(first.user == "u1");
    CHECK(first.account == "g1");
    CHECK(first.priority_tier == 1);
    CHECK(first.partitions.empty());
    const Job& last = ricc->jobs.back();
    CHECK(last.id == 447794);
    CHECK(last.submit == 13216249);
    CHECK(last.user == "u19");
    CHECK(last.account == "g17");
    // Job 36189 has no requested time (-1): its run time stands in.
    const Job& no_request = ricc->jobs[36188];
    CHECK(no_request.id == 36189);
    CHECK(no_request.run_time == 14);
    CHECK(no_request.time_limit == 14);
  }

  SECTION("COARE Saliksik: 19,760 jobs, tab-separated, named partitions") {
    auto coare = read_workload(kTraces + "/coare-saliksik-slurm/DOST-ASTI_COARE-Saliksik-2020-cln.swf");
    REQUIRE(coare.ok());
    CHECK(coare->report.records == 19760);
    CHECK(coare->report.used == 19760);
    CHECK(coare->max_nodes == 24);
    CHECK(coare->max_procs == 1728);
    std::map<std::string, long> per_partition;
    for (const Job& job : coare->jobs) {
      REQUIRE(job.partitions.size() == 1);
      ++per_partition[job.partitions[0]];
    }
    CHECK(per_partition ==
          std::map<std::string, long>{{"gpu", 9912}, {"serial", 3801}, {"debug", 3901}, {"batch", 2146}});
    // Ids are not sorted in the file; file order is kept.
    CHECK(coare->jobs[3].id == 22);
    CHECK(coare->jobs[3].submit == 1163);
  }

  SECTION("Alibaba openb gpuspec33: 8,152 pods, 897 pending") {
    auto pods = read_workload(kTraces + "/alibaba-openb-gpu-v2023/openb_pod_list_gpuspec33.csv");
    REQUIRE(pods.ok());
    CHECK(pods->report.records == 8152);
    CHECK(pods->report.skipped == 897);
    CHECK(pods->report.used == 7255);
    REQUIRE(pods->report.reasons.size() == rlsched::ReadReport::kMaxReasons);
    CHECK(pods->report.reasons[0] ==
          kTraces + "/alibaba-openb-gpu-v2023/openb_pod_list_gpuspec33.csv:63: pod 61 never scheduled (Pending)");
    CHECK(count_jobs(pods->jobs, [](const Job& j) { return j.accel.empty(); }) == 1052);
    long gpus = 0;
    for (const Job& job : pods->jobs) gpus += job.accel.count;
    CHECK(gpus == 6571);
    CHECK(count_jobs(pods->jobs, [](const Job& j) { return j.accel.types == std::vector<std::string>{"T4"}; }) == 1132);
    // 126 "V100M16|V100M32" and 21 "V100M16|V100M32|V100M32" sets.
    CHECK(count_jobs(pods->jobs, [](const Job& j) {
            return j.accel.types == std::vector<std::string>{"V100M16", "V100M32"};
          }) == 147);

    auto resources_only = read_workload(kTraces + "/alibaba-openb-gpu-v2023/openb_pod_list_multigpu50.csv");
    REQUIRE_FALSE(resources_only.ok());
    CHECK(resources_only.status().message() ==
          kTraces + "/alibaba-openb-gpu-v2023/openb_pod_list_multigpu50.csv:1: missing column 'creation_time'");
  }
}
