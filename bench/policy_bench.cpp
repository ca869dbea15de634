// Policy scoring speed, one thread (what the site_factor plugin pays inside slurmctld's decay thread):
//  - TorchScriptScorer on 10,000 pending jobs, feature extraction included (target: <= 2.5 ms), and on 1 job
//    (target: <= 20 us), for 21-16-16-1 (the shape of policy_models/default), 21-32-32-1 and 21-64-64-1 MLPs with
//    random weights;
//  - the floor: the same extraction and the same weights through a plain C++ loop.
// After the runs it prints each TorchScript CPU time over its floor (fastest of the repetitions asked for with
// --benchmark_repetitions). Run the Release build:
// `build/release/bench/policy_bench`.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "rlsched/features.h"
#include "rlsched/policy/model_builder.h"
#include "rlsched/policy/torchscript_scorer.h"

namespace {

using namespace rlsched;
using namespace rlsched::policy;

std::vector<PendingJob> make_jobs(std::size_t n) {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<PendingJob> jobs(n);
  for (std::size_t i = 0; i < n; ++i) {
    PendingJob& j = jobs[i];
    j.id = static_cast<JobId>(i + 1);
    j.wait = static_cast<Seconds>(std::pow(10.0, 5.0 * unit(rng)));
    j.submit = 5'000'000 - j.wait;
    j.time_limit = 60 + static_cast<Seconds>(std::pow(10.0, 5.5 * unit(rng)));
    j.cpus = 1 << static_cast<int>(9 * unit(rng));
    j.nodes = std::max(1, j.cpus / 32);
    j.accelerators = unit(rng) < 0.3 ? 1 << static_cast<int>(4 * unit(rng)) : 0;
    j.fits_now = unit(rng) < 0.3;
    j.age_factor = unit(rng);
    j.fairshare_factor = unit(rng);
    j.job_size_factor = unit(rng);
  }
  return jobs;
}

ScoringContext context_for(std::size_t pending) {
  ScoringContext c;
  c.now = 5'000'000;
  c.total_cpus = 16384;
  c.idle_cpus = 2048;
  c.total_nodes = 512;
  c.total_accelerators = 1024;
  c.pending_jobs = static_cast<int>(pending);
  return c;
}

/// The same MLP as plain arrays: the weights of each hidden layer transposed ([in][out]) so the inner loops run over
/// outputs (no reduction), the last layer's weights as a row.
struct PlainMlp {
  std::vector<float> mean, inv_std;
  std::vector<std::vector<float>> weight_t;  ///< per layer, weight_t[k * out + o] = W[o][k] (last layer: W[0][k])
  std::vector<std::vector<float>> bias;
  int hidden = 0;

  explicit PlainMlp(const MlpSpec& spec) {
    auto copy = [](const torch::Tensor& t) {
      const torch::Tensor c = t.contiguous();
      return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    };
    mean = copy(spec.input_mean);
    for (float s : copy(spec.input_std)) inv_std.push_back(1.0f / s);
    for (const MlpLayer& l : spec.layers) {
      weight_t.push_back(copy(l.weight.t()));
      bias.push_back(copy(l.bias));
    }
    hidden = static_cast<int>(spec.layers[0].weight.size(0));
  }
};

/// y = relu(x W^T + b) with sizes known at compile time, so the loops vectorise and unroll.
template <int In, int Out>
__attribute__((always_inline)) inline void dense_relu(const float* __restrict w_t, const float* __restrict b,
                                                      const float* __restrict x, float* __restrict y) {
  float acc[Out];
  for (int o = 0; o < Out; ++o) acc[o] = b[o];
  for (int k = 0; k < In; ++k)
    for (int o = 0; o < Out; ++o) acc[o] += w_t[k * Out + o] * x[k];
  for (int o = 0; o < Out; ++o) y[o] = acc[o] > 0 ? acc[o] : 0.0f;
}

/// The 1-wide output layer as 16 independent partial sums (a reduction the compiler may vectorise without
/// -ffast-math), added up at the end.
template <int In>
__attribute__((always_inline)) inline float dense_out(const float* __restrict w, float b, const float* __restrict x) {
  float part[16] = {};
  for (int k = 0; k < In; ++k) part[k % 16] += w[k] * x[k];
  float sum = b;
  for (float p : part) sum += p;
  return sum;
}

/// The floor: F-H-H-1 over rows already extracted, one row at a time (no GEMM-style blocking: a plain loop).
/// Compiled for AVX-512, AVX2+FMA and baseline x86-64 and picked at run time, as libtorch's and OpenBLAS's kernels
/// are.
template <int H>
__attribute__((target_clones("arch=skylake-avx512", "arch=haswell", "default"))) void plain_forward(const PlainMlp& mlp,
                                                                                                    const float* rows,
                                                                                                    std::size_t n,
                                                                                                    double* out) {
  constexpr int F = static_cast<int>(features::kFeatureCount);
  for (std::size_t i = 0; i < n; ++i) {
    float x[F], h1[H], h2[H];
    for (int k = 0; k < F; ++k) x[k] = (rows[i * F + k] - mlp.mean[k]) * mlp.inv_std[k];
    dense_relu<F, H>(mlp.weight_t[0].data(), mlp.bias[0].data(), x, h1);
    dense_relu<H, H>(mlp.weight_t[1].data(), mlp.bias[1].data(), h1, h2);
    out[i] = dense_out<H>(mlp.weight_t[2].data(), mlp.bias[2][0], h2);
  }
}

void plain_forward(const PlainMlp& mlp, const float* rows, std::size_t n, double* out) {
  if (mlp.hidden == 16) return plain_forward<16>(mlp, rows, n, out);
  if (mlp.hidden == 32) return plain_forward<32>(mlp, rows, n, out);
  if (mlp.hidden == 64) return plain_forward<64>(mlp, rows, n, out);
  std::fprintf(stderr, "policy_bench: no plain loop for hidden = %d\n", mlp.hidden);
  std::exit(1);
}

struct Fixture {
  MlpSpec spec;
  std::unique_ptr<Scorer> scorer;
  std::unique_ptr<PlainMlp> plain;
};

const Fixture& fixture(int hidden) {
  static std::map<int, Fixture> cache;
  auto it = cache.find(hidden);
  if (it != cache.end()) return it->second;
  Fixture f;
  f.spec = MlpSpec::Random(features::schema_names(), {hidden, hidden}, static_cast<std::uint64_t>(hidden));
  char dir[] = "/tmp/rlsched_policy_bench_XXXXXX";
  if (::mkdtemp(dir) == nullptr) std::abort();
  const std::string path = std::string(dir) + "/mlp.pt";
  auto module = build_mlp_module(f.spec);
  Status saved = module.ok()
                     ? save_model(path, *module, ModelMetadata::ForFeatures(f.spec.features, f.spec.architecture()))
                     : module.status();
  auto scorer = saved.ok() ? make_policy_scorer("model:" + path) : Result<std::unique_ptr<Scorer>>(saved);
  ::unlink(path.c_str());
  ::rmdir(dir);
  if (!scorer.ok()) {
    std::fprintf(stderr, "policy_bench: %s\n", scorer.status().message().c_str());
    std::exit(1);
  }
  f.scorer = std::move(*scorer);
  f.plain = std::make_unique<PlainMlp>(f.spec);
  return cache.emplace(hidden, std::move(f)).first->second;
}

void BM_TorchScript(benchmark::State& state) {
  const Fixture& f = fixture(static_cast<int>(state.range(0)));
  const auto jobs = make_jobs(static_cast<std::size_t>(state.range(1)));
  const ScoringContext context = context_for(jobs.size());
  std::vector<double> scores(jobs.size());
  for (auto _ : state) {
    f.scorer->score(context, jobs, scores);
    benchmark::DoNotOptimize(scores.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(1));
}

void BM_PlainLoop(benchmark::State& state) {
  const Fixture& f = fixture(static_cast<int>(state.range(0)));
  const auto jobs = make_jobs(static_cast<std::size_t>(state.range(1)));
  const ScoringContext context = context_for(jobs.size());
  const features::FeatureMap map = features::FeatureMap::Canonical();
  std::vector<float> rows(jobs.size() * map.size());
  std::vector<double> scores(jobs.size());
  for (auto _ : state) {
    map.extract(jobs, context, rows.data());
    plain_forward(*f.plain, rows.data(), jobs.size(), scores.data());
    benchmark::DoNotOptimize(scores.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(1));
}

const std::vector<std::vector<std::int64_t>> kShapes = {{16, 32, 64}, {1, 10000}};  // default/ ships 16-16
BENCHMARK(BM_TorchScript)->ArgsProduct(kShapes)->ArgNames({"hidden", "jobs"})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlainLoop)->ArgsProduct(kShapes)->ArgNames({"hidden", "jobs"})->Unit(benchmark::kMicrosecond);

/// Console output as usual, plus the TorchScript / floor ratios once every run is in.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Iteration && !run.error_occurred)
        // CPU time: on a shared machine wall time counts the time other processes held the core.
        record(run.benchmark_name(), run.GetAdjustedCPUTime() / 1e6);  // reported in microseconds
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf(
        "\nTorchScriptScorer vs plain C++ loop (same weights, features extracted by both; CPU time, fastest "
        "repetition):\n");
    for (const auto& [name, seconds] : seconds_) {
      if (name.rfind("BM_TorchScript/", 0) != 0) continue;
      const std::string args = name.substr(std::string("BM_TorchScript").size());
      auto floor = seconds_.find("BM_PlainLoop" + args);
      if (floor == seconds_.end()) continue;
      std::printf("  %-24s torchscript %9.1f us   floor %9.1f us   ratio %5.2f\n", args.c_str() + 1, seconds * 1e6,
                  floor->second * 1e6, seconds / floor->second);
    }
  }

 private:
  /// The fastest repetition: on a shared machine the minimum is the least disturbed measurement.
  void record(const std::string& name, double seconds) {
    auto [it, fresh] = seconds_.emplace(name, seconds);
    if (!fresh) it->second = std::min(it->second, seconds);
  }
  std::map<std::string, double> seconds_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (const std::string note = rlsched::policy::blas_performance_note(); !note.empty())
    std::fprintf(stderr, "policy_bench: %s\n", note.c_str());
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
