#include <catch2/catch.hpp>

#include "cluster_poll.h"
#include "slurm_poller.h"

using namespace rlsched::exporter;

namespace {

PolledJob job(std::uint32_t id, JobPhase phase, std::vector<std::string> parts, AcceleratorAsk ask,
              rlsched::Seconds eligible = 0, rlsched::Seconds start = 0) {
  PolledJob j;
  j.id = id;
  j.phase = phase;
  j.partitions = std::move(parts);
  j.qos = "normal";
  j.reason = phase == JobPhase::kPending ? "Resources" : "None";
  j.ask = std::move(ask);
  j.eligible = eligible;
  j.start = start;
  return j;
}

}  // namespace

TEST_CASE("node GRES strings as libslurm reports them") {
  const auto a = parse_node_gres("gpu:h200:4(S:0-1),npu:910b:8", "gpu:h200:3(IDX:0-2),npu:910b:0(IDX:N/A)");
  REQUIRE(a.size() == 2);
  CHECK((a[0].gres == "gpu" && a[0].type == "h200" && a[0].total == 4 && a[0].allocated == 3));
  CHECK((a[1].gres == "npu" && a[1].type == "910b" && a[1].total == 8 && a[1].allocated == 0));
  // Socket bindings with commas inside parentheses, an untyped GRES, shared GRES left out, no GRES at all.
  const auto b = parse_node_gres("gpu:2(S:0,1),mps:200", "gpu:1(IDX:1),mps:0");
  REQUIRE(b.size() == 1);
  CHECK((b[0].type.empty() && b[0].total == 2 && b[0].allocated == 1));
  CHECK(parse_node_gres("(null)", "(null)").empty());
  CHECK(parse_node_gres(nullptr, nullptr).empty());
}

TEST_CASE("a job's accelerator request in total over its nodes and tasks") {
  const AcceleratorAsk per_node = parse_job_ask(nullptr, "gres:gpu:h200:2", nullptr, 3, 3);
  CHECK((per_node.gres == "gpu" && per_node.types == std::vector<std::string>{"h200"} && per_node.count == 6));
  const AcceleratorAsk per_job = parse_job_ask("gres/npu:8", nullptr, nullptr, 2, 1);
  CHECK((per_job.gres == "npu" && per_job.types.empty() && per_job.count == 8));
  const AcceleratorAsk per_task = parse_job_ask(nullptr, nullptr, "gres:gpu:1", 1, 4);
  CHECK(per_task.count == 4);
  CHECK(parse_job_ask(nullptr, nullptr, nullptr, 1, 1).count == 0);
  CHECK(accelerator_label(per_node) == "h200");
  CHECK(accelerator_label(per_job) == "any");
  CHECK(accelerator_label({}) == "none");
  CHECK(accelerator_label({"gpu", {"h200", "a100"}, 1}) == "a100|h200");
}

TEST_CASE("accelerators per type are counted once per node, idle only where jobs can start") {
  ClusterPoll poll;
  // Two nodes of h200 in two partitions each; one drained with 2 free; one a100 node.
  poll.nodes = {{"h1", {"h200", "all"}, true, {{"gpu", "h200", 4, 1}}},
                {"h2", {"h200", "all"}, false, {{"gpu", "h200", 4, 2}}},
                {"a1", {"a100", "all"}, true, {{"gpu", "a100", 4, 4}}}};
  const QueueSummary s = summarize(poll);
  const TypeUsage& h200 = s.types.at({"gpu", "h200"});
  CHECK(h200.total == 8);
  CHECK(h200.allocated == 3);
  CHECK(h200.idle == 3);  // the drained node's 2 free are not idle
  const TypeUsage& a100 = s.types.at({"gpu", "a100"});
  CHECK((a100.total == 4 && a100.allocated == 4 && a100.idle == 0));
}

TEST_CASE("fragmentation: idle accelerators of a type while a job that fits them waits") {
  ClusterPoll poll;
  poll.nodes = {{"h1", {"h200", "all"}, true, {{"gpu", "h200", 4, 2}}},
                {"h2", {"h200", "all"}, true, {{"gpu", "h200", 4, 3}}},
                {"a1", {"a100", "all"}, true, {{"gpu", "a100", 4, 1}}}};
  struct Case {
    const char* what;
    PolledJob pending;
    std::int64_t h200_fragmented, a100_fragmented;
  };
  const Case cases[] = {
      {"3 h200 asked, 3 idle in its partition over two nodes",
       job(1, JobPhase::kPending, {"h200"}, {"gpu", {"h200"}, 3}), 3, 0},
      {"4 h200 asked, only 3 idle", job(2, JobPhase::kPending, {"h200"}, {"gpu", {"h200"}, 4}), 0, 0},
      {"typeless 3 in 'all': fits h200 (3 idle) and a100 (3 idle)", job(3, JobPhase::kPending, {"all"}, {"gpu", {}, 3}),
       3, 3},
      {"h200 asked in the a100 partition: no h200 there", job(4, JobPhase::kPending, {"a100"}, {"gpu", {"h200"}, 1}), 0,
       0},
      {"any of a100|h200 in two partitions", job(5, JobPhase::kPending, {"h200", "a100"}, {"gpu", {"a100", "h200"}, 2}),
       3, 3},
      {"an npu job fits no gpu", job(6, JobPhase::kPending, {"all"}, {"npu", {}, 1}), 0, 0},
      {"a running job is not waiting", job(7, JobPhase::kRunning, {"h200"}, {"gpu", {"h200"}, 1}, 0, 10), 0, 0},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    ClusterPoll p = poll;
    p.jobs = {c.pending};
    const QueueSummary s = summarize(p);
    CHECK(s.types.at({"gpu", "h200"}).idle_while_fitting_jobs_wait == c.h200_fragmented);
    CHECK(s.types.at({"gpu", "a100"}).idle_while_fitting_jobs_wait == c.a100_fragmented);
    CHECK(s.types.at({"gpu", "h200"}).fitting_jobs_waiting == (c.h200_fragmented > 0 ? 1 : 0));
  }
}

TEST_CASE("pending jobs count under each partition they list, running ones under theirs") {
  ClusterPoll poll;
  poll.jobs = {job(1, JobPhase::kPending, {"h200", "a100"}, {"gpu", {}, 1}),
               job(2, JobPhase::kPending, {"h200"}, {"gpu", {"h200"}, 1}),
               job(3, JobPhase::kRunning, {"h200"}, {"gpu", {"h200"}, 2}, 0, 5),
               job(4, JobPhase::kOther, {"h200"}, {}, 0, 5)};
  const QueueSummary s = summarize(poll);
  CHECK(s.pending.at({"h200", "normal", "any", "Resources"}) == 1);
  CHECK(s.pending.at({"a100", "normal", "any", "Resources"}) == 1);
  CHECK(s.pending.at({"h200", "normal", "h200", "Resources"}) == 1);
  CHECK(s.pending.size() == 3);
  CHECK(s.running.at({"h200", "normal", "h200"}) == 1);
  CHECK(s.running.size() == 1);
}

TEST_CASE("each job's wait is observed once, from eligible to start") {
  StartTracker tracker;
  ClusterPoll poll;
  poll.jobs = {job(1, JobPhase::kRunning, {"h200"}, {"gpu", {"h200"}, 1}, 100, 160),
               job(2, JobPhase::kPending, {"h200"}, {"gpu", {"h200"}, 1}, 100, 0)};
  auto first = tracker.newly_started(poll);
  REQUIRE(first.size() == 1);
  CHECK((first[0].wait == 60 && first[0].partition == "h200" && first[0].accelerator_type == "h200"));
  CHECK(tracker.newly_started(poll).empty());  // the same poll again: nothing new

  // Job 1 finished (still listed), job 2 started: only job 2 is new.
  poll.jobs[0].phase = JobPhase::kOther;
  poll.jobs[1].phase = JobPhase::kRunning;
  poll.jobs[1].start = 400;
  auto second = tracker.newly_started(poll);
  REQUIRE(second.size() == 1);
  CHECK(second[0].wait == 300);
}
