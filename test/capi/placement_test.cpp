#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rlsched/placement.h"

namespace rlsched::placement {
namespace {

AcceleratorPool pool(std::string gres, std::string type, int total, int idle, int per_node = 8, double pending = 0,
                     double running = 0) {
  AcceleratorPool p;
  p.gres = std::move(gres);
  p.type = std::move(type);
  p.total = total;
  p.idle = idle;
  p.max_per_node = per_node;
  p.nodes = per_node > 0 ? total / per_node : 0;
  p.pending_work = pending;
  p.running_work = running;
  return p;
}

PartitionState part(std::string name, std::vector<AcceleratorPool> pools, Seconds max_time = 0) {
  PartitionState p;
  p.name = std::move(name);
  p.pools = std::move(pools);
  p.max_time = max_time;
  return p;
}

Options speeds() {
  Options o;
  o.types = {{"h200", "gpu", 2.0, {}}, {"a100", "gpu", 1.0, {}}, {"910b", "npu", 0.8, {}}};
  o.gres_equivalence = {{"gpu", "npu"}};
  o.gres_portable_classes = {"portable"};
  return o;
}

Request gpus(int count, std::vector<std::string> types = {}, Seconds limit = 3600) {
  Request r;
  r.count = count;
  r.gres = "gpu";
  r.types = std::move(types);
  r.time_limit = limit;
  return r;
}

Request portable(Request r) {
  r.job_class = "portable";
  return r;
}

TEST_CASE("placement picks the earliest predicted completion", "[placement]") {
  struct Case {
    const char* what;
    std::vector<PartitionState> parts;
    Request request;
    Options options;
    bool placed;
    const char* partition;  // placed: expected partition; else a substring of the reason
    const char* type;
  };
  const std::vector<Case> cases = {
      {"idle fast type wins",
       {part("h200", {pool("gpu", "h200", 16, 16)}), part("a100", {pool("gpu", "a100", 16, 16)})},
       gpus(4),
       speeds(),
       true,
       "h200",
       "h200"},
      {"a queue on the fast type makes the slow one finish first",
       // h200: 16 x 8 h of pending work ahead = 8 h wait; a100 idle: 1 h run
       {part("h200", {pool("gpu", "h200", 16, 16, 8, 16 * 8 * 3600.0)}), part("a100", {pool("gpu", "a100", 16, 16)})},
       gpus(4),
       speeds(),
       true,
       "a100",
       "a100"},
      {"busy fast type: wait for running jobs vs run slower now",
       // h200 fully busy, running jobs have 2 h left on average: 4 short -> 4 * 2 h / 16 = 30 min + 30 min run
       // = 1 h, a100 idle: 1 h run. Tie on completion -> the faster type.
       {part("h200", {pool("gpu", "h200", 16, 0, 8, 0, 16 * 7200.0)}), part("a100", {pool("gpu", "a100", 16, 16)})},
       gpus(4),
       speeds(),
       true,
       "h200",
       "h200"},
      {"any-of restricts the types",
       {part("h200", {pool("gpu", "h200", 16, 16)}), part("a100", {pool("gpu", "a100", 16, 16)}),
        part("npu", {pool("npu", "910b", 16, 16)})},
       gpus(2, {"a100", "910b"}),
       speeds(),
       true,
       "a100",
       "a100"},
      {"equivalent GRES, portable class: npu when every gpu is taken for days",
       {part("h200", {pool("gpu", "h200", 8, 0, 8, 8 * 86400.0 * 3)}), part("npu", {pool("npu", "910b", 8, 8)})},
       portable(gpus(4)),
       speeds(),
       true,
       "npu",
       "910b"},
      {"equivalent GRES, plain request: gpu stays gpu however long the wait",
       {part("h200", {pool("gpu", "h200", 8, 0, 8, 8 * 86400.0 * 3)}), part("npu", {pool("npu", "910b", 8, 8)})},
       gpus(4),
       speeds(),
       true,
       "h200",
       "h200"},
      {"no equivalence declared: a portable class stays on gpu too",
       {part("h200", {pool("gpu", "h200", 8, 0, 8, 8 * 86400.0 * 3)}), part("npu", {pool("npu", "910b", 8, 8)})},
       portable(gpus(4)),
       [] {
         Options o = speeds();
         o.gres_equivalence.clear();
         return o;
       }(),
       true,
       "h200",
       "h200"},
      {"the same nodes in two partitions: the smaller partition on a tie",
       {part("all", {pool("gpu", "h200", 16, 16), pool("gpu", "a100", 8, 8)}), part("h200", {pool("gpu", "h200", 8, 8)})},
       gpus(2),
       speeds(),
       true,
       "h200",
       "h200"},
      {"per-node counts must fit one node",
       {part("big", {pool("gpu", "h200", 16, 16, 4)}), part("a100", {pool("gpu", "a100", 8, 8, 8)})},
       [] {
         Request r = gpus(8);
         r.per_node = 8;
         r.nodes = 1;
         return r;
       }(),
       speeds(),
       true,
       "a100",
       "a100"},
      {"the user's partitions bound the choice",
       {part("h200", {pool("gpu", "h200", 16, 16)}), part("a100", {pool("gpu", "a100", 16, 16)})},
       [] {
         Request r = gpus(4);
         r.partitions = {"a100"};
         return r;
       }(),
       speeds(),
       true,
       "a100",
       "a100"},
      {"too many accelerators anywhere",
       {part("h200", {pool("gpu", "h200", 16, 16)}), part("a100", {pool("gpu", "a100", 8, 8)})},
       gpus(64),
       speeds(),
       false,
       "no partition has 64 gpu (any type); most is 16 gpu:h200 in partition h200",
       nullptr},
      {"an unknown type",
       {part("h200", {pool("gpu", "h200", 16, 16)})},
       gpus(1, {"h300"}),
       speeds(),
       false,
       "no partition has 1 gpu of type h300",
       nullptr},
      {"time limit above every MaxTime",
       {part("h200", {pool("gpu", "h200", 16, 16)}, 86400), part("a100", {pool("gpu", "a100", 16, 16)}, 2 * 86400)},
       gpus(4, {}, 3 * 86400),
       speeds(),
       false,
       "exceeds MaxTime of every partition",
       nullptr},
      {"a partition that does not accept jobs",
       {[] {
         PartitionState p = part("h200", {pool("gpu", "h200", 16, 16)});
         p.accepts_jobs = false;
         return p;
       }()},
       gpus(4),
       speeds(),
       false,
       "no partition has 4 gpu",
       nullptr},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    const Decision d = place(c.request, c.parts, c.options);
    REQUIRE(d.placed == c.placed);
    if (c.placed) {
      CHECK(d.partition_name == c.partition);
      CHECK(d.type == c.type);
      CHECK(d.reason.find(c.partition) != std::string::npos);
    } else {
      CHECK_THAT(d.reason, Catch::Contains(c.partition));
    }
  }
}

TEST_CASE("predicted wait and run follow the documented model", "[placement]") {
  // 16 h200, 4 idle, 12 busy with 12 * 3 h left, 2 h of queued work on 8 accelerators.
  const std::vector<PartitionState> parts = {
      part("h200", {pool("gpu", "h200", 16, 4, 8, 8 * 7200.0, 12 * 3 * 3600.0)})};
  const Decision d = place(gpus(6, {}, 7200), parts, speeds());
  REQUIRE(d.placed);
  // wait = (pending + shortage * mean_remaining) / total = (57600 + 2 * 10800) / 16
  CHECK(d.wait == Approx((57600.0 + 2 * 10800.0) / 16));
  CHECK(d.run == Approx(7200.0 / 2.0));
  REQUIRE(d.candidates.size() == 1);
  CHECK(d.candidates[0].feasible);
}

TEST_CASE("a job that takes whole nodes waits for nodes to drain, not for any free devices", "[placement]") {
  // 32 h200 on four nodes of 8; 8 idle (none of the nodes wholly), the 24 busy ones with 3 h left each.
  AcceleratorPool h200 = pool("gpu", "h200", 32, 8, 8, 0, 24 * 3 * 3600.0);
  h200.idle_nodes = 0;
  const std::vector<PartitionState> parts = {part("h200", {h200})};
  // Four devices: no shortage, so no wait.
  CHECK(place(gpus(4), parts, speeds()).wait == Approx(0));
  // Eight, a whole node: one of the four busy nodes must drain (the last of its 8 jobs, 3 h * H(8)), and four drain
  // at once: 3 h * (1 + 1/2 + ... + 1/8) / 4. Counting devices alone would have said it starts now.
  const double h8 = 761.0 / 280;
  CHECK(place(gpus(8), parts, speeds()).wait == Approx(10800.0 * h8 / 4));
  // A per-node request for two whole nodes waits for two.
  Request two = gpus(16);
  two.per_node = 8;
  two.nodes = 2;
  CHECK(place(two, parts, speeds()).wait == Approx(std::max(8 * 10800.0 / 32, 2 * 10800.0 * h8 / 4)));
  // One wholly idle node: the eight-device job starts now; the two-node one waits for one more.
  h200.idle_nodes = 1;
  CHECK(place(gpus(8), {part("h200", {h200})}, speeds()).wait == Approx(0));
  CHECK(place(two, {part("h200", {h200})}, speeds()).wait == Approx(std::max(8 * 10800.0 / 32, 10800.0 * h8 / 3)));
  // Unknown (-1, a caller that does not count idle nodes): devices only.
  h200.idle_nodes = -1;
  CHECK(place(gpus(8), {part("h200", {h200})}, speeds()).wait == Approx(0));
}

TEST_CASE("a job class's own speeds decide where it runs", "[placement]") {
  // Default speeds say h200 is twice the a100; for class "sparse" the two are equal. With 30 min of queued work on
  // the h200 the default job still goes there (0.5 + 0.5 h < 1 h), the sparse job goes to the idle a100.
  Options o = speeds();
  o.types[0].class_speed["sparse"] = 1.0;
  const std::vector<PartitionState> parts = {part("h200", {pool("gpu", "h200", 16, 16, 8, 16 * 1800.0)}),
                                             part("a100", {pool("gpu", "a100", 16, 16)})};
  Request r = gpus(4);
  CHECK(place(r, parts, o).type == "h200");
  r.job_class = "sparse";
  const Decision d = place(r, parts, o);
  CHECK(d.type == "a100");
  CHECK(d.run == Approx(3600.0));
  r.job_class = "unknown-class";  // no entry: the type's default speed
  CHECK(place(r, parts, o).type == "h200");
}

TEST_CASE("count scales: 4 H200 stand for 8 of a type with count_scale 2", "[placement]") {
  Options o = speeds();
  o.types[2].count_scale = 2.0;  // 910b
  // Every gpu taken for days: the typeless request moves to npu and asks for twice as many.
  const std::vector<PartitionState> parts = {part("h200", {pool("gpu", "h200", 8, 0, 8, 8 * 86400.0 * 3)}),
                                             part("npu", {pool("npu", "910b", 16, 16)})};
  Decision d = place(portable(gpus(4)), parts, o);
  REQUIRE(d.placed);
  CHECK(d.type == "910b");
  CHECK(d.count == 8);
  // A typed h200 request re-mapped keeps the ratio: h200 has scale 1, so 3 h200 -> 6 910b.
  Request typed = portable(gpus(3));
  typed.count_type = "h200";
  CHECK(place(typed, parts, o).count == 6);
  // Per-node counts scale too, and a pool too small for the scaled count is not feasible.
  Request per_node = portable(gpus(6, {"910b"}));
  per_node.per_node = 6;  // 12 per node on 910b, whose nodes hold 8
  d = place(per_node, parts, o);
  CHECK_FALSE(d.placed);
  REQUIRE(d.candidates.size() == 1);
  CHECK(d.candidates[0].why_not == "at most 8 npu:910b per node, job needs 12 per node");
  CHECK(scaled_count(o, 3, "npu", "910b", "gpu", "h200") == 2);  // 3 * 1 / 2 rounded up
}

TEST_CASE("the set: every per-type partition within the slack, in order of predicted completion", "[placement]") {
  // 1 h of work for 4 accelerators, all idle: h200 (speed 2) done in 1,800 s, l40 (1.6) in 2,250 s, a100 (1) in
  // 3,600 s, 910b (npu, 0.8) in 4,500 s.
  Options o = speeds();
  o.types.push_back({"l40", "gpu", 1.6, {}});
  const std::vector<PartitionState> parts = {
      part("a100", {pool("gpu", "a100", 16, 16)}), part("h200", {pool("gpu", "h200", 16, 16)}),
      part("l40", {pool("gpu", "l40", 16, 16)}), part("npu", {pool("npu", "910b", 16, 16)}),
      part("mixed", {pool("gpu", "l40", 8, 8), pool("gpu", "a100", 8, 8)})};
  auto names = [](const Decision& d) {
    std::string s;
    for (const SetMember& m : d.set) s += (s.empty() ? "" : ",") + m.partition_name + "/" + m.type;
    return s;
  };
  o.slack = 1.0;
  CHECK(names(place(gpus(4), parts, o)) == "h200/h200");
  o.slack = 1.3;  // 2,340 s: l40 in, a100 out; "mixed" could give a typeless job its a100s: never in a set
  Decision d = place(gpus(4), parts, o);
  CHECK(names(d) == "h200/h200,l40/l40");
  CHECK(d.set[1].run == Approx(2250.0));
  o.slack = 2.0;  // 3,600 s: a100 in (exactly at the bound)
  CHECK(names(place(gpus(4), parts, o)) == "h200/h200,l40/l40,a100/a100");
  o.slack = 3.0;  // the portable class could use npu, but not in one request with gpu: another GRES name
  CHECK(names(place(portable(gpus(4)), parts, o)) == "h200/h200,l40/l40,a100/a100");
  // A catch-all partition offering only the npu type is single-type for npu, but holds the same NPUs as "npu": a
  // set of one, written typed.
  Options portable_npu = speeds();
  portable_npu.slack = 2.0;
  const std::vector<PartitionState> npu_and_all = {
      part("npu", {pool("npu", "910b", 8, 8)}),
      part("all", {pool("gpu", "h200", 8, 0, 8, 8 * 86400.0), pool("npu", "910b", 8, 8)})};
  CHECK(names(place(portable(gpus(4)), npu_and_all, portable_npu)) == "npu/910b");
  // A member must need the same device count: with count_scale 2 on l40 the request would need 8 there.
  o.types.back().count_scale = 2.0;
  CHECK(names(place(gpus(4), parts, o)) == "h200/h200,a100/a100");
}

TEST_CASE("queue load: pending work drains at the type's speed, running work is what the limit leaves",
          "[placement]") {
  const Options o = speeds();
  std::vector<PartitionState> parts = {part("h200", {pool("gpu", "h200", 16, 16)}),
                                       part("all", {pool("gpu", "h200", 16, 16), pool("gpu", "a100", 48, 48)})};
  QueueLoad load(o);
  load.add_pending("gpu", "h200", 8, 3600);   // 8 x 1 h at speed 2: 14,400 s on h200
  load.add_pending("gpu", "", 4, 3600);       // typeless: spread over all gpu pools by size
  load.add_running("gpu", "h200", 2, 7200, 600);  // 2 x (7200 / 2 - 600) = 6,000 s left
  load.add_running("gpu", "h200", 2, 7200, 4000);  // past its time at speed 2: nothing left
  load.add_pending("npu", "", 4, 3600);        // no npu pool anywhere: ignored
  load.apply(parts);
  // The typeless job is spread 16:48 over the h200 and a100 accelerators, and each partition shows that share: the
  // h200 partition shows the same h200s as the catch-all one.
  CHECK(parts[0].pools[0].pending_work == Approx(8 * 3600 / 2.0 + 0.25 * 4 * 3600 / 2.0));
  CHECK(parts[0].pools[0].running_work == Approx(6000.0));
  CHECK(parts[1].pools[0].pending_work == Approx(8 * 3600 / 2.0 + 0.25 * 4 * 3600 / 2.0));
  CHECK(parts[1].pools[1].pending_work == Approx(0.75 * 4 * 3600 / 1.0));
  CHECK(parts[1].pools[1].running_work == 0.0);
}

TEST_CASE("queue load: a job's partitions bound the types its work falls on", "[placement]") {
  const Options o = speeds();
  // Per-type partitions h200 (16) and a100 (48), and the catch-all over both.
  std::vector<PartitionState> parts = {part("h200", {pool("gpu", "h200", 16, 16)}),
                                       part("a100", {pool("gpu", "a100", 48, 48)}),
                                       part("all", {pool("gpu", "h200", 16, 16), pool("gpu", "a100", 48, 48)})};
  QueueLoad load(o);
  load.add_pending("gpu", "", 4, 3600, "", {0});     // sbatch -p h200 --gres=gpu:4: all of it on the h200s
  load.add_pending("gpu", "", 8, 3600, "", {0, 1});  // -p h200,a100: a quarter on the h200s, 3/4 on the a100s
  load.apply(parts);
  const double h200 = 4 * 3600 / 2.0 + 0.25 * 8 * 3600 / 2.0;  // 7,200 + 3,600
  const double a100 = 0.75 * 8 * 3600 / 1.0;                   // 21,600
  CHECK(parts[0].pools[0].pending_work == Approx(h200));
  CHECK(parts[1].pools[0].pending_work == Approx(a100));
  CHECK(parts[2].pools[0].pending_work == Approx(h200));
  CHECK(parts[2].pools[1].pending_work == Approx(a100));
}

TEST_CASE("queue load keeps many distinct requests apart", "[placement]") {
  // 40 classes (more than a scan covers), each queued twice, interleaved: each class's work at its own speed.
  Options o = speeds();
  for (int c = 0; c < 40; ++c) o.types[0].class_speed["c" + std::to_string(c)] = 1.0 + c;
  std::vector<PartitionState> parts = {part("h200", {pool("gpu", "h200", 16, 16)})};
  QueueLoad load(o);
  double want = 0;
  for (int round = 0; round < 2; ++round)
    for (int c = 0; c < 40; ++c) {
      load.add_pending("gpu", "", 2, 3600, "c" + std::to_string(c));
      want += 2 * 3600 / (1.0 + c);
    }
  load.apply(parts);
  CHECK(parts[0].pools[0].pending_work == Approx(want));
}

TEST_CASE("no time limit: the partition's MaxTime, else the default", "[placement]") {
  const std::vector<PartitionState> parts = {part("h200", {pool("gpu", "h200", 8, 8)}, 4 * 3600)};
  CHECK(place(gpus(1, {}, 0), parts, speeds()).run == Approx(4 * 3600 / 2.0));
  const std::vector<PartitionState> unlimited = {part("h200", {pool("gpu", "h200", 8, 8)})};
  CHECK(place(gpus(1, {}, 0), unlimited, speeds()).run == Approx(3600 / 2.0));
}

TEST_CASE("durations in reasons read naturally", "[placement]") {
  CHECK(format_duration(0) == "0 s");
  CHECK(format_duration(45) == "45 s");
  CHECK(format_duration(600) == "10 min");
  CHECK(format_duration(9000) == "2.5 h");
  CHECK(format_duration(3 * 86400) == "3.0 d");
  CHECK(format_duration(-1) == "?");
}

}  // namespace
}  // namespace rlsched::placement
