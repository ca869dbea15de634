// job_submit/rlsched's decision without Slurm: TRES strings in, rewritten strings and messages out.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "capi/submit.h"
#include "capi/tres.h"

namespace rlsched::capi {
namespace {

TEST_CASE("TRES request strings of Slurm 22.05 and 23.02+ parse and keep their form", "[submit][tres]") {
  struct Case {
    const char* text;
    bool gres;
    const char* name;
    const char* type;
    long long count;
    const char* formatted;
  };
  const std::vector<Case> cases = {
      {"gres:gpu:4", true, "gpu", "", 4, "gres:gpu:4"},
      {"gres:gpu:h200:2", true, "gpu", "h200", 2, "gres:gpu:h200:2"},
      {"gres:gpu", true, "gpu", "", 1, "gres:gpu:1"},
      {"gres:gpu:h200", true, "gpu", "h200", 1, "gres:gpu:h200:1"},
      {"gpu:4", true, "gpu", "", 4, "gpu:4"},
      {"gpu:a100:8", true, "gpu", "a100", 8, "gpu:a100:8"},
      {"gres:gpu:h200|a100:4", true, "gpu", "h200|a100", 4, "gres:gpu:h200|a100:4"},
      {"gres:gpu:4k", false, "", "", 1, "gres:gpu:4k"},  // suffixed counts: left to Slurm
      {"license:matlab:1", false, "", "", 1, "license:matlab:1"},
      {"gres:gpu:0", false, "gpu", "", 0, "gres:gpu:0"},
      // 23.02 and later write "gres/" and refuse "gres:" or no prefix back in tres_per_*
      {"gres/gpu:4", true, "gpu", "", 4, "gres/gpu:4"},
      {"gres/gpu:h200:2", true, "gpu", "h200", 2, "gres/gpu:h200:2"},
      {"gres/npu", true, "npu", "", 1, "gres/npu:1"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const std::vector<TresEntry> e = parse_tres(c.text);
    REQUIRE(e.size() == 1);
    CHECK(e[0].gres == c.gres);
    if (c.gres) {
      CHECK(e[0].name == c.name);
      CHECK(e[0].type == c.type);
      CHECK(e[0].count == c.count);
    }
    CHECK(format_entry(e[0]) == c.formatted);
  }
  const std::vector<TresEntry> two = parse_tres("gres:gpu:2,gres:tmpdisk:10");
  REQUIRE(two.size() == 2);
  CHECK(two[1].name == "tmpdisk");
  CHECK(join_entries(two) == "gres:gpu:2,gres:tmpdisk:10");
  CHECK(parse_tres("").empty());
  CHECK(mentions_gres("gres:gpu:8", "gpu"));
  CHECK(mentions_gres("gres/gpu=4", "gpu"));
  CHECK(mentions_gres("gpu:verbose", "gpu"));
  CHECK_FALSE(mentions_gres("gres:gpux:8", "gpu"));
  CHECK_FALSE(mentions_gres("", "gpu"));
}

placement::PartitionState part(std::string name, std::vector<placement::AcceleratorPool> pools) {
  placement::PartitionState p;
  p.name = std::move(name);
  p.pools = std::move(pools);
  return p;
}

placement::AcceleratorPool pool(std::string gres, std::string type, int total, int idle) {
  placement::AcceleratorPool p;
  p.gres = std::move(gres);
  p.type = std::move(type);
  p.total = total;
  p.idle = idle;
  p.max_per_node = 8;
  p.nodes = total / 8;
  return p;
}

config::PluginConfig hetero() {
  config::PluginConfig c;
  c.accelerator_types = {{"h200", "gpu", 2.0, {}}, {"a100", "gpu", 1.0, {}}, {"910b", "npu", 0.8, {}}};
  c.gres_equivalence = {{"gpu", "npu"}};
  return c;
}

std::vector<placement::PartitionState> cluster() {
  return {part("h200", {pool("gpu", "h200", 16, 16)}), part("a100", {pool("gpu", "a100", 16, 16)}),
          part("npu", {pool("npu", "910b", 16, 16)}), part("cpu", {})};
}

rlsched_submit job(const char* per_node, const char* per_job = nullptr, const char* partition = nullptr) {
  rlsched_submit s{};
  s.tres_per_node = per_node;
  s.tres_per_job = per_job;
  s.partition = partition;
  s.time_limit = 3600;
  return s;
}

TEST_CASE("submit decisions", "[submit]") {
  struct Case {
    const char* what;
    rlsched_submit job;
    config::PluginConfig config;
    int action;
    const char* per_node;  // expected tres_per_node when rewritten (nullptr: not set)
    const char* per_job;
    const char* partition;  // expected new partition (nullptr: not set)
    const char* message;    // substring; nullptr: empty
  };
  config::PluginConfig no_typeless = hetero();
  no_typeless.placement.map_typeless = false;
  config::PluginConfig retype = hetero();
  retype.placement.retype_typed = true;
  config::PluginConfig no_any_of = hetero();
  no_any_of.placement.map_any_of = false;
  config::PluginConfig lenient = hetero();
  lenient.placement.reject_impossible = false;
  config::PluginConfig off = hetero();
  off.placement.enabled = false;
  rlsched_submit tasks = job(nullptr);
  tasks.tres_per_task = "gres:gpu:1";
  tasks.num_tasks = 4;
  rlsched_submit nodes = job("gres:gpu:8");
  nodes.min_nodes = 2;
  rlsched_submit bound = job("gres:gpu:2");
  bound.cpus_per_tres = "gres:gpu:4";
  rlsched_submit both = job("gres:gpu:2", "gres:gpu:4");

  const std::vector<Case> cases = {
      {"typeless per node", job("gres:gpu:4"), hetero(), RLSCHED_SUBMIT_MODIFIED, "gres:gpu:h200:4", nullptr, "h200",
       "rlsched: gpu:4 -> gpu:h200:4: gpu:h200 in partition h200"},
      {"--gpus", job(nullptr, "gres:gpu:4"), hetero(), RLSCHED_SUBMIT_MODIFIED, nullptr, "gres:gpu:h200:4", "h200",
       "gpu:4 -> gpu:h200:4"},
      {"Slurm 23.02+ format", job("gres/gpu:4"), hetero(), RLSCHED_SUBMIT_MODIFIED, "gres/gpu:h200:4", nullptr, "h200",
       "gpu:4 -> gpu:h200:4"},
      {"old format without gres:", job("gpu:2"), hetero(), RLSCHED_SUBMIT_MODIFIED, "gpu:h200:2", nullptr, "h200",
       "gpu:2 -> gpu:h200:2"},
      {"other GRES kept", job("gres:gpu:2,gres:tmpdisk:10"), hetero(), RLSCHED_SUBMIT_MODIFIED,
       "gres:gpu:h200:2,gres:tmpdisk:10", nullptr, "h200", "-> gpu:h200:2"},
      {"any-of", job("gres:gpu:a100|910b:2"), hetero(), RLSCHED_SUBMIT_MODIFIED, "gres:gpu:a100:2", nullptr, "a100",
       "gpu:a100|910b:2 -> gpu:a100:2"},
      {"any-of to another GRES name", job("gres:gpu:910b:2"), retype, RLSCHED_SUBMIT_MODIFIED, "gres:gpu:h200:2",
       nullptr, "h200", "gpu:910b:2 -> gpu:h200:2"},
      {"typed is left alone", job("gres:gpu:a100:2"), hetero(), RLSCHED_SUBMIT_UNCHANGED, nullptr, nullptr, nullptr,
       nullptr},
      {"typed re-mapped when configured", job("gres:gpu:a100:2"), retype, RLSCHED_SUBMIT_MODIFIED, "gres:gpu:h200:2",
       nullptr, "h200", "gpu:a100:2 -> gpu:h200:2"},
      {"typeless mapping off", job("gres:gpu:2"), no_typeless, RLSCHED_SUBMIT_UNCHANGED, nullptr, nullptr, nullptr,
       nullptr},
      {"any-of mapping off", job("gres:gpu:h200|a100:2"), no_any_of, RLSCHED_SUBMIT_UNCHANGED, nullptr, nullptr,
       nullptr, "any-of types are not mapped"},
      {"placement off", job("gres:gpu:2"), off, RLSCHED_SUBMIT_UNCHANGED, nullptr, nullptr, nullptr, nullptr},
      {"user's partition kept", job("gres:gpu:2", nullptr, "a100"), hetero(), RLSCHED_SUBMIT_MODIFIED,
       "gres:gpu:a100:2", nullptr, nullptr, "-> gpu:a100:2"},
      {"chosen among the user's partitions", job("gres:gpu:2", nullptr, "a100,npu"), hetero(), RLSCHED_SUBMIT_MODIFIED,
       "gres:gpu:a100:2", nullptr, "a100", "-> gpu:a100:2"},
      {"per task times tasks", tasks, hetero(), RLSCHED_SUBMIT_MODIFIED, nullptr, nullptr, "h200",
       "gpu:1 -> gpu:h200:1"},
      {"per node times nodes: 2 x 8 fits h200 (2 nodes of 8)", nodes, hetero(), RLSCHED_SUBMIT_MODIFIED,
       "gres:gpu:h200:8", nullptr, "h200", "-> gpu:h200:8"},
      {"impossible is rejected", job("gres:gpu:64"), hetero(), RLSCHED_SUBMIT_REJECTED, nullptr, nullptr, nullptr,
       "rlsched: cannot place gpu:64: no partition has 64 gpu (any type); most is 16 gpu:h200 in partition h200"},
      {"impossible passes when not rejecting", job("gres:gpu:64"), lenient, RLSCHED_SUBMIT_UNCHANGED, nullptr, nullptr,
       nullptr, "left alone: gpu:64: no partition has 64 gpu"},
      {"no accelerators", job(nullptr), hetero(), RLSCHED_SUBMIT_UNCHANGED, nullptr, nullptr, nullptr, nullptr},
      {"non-accelerator GRES", job("gres:tmpdisk:10"), hetero(), RLSCHED_SUBMIT_UNCHANGED, nullptr, nullptr, nullptr,
       nullptr},
      {"two accelerator requests", both, hetero(), RLSCHED_SUBMIT_UNCHANGED, nullptr, nullptr, nullptr,
       "asks for accelerators in several ways"},
      {"GRES named in cpus_per_tres keeps its name", bound, hetero(), RLSCHED_SUBMIT_MODIFIED, "gres:gpu:h200:2",
       nullptr, "h200", "-> gpu:h200:2"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    const SubmitDecision d = decide_submit(c.config, cluster(), c.job);
    CHECK(d.action == c.action);
    CHECK(d.set_tres_per_node == (c.per_node != nullptr));
    if (c.per_node && d.set_tres_per_node) CHECK(d.tres_per_node == c.per_node);
    CHECK(d.set_tres_per_job == (c.per_job != nullptr));
    if (c.per_job && d.set_tres_per_job) CHECK(d.tres_per_job == c.per_job);
    CHECK(d.set_partition == (c.partition != nullptr));
    if (c.partition && d.set_partition) CHECK(d.partition == c.partition);
    if (c.message)
      CHECK_THAT(d.message, Catch::Contains(c.message));
    else
      CHECK(d.message.empty());
  }
}

TEST_CASE("the GRES name changes only for a portable class, toward a declared equivalent", "[submit]") {
  // Every gpu is busy with days of queued work: npu finishes first, if the job may go there.
  std::vector<placement::PartitionState> busy = cluster();
  busy[0].pools[0].idle = 0;
  busy[0].pools[0].pending_work = 16 * 86400.0 * 4;
  busy[1].pools[0].idle = 0;
  busy[1].pools[0].pending_work = 16 * 86400.0 * 4;
  // A plain --gres=gpu:4 stays on gpu: CUDA code does not run on an NPU.
  const SubmitDecision plain = decide_submit(hetero(), busy, job("gres:gpu:4"));
  CHECK(plain.tres_per_node.rfind("gres:gpu:", 0) == 0);
  CHECK(plain.gres == "gpu");

  config::PluginConfig portable = hetero();
  portable.job_classes = {config::JobClass{"torch-xpu", "xpu-*", "", "", true}};
  rlsched_submit xpu = job("gres:gpu:4");
  xpu.job_name = "xpu-train";
  const SubmitDecision moved = decide_submit(portable, busy, xpu);
  CHECK(moved.tres_per_node == "gres:npu:910b:4");
  CHECK(moved.partition == "npu");
  // The same config, a job of no class: stays.
  CHECK(decide_submit(portable, busy, job("gres:gpu:4")).tres_per_node.rfind("gres:gpu:", 0) == 0);

  config::PluginConfig strict = portable;
  strict.gres_equivalence.clear();
  CHECK(decide_submit(strict, busy, xpu).tres_per_node.rfind("gres:gpu:", 0) == 0);

  rlsched_submit bound = xpu;
  bound.tres_freq = "gpu:medium";
  CHECK(decide_submit(portable, busy, bound).tres_per_node.rfind("gres:gpu:", 0) == 0);
}

TEST_CASE("a set: the partitions within the slack, typeless, best first", "[submit]") {
  // h200 idle runs 1 h of work in 30 min; l40 (speed 1.6) in 37.5 min, within 1.3 x 30 min; a100 in 1 h is not.
  config::PluginConfig c = hetero();
  c.placement.slack = 1.3;
  c.accelerator_types.push_back({"l40", "gpu", 1.6, {}});
  std::vector<placement::PartitionState> parts = cluster();
  parts.push_back(part("l40", {pool("gpu", "l40", 16, 16)}));
  SubmitDecision d = decide_submit(c, parts, job("gres:gpu:4"));
  CHECK(d.action == RLSCHED_SUBMIT_MODIFIED);
  CHECK(d.partition == "h200,l40");
  CHECK(d.tres_per_node == "gres:gpu:4");
  CHECK(d.type.empty());
  CHECK(d.partition_index == 0);
  CHECK_THAT(d.message, Catch::Contains("gpu:4 -> gpu:4: gpu:h200 in partition h200"));
  CHECK_THAT(d.message, Catch::Contains("may also start in l40 (done in ~38 min)"));
  // job_submit/rlsched joins records in AdminComment with "; " and rlsched explain splits them there.
  CHECK(d.message.find(';') == std::string::npos);
  // slack 2: a100 (done in 1 h = 2 x 30 min) joins, last.
  c.placement.slack = 2.0;
  CHECK(decide_submit(c, parts, job("gres:gpu:4")).partition == "h200,l40,a100");
  // slack 1: the point decision, pinned by type.
  c.placement.slack = 1.0;
  d = decide_submit(c, parts, job("gres:gpu:4"));
  CHECK(d.partition == "h200");
  CHECK(d.tres_per_node == "gres:gpu:h200:4");
}

TEST_CASE("a set needs per-type partitions: a mixed best partition pins the type", "[submit]") {
  config::PluginConfig c = hetero();
  c.placement.slack = 2.0;
  // "both" offers h200 and a100: a typeless gpu:4 there could land on either, so the set stays the best alone.
  const std::vector<placement::PartitionState> parts = {
      part("both", {pool("gpu", "h200", 8, 8), pool("gpu", "a100", 8, 8)}),
      part("a100", {pool("gpu", "a100", 16, 16)})};
  const SubmitDecision d = decide_submit(c, parts, job("gres:gpu:4"));
  CHECK(d.partition == "both");
  CHECK(d.tres_per_node == "gres:gpu:h200:4");
}

TEST_CASE("the job's class picks its speeds, and counts scale between types", "[submit]") {
  config::PluginConfig c = hetero();
  c.placement.slack = 1.3;
  c.accelerator_types[2].count_scale = 2.0;  // 8 910b stand for 4 gpus
  c.accelerator_types[0].class_speed["embedding"] = 0.9;  // these classes run no faster on h200 (memory bound)
  c.accelerator_types[0].class_speed["sparse"] = 0.7;
  c.job_classes = {config::JobClass{"embedding", "emb-*", "", ""}, config::JobClass{"sparse", "sparse-*", "", ""},
                   config::JobClass{"portable", "xpu-*", "", "", true}};
  // h200 has 20 min of queued work, the a100 is idle. The default job finishes first on h200 (20 + 30 min), with
  // the a100 (60 min) within the slack (1.3 x 50 min): both, h200 first.
  std::vector<placement::PartitionState> parts = cluster();
  parts[0].pools[0].pending_work = 16 * 1200.0;
  rlsched_submit plain = job("gres:gpu:4");
  plain.job_name = "bert";
  const SubmitDecision both = decide_submit(c, parts, plain);
  CHECK(both.tres_per_node == "gres:gpu:4");
  CHECK(both.partition == "h200,a100");
  // The embedding job finishes first on the a100 (60 min; 20 + 66.7 min on h200): a100 first. Allowing h200 costs
  // it at most h200's run (66.7 min, within 1.3 x 60 min), since late binding starts it where a device frees
  // first: both, a100 first.
  rlsched_submit emb = job("gres:gpu:4");
  emb.job_name = "emb-large";
  const SubmitDecision d = decide_submit(c, parts, emb);
  CHECK(d.tres_per_node == "gres:gpu:4");
  CHECK(d.partition == "a100,h200");
  CHECK(d.job_class == "embedding");
  CHECK_THAT(d.message, Catch::Contains("gpu:4 -> gpu:4 (class embedding): gpu:a100 in partition a100"));
  // The sparse job would run 85.7 min on h200, beyond the slack even if it started at once: pinned to the a100.
  rlsched_submit sparse = job("gres:gpu:4");
  sparse.job_name = "sparse-1";
  const SubmitDecision pinned = decide_submit(c, parts, sparse);
  CHECK(pinned.tres_per_node == "gres:gpu:a100:4");
  CHECK(pinned.partition == "a100");
  CHECK(pinned.job_class == "sparse");
  CHECK_THAT(pinned.message, Catch::Contains("gpu:4 -> gpu:a100:4 (class sparse):"));

  // Every gpu busy for days: the request moves to npu with twice the count, per node and per job alike.
  parts[0].pools[0].idle = parts[1].pools[0].idle = 0;
  parts[0].pools[0].pending_work = parts[1].pools[0].pending_work = 16 * 86400.0 * 4;
  rlsched_submit portable = job("gres:gpu:4");
  portable.job_name = "xpu-1";
  const SubmitDecision npu = decide_submit(c, parts, portable);
  CHECK(npu.tres_per_node == "gres:npu:910b:8");
  CHECK(npu.accelerators == 8);
  rlsched_submit per_job = job(nullptr, "gres:gpu:3");
  per_job.job_name = "xpu-2";
  CHECK(decide_submit(c, parts, per_job).tres_per_job == "gres:npu:910b:6");
}

}  // namespace
}  // namespace rlsched::capi
