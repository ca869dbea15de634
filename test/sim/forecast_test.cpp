#include "rlsched/sim/forecast.h"

#include <catch2/catch.hpp>
#include <random>

#include "sim_fixtures.h"

using namespace rlsched;
using namespace rlsched::sim;
using rlsched::test::cpu_job;
using rlsched::test::gpu_job;

namespace {

/// A job that started at `start` on `nodes` and is predicted to run `predicted` seconds (-1: unknown).
RunningJob running(JobId id, Seconds start, Seconds predicted, int cpus, Seconds limit, std::vector<int> nodes) {
  RunningJob r;
  r.job = cpu_job(id, start, predicted, cpus, limit);
  r.job.run_time = predicted;
  r.start = start;
  r.nodes = std::move(nodes);
  return r;
}

/// A pending CPU job with no run-time prediction unless `predicted` >= 0.
QueuedJob queued(JobId id, Seconds submit, int cpus, Seconds limit, Seconds predicted = -1) {
  QueuedJob q;
  q.job = cpu_job(id, submit, predicted, cpus, limit);
  q.job.run_time = predicted;
  q.eligible = submit;
  return q;
}

std::vector<StartEstimate> estimate(const Cluster& cluster, const Snapshot& snapshot, ForecastOptions options = {},
                                    const char* policy = "fcfs") {
  auto scorer = make_scorer(policy);
  REQUIRE(scorer.ok());
  auto r = forecast(cluster, snapshot, **scorer, options);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return std::move(*r);
}

std::string error_of(const Cluster& cluster, const Snapshot& snapshot, ForecastOptions options = {}) {
  auto scorer = make_scorer("fcfs");
  REQUIRE(scorer.ok());
  auto r = forecast(cluster, snapshot, **scorer, options);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Status::Code::kInvalidInput);
  return r.status().message();
}

/// gpu_cluster at 10: job 1 holds all four h200s of h200-1 (node 0) until 100; nothing pending.
Snapshot h200s_held() {
  Snapshot s;
  s.now = 10;
  RunningJob r;
  r.job = gpu_job(1, 0, 100, 4, {"h200"}, 1000);
  r.start = 0;
  r.nodes = {0};
  r.accelerator_type = "h200";
  s.running = {r};
  return s;
}

/// Counts the policy's scoring calls (not static: the decay thread rescores the queue every PriorityCalcPeriod).
class CountingScorer : public Scorer {
 public:
  std::string_view name() const override { return "counting"; }
  void score(const ScoringContext&, const std::vector<PendingJob>& jobs, std::vector<double>& scores) const override {
    ++calls;
    for (std::size_t i = 0; i < jobs.size(); ++i) scores[i] = -static_cast<double>(jobs[i].submit);
  }
  mutable int calls = 0;
};

}  // namespace

TEST_CASE("a job behind a running job starts at the running job's predicted end, within its interval") {
  // One 4-CPU node, busy since t=0 with a job predicted to run 100 s under a 1000 s limit. At t=10 the pending job
  // needs the whole node: expected at 100; latest when the running job uses its limit (1000); earliest when it
  // needs half its expected remainder (10 + 45).
  Snapshot s;
  s.now = 10;
  s.running = {running(1, 0, 100, 4, 1000, {0})};
  s.pending = {queued(2, 5, 4, 50)};
  const auto e = estimate(Cluster::Homogeneous(1, 4), s);
  REQUIRE(e.size() == 1);
  CHECK(e[0].id == 2);
  CHECK(e[0].start == 100);
  CHECK(e[0].earliest == 55);
  CHECK(e[0].latest == 1000);
  CHECK(e[0].partition == "batch");
  CHECK(e[0].accelerator_type.empty());
}

TEST_CASE("without a prediction a running job holds its nodes to its time limit") {
  Snapshot s;
  s.now = 10;
  s.running = {running(1, 0, -1, 4, 300, {0})};
  s.pending = {queued(2, 5, 4, 50)};
  ForecastOptions options;
  options.interval = false;
  const auto e = estimate(Cluster::Homogeneous(1, 4), s, options);
  CHECK(e[0].start == 300);
  CHECK(e[0].earliest == 300);
  CHECK(e[0].latest == 300);
}

TEST_CASE("a running job past its predicted end runs on as long again as it has run, within its limit") {
  Snapshot s;
  s.now = 200;
  s.running = {running(1, 0, 100, 4, 1000, {0})};  // outlived its prediction: expected to end at 200 + 200
  s.pending = {queued(2, 5, 4, 50)};
  CHECK(estimate(Cluster::Homogeneous(1, 4), s)[0].start == 400);
  s.running[0].job.time_limit = 250;  // ...but not past its limit
  CHECK(estimate(Cluster::Homogeneous(1, 4), s)[0].start == 250);
}

TEST_CASE("a higher-priority pending job goes first") {
  // FCFS: job 3 was submitted before job 2, so it runs first although the snapshot lists it second.
  Snapshot s;
  s.now = 10;
  s.running = {running(1, 0, 100, 4, 1000, {0})};
  s.pending = {queued(2, 5, 4, 500, 50), queued(3, 2, 4, 500, 30)};
  const auto e = estimate(Cluster::Homogeneous(1, 4), s);
  REQUIRE(e.size() == 2);
  CHECK(e[0].id == 2);
  CHECK(e[0].start == 130);
  CHECK(e[1].id == 3);
  CHECK(e[1].start == 100);
}

TEST_CASE("backfill starts a short job now and keeps a long one behind the reservation") {
  // 4 CPUs; 2 busy until 100 (predicted; the scheduler plans with its limit, 1000). Job 2 needs 4 (reserved at
  // 1000); job 3 (2 CPUs, limit 50) fits before that; job 4 (2 CPUs, limit 2000) would delay it, so it waits for
  // job 2, which starts when job 1 ends (100) and runs its predicted 30 s: 130.
  Snapshot s;
  s.now = 10;
  s.running = {running(1, 0, 100, 2, 1000, {0})};
  s.pending = {queued(2, 1, 4, 500, 30), queued(3, 2, 2, 50), queued(4, 3, 2, 2000)};
  ForecastOptions options;
  options.interval = false;
  const auto easy = estimate(Cluster::Homogeneous(1, 4), s, options);
  CHECK(easy[0].start == 100);
  CHECK(easy[1].start == 10);
  CHECK(easy[2].start == 130);
  options.sim.backfill = Backfill::kNone;
  const auto none = estimate(Cluster::Homogeneous(1, 4), s, options);
  CHECK(none[1].start == 130);
}

TEST_CASE("nodes down take no jobs, and a job that can never start has no estimate") {
  Snapshot s;
  s.now = 10;
  s.running = {running(1, 0, 100, 4, 1000, {0})};
  s.pending = {queued(2, 5, 4, 50), queued(3, 6, 8, 50)};
  ForecastOptions options;
  options.interval = false;
  CHECK(estimate(Cluster::Homogeneous(2, 4), s, options)[0].start == 10);
  s.nodes_down = {1};
  const auto e = estimate(Cluster::Homogeneous(2, 4), s, options);
  CHECK(e[0].start == 100);
  CHECK(e[1].start == -1);  // needs both nodes
}

TEST_CASE("a running job keeps the accelerators of its type, the estimate names partition and type") {
  // gpu_cluster: h200-1 (4 x h200) and a100-1 (4 x a100). A job holds all h200s; a pending job that allows only
  // h200 waits for it, one that allows any type starts now on a100.
  Snapshot s = h200s_held();
  QueuedJob h200{gpu_job(2, 5, 50, 2, {"h200"}, 500), 5};
  QueuedJob any{gpu_job(3, 6, 50, 2, {}, 500), 6};
  s.pending = {h200, any};
  ForecastOptions options;
  options.interval = false;
  const auto e = estimate(test::gpu_cluster(), s, options);
  CHECK(e[0].start == 100);
  CHECK(e[0].accelerator_type == "h200");
  CHECK(e[1].start == 10);
  CHECK(e[1].accelerator_type == "a100");
}

TEST_CASE("a pending job waits for its begin time, and the horizon bounds the estimate") {
  Snapshot s;
  s.now = 10;
  s.pending = {queued(2, 5, 4, 50)};
  s.pending[0].eligible = 70;  // a begin time ahead
  ForecastOptions options;
  options.interval = false;
  CHECK(estimate(Cluster::Homogeneous(1, 4), s, options)[0].start == 70);
  options.horizon = 30;
  CHECK(estimate(Cluster::Homogeneous(1, 4), s, options)[0].start == -1);
}

TEST_CASE("the forward simulation stops once its targets started") {
  // 50 jobs of 1000 s in a row on one CPU: the first starts now, the last after 49,000 s (163 decay-thread ticks).
  Snapshot s;
  s.now = 0;
  for (JobId id = 1; id <= 50; ++id) s.pending.push_back(queued(id, 0, 1, 1000, 1000));
  ForecastOptions options;
  options.interval = false;
  const auto calls = [&](std::vector<JobId> targets) {
    CountingScorer scorer;
    options.targets = targets;
    auto r = forecast(Cluster::Homogeneous(1, 1), s, scorer, options);
    REQUIRE(r.ok());
    CHECK(r->size() == (targets.empty() ? 50 : targets.size()));
    return scorer.calls;
  };
  const int first = calls({1});
  const int all = calls({});
  CHECK(first < 60);  // one score at each arrival, a tick or two
  CHECK(all > first + 100);
  CHECK(calls({2}) < 60);  // starts at 1000
}

TEST_CASE("an invalid snapshot gives an error naming the job or node") {
  const Cluster cluster = Cluster::Homogeneous(2, 4);
  Snapshot s;
  s.now = 10;
  s.running = {running(1, 0, 100, 4, 1000, {2})};
  CHECK_THAT(error_of(cluster, s), Catch::Contains("job 1") && Catch::Contains("node index 2"));
  s.running = {running(1, 0, 100, 4, 1000, {0}), running(7, 0, 100, 2, 1000, {0})};
  CHECK_THAT(error_of(cluster, s), Catch::Contains("running job 7 does not fit its nodes n0"));
  s.running = {running(1, 0, 100, 4, 1000, {0}), running(7, 0, 100, 6, 1000, {1})};
  CHECK_THAT(error_of(cluster, s), Catch::Contains("running job 7 does not fit"));
  s.running = {running(1, 0, 100, 4, 1000, {0})};
  s.pending = {queued(1, 5, 4, 50)};
  CHECK_THAT(error_of(cluster, s), Catch::Contains("job 1 appears twice"));
  s.pending = {queued(2, 5, 4, 50)};
  s.nodes_down = {-1};
  CHECK_THAT(error_of(cluster, s), Catch::Contains("node index -1"));
  s.nodes_down = {};
  ForecastOptions options;
  options.targets = {1};
  CHECK_THAT(error_of(cluster, s, options), Catch::Contains("job 1 to estimate is not pending"));
}

TEST_CASE("a forecast from a simulated state with true run times gives the simulator's own starts") {
  // A random mixed CPU/GPU workload on gpu_cluster under FCFS with EASY backfill. At several moments t, the state
  // of the run (running: started before t, not ended; the others pending or still to come, with their true run
  // times) is handed to forecast: every job not started before t must start exactly when the run started it.
  std::mt19937 rng(7);
  std::vector<Job> jobs;
  for (JobId id = 1; id <= 60; ++id) {
    const Seconds submit = static_cast<Seconds>(id) * 40 + static_cast<Seconds>(rng() % 40);
    const Seconds run = 30 + static_cast<Seconds>(rng() % 900);
    const Seconds limit = run + static_cast<Seconds>(rng() % 900);
    if (id % 3 == 0) {
      jobs.push_back(cpu_job(id, submit, run, 1 + static_cast<int>(rng() % 8), limit));
    } else {
      const std::vector<std::string> types =
          id % 3 == 1 ? std::vector<std::string>{} : std::vector<std::string>{"a100"};
      jobs.push_back(gpu_job(id, submit, run, 1 + static_cast<int>(rng() % 4), types, limit));
    }
  }
  const Cluster cluster = test::gpu_cluster();
  struct Start {
    Seconds time = -1;
    std::vector<int> nodes, cpus;
    int partition = -1, type = -1;
  };
  std::vector<Start> starts(jobs.size());
  SimConfig config;
  config.observer = [&](const ScheduleEvent& e) {
    if (e.kind == ScheduleEvent::Kind::kStart || e.kind == ScheduleEvent::Kind::kBackfillStart)
      starts[e.job] = {e.time, e.nodes, e.node_cpus, e.partition, e.accelerator_type};
  };
  const auto reference = test::run(cluster, jobs, "fcfs", config);

  for (Seconds t : {400, 900, 1300, 1700, 2000}) {
    Snapshot s;
    s.now = t;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const JobOutcome& o = reference.outcomes[i];
      if (o.start < t && o.end > t) {
        RunningJob r;
        r.job = jobs[i];
        r.job.run_time = o.end - o.start;  // what it runs on the type it got
        r.start = o.start;
        r.nodes = starts[i].nodes;
        r.node_cpus = starts[i].cpus;
        r.partition = cluster.partitions[starts[i].partition].name;
        if (starts[i].type >= 0) r.accelerator_type = cluster.accelerator_types[starts[i].type].name;
        s.running.push_back(r);
      } else if (o.start >= t) {
        s.pending.push_back({jobs[i], jobs[i].submit});  // still to come when submit > t
      }
    }
    ForecastOptions options;
    options.interval = false;
    options.horizon = 1000000;
    const auto e = estimate(cluster, s, options);
    REQUIRE(e.size() == s.pending.size());
    REQUIRE(!s.running.empty());
    for (const StartEstimate& x : e) {
      INFO("t=" << t << " job " << x.id);
      CHECK(x.start == reference.outcomes[x.id - 1].start);
      CHECK(x.partition == cluster.partitions[starts[x.id - 1].partition].name);
    }
  }
}

TEST_CASE("forecast_each gives each alternative's own forecast, in order") {
  // The h200s are held until 100; a request pinned to h200 starts then, the same request pinned to a100 at once,
  // each as forecast() alone says, and an invalid alternative fails alone.
  Snapshot s = h200s_held();
  std::vector<Snapshot> alternatives;
  for (const char* type : {"h200", "a100"}) {
    alternatives.push_back(s);
    alternatives.back().pending = {QueuedJob{gpu_job(9, 10, 50, 2, {type}, 500), 10}};
  }
  alternatives.push_back(s);
  alternatives.back().nodes_down = {7};  // the cluster has two nodes
  alternatives.back().pending = {QueuedJob{gpu_job(9, 10, 50, 2, {}, 500), 10}};
  auto scorer = make_scorer("fcfs");
  REQUIRE(scorer.ok());
  ForecastOptions options;
  options.targets = {9};
  const auto results = forecast_each(test::gpu_cluster(), alternatives, **scorer, options);
  REQUIRE(results.size() == 3);
  REQUIRE(results[0].ok());
  REQUIRE(results[1].ok());
  CHECK(results[0]->front().start == 100);
  CHECK(results[0]->front().accelerator_type == "h200");
  CHECK(results[1]->front().start == 10);
  CHECK(results[1]->front().accelerator_type == "a100");
  for (std::size_t i = 0; i < 2; ++i) {
    const auto alone = estimate(test::gpu_cluster(), alternatives[i], options);
    CHECK(alone.front().start == results[i]->front().start);
    CHECK(alone.front().earliest == results[i]->front().earliest);
    CHECK(alone.front().latest == results[i]->front().latest);
  }
  REQUIRE_FALSE(results[2].ok());
  CHECK_THAT(results[2].status().message(), Catch::Contains("node index 7"));
}
