// Start-time estimates on a large queue (issue 18: explain/estimate must answer within 5 s for 10,000 pending jobs):
// sim::forecast with its interval (three forward simulations) on a busy cluster of 320 nodes (256 CPU nodes of 64
// CPUs, 32 nodes of 8 x h200 and 32 of 8 x a100) with every node full and 10,000 pending jobs, for one target (the
// job submitted last) and for every pending job, under the multifactor policy and the shipped default model, with
// backfill testing every pending job and at most 500 (Slurm's bf_max_job_test default).
// Run the Release build: `build/release/bench/forecast_bench`.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <string>

#include "rlsched/policy/torchscript_scorer.h"
#include "rlsched/sim/forecast.h"

namespace {

using namespace rlsched;
using namespace rlsched::sim;

constexpr Seconds kNow = 10'000'000;

Cluster busy_cluster() {
  Cluster c;
  c.name = "bench";
  c.accelerator_types = {AcceleratorType{"h200", "gpu", 2.0, {}}, AcceleratorType{"a100", "gpu", 1.0, {}}};
  Partition cpu{"cpu", {}, 1, 1, 0, true};
  Partition gpu{"gpu", {}, 1, 1, 0, false};
  for (int n = 0; n < 320; ++n) {
    Node node{"n" + std::to_string(n), 64, 0, {}};
    if (n >= 256) node.gres = {GresCount{"gpu", n < 288 ? "h200" : "a100", 8}};
    (n < 256 ? cpu : gpu).nodes.push_back(n);
    c.nodes.push_back(node);
  }
  c.partitions = {cpu, gpu};
  c.priority = PriorityWeights::Typical();
  return c;
}

Job job(std::mt19937_64& rng, JobId id, Seconds submit, bool gpu) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Job j;
  j.id = id;
  j.user = "u" + std::to_string(rng() % 200);
  j.submit = submit;
  j.time_limit = 600 + static_cast<Seconds>(std::pow(10.0, 2.5 + 2.5 * unit(rng)));
  j.run_time = std::max<Seconds>(60, static_cast<Seconds>(static_cast<double>(j.time_limit) * unit(rng)));
  if (gpu) {
    j.partitions = {"gpu"};
    j.cpus = 8;
    j.accel = AcceleratorRequest{1 << (rng() % 4), "gpu", {}};
  } else {
    j.partitions = {"cpu"};
    j.cpus = 1 << (rng() % 8);
  }
  return j;
}

/// Every node held by one whole-node job; 10,000 pending jobs submitted over the last day, a fifth asking for GPUs.
Snapshot busy_snapshot(const Cluster& cluster) {
  std::mt19937_64 rng(5);
  Snapshot s;
  s.now = kNow;
  JobId id = 1;
  for (int n = 0; n < static_cast<int>(cluster.nodes.size()); ++n) {
    RunningJob r;
    r.job = job(rng, id++, kNow - 7200, n >= 256);
    r.job.cpus = 64;
    if (n >= 256) r.job.accel.count = 8;
    r.start = kNow - static_cast<Seconds>(rng() % 3600);
    r.nodes = {n};
    s.running.push_back(r);
  }
  for (int i = 0; i < 10000; ++i) {
    QueuedJob q;
    q.job = job(rng, id++, kNow - 86400 + i * 8, rng() % 5 == 0);
    q.eligible = q.job.submit;
    s.pending.push_back(q);
  }
  return s;
}

/// The policy by name with the cluster's weights; nullptr (the benchmark skipped with the error) when it fails.
std::unique_ptr<Scorer> bench_scorer(benchmark::State& state, const char* policy, const Cluster& cluster) {
  ScorerSettings settings;
  settings.multifactor = cluster.priority;
  auto scorer = policy::make_policy_scorer(policy, settings);
  if (!scorer.ok()) {
    state.SkipWithError(scorer.status().message().c_str());
    return nullptr;
  }
  return std::move(*scorer);
}

/// `bf_max_job_test`: SimConfig's (0: backfill tests every pending job; Slurm's default is 500).
/// `interval`: ForecastOptions::interval (false: the expected run only, a third of the work).
void forecast_bench(benchmark::State& state, const char* policy, bool all, int bf_max_job_test, bool interval) {
  const Cluster cluster = busy_cluster();
  const Snapshot snapshot = busy_snapshot(cluster);
  auto scorer = bench_scorer(state, policy, cluster);
  if (!scorer) return;
  ForecastOptions options;
  options.sim.bf_max_job_test = bf_max_job_test;
  options.interval = interval;
  if (!all) options.targets = {snapshot.pending.back().job.id};
  std::size_t started = 0;
  for (auto _ : state) {
    auto estimates = forecast(cluster, snapshot, *scorer, options);
    if (!estimates.ok()) {
      state.SkipWithError(estimates.status().message().c_str());
      return;
    }
    started = 0;
    for (const StartEstimate& e : *estimates) started += e.start >= 0 ? 1 : 0;
  }
  state.counters["estimated"] = static_cast<double>(started);
}

/// What `rlsched estimate --gpus 4 -t 6:00:00` runs on that queue: the request pinned to each of the two types,
/// both forecasts at once (forecast_each), with their intervals, under bf_max_job_test 500.
void estimate_bench(benchmark::State& state, const char* policy) {
  const Cluster cluster = busy_cluster();
  const Snapshot snapshot = busy_snapshot(cluster);
  auto scorer = bench_scorer(state, policy, cluster);
  if (!scorer) return;
  QueuedJob request;
  request.job.id = 1'000'000;
  request.job.user = "u1";  // a user with jobs in the queue (a new one would have the whole fair share)
  request.job.submit = request.eligible = kNow;
  request.job.time_limit = 6 * 3600;
  request.job.partitions = {"gpu"};
  request.job.cpus = 8;
  request.job.accel = AcceleratorRequest{4, "gpu", {}};
  std::vector<Snapshot> alternatives;
  for (const char* type : {"h200", "a100"}) {
    alternatives.push_back(snapshot);
    alternatives.back().pending.push_back(request);
    alternatives.back().pending.back().job.accel.types = {type};
  }
  ForecastOptions options;
  options.sim.bf_max_job_test = 500;
  options.targets = {request.job.id};
  std::size_t started = 0;
  for (auto _ : state) {
    started = 0;
    for (const auto& estimates : forecast_each(cluster, alternatives, *scorer, options)) {
      if (!estimates.ok()) {
        state.SkipWithError(estimates.status().message().c_str());
        return;
      }
      started += estimates->front().start >= 0 ? 1 : 0;
    }
  }
  state.counters["estimated"] = static_cast<double>(started);
}

}  // namespace

#define FORECAST_BENCH(name, policy, all, bf_max_job_test)                    \
  BENCHMARK_CAPTURE(forecast_bench, name, policy, all, bf_max_job_test, true) \
      ->Unit(benchmark::kMillisecond)                                         \
      ->Iterations(1)                                                         \
      ->Repetitions(3)                                                        \
      ->ReportAggregatesOnly(true)

FORECAST_BENCH(one_multifactor, "multifactor", false, 0);
FORECAST_BENCH(all_multifactor, "multifactor", true, 0);
FORECAST_BENCH(one_multifactor_bf500, "multifactor", false, 500);
FORECAST_BENCH(all_multifactor_bf500, "multifactor", true, 500);
FORECAST_BENCH(one_model, "model:" RLSCHED_SHIPPED_MODEL, false, 0);
FORECAST_BENCH(all_model, "model:" RLSCHED_SHIPPED_MODEL, true, 0);
FORECAST_BENCH(one_model_bf500, "model:" RLSCHED_SHIPPED_MODEL, false, 500);
FORECAST_BENCH(all_model_bf500, "model:" RLSCHED_SHIPPED_MODEL, true, 500);
BENCHMARK_CAPTURE(forecast_bench, one_multifactor_no_interval, "multifactor", false, 0, false)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);

BENCHMARK_MAIN();
BENCHMARK_CAPTURE(estimate_bench, two_types_multifactor_bf500, "multifactor")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);
BENCHMARK_CAPTURE(estimate_bench, two_types_model_bf500, "model:" RLSCHED_SHIPPED_MODEL)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);
