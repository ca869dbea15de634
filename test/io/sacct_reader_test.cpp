#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "io/time_parse.h"
#include "rlsched/io/workload_readers.h"
#include "temp_dir.h"
#include "test_data.h"

using rlsched::Job;
using rlsched::Seconds;
using rlsched::Status;
using rlsched::io::read_sacct;
using rlsched::io::ReadOptions;
using rlsched::io::TimeField;

namespace {

using rlsched::test::kData;
constexpr Seconds kLabSubmit = 1795987696;   // 2026-11-29T21:28:16 read as UTC
constexpr Seconds kEdgeSubmit = 1772359200;  // 2026-03-01T10:00:00 read as UTC

using rlsched::test::TempFile;

const Job& find_job(const std::vector<Job>& jobs, rlsched::JobId id) {
  const auto it = std::find_if(jobs.begin(), jobs.end(), [id](const Job& job) { return job.id == id; });
  INFO("job " << id);
  REQUIRE(it != jobs.end());
  return *it;
}

}  // namespace

TEST_CASE("sacct: time fields are read as UTC without the C library's time zone") {
  Seconds t = 0;
  CHECK(rlsched::io::parse_slurm_time("1970-01-01T00:00:00", t) == TimeField::kValue);
  CHECK(t == 0);
  CHECK(rlsched::io::parse_slurm_time("2026-11-29T21:28:16", t) == TimeField::kValue);
  CHECK(t == kLabSubmit);
  CHECK(rlsched::io::parse_slurm_time("2024-02-29T12:00:00", t) == TimeField::kValue);
  CHECK(t == 1709208000);
  CHECK(rlsched::io::days_from_civil(1969, 12, 31) == -1);
  CHECK(rlsched::io::days_from_civil(2000, 3, 1) == 11017);
  for (const char* absent : {"Unknown", "None", ""}) {
    CHECK(rlsched::io::parse_slurm_time(absent, t) == TimeField::kAbsent);
  }
  for (const char* invalid :
       {"2026-11-29 21:28:16", "2026-13-01T00:00:00", "2023-02-29T00:00:00", "2026-11-29T24:00:00", "2026-11-29T21:28",
        "2026-11-29T21:28:16Z", "12345", "2026-1a-29T21:28:16"}) {
    INFO(invalid);
    CHECK(rlsched::io::parse_slurm_time(invalid, t) == TimeField::kInvalid);
  }

  CHECK(rlsched::io::parse_elapsed("00:01:27", t));
  CHECK(t == 87);
  CHECK(rlsched::io::parse_elapsed("1-02:03:04", t));
  CHECK(t == 93784);
  CHECK(rlsched::io::parse_elapsed("365-00:00:00", t));
  CHECK(t == 365 * 86400);
  for (const char* invalid : {"", "12:3", "1:02:03", "-01:00:00", "1-", "00:60:00", "99999999-00:00:00", "INVALID"}) {
    INFO(invalid);
    CHECK_FALSE(rlsched::io::parse_elapsed(invalid, t));
  }
}

TEST_CASE("sacct: the Slurm 22.05 lab dump (steps, array, requeue, typeless GPU, NPU, timeout)") {
  const std::string path = kData + "/sacct/slurm22.05-lab.txt";
  auto workload = read_sacct(path, ReadOptions{true});  // nothing in a real dump of finished jobs is skipped
  REQUIRE(workload.ok());
  const auto& report = workload->report;
  CHECK(report.records == 34);
  CHECK(report.used == 15);
  CHECK(report.merged == 19);  // 18 steps and the first run of requeued job 11
  CHECK(report.skipped == 0);
  const auto& jobs = workload->jobs;
  REQUIRE(jobs.size() == 15);
  std::vector<rlsched::JobId> ids;
  for (const Job& job : jobs) ids.push_back(job.id);
  CHECK(ids == std::vector<rlsched::JobId>{1, 2, 3, 4, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 5});

  const Job& typed = jobs[0];
  CHECK(typed.user == "root");
  CHECK(typed.account == "root");
  CHECK(typed.qos == "normal");
  CHECK(typed.job_class == "train-h200");
  CHECK(typed.partitions == std::vector<std::string>{"h200"});
  CHECK(typed.submit == kLabSubmit);
  CHECK(typed.run_time == 8);
  CHECK(typed.time_limit == 120);
  CHECK(typed.cpus == 1);
  CHECK(typed.nodes == 1);
  CHECK(typed.mem_mb == 8000);
  CHECK(typed.accel.count == 2);
  CHECK(typed.accel.name == "gpu");
  CHECK(typed.accel.types == std::vector<std::string>{"h200"});
  CHECK(typed.ran_on_type == "h200");
  CHECK(typed.restarts == 0);

  const Job& typeless = find_job(jobs, 3);
  CHECK(typeless.accel.count == 2);
  CHECK(typeless.accel.name == "gpu");
  CHECK(typeless.accel.any_type());
  CHECK(typeless.ran_on_type == "h200");  // AllocTRES tells which type it got
  CHECK(typeless.time_limit == 180);

  const Job& npu = find_job(jobs, 4);
  CHECK(npu.accel.count == 4);
  CHECK(npu.accel.name == "npu");
  CHECK(npu.accel.any_type());
  CHECK(npu.ran_on_type.empty());

  const Job& with_steps = find_job(jobs, 6);
  CHECK(with_steps.run_time == 3);  // the job's own record, not its steps' (2 s and 0 s)
  CHECK(with_steps.accel.types == std::vector<std::string>{"h200"});

  CHECK(find_job(jobs, 7).run_time == 1);  // FAILED jobs ran: kept
  CHECK(find_job(jobs, 7).accel.empty());
  CHECK(find_job(jobs, 8).run_time == 0);

  const Job& timeout = find_job(jobs, 9);
  CHECK(timeout.time_limit == 60);
  CHECK(timeout.run_time == 87);  // ran past its limit until Slurm's kill took effect

  const Job& requeued = jobs[8];
  CHECK(requeued.id == 11);
  CHECK(requeued.restarts == 1);
  CHECK(requeued.submit == kLabSubmit);  // the first record's; the second run's Submit is 21:28:28
  CHECK(requeued.run_time == 12);        // the last run: 21:29:16 .. 21:29:28
  CHECK(requeued.ran_on_type == "a100");
  CHECK(requeued.time_limit == 300);

  CHECK(find_job(jobs, 12).cpus == 4);

  const Job& array_task = find_job(jobs, 15);  // JobID 5_0
  CHECK(array_task.job_class == "sweep");
  CHECK(array_task.run_time == 2);
  CHECK(jobs.back().id == 5);  // JobID 5_3: the array's own JobIDRaw, last in the dump
  CHECK(jobs.back().run_time == 5);
}

TEST_CASE("sacct: fields found by name with unfinished, broken and unusual records") {
  const std::string path = kData + "/sacct/edge_cases.txt";
  auto workload = read_sacct(path);
  REQUIRE(workload.ok());
  const auto& report = workload->report;
  CHECK(report.records == 18);
  CHECK(report.used == 3);
  CHECK(report.merged == 1);
  CHECK(report.skipped == 14);
  CHECK(report.records == report.used + report.merged + report.skipped);
  const auto& jobs = workload->jobs;
  REQUIRE(jobs.size() == 3);

  const Job& big = jobs[0];
  CHECK(big.id == 20);
  CHECK(big.partitions == std::vector<std::string>{"h200", "a100"});
  CHECK(big.user == "alice");
  CHECK(big.account == "proj");
  CHECK(big.qos == "high");
  CHECK(big.job_class == "big");
  CHECK(big.submit == kEdgeSubmit);
  CHECK(big.run_time == 93784);    // Elapsed 1-02:03:04
  CHECK(big.time_limit == 93784);  // UNLIMITED: the run time stands in
  CHECK(big.cpus == 8);
  CHECK(big.nodes == 2);
  CHECK(big.mem_mb == 8192);    // mem=16G for the job, over 2 nodes
  CHECK(big.accel.count == 4);  // only the typed entry: its count is the total
  CHECK(big.accel.types == std::vector<std::string>{"h200"});
  CHECK(big.ran_on_type == "h200");

  const Job& partition_limit = jobs[1];
  CHECK(partition_limit.id == 29);
  CHECK(partition_limit.run_time == 90);  // no Elapsed: End - Start
  CHECK(partition_limit.time_limit == 90);
  CHECK(partition_limit.cpus == 2);  // NCPUS when ReqTRES has no cpu
  CHECK(partition_limit.nodes == 1);
  CHECK(partition_limit.mem_mb == 1);  // 512K rounds up to 1 MiB
  CHECK(partition_limit.accel.empty());

  const Job& two_types = jobs[2];
  CHECK(two_types.id == 35);
  CHECK(two_types.accel.count == 2);
  CHECK(two_types.accel.types == std::vector<std::string>{"a100", "h200"});
  CHECK(two_types.ran_on_type == "a100");

  const std::vector<std::string> expected = {
      path + ":7: expected 19 fields as in the header, got 10",
      path + ":8: job 25: Submit is not a time (got '2026-13-01T00:00:00')",
      path + ":9: JobIDRaw is not a job number (got 'abc')",
      path + ":10: job 27: asks for several GRES kinds (gpu, npu); a job has one accelerator request",
      path + ":14: job 31: TimelimitRaw is not minutes (got 'abc')",
      path + ":15: job 32: Elapsed is not [D-]HH:MM:SS (got '12:3')",
      path + ":17: job 34: ReqTRES: cpu is not a count (got 'x')",
      path + ":19: expected 19 fields as in the header, got 20 (a '|' inside a field such as JobName?)",
      path + ":4: job 21 never started (PENDING)",
      path + ":5: job 22 never started (CANCELLED by 0)",
      path + ":6: job 23 still running (RUNNING)",
      path + ":11: job 28 was requeued and has no later run in the dump (REQUEUED)",
      path + ":13: job 30 never started (CANCELLED by 0)",
      path + ":16: job 33 ends before it starts (run time -600 s)",
  };
  CHECK(report.reasons == expected);

  auto strict = read_sacct(path, ReadOptions{true});
  REQUIRE_FALSE(strict.ok());
  CHECK(strict.status().code() == Status::Code::kInvalidInput);
  CHECK(strict.status().message() == expected[0]);
}

TEST_CASE("sacct: a requeued job that is pending again is left out, its earlier run merged") {
  TempFile dump("requeue_pending.txt",
                "JobIDRaw|Submit|Start|End|State\n"
                "7|2026-03-01T10:00:00|2026-03-01T10:01:00|2026-03-01T10:02:00|REQUEUED\n"
                "7.batch|2026-03-01T10:01:00|2026-03-01T10:01:00|2026-03-01T10:02:00|CANCELLED\n"
                "8|2026-03-01T10:00:00|2026-03-01T10:00:10|2026-03-01T10:00:20|COMPLETED\n"
                "7|2026-03-01T10:02:00|Unknown|Unknown|PENDING\n");
  auto workload = read_sacct(dump.path);
  REQUIRE(workload.ok());
  CHECK(workload->report.records == 4);
  CHECK(workload->report.merged == 2);
  CHECK(workload->report.used == 1);
  REQUIRE(workload->report.reasons == std::vector<std::string>{dump.path + ":5: job 7 never started (PENDING)"});
  REQUIRE(workload->jobs.size() == 1);
  const Job& only = workload->jobs[0];
  CHECK(only.id == 8);
  CHECK(only.run_time == 10);  // no Elapsed field: End - Start
  CHECK(only.time_limit == 10);
  CHECK(only.cpus == 1);
  CHECK(only.user.empty());
  CHECK(only.partitions.empty());
}

TEST_CASE("sacct: files without a usable header") {
  const std::string missing_state = kData + "/sacct/missing_state.txt";
  auto no_state = read_sacct(missing_state);
  REQUIRE_FALSE(no_state.ok());
  CHECK(no_state.status().code() == Status::Code::kInvalidInput);
  CHECK(no_state.status().message().find(missing_state + ":1: missing field 'State'") == 0);

  // `sacct -n` leaves the header out: the first record is then taken for one and lacks every name.
  TempFile headless("headless.txt", "\n1|1|2026-03-01T10:00:00|2026-03-01T10:00:01|2026-03-01T10:00:02|COMPLETED\n");
  auto no_header = read_sacct(headless.path);
  REQUIRE_FALSE(no_header.ok());
  CHECK(no_header.status().message().find(headless.path + ":2: missing field 'JobIDRaw'") == 0);

  TempFile empty("empty.txt", "");
  auto from_empty = read_sacct(empty.path);
  REQUIRE_FALSE(from_empty.ok());
  CHECK(from_empty.status().code() == Status::Code::kInvalidInput);
  CHECK(from_empty.status().message().find(empty.path + ": empty file") == 0);

  auto missing = read_sacct(kData + "/sacct/no_such_dump.txt");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == Status::Code::kNotFound);

  // Junk after a valid header is skipped record by record.
  TempFile junk("junk.txt", "JobIDRaw|Submit|Start|End|State\n\x01\x02\xff||||\n|\n");
  auto from_junk = read_sacct(junk.path);
  REQUIRE(from_junk.ok());
  CHECK(from_junk->jobs.empty());
  CHECK(from_junk->report.skipped == 2);
  CHECK(from_junk->report.reasons.at(0) == junk.path + ":2: JobIDRaw is not a job number (got '\?\?\?')");
  CHECK(from_junk->report.reasons.at(1) == junk.path + ":3: expected 5 fields as in the header, got 2");
}
