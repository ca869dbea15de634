// SimConfig::placement: how a job allowed several accelerator types gets one.
#include <map>
#include <vector>

#include <catch2/catch.hpp>

#include "rlsched/scorer.h"
#include "rlsched/sim/evaluation.h"
#include "rlsched/sim/simulator.h"
#include "sim_fixtures.h"

namespace rlsched::sim {
namespace {

using test::gpu_cluster;
using test::gpu_job;

struct Run {
  SimResult result;
  std::map<int, ScheduleEvent> placed;  // job index -> its kPlacement event
};

Run run(const Cluster& cluster, const std::vector<Job>& jobs, PlacementSettings placement) {
  auto fcfs = make_scorer("fcfs");
  REQUIRE(fcfs.ok());
  Run out;
  SimConfig config;
  config.placement = std::move(placement);
  config.observer = [&out](const ScheduleEvent& e) {
    if (e.kind == ScheduleEvent::Kind::kPlacement) out.placed[e.job] = e;
  };
  auto r = simulate(cluster, jobs, **fcfs, config);
  REQUIRE(r.ok());
  out.result = std::move(*r);
  return out;
}

std::string type_of(const Cluster& c, const Run& r, int job) {
  const int t = r.result.outcomes[job].accelerator_type;
  return t >= 0 ? c.accelerator_types[t].name : "-";
}

TEST_CASE("placement modes parse and print", "[sim][placement]") {
  for (const char* name : {"fastest-free", "first-fit", "recorded", "fastest", "predictive"}) {
    auto p = parse_placement(name);
    REQUIRE(p.ok());
    CHECK(std::string(to_string(*p)) == name);
  }
  auto bad = parse_placement("best");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("unknown placement 'best' (known: fastest-free, first-fit"));
}

TEST_CASE("first fit takes the first node that fits, whatever its type", "[sim][placement]") {
  Cluster c = gpu_cluster();
  std::swap(c.nodes[0], c.nodes[1]);  // a100-1 first in node order
  c.partitions[1].nodes = {1};
  c.partitions[2].nodes = {0};
  const std::vector<Job> jobs = {gpu_job(1, 0, 100, 2)};
  CHECK(type_of(c, run(c, jobs, {Placement::kFirstFit, {}, 3600}), 0) == "a100");
  CHECK(type_of(c, run(c, jobs, {Placement::kFastestFree, {}, 3600}), 0) == "h200");
}

TEST_CASE("recorded and fastest pin the type at submit, into a partition that has it", "[sim][placement]") {
  const Cluster c = gpu_cluster();
  std::vector<Job> jobs = {gpu_job(1, 0, 1000, 4), gpu_job(2, 10, 100, 4)};
  jobs[0].ran_on_type = "h200";
  jobs[1].ran_on_type = "h200";
  // Both recorded h200: the second waits for the first although the a100 is idle.
  const Run recorded = run(c, jobs, {Placement::kRecorded, {"h200", "a100"}, 3600});
  CHECK(type_of(c, recorded, 0) == "h200");
  CHECK(type_of(c, recorded, 1) == "h200");
  CHECK(recorded.result.outcomes[1].partition == 1);  // partition "h200", not the catch-all
  CHECK(recorded.result.outcomes[1].wait() > 0);
  const Run fastest = run(c, jobs, {Placement::kFastest, {}, 3600});
  CHECK(type_of(c, fastest, 1) == "h200");
  // Left to the scheduler, the second job takes the idle a100 at once.
  const Run free = run(c, jobs, {Placement::kFastestFree, {}, 3600});
  CHECK(type_of(c, free, 1) == "a100");
  CHECK(free.result.outcomes[1].wait() == 0);
  // A recorded type the job does not allow is ignored.
  jobs[1].accel.types = {"a100"};
  CHECK(type_of(c, run(c, jobs, {Placement::kRecorded, {}, 3600}), 1) == "a100");
}

TEST_CASE("predictive placement weighs the wait on the fast type against the slower run", "[sim][placement]") {
  const Cluster c = gpu_cluster();  // h200 speed 2, a100 speed 1; class ResNet-50 runs 4x faster on h200
  // Job 1 holds the h200 for 2 h (limit 4 h at speed 1). Job 2 (limit 1 h) finishes sooner on the idle a100
  // (1 h) than after waiting ~2 h for the h200; a ResNet-50 job with a 9 h limit is done in 2 + 2.25 h on the
  // h200 against 9 h on the a100.
  std::vector<Job> jobs = {gpu_job(1, 0, 7200, 4, {}, 14400), gpu_job(2, 60, 3600, 4, {}, 3600),
                           gpu_job(3, 120, 7200, 2, {}, 32400)};
  jobs[0].ran_on_type = "h200";
  jobs[2].job_class = "ResNet-50";
  const Run r = run(c, jobs, {Placement::kPredictive, {"h200", "a100"}, 3600});
  REQUIRE(r.placed.size() == 3);
  CHECK(type_of(c, r, 0) == "h200");
  CHECK(type_of(c, r, 1) == "a100");
  CHECK(type_of(c, r, 2) == "h200");
  CHECK(r.placed.at(1).partition == 2);  // "a100"
  CHECK(r.result.outcomes[1].wait() == 0);
  CHECK(r.result.outcomes[2].start >= r.result.outcomes[0].end);
  // A typed job is the user's choice: never placed.
  jobs[1].accel.types = {"h200"};
  CHECK(run(c, jobs, {Placement::kPredictive, {"h200", "a100"}, 3600}).placed.count(1) == 0);
}

// A trace job's node count is its shape: 4 GPUs on 2 nodes need 2 free on each, not a wholly idle node.
TEST_CASE("predictive placement estimates a trace job on the nodes the trace gives it", "[sim][placement]") {
  // Two h200 nodes and two a100 nodes of 4 each. Job 1 (typed h200, 2 nodes) holds 2 h200 on each node for days;
  // job 2 (4 GPUs on 2 nodes, 2 h limit) fits beside it at once and runs twice as fast there as on the idle a100s.
  Cluster c;
  c.accelerator_types = {AcceleratorType{"h200", "gpu", 2.0, {}}, AcceleratorType{"a100", "gpu", 1.0, {}}};
  for (const char* name : {"h200-1", "h200-2"}) c.nodes.push_back(Node{name, 8, 0, {GresCount{"gpu", "h200", 4}}});
  for (const char* name : {"a100-1", "a100-2"}) c.nodes.push_back(Node{name, 8, 0, {GresCount{"gpu", "a100", 4}}});
  c.partitions = {Partition{"h200", {0, 1}, 1, 1, 0, false}, Partition{"a100", {2, 3}, 1, 1, 0, false}};
  std::vector<Job> jobs = {gpu_job(1, 0, 400000, 4, {"h200"}), gpu_job(2, 60, 3600, 4, {}, 7200)};
  jobs[0].nodes = 2;
  jobs[1].nodes = 2;
  const Run r = run(c, jobs, {Placement::kPredictive, {"h200", "a100"}, 3600});
  REQUIRE(r.placed.count(1) == 1);
  CHECK(type_of(c, r, 1) == "h200");
  CHECK(r.result.outcomes[1].wait() == 0);
  // Without the node count the job is estimated (and shaped) on one whole node, and no h200 node is wholly idle.
  jobs[1].nodes = 0;
  CHECK(type_of(c, run(c, jobs, {Placement::kPredictive, {"h200", "a100"}, 3600}), 1) == "a100");
}

TEST_CASE("predictive placement moves only portable classes to another GRES name, at the same count",
          "[sim][placement]") {
  // gpu_cluster() plus npu-1 (4 x 910b, GRES npu, speed 0.8) in partition "npu". Both GPU nodes are held for days
  // by typed jobs; then a plain gpu:4 job and a gpu:4 job of the portable class "xpu" arrive. The NPUs finish the
  // xpu job in 1,000 / 0.8 s; the GPUs only after the blockers.
  Cluster c = gpu_cluster();
  c.accelerator_types.push_back(AcceleratorType{"910b", "npu", 0.8, {}});
  c.nodes.push_back(Node{"npu-1", 8, 0, {GresCount{"npu", "910b", 4}}});
  c.partitions.push_back(Partition{"npu", {2}, 1, 1, 0, false});
  std::vector<Job> jobs = {gpu_job(1, 0, 200000, 4, {"h200"}), gpu_job(2, 0, 200000, 4, {"a100"}),
                           gpu_job(3, 10, 1000, 4), gpu_job(4, 20, 1000, 4)};
  jobs[3].job_class = "xpu";
  PlacementSettings settings{Placement::kPredictive, {"h200", "a100", "npu"}, 3600, 1.1, {{"gpu", "npu"}}, {"xpu"}};
  const Run r = run(c, jobs, settings);
  CHECK(type_of(c, r, 2) != "910b");            // a plain gpu job waits for a GPU
  CHECK(r.result.outcomes[2].start >= 100000);  // the h200 blocker ends first: 200,000 s at speed 2
  CHECK(type_of(c, r, 3) == "910b");
  CHECK(r.result.outcomes[3].wait() == 0);
  CHECK(r.result.outcomes[3].run() == 1250);
  // Without the class in gres_portable_classes, the same job stays on gpu.
  settings.gres_portable_classes.clear();
  CHECK(type_of(c, run(c, jobs, settings), 3) != "910b");
  // With count_scale 2 on the 910b the move needs 8 NPUs, more than npu-1 has: the job stays on gpu.
  settings.gres_portable_classes = {"xpu"};
  c.accelerator_types[2].count_scale = 2.0;
  CHECK(type_of(c, run(c, jobs, settings), 3) != "910b");
}

TEST_CASE("a move to a type of another count_scale runs with the device count job_submit/rlsched writes",
          "[sim][placement]") {
  // As above, with npu-1 holding 8 910b of count_scale 2: the xpu job's gpu:4 becomes npu:8, and it holds all
  // eight NPUs for its 1,250 s.
  Cluster c = gpu_cluster();
  c.accelerator_types.push_back(AcceleratorType{"910b", "npu", 0.8, {}, 2.0});
  c.nodes.push_back(Node{"npu-1", 8, 0, {GresCount{"npu", "910b", 8}}});
  c.partitions.push_back(Partition{"npu", {2}, 1, 1, 0, false});
  std::vector<Job> jobs = {gpu_job(1, 0, 200000, 4, {"h200"}), gpu_job(2, 0, 200000, 4, {"a100"}),
                           gpu_job(3, 10, 1000, 4), gpu_job(4, 20, 1000, 4), gpu_job(5, 30, 1000, 1)};
  jobs[3].job_class = "xpu";
  jobs[4].job_class = "xpu";
  const PlacementSettings settings{Placement::kPredictive, {"h200", "a100", "npu"}, 3600, 1.1, {{"gpu", "npu"}},
                                   {"xpu"}};
  const Run r = run(c, jobs, settings);
  REQUIRE(type_of(c, r, 3) == "910b");
  CHECK(r.result.outcomes[3].wait() == 0);
  CHECK(r.result.outcomes[3].run() == 1250);
  CHECK(r.result.outcomes[3].allocated_accelerator_seconds == Approx(8 * 1250.0));
  // The next xpu job (gpu:1, so npu:2) finds the NPUs taken and waits for them, not beside them.
  REQUIRE(type_of(c, r, 4) == "910b");
  CHECK(r.result.outcomes[4].start >= r.result.outcomes[3].end);
  CHECK(r.result.outcomes[4].allocated_accelerator_seconds == Approx(2 * 1250.0));
  // The caller's jobs are left as they were.
  CHECK(jobs[3].accel.count == 4);
  CHECK(jobs[3].accel.name == "gpu");
}

TEST_CASE("scale_to_load stretches arrivals to the offered accelerator load", "[sim][placement]") {
  const Cluster c = gpu_cluster();  // 8 accelerators
  std::vector<Job> jobs = {gpu_job(1, 100, 3600, 4), gpu_job(2, 200, 3600, 4), gpu_job(3, 1100, 3600, 8)};
  // 16 accelerator-hours over 8 accelerators and a 1000 s submit span.
  CHECK(offered_load(jobs, c) == Approx(16 * 3600.0 / (8 * 1000.0)));
  auto factor = scale_to_load(jobs, c, 0.5);
  REQUIRE(factor.ok());
  CHECK(*factor == Approx(14.4));
  CHECK(jobs[0].submit == 100);
  CHECK(jobs[1].submit == 100 + 1440);
  CHECK(offered_load(jobs, c) == Approx(0.5));
  CHECK_FALSE(scale_to_load(jobs, c, 0).ok());
  std::vector<Job> at_once = {gpu_job(1, 5, 100, 1), gpu_job(2, 5, 100, 1)};
  CHECK_FALSE(scale_to_load(at_once, c, 0.5).ok());
}

}  // namespace
}  // namespace rlsched::sim
