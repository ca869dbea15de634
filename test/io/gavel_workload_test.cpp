// The Gavel-derived heterogeneous workload (rlsched/io/gavel_workload.h), on a small fixture and on the real
// Gavel folder in ../shared/traces.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "rlsched/io/gavel_workload.h"

namespace rlsched::io {
namespace {

const std::string kGavelData = std::string(RLSCHED_TEST_DATA) + "/gavel";

TEST_CASE("Gavel jobs get measured class speeds, run times and limits", "[io][gavel]") {
  auto g = read_gavel_workload(kGavelData);
  REQUIRE(g.ok());
  const Workload& w = g->workload;
  // 8 records: one with 3 fields, one with a non-numeric step count, one model without throughputs: skipped.
  CHECK(w.report.records == 8);
  CHECK(w.report.skipped == 3);
  REQUIRE(w.jobs.size() == 5);
  CHECK_THAT(w.report.reasons[0], Catch::Contains("vc1.trace:5: expected 7 tab-separated fields, got 3"));
  CHECK_THAT(w.report.reasons[1], Catch::Contains("vc1.trace:6: total_steps 'many' is not a positive number"));
  CHECK_THAT(w.report.reasons[2], Catch::Contains("no throughput for 'Transformer (batch size 16)'"));
  // Merged across VCs in arrival order: 0, 25, 50, 100, 200.
  std::vector<Seconds> submits;
  for (const Job& j : w.jobs) submits.push_back(j.submit);
  CHECK(submits == std::vector<Seconds>{0, 25, 50, 100, 200});
  CHECK(w.jobs[1].user == "vc2");

  REQUIRE(g->types.size() == 3);
  const AcceleratorType& k80 = g->types[0];
  const AcceleratorType& v100 = g->types[2];
  // Speeds relative to the class's slowest type.
  CHECK(v100.class_speed.at("ResNet-18 (batch size 64) x1") == Approx(8.0));
  CHECK(v100.class_speed.at("LM (batch size 5) x1") == Approx(2.5));
  CHECK(k80.class_speed.at("LM (batch size 5) x1") == Approx(1.0));
  // The 8-GPU job uses the measured scale 2, linearly: its class is "x2".
  const Job& big = w.jobs[2];
  CHECK(big.job_class == "ResNet-18 (batch size 64) x2");
  CHECK(big.accel.count == 8);
  CHECK(big.accel.types.empty());  // every type allowed: typeless
  // Limit: the run on the slowest type (k80: 60000 steps / (3.0 * 8 / 2) steps/s) + 60 s.
  CHECK(big.time_limit == 5000 + 60);
  // ResNet-50 x2 cannot run on k80 (throughput 0): an any-of set without it, and no k80 speed.
  const Job& no_k80 = w.jobs[4];
  CHECK(no_k80.accel.types == std::vector<std::string>{"p100", "v100"});
  CHECK(k80.class_speed.count("ResNet-50 (batch size 128) x2") == 0);
  CHECK(no_k80.time_limit == 2000 + 60);  // 6000 steps at p100's 3.0
  // Run time on the recorded type, which is one of the allowed ones.
  for (const Job& j : w.jobs) {
    INFO(j.id);
    const bool allowed = j.accel.types.empty() ||
                         std::find(j.accel.types.begin(), j.accel.types.end(), j.ran_on_type) != j.accel.types.end();
    CHECK(allowed);
    CHECK(j.run_time <= j.time_limit);
  }
  // Default speed: geometric mean over classes (v100: 8, 2.5, 10, 2 -> (8*2.5*10*2)^(1/4)).
  CHECK(v100.speed == Approx(std::pow(8.0 * 2.5 * 10.0 * 2.0, 0.25)));
}

TEST_CASE("Alibaba type sets restrict the Gavel jobs, mapped by generation", "[io][gavel]") {
  GavelOptions o;
  o.any_of_pods = kGavelData + "/pods.csv";
  auto g = read_gavel_workload(kGavelData, o);
  REQUIRE(g.ok());
  // GPU pods in creation order: V100 set, any, T4, G2 (the CPU pod is not one). Job k takes pod k mod 4.
  const std::vector<Job>& jobs = g->workload.jobs;
  CHECK(jobs[0].accel.types == std::vector<std::string>{"v100"});  // V100M16|V100M32
  CHECK(jobs[1].accel.types.empty());                                // no constraint
  CHECK(jobs[2].accel.types == std::vector<std::string>{"p100"});  // T4 runs like a P100
  CHECK(jobs[3].accel.types.empty());                                // G2: undisclosed model, no constraint
  CHECK(jobs[4].accel.types == std::vector<std::string>{"v100"});  // pod 0 again, within {p100, v100}
  CHECK(g->constrained == 3);
  CHECK(jobs[0].time_limit == 7200 / 16 + 60);  // the slowest allowed type is now the v100
}

TEST_CASE("Gavel folders that cannot be read say what is wrong", "[io][gavel]") {
  auto missing = read_gavel_workload(kGavelData + "/nope");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("simulation_throughputs.json: cannot open"));
  GavelOptions strict;
  strict.read.strict = true;
  auto s = read_gavel_workload(kGavelData, strict);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.status().message(), Catch::Contains("vc1.trace:5: expected 7 tab-separated fields"));
}

TEST_CASE("a cluster takes the measured speeds of its k80, p100 and v100, and only of those", "[io][gavel]") {
  auto g = read_gavel_workload(kGavelData);
  REQUIRE(g.ok());
  auto type = [](const std::string& name, const std::string& gres, double speed) {
    AcceleratorType t;
    t.name = name;
    t.gres = gres;
    t.speed = speed;
    return t;
  };
  Cluster cluster;
  cluster.accelerator_types = {type("v100", "npu", 5.0), type("h200", "gpu", 30.0), type("k80", "gpu", 1.0),
                               type("p100", "gpu", 2.0), type("v100", "gpu", 7.0)};
  REQUIRE(use_measured_speeds(g->types, cluster, "c.yaml").ok());
  const AcceleratorType& v100 = cluster.accelerator_types[4];
  CHECK(v100.speed == Approx(std::pow(8.0 * 2.5 * 10.0 * 2.0, 0.25)));
  CHECK(v100.class_speed.at("ResNet-18 (batch size 64) x1") == Approx(8.0));
  CHECK(cluster.accelerator_types[2].class_speed.at("LM (batch size 5) x1") == Approx(1.0));
  // A type Gavel did not measure, and a v100 of another GRES, keep what the cluster file gave them.
  CHECK(cluster.accelerator_types[1].speed == 30.0);
  CHECK(cluster.accelerator_types[1].class_speed.empty());
  CHECK(cluster.accelerator_types[0].speed == 5.0);
  CHECK(cluster.accelerator_types[0].class_speed.empty());

  // Without a p100 the workload cannot run there: the error names the file and the type, and nothing changes.
  Cluster no_p100;
  no_p100.accelerator_types = {type("k80", "gpu", 1.0), type("v100", "gpu", 7.0)};
  const Status s = use_measured_speeds(g->types, no_p100, "c.yaml");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("c.yaml: cluster has no accelerator type gpu:p100"));
  CHECK(no_p100.accelerator_types[0].speed == 1.0);
  CHECK(no_p100.accelerator_types[0].class_speed.empty());
  CHECK(no_p100.accelerator_types[1].speed == 7.0);
}

TEST_CASE("the real Gavel folder: 15,264 jobs of 80 classes", "[io][gavel]") {
  const std::string dir = std::string(RLSCHED_SHARED_TRACES) + "/gavel-throughputs";
  if (!std::filesystem::is_directory(dir)) FAIL("shared traces not found at " << dir);
  GavelOptions o;
  o.any_of_pods = std::string(RLSCHED_SHARED_TRACES) + "/alibaba-openb-gpu-v2023/openb_pod_list_gpuspec33.csv";
  auto g = read_gavel_workload(dir, o);
  REQUIRE(g.ok());
  CHECK(g->workload.jobs.size() == 15264);
  CHECK(g->workload.report.skipped == 0);
  CHECK(g->types[0].class_speed.size() == 80);  // ResNet-50 (batch size 128) x2, x4, x8 cannot run on a K80
  CHECK(g->types[2].class_speed.size() == 83);
  CHECK(g->constrained > 3000);
  CHECK(g->constrained < 6000);
}

}  // namespace
}  // namespace rlsched::io
