// What the plugins cost slurmctld on a large cluster, outside it: site_factor/rlsched and job_submit/rlsched loaded
// against the stubs of the plugin load tests (test/plugin/slurm_stubs.c), on 4,096 nodes (8 GPUs each) in 32
// partitions with 4 GPU types, 10,000 pending jobs and 512 running ones (bench/plugin_bench_cluster.c).
//  - BM_SiteFactorUpdate: one site_factor_p_update (job pass, cluster snapshot, one batched scoring call, site
//    factors written), with the shipped default model (policy_models/default, what slurmctld serves), with a
//    larger 21-64-64-1 test model, and with the multifactor fallback. Target: under 10 ms on the development
//    machine. Counter allocs: what one update allocates through Slurm's allocator, after the first.
//  - BM_Snapshot: the cluster snapshot site_factor_p_update builds under the job write lock, alone, and allocs.
//  - BM_JobSubmit: one typeless 4-GPU submit, with the queue cached (a burst) and rebuilt (a node changed).
// Run the Release build: `build/release/bench/plugin_bench` (args: nodes, partitions, types, pending);
// RLSCHED_PLUGIN_DIR=<folder> loads the plugins from there instead (another version's, to compare).
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstdlib>

#include <cstdio>
#include <filesystem>
#include <string>

#include "plugin_bench.h"

extern "C" int rlsched_test_write_model(const char* path, unsigned seed);

namespace {

std::string work_dir() {
  static const std::string dir = [] {
    char pattern[] = "/tmp/rlsched_plugin_bench_XXXXXX";
    if (!mkdtemp(pattern)) std::abort();
    return std::string(pattern);
  }();
  return dir;
}

enum class Scoring { kFallback, kTestModel, kShippedModel };

// Loads the plugins on the cluster the benchmark's arguments describe; false (and the benchmark skipped) on error.
bool setup(benchmark::State& state, Scoring scoring = Scoring::kFallback) {
  std::string scorer = "fallback: multifactor";
  if (scoring != Scoring::kFallback) {
    const std::string path = work_dir() + "/policy.pt";
    if (scoring == Scoring::kTestModel) {
      if (rlsched_test_write_model(path.c_str(), 1) != 0) std::abort();
    } else {
      // A private copy: the plugins serve only a model file that no one else may write.
      std::filesystem::copy_file(RLSCHED_SHIPPED_MODEL, path, std::filesystem::copy_options::overwrite_existing);
      std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    }
    scorer = "model: " + path;
  }
  const std::string config = work_dir() + "/rlsched.yaml";
  const char* plugin_dir = std::getenv("RLSCHED_PLUGIN_DIR");  // another build's plugins, to compare
  if (pb_setup(plugin_dir ? plugin_dir : RLSCHED_PLUGIN_DIR, config.c_str(), scorer.c_str(), static_cast<int>(state.range(0)),
               static_cast<int>(state.range(1)), static_cast<int>(state.range(2)),
               static_cast<int>(state.range(3))) != 0) {
    state.SkipWithError("the plugins could not be loaded on the stub cluster");
    pb_teardown();
    return false;
  }
  return true;
}

void finish(benchmark::State& state) {
  if (pb_errors() > 0) state.SkipWithError("the plugins logged errors");
  pb_teardown();
}

void site_factor_update(benchmark::State& state, Scoring scoring) {
  if (!setup(state, scoring)) return;
  pb_update();  // the first update sizes the plugin's buffers
  long allocs = 0;
  for (auto _ : state) allocs = pb_update();
  state.counters["allocs"] = static_cast<double>(allocs);
  finish(state);
}

void BM_SiteFactorUpdate_ShippedModel(benchmark::State& state) { site_factor_update(state, Scoring::kShippedModel); }
void BM_SiteFactorUpdate_Model(benchmark::State& state) { site_factor_update(state, Scoring::kTestModel); }
void BM_SiteFactorUpdate_Multifactor(benchmark::State& state) { site_factor_update(state, Scoring::kFallback); }

void BM_Snapshot(benchmark::State& state) {
  if (!setup(state)) return;
  pb_snapshot();
  long allocs = 0;
  for (auto _ : state) allocs = pb_snapshot();
  state.counters["allocs"] = static_cast<double>(allocs);
  if (allocs < 0) state.SkipWithError("the snapshot failed");
  finish(state);
}

void job_submit(benchmark::State& state, bool fresh) {
  if (!setup(state)) return;
  for (auto _ : state) benchmark::DoNotOptimize(pb_submit(fresh));
  finish(state);
}

void BM_JobSubmit_Cached(benchmark::State& state) { job_submit(state, false); }
void BM_JobSubmit_Rebuilt(benchmark::State& state) { job_submit(state, true); }

// nodes, partitions, types, pending jobs
void large(benchmark::internal::Benchmark* b) {
  b->ArgNames({"nodes", "parts", "types", "pending"});
  b->Args({4096, 32, 4, 10000});
  b->Args({512, 32, 4, 10000});
  b->Unit(benchmark::kMillisecond);
}

}  // namespace

BENCHMARK(BM_SiteFactorUpdate_ShippedModel)->Apply(large);
BENCHMARK(BM_SiteFactorUpdate_Model)->Apply(large);
BENCHMARK(BM_SiteFactorUpdate_Multifactor)->Apply(large);
BENCHMARK(BM_Snapshot)->Apply(large)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_JobSubmit_Cached)->Apply(large)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_JobSubmit_Rebuilt)->Apply(large);
BENCHMARK_MAIN();
