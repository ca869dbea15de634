#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "rlsched/io/workload_readers.h"
#include "temp_dir.h"
#include "test_data.h"

using rlsched::Job;
using rlsched::Status;
using rlsched::io::read_alibaba_pods;
using rlsched::io::ReadOptions;

namespace {

using rlsched::test::kData;

using rlsched::test::TempFile;

}  // namespace

TEST_CASE("Alibaba pods: mapping of scheduled pods, GPU shares and any-of GPU types") {
  const std::string path = kData + "/alibaba/pods.csv";
  auto workload = read_alibaba_pods(path);
  REQUIRE(workload.ok());
  const auto& report = workload->report;
  CHECK(report.source == path);
  CHECK(report.records == 12);
  CHECK(report.used == 6);
  CHECK(report.skipped == 6);
  const auto& jobs = workload->jobs;
  REQUIRE(jobs.size() == 6);
  std::vector<rlsched::JobId> ids;
  for (const Job& job : jobs) ids.push_back(job.id);
  CHECK(ids == std::vector<rlsched::JobId>{0, 1, 2, 3, 4, 11});  // row indexes: skipped rows keep theirs

  const Job& running = jobs[0];
  CHECK(running.submit == 0);
  CHECK(running.run_time == 12537496);  // still Running at the trace end: cut there
  CHECK(running.time_limit == 12537496);
  CHECK(running.cpus == 12);
  CHECK(running.nodes == 1);
  CHECK(running.mem_mb == 16384);
  CHECK(running.qos == "LS");
  CHECK(running.accel.count == 1);
  CHECK(running.accel.name == "gpu");
  CHECK(running.accel.any_type());
  CHECK(running.job_class.empty());
  CHECK(running.user.empty());

  const Job& share = jobs[1];
  CHECK(share.accel.count == 1);  // gpu_milli 460: a whole GPU under Slurm
  CHECK(share.submit == 427061);
  CHECK(share.run_time == 12902960 - 427061);

  const Job& any_of = jobs[2];
  CHECK(any_of.cpus == 4);  // 3152 millicores round up
  CHECK(any_of.mem_mb == 5600);
  CHECK(any_of.qos == "BE");
  CHECK(any_of.submit == 9965463);
  CHECK(any_of.run_time == 9965645 - 9965470);  // from scheduling, not creation
  CHECK(any_of.accel.types == std::vector<std::string>{"V100M16", "V100M32"});
  CHECK(any_of.accel.allows("V100M32"));
  CHECK_FALSE(any_of.accel.allows("T4"));

  const Job& eight = jobs[3];
  CHECK(eight.accel.count == 8);
  CHECK(eight.accel.types == std::vector<std::string>{"G2"});
  CHECK(eight.cpus == 88);
  CHECK(eight.run_time == 4900);

  const Job& cpu_only = jobs[4];
  CHECK(cpu_only.accel.empty());
  CHECK(cpu_only.accel.name.empty());
  CHECK(cpu_only.qos == "Burstable");
  CHECK(cpu_only.run_time == 600);

  const Job& small = jobs[5];
  CHECK(small.id == 11);
  CHECK(small.cpus == 1);
  CHECK(small.accel.count == 2);
  CHECK(small.accel.types == std::vector<std::string>{"T4"});
  CHECK(small.submit == 2000);
  CHECK(small.run_time == 500);

  const std::vector<std::string> expected = {
      path + ":7: pod 5 never scheduled (Pending)",
      path + ":8: pod 6 deleted before it was scheduled (scheduled_time 450, deletion_time 300)",
      path + ":9: pod 7 scheduled before it was created (creation_time 500, scheduled_time 450)",
      path + ":10: pod 8: cpu_milli is not a count (got 'lots')",
      path + ":11: expected 11 fields as in the header, got 4",
      path + ":12: pod 10 has no deletion_time",
  };
  CHECK(report.reasons == expected);

  auto strict = read_alibaba_pods(path, ReadOptions{true});
  REQUIRE_FALSE(strict.ok());
  CHECK(strict.status().code() == Status::Code::kInvalidInput);
  CHECK(strict.status().message() == expected[0]);
}

TEST_CASE("Alibaba pods: missing columns, empty and missing files") {
  const std::string resources_only = kData + "/alibaba/resources_only.csv";
  auto no_times = read_alibaba_pods(resources_only);
  REQUIRE_FALSE(no_times.ok());
  CHECK(no_times.status().code() == Status::Code::kInvalidInput);
  CHECK(no_times.status().message() == resources_only + ":1: missing column 'creation_time'");

  TempFile empty("empty.csv", "\n\n");
  auto from_empty = read_alibaba_pods(empty.path);
  REQUIRE_FALSE(from_empty.ok());
  CHECK(from_empty.status().code() == Status::Code::kInvalidInput);
  CHECK(from_empty.status().message().find(empty.path + ": empty file") == 0);

  auto missing = read_alibaba_pods(kData + "/alibaba/no_such_pods.csv");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == Status::Code::kNotFound);
}

TEST_CASE("Alibaba pods: optional columns may be absent, huge and negative numbers are skipped") {
  // Without pod_phase, an empty scheduled_time is what marks a pending pod; without gpu_spec any GPU type goes.
  TempFile minimal("minimal.csv",
                   "creation_time,scheduled_time,deletion_time,num_gpu,memory_mib,cpu_milli\n"
                   "10,20,80,1,100,500\n"
                   "10,,80,1,100,500\n"
                   "10,20,80,99999999999,100,500\n"
                   "10,20,80,1,-5,500\n"
                   "10,20,99999999999999999999,1,100,500\n");
  auto workload = read_alibaba_pods(minimal.path);
  REQUIRE(workload.ok());
  REQUIRE(workload->jobs.size() == 1);
  const Job& job = workload->jobs[0];
  CHECK(job.id == 0);
  CHECK(job.submit == 10);
  CHECK(job.run_time == 60);
  CHECK(job.cpus == 1);
  CHECK(job.accel.count == 1);
  CHECK(job.accel.any_type());
  CHECK(job.qos.empty());
  const std::vector<std::string> expected = {
      minimal.path + ":3: pod 1 has no scheduled_time (pod_phase '')",
      minimal.path + ":4: pod 2: num_gpu is not a count (got '99999999999')",
      minimal.path + ":5: pod 3: memory_mib is not a count (got '-5')",
      minimal.path + ":6: pod 4: deletion_time is not a time in seconds (got '99999999999999999999')",
  };
  CHECK(workload->report.reasons == expected);
}
