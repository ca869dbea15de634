// The engine behind the C ABI used from several threads at once, as slurmctld does: its own model reload thread and
// explicit model checks while the model file is replaced, reconfigures while rlsched.yaml changes, batch and
// single-job scoring (the decay thread, submits), and submit mapping (job_submit). Every call must succeed and
// stay within the settings in force; scripts/test runs this test under ThreadSanitizer (engine_concurrency_tests).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "capi_fixtures.h"
#include "rlsched/rlsched.h"

namespace {

using rlsched::testing::PrivateDir;

std::string config_text(const std::string& model, int score_scale) {
  return "mode: enforce\nmodel: " + model + "\nfallback: fcfs\nscore_scale: " + std::to_string(score_scale) +
         "\nreload_check_interval: 1\naccelerator_types:\n  - {name: h200, gres: gpu, speed: 2.0}\n"
         "  - {name: a100, gres: gpu, speed: 1.0}\n";
}

}  // namespace

TEST_CASE("the engine under concurrent model reloads, reconfigures, scoring and submits", "[capi][concurrency]") {
  PrivateDir dir;
  const std::string live = dir.file("live.pt");
  REQUIRE(std::rename(dir.model("live.tmp", 1).c_str(), live.c_str()) == 0);
  const std::string config = dir.write("rlsched.yaml", config_text(live, 1000), 0600);

  rlsched_engine_options o{};
  o.abi_version = RLSCHED_ABI_VERSION;
  o.config_path = config.c_str();
  o.flags = RLSCHED_ENGINE_TRUST_ANY_FILE;  // the engine's reload thread runs: no NO_RELOAD_THREAD
  rlsched_engine* engine = nullptr;
  REQUIRE(rlsched_engine_create(&o, &engine) == RLSCHED_OK);

  std::vector<rlsched_accel> h200 = {{"gpu", "h200", 16, 8, 8, 2, 1}}, a100 = {{"gpu", "a100", 8, 8, 8, 1, 1}};
  std::vector<rlsched_accel> all = {{"gpu", "h200", 16, 8, 8, 2, 1}, {"gpu", "a100", 8, 8, 8, 1, 1}};
  std::vector<rlsched_partition> parts = {{"h200", 1, 128, 64, 2, 2 * 86400, h200.data(), 1},
                                          {"a100", 1, 64, 64, 1, 3 * 86400, a100.data(), 1}};
  const rlsched_cluster cluster = {192, 128, 3, all.data(), 2, parts.data(), 2};
  const int64_t now = 1'700'000'000;
  std::vector<rlsched_job> jobs(200);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].job_id = static_cast<uint32_t>(i + 1);
    jobs[i].submit_time = now - 60 * static_cast<int64_t>(i);
    jobs[i].time_limit = 3600;
    jobs[i].cpus = 1 + static_cast<int32_t>(i % 8);
    jobs[i].nodes = 1;
    jobs[i].accelerators = i % 2 ? 4 : 0;
    jobs[i].gres = i % 2 ? "gpu" : nullptr;
    jobs[i].partition = static_cast<int32_t>(i % 2);
  }

  constexpr int kMinSwaps = 6, kMinReconfigures = 6;
  std::atomic<bool> stop{false};
  std::atomic<long> batches{0}, submits{0}, failures{0}, out_of_scale{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      std::vector<double> scores(jobs.size());
      std::vector<uint32_t> factors(jobs.size());
      while (!stop.load()) {
        if (rlsched_score_batch(engine, now, &cluster, jobs.data(), jobs.size(), scores.data(), factors.data()) !=
            RLSCHED_OK)
          ++failures;
        for (uint32_t f : factors) out_of_scale += f > 2000 ? 1 : 0;  // the larger of the two scales in force
        double score = 0;
        uint32_t factor = 0;
        if (rlsched_score_one(engine, now, &cluster, &jobs[7], &score, &factor) != RLSCHED_OK) ++failures;
        ++batches;
      }
    });
  }
  threads.emplace_back([&] {
    rlsched_submit job{};
    job.tres_per_node = "gres:gpu:4";
    job.time_limit = 3600;
    while (!stop.load()) {
      rlsched_submit_result r{};
      if (rlsched_submit_map(engine, now, &cluster, jobs.data(), jobs.size(), &job, &r) != RLSCHED_OK) ++failures;
      rlsched_submit_result_free(&r);
      ++submits;
    }
  });
  threads.emplace_back([&] {
    rlsched_engine_info info{};
    while (!stop.load())
      if (rlsched_engine_get_info(engine, &info) != RLSCHED_OK) ++failures;
  });

  // This thread swaps the model file (checking it now and then itself, while the engine's reload thread checks it
  // every second) and rewrites rlsched.yaml between two score scales, reconfiguring after each.
  int swaps = 0, reconfigures = 0;
  uint64_t loads_before = 0;
  const auto start = std::chrono::steady_clock::now();
  const auto give_up = start + std::chrono::seconds(60);
  while ((swaps < kMinSwaps || reconfigures < kMinReconfigures) && std::chrono::steady_clock::now() < give_up) {
    rlsched_counters c{};
    REQUIRE(rlsched_engine_get_counters(engine, &c) == RLSCHED_OK);
    if (c.model_loads > loads_before) {  // the last swap was loaded: swap again
      swaps += loads_before > 0 ? 1 : 0;
      loads_before = c.model_loads;
      REQUIRE(std::rename(dir.model("live.tmp", swaps % 2 ? 1 : 2).c_str(), live.c_str()) == 0);
      if (swaps % 2) REQUIRE(rlsched_engine_check_model(engine) == RLSCHED_OK);
    }
    dir.write("rlsched.yaml", config_text(live, reconfigures % 2 ? 1000 : 2000), 0600);
    if (rlsched_engine_reconfigure(engine) != RLSCHED_OK) ++failures;
    ++reconfigures;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  stop = true;
  for (auto& t : threads) t.join();

  REQUIRE(swaps >= kMinSwaps);
  REQUIRE(reconfigures >= kMinReconfigures);
  CHECK(failures.load() == 0);
  CHECK(out_of_scale.load() == 0);
  CHECK(batches.load() > 0);
  CHECK(submits.load() > 0);
  rlsched_counters c{};
  REQUIRE(rlsched_engine_get_counters(engine, &c) == RLSCHED_OK);
  CHECK(c.errors == 0);
  rlsched_engine_destroy(engine);
}
