// Simulator speed on real traces, one core:
//  - RICC-2010-2, all 447,794 jobs, full Slurm model with EASY backfill (target: under 10 s per policy);
//  - Lublin-1 under RLScheduler's protocol, 10 x 1,024 jobs (target: 2 million jobs/s or more with FCFS), end to end
//    (preparing the workload, simulating, metrics) and the simulations alone;
//  - Gavel's 15,264 GPU jobs (msr_seed0, any type) on slurm_conf_examples/gavel-cluster.yaml with the measured
//    speeds, full Slurm model with EASY backfill: a queue thousands of jobs deep, where the backfill pass tries
//    every waiting job against the reservations (the case sim/src/resources.h's NoFitMemo is for).
// Each benchmark reports jobs/s and, for RICC, the process's peak RSS so far (target: under 1 GiB).
// Traces come from $RLSCHED_TRACES or the path configured at build time.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>
#include <map>
#include <string>

#include "rlsched/io/cluster_readers.h"
#include "rlsched/io/gavel_workload.h"
#include "rlsched/io/workload_readers.h"
#include "rlsched/sim/evaluation.h"

namespace {

using namespace rlsched;

std::string trace_path(const std::string& relative) {
  const char* env = std::getenv("RLSCHED_TRACES");
  return std::string(env != nullptr ? env : RLSCHED_SHARED_TRACES) + "/" + relative;
}

[[noreturn]] void fail(const Status& status) {
  std::fprintf(stderr, "sim_bench: %s\n", status.message().c_str());
  std::exit(1);
}

const Workload& trace(const std::string& relative) {
  static std::map<std::string, Workload> cache;
  auto it = cache.find(relative);
  if (it == cache.end()) {
    auto w = io::read_swf(trace_path(relative));
    if (!w.ok()) fail(w.status());
    it = cache.emplace(relative, std::move(*w)).first;
  }
  return it->second;
}

// Gavel's folder as `rlsched evaluate --trace gavel-throughputs --cluster gavel-cluster.yaml` reads it.
struct GavelOnCluster {
  Workload workload;
  Cluster cluster;
};

const GavelOnCluster& gavel() {
  static const GavelOnCluster loaded = [] {
    auto derived = io::read_gavel_workload(trace_path("gavel-throughputs"));
    if (!derived.ok()) fail(derived.status());
    auto cluster = io::read_cluster(RLSCHED_GAVEL_CLUSTER);
    if (!cluster.ok()) fail(cluster.status());
    if (Status s = io::use_measured_speeds(derived->types, *cluster, RLSCHED_GAVEL_CLUSTER); !s.ok()) fail(s);
    return GavelOnCluster{std::move(derived->workload), std::move(*cluster)};
  }();
  return loaded;
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void run_on(benchmark::State& state, const Workload& workload, const Cluster* cluster, const std::string& policy,
            sim::Protocol protocol, sim::Backfill backfill, bool skip_known_no_fit = true) {
  auto scorer = make_scorer(policy);
  if (!scorer.ok()) fail(scorer.status());
  sim::EvaluationOptions options;
  options.protocol = protocol;
  options.sim.backfill = backfill;
  options.sim.skip_known_no_fit = skip_known_no_fit;
  std::size_t jobs = 0;
  double bsld = 0;
  for (auto _ : state) {
    auto result = sim::evaluate_policy(workload, cluster, **scorer, options);
    if (!result.ok()) {
      state.SkipWithError(result.status().message().c_str());
      return;
    }
    jobs += result->metrics.jobs + result->metrics.rejected;
    bsld = result->metrics.avg_bsld;
  }
  state.counters["jobs_per_s"] = benchmark::Counter(static_cast<double>(jobs), benchmark::Counter::kIsRate);
  state.counters["avg_bsld"] = bsld;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}

void run(benchmark::State& state, const std::string& relative, const std::string& policy, sim::Protocol protocol,
         sim::Backfill backfill) {
  run_on(state, trace(relative), nullptr, policy, protocol, backfill);
}

// The protocol's simulations alone: the 10 sequences on a workload prepared once (loading is not simulating).
void sequences_only(benchmark::State& state, const std::string& policy, sim::Backfill backfill) {
  auto prepared = sim::prepare_compat_workload(trace("lublin/lublin_256.swf"));
  auto scorer = make_scorer(policy);
  const sim::CompatProtocol protocol;
  std::size_t jobs = 0;
  for (auto _ : state) {
    for (std::size_t start : protocol.starts) {
      auto outcomes = sim::run_compat_sequence(*prepared, start, protocol.sequence_length, **scorer,
                                               backfill == sim::Backfill::kEasy);
      jobs += outcomes.size();
      benchmark::DoNotOptimize(outcomes.data());
    }
  }
  state.counters["jobs_per_s"] = benchmark::Counter(static_cast<double>(jobs), benchmark::Counter::kIsRate);
}

void register_all() {
  for (const char* policy : {"fcfs", "sjf", "wfp3", "unicep", "f1", "multifactor"}) {
    benchmark::RegisterBenchmark((std::string("RICC_full_easy/") + policy).c_str(), [policy](benchmark::State& s) {
      run(s, "ricc/RICC-2010-2.swf.gz", policy, sim::Protocol::kFull, sim::Backfill::kEasy);
    })->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
  }
  // SJF and WFP3, the time split's best heuristic and teacher on Gavel, and an ageing area rule of the search's family;
  // the last two also without NoFitMemo (SimConfig::skip_known_no_fit), for what it saves in the same run.
  for (const char* policy : {"sjf", "wfp3", "area:1/1/0.5"}) {
    for (const bool memo : {true, false}) {
      if (!memo && std::string(policy) == "sjf") continue;
      const std::string name = std::string(memo ? "Gavel_full_easy/" : "Gavel_full_easy_no_memo/") + policy;
      benchmark::RegisterBenchmark(name.c_str(),
                                   [policy, memo](benchmark::State& s) {
                                     run_on(s, gavel().workload, &gavel().cluster, policy, sim::Protocol::kFull,
                                            sim::Backfill::kEasy, memo);
                                   })
          ->Unit(benchmark::kSecond)
          ->Iterations(1)
          ->UseRealTime();
    }
  }
  for (const char* policy : {"fcfs", "sjf", "wfp3", "unicep", "f1", "multifactor"}) {
    for (auto backfill : {sim::Backfill::kEasy, sim::Backfill::kNone}) {
      const std::string name = std::string("Lublin1_rlscheduler_") + sim::to_string(backfill) + "/" + policy;
      benchmark::RegisterBenchmark(name.c_str(), [policy, backfill](benchmark::State& s) {
        run(s, "lublin/lublin_256.swf", policy, sim::Protocol::kRlScheduler, backfill);
      })->Unit(benchmark::kMillisecond)->UseRealTime();
      benchmark::RegisterBenchmark(
          (std::string("Lublin1_sequences_only_") + sim::to_string(backfill) + "/" + policy).c_str(),
          [policy, backfill](benchmark::State& s) { sequences_only(s, policy, backfill); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
