// What site_factor_p_update pays for the core part of a decay cycle: rlsched_score_batch on 10,000 pending jobs
// (conversion to the feature inputs, ONE batched scoring call, the rank-share mapping to site factors), through
//  - the default model path: a 21-64-64-1 TorchScript model loaded by the engine from its config, and
//  - a heuristic fallback (multifactor), as when no model is configured or it failed to load;
// plus rlsched_score_one (site_factor_p_set at submit) and rlsched_submit_map (job_submit, 10,000 queued jobs); and
// with run_time: predicted, the batch on predicted run times and the cycle's rlsched_jobs_ended on the 5,000 ended
// jobs slurmctld keeps (all known already, as in the steady state); and what the run-time history's writer holds
// the lock that scoring takes for (copying the history) against rendering it (which it now does after releasing it).
// Target: the batch well under 10 ms (ARCHITECTURE.md: under 5 ms). Run the Release build:
// `build/release/bench/capi_bench`.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "capi/run_time_history.h"
#include "rlsched/rlsched.h"

extern "C" int rlsched_test_write_model(const char* path, unsigned seed);

namespace {

struct Fixture {
  std::string dir;
  std::vector<rlsched_accel> h200 = {{"gpu", "h200", 512, 64, 8, 64, 4}};
  std::vector<rlsched_accel> a100 = {{"gpu", "a100", 512, 128, 8, 64, 8}};
  std::vector<rlsched_accel> npu = {{"npu", "910b", 256, 32, 8, 32, 2}};
  std::vector<rlsched_accel> all = {h200[0], a100[0], npu[0]};
  std::vector<rlsched_partition> parts;
  rlsched_cluster cluster{};
  std::vector<rlsched_job> jobs;
  std::vector<rlsched_ended_job> ended;  // 5,000 jobs of the pending jobs' 500 users, ended in the last 5 minutes

  Fixture() {
    char pattern[] = "/tmp/rlsched_capi_bench_XXXXXX";
    if (!mkdtemp(pattern)) std::abort();
    dir = pattern;
    parts = {{"h200", 1, 7168, 1024, 64, 2 * 86400, h200.data(), 1},
             {"a100", 1, 8192, 2048, 64, 3 * 86400, a100.data(), 1},
             {"npu", 1, 6144, 1024, 32, 3 * 86400, npu.data(), 1},
             {"cpu", 1, 16384, 4096, 256, 0, nullptr, 0}};
    cluster = {37888, 8192, 416, all.data(), 3, parts.data(), 4};
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> unit(0, 1);
    const int64_t now = 1'700'000'000;
    static const char* const types[] = {nullptr, "h200", "a100", "910b", "h200|a100"};
    for (int i = 0; i < 10000; ++i) {
      rlsched_job j{};
      j.job_id = static_cast<uint32_t>(i + 1);
      j.state = RLSCHED_JOB_PENDING;
      j.submit_time = now - static_cast<int64_t>(86400 * 7 * unit(rng));
      j.time_limit = 60 + static_cast<int64_t>(86400 * 2 * unit(rng));
      j.cpus = 1 << static_cast<int>(8 * unit(rng));
      j.nodes = 1;
      if (unit(rng) < 0.5) {
        const int t = static_cast<int>(5 * unit(rng));
        j.accelerators = 1 << static_cast<int>(4 * unit(rng));
        j.gres = t == 3 ? "npu" : "gpu";
        j.gres_type = types[t];
      }
      j.age_factor = unit(rng);
      j.fairshare_factor = unit(rng);
      j.job_size_factor = unit(rng);
      j.partition_factor = unit(rng);
      j.qos_factor = unit(rng);
      j.partition = static_cast<int32_t>(4 * unit(rng));
      j.user_id = static_cast<uint32_t>(i % 500);
      jobs.push_back(j);
    }
    for (int i = 0; i < 5000; ++i) {
      const int64_t end = now - static_cast<int64_t>(300 * unit(rng)),
                    limit = 60 + static_cast<int64_t>(86400 * unit(rng));
      ended.push_back({static_cast<uint32_t>(20000 + i), static_cast<uint32_t>(i % 500), limit,
                       end - static_cast<int64_t>(static_cast<double>(limit) * unit(rng)), end, 0});
    }
  }
  ~Fixture() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }

  rlsched_engine* engine(const std::string& yaml, uint32_t flags = 0) const {
    const std::string path = dir + "/rlsched.yaml";
    std::ofstream(path) << yaml;
    rlsched_engine_options o{};
    o.abi_version = RLSCHED_ABI_VERSION;
    o.config_path = path.c_str();
    o.log = [](void*, int level, const char* line) {
      if (level == RLSCHED_LOG_ERROR) std::fprintf(stderr, "rlsched: %s\n", line);
    };
    o.flags = flags | RLSCHED_ENGINE_NO_RELOAD_THREAD;
    rlsched_engine* e = nullptr;
    if (rlsched_engine_create(&o, &e) != RLSCHED_OK) {
      std::fprintf(stderr, "%s\n", rlsched_last_error(nullptr));
      std::abort();
    }
    return e;
  }
  std::string model() const {
    const std::string path = dir + "/policy.pt";
    if (rlsched_test_write_model(path.c_str(), 1) != 0) std::abort();
    return path;
  }
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

void run_batch(benchmark::State& state, rlsched_engine* e) {
  const Fixture& f = fixture();
  std::vector<uint32_t> factors(f.jobs.size());
  for (auto _ : state) {
    if (rlsched_score_batch(e, 1'700'000'000, &f.cluster, f.jobs.data(), f.jobs.size(), nullptr, factors.data()) !=
        RLSCHED_OK)
      state.SkipWithError(rlsched_last_error(e));
    benchmark::DoNotOptimize(factors.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(f.jobs.size()));
  rlsched_engine_destroy(e);
}

void BM_ScoreBatch10k_Model(benchmark::State& state) {
  run_batch(state, fixture().engine("mode: enforce\nmodel: " + fixture().model() + "\n"));
}
void BM_ScoreBatch10k_ModelPredicted(benchmark::State& state) {
  const Fixture& f = fixture();
  rlsched_engine* e = f.engine("mode: enforce\nrun_time: predicted\nmodel: " + f.model() + "\n");
  rlsched_jobs_ended(e, f.ended.data(), f.ended.size(), nullptr);
  run_batch(state, e);
}
void BM_ScoreBatch10k_FcfsPredicted(benchmark::State& state) {
  const Fixture& f = fixture();
  rlsched_engine* e = f.engine("mode: enforce\nrun_time: predicted\nfallback: fcfs\n");
  rlsched_jobs_ended(e, f.ended.data(), f.ended.size(), nullptr);
  run_batch(state, e);
}
void BM_JobsEnded5k_Known(benchmark::State& state) {
  const Fixture& f = fixture();
  rlsched_engine* e = f.engine("mode: enforce\nrun_time: predicted\nfallback: fcfs\n");
  rlsched_jobs_ended(e, f.ended.data(), f.ended.size(), nullptr);
  for (auto _ : state) {
    std::size_t fresh = 0;
    rlsched_jobs_ended(e, f.ended.data(), f.ended.size(), &fresh);
    benchmark::DoNotOptimize(fresh);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(f.ended.size()));
  rlsched_engine_destroy(e);
}
// A large site's run-time history: 5,000 users with 8 ended jobs each, and the 10,000 ended jobs slurmctld keeps
// (MaxJobCount's default).
struct LargeHistory {
  rlsched::RunTimePredictor predictor;
  rlsched::capi::HeardJobs heard;
  LargeHistory() {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> ran(1, 3600);
    for (int user = 0; user < 5000; ++user)
      for (int k = 0; k < 8; ++k) predictor.record(std::to_string(10000 + user), 3600, ran(rng));
    for (std::uint32_t job = 0; job < 10000; ++job) heard[1'000'000 + job] = 1'700'000'000 + job;
  }
};
void BM_RunTimeHistory_CopyUnderLock(benchmark::State& state) {
  const LargeHistory h;
  for (auto _ : state) benchmark::DoNotOptimize(rlsched::capi::run_time_history_of(h.predictor, h.heard));
}
void BM_RunTimeHistory_Render(benchmark::State& state) {
  const LargeHistory h;
  const rlsched::capi::RunTimeHistory copy = rlsched::capi::run_time_history_of(h.predictor, h.heard);
  for (auto _ : state) benchmark::DoNotOptimize(rlsched::capi::run_time_history_json(copy));
}
void BM_ScoreBatch10k_Multifactor(benchmark::State& state) {
  run_batch(state, fixture().engine("mode: enforce\nfallback: multifactor\n"));
}
void BM_ScoreBatch10k_Fcfs(benchmark::State& state) {
  run_batch(state, fixture().engine("mode: enforce\nfallback: fcfs\n"));
}

void BM_ScoreOne_Model(benchmark::State& state) {
  const Fixture& f = fixture();
  rlsched_engine* e = f.engine("mode: enforce\nmodel: " + f.model() + "\n");
  std::vector<uint32_t> factors(f.jobs.size());
  rlsched_score_batch(e, 1'700'000'000, &f.cluster, f.jobs.data(), f.jobs.size(), nullptr, factors.data());
  uint32_t factor = 0;
  for (auto _ : state) {
    rlsched_score_one(e, 1'700'000'000, &f.cluster, &f.jobs[17], nullptr, &factor);
    benchmark::DoNotOptimize(factor);
  }
  rlsched_engine_destroy(e);
}

void BM_SubmitMap_10kQueue(benchmark::State& state) {
  const Fixture& f = fixture();
  rlsched_engine* e = f.engine(
      "accelerator_types:\n  - {name: h200, gres: gpu, speed: 2}\n  - {name: a100, gres: gpu, speed: 1}\n"
      "  - {name: 910b, gres: npu, speed: 0.8}\ngres_equivalence: [[gpu, npu]]\n",
      RLSCHED_ENGINE_NO_POLICY);
  rlsched_submit job{};
  job.tres_per_node = "gres:gpu:4";
  job.time_limit = 3600;
  for (auto _ : state) {
    rlsched_submit_result r{};
    rlsched_submit_map(e, 1'700'000'000, &f.cluster, f.jobs.data(), f.jobs.size(), &job, &r);
    benchmark::DoNotOptimize(r.action);
    rlsched_submit_result_free(&r);
  }
  rlsched_engine_destroy(e);
}

}  // namespace

BENCHMARK(BM_ScoreBatch10k_Model)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ScoreBatch10k_ModelPredicted)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JobsEnded5k_Known)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunTimeHistory_CopyUnderLock)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunTimeHistory_Render)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ScoreBatch10k_Multifactor)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ScoreBatch10k_Fcfs)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ScoreBatch10k_FcfsPredicted)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ScoreOne_Model)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SubmitMap_10kQueue)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
