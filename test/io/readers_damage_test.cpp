// The workload and cluster readers on damaged files (seeded, the same cases every run; the sacct reader has its own
// libFuzzer target): never an exception or a crash; lenient reads account for every record (used, merged or
// skipped with a reason) and return only jobs a simulator can run; strict reads refuse any bad record, naming the
// file and the line; cluster files are read whole or refused naming the file.
#include <fstream>
#include <random>
#include <string>

#include "damage.h"
#include "rlsched/io/cluster_readers.h"
#include "rlsched/io/workload_readers.h"
#include "temp_dir.h"
#include "test_data.h"

#include <catch2/catch.hpp>

namespace rlsched {
namespace {

/// A fixture's text (REQUIREd: a damage test on nothing would pass).
std::string fixture(const std::string& path) {
  const std::string text = test::read_file(path);
  REQUIRE(!text.empty());
  return text;
}

/// Writes each damaged version of `valid` to `file` and reads it with `read` (lenient and strict), checking what
/// every read must hold. \return the lenient reads that kept at least one job (the damage must leave some).
template <typename Read>
int check_damaged_workloads(const std::string& valid, const std::string& name, const std::string& alphabet, Read read,
                            unsigned seed) {
  test::TempDir dir("rlsched_damage");
  const std::string file = dir.file(name);
  std::mt19937 rng(seed);
  int with_jobs = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string text = test::damaged(valid, rng, alphabet);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    INFO("damaged file:\n" << text);
    for (bool strict : {false, true}) {
      io::ReadOptions options;
      options.strict = strict;
      Result<Workload> w = read(file, options);
      if (!w.ok()) {
        CHECK(w.status().message().rfind(file + ":", 0) == 0);  // names the file (and the line)
        continue;
      }
      const ReadReport& r = w->report;
      CHECK(r.records == r.used + r.merged + r.skipped);
      CHECK(w->jobs.size() == r.used);
      CHECK(r.reasons.size() == std::min(r.skipped, ReadReport::kMaxReasons));
      CHECK((!strict || r.skipped == 0));
      for (const Job& j : w->jobs) {
        CHECK(j.cpus >= 1);
        CHECK(j.run_time >= 0);
        CHECK(j.time_limit >= 0);
        CHECK(j.accel.count >= 0);
        CHECK(j.submit >= 0);
      }
      if (!strict && !w->jobs.empty()) ++with_jobs;
    }
  }
  return with_jobs;
}

}  // namespace

TEST_CASE("a damaged SWF trace is read consistently or refused with its file and line", "[io][damage]") {
  const std::string valid = fixture(test::kData + "/swf/small.swf");
  const int with_jobs = check_damaged_workloads(valid, "trace.swf", "0123456789 -\t\n;", io::read_swf, 20261206);
  CHECK(with_jobs > 1000);
}

TEST_CASE("a damaged Alibaba pod table is read consistently or refused with its file and line", "[io][damage]") {
  const std::string valid = fixture(test::kData + "/alibaba/pods.csv");
  const int with_jobs = check_damaged_workloads(valid, "pods.csv", "0123456789,|-\nabcdefgimnoprstuvxyzLSBERF",
                                                io::read_alibaba_pods, 20261207);
  CHECK(with_jobs > 1000);
}

TEST_CASE("a damaged cluster YAML is read whole or refused naming the file", "[io][damage]") {
  const std::string valid = fixture(test::kClusterData + "lab.yaml");
  test::TempDir dir("rlsched_damage");
  const std::string file = dir.file("cluster.yaml");
  std::mt19937 rng(20261208);
  int read = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string text = test::damaged(valid, rng, "abcdefghijklmnopqrstuvwxyz0123456789:-[]{}, \n#\"'");
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    INFO("damaged file:\n" << text);
    Result<Cluster> c = io::read_cluster_yaml(file);
    if (!c.ok()) {
      CHECK(c.status().message().find(file) != std::string::npos);
      continue;
    }
    ++read;
    CHECK(!c->nodes.empty());
    for (const auto& node : c->nodes) CHECK(node.cpus >= 1);
  }
  CHECK(read > 100);
}

}  // namespace rlsched
