// Several threads score continuously while another swaps the model file and reloads it: every batch is scored by
// exactly one of the two models (never a mix, never the fallback), and nothing crashes. scripts/test runs this test
// under ThreadSanitizer too.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "policy_fixtures.h"
#include "rlsched/features.h"
#include "rlsched/policy/reloading_scorer.h"
#include "rlsched/policy/torchscript_scorer.h"

using namespace rlsched;
using namespace rlsched::policy;
using namespace rlsched::policy::testing;

TEST_CASE("concurrent scoring while models are swapped") {
  TempDir dir;
  const std::string path = dir.file("live.pt");
  write_model(dir.file("a.pt"), PlainMlp::Random(features::schema_names(), {16}, 21));
  write_model(dir.file("b.pt"), PlainMlp::Random(features::schema_names(), {8, 8}, 22));
  const std::string a_bytes = read_bytes(dir.file("a.pt"));
  const std::string b_bytes = read_bytes(dir.file("b.pt"));
  replace_file(path, a_bytes);

  const auto jobs = random_jobs(64, 5);
  const auto context = test_context(64);
  // What each model scores, computed single-threaded by the same code path.
  auto score_file = [&](const std::string& file) {
    auto scorer = make_policy_scorer("model:" + file);
    REQUIRE(scorer.ok());
    std::vector<double> out(jobs.size());
    (*scorer)->score(context, jobs, out);
    return out;
  };
  const std::vector<double> expect_a = score_file(dir.file("a.pt"));
  const std::vector<double> expect_b = score_file(dir.file("b.pt"));
  REQUIRE(expect_a != expect_b);

  std::atomic<int> log_lines{0};
  auto count_loads = [&](LogLevel, const std::string& line) { log_lines += line.rfind("loaded model ", 0) == 0; };
  auto created = ReloadingScorer::Create({path, "fcfs", {}, {}, count_loads});
  REQUIRE(created.ok());
  ReloadingScorer& policy = **created;

  constexpr int kScorers = 3;
  constexpr int kMinSwaps = 12;
  const auto min_time = std::chrono::milliseconds(500);
  std::atomic<bool> stop{false};
  std::atomic<long> batches{0};
  std::atomic<long> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kScorers; ++t) {
    threads.emplace_back([&] {
      std::vector<double> out(jobs.size());
      while (!stop.load()) {
        policy.score(context, jobs, out);
        if (out != expect_a && out != expect_b) ++wrong;
        ++batches;
      }
    });
  }
  int swaps = 0;
  const auto start = std::chrono::steady_clock::now();
  const auto give_up = start + std::chrono::seconds(60);  // reloads that keep failing must not hang the test
  while ((swaps < kMinSwaps || std::chrono::steady_clock::now() - start < min_time) &&
         std::chrono::steady_clock::now() < give_up) {
    replace_file(path, swaps % 2 == 0 ? b_bytes : a_bytes);
    if (policy.reload_if_changed()) ++swaps;
  }
  stop = true;
  for (auto& t : threads) t.join();

  REQUIRE(swaps >= kMinSwaps);  // reloads that kept failing until give_up would leave the rest checking little
  CHECK(wrong.load() == 0);
  CHECK(batches.load() > kScorers);
  const PolicyCounters c = policy.counters();
  CHECK(c.loads_ok == static_cast<std::uint64_t>(swaps) + 1);
  CHECK(c.load_failures == 0);
  CHECK(c.fallback_calls == 0);
  CHECK(log_lines.load() == swaps + 1);

  SECTION("one TorchScriptScorer shared by several threads") {
    auto shared = make_policy_scorer("model:" + dir.file("a.pt"));
    REQUIRE(shared.ok());
    std::atomic<long> mismatches{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < kScorers; ++t) {
      workers.emplace_back([&] {
        std::vector<double> out(jobs.size());
        for (int i = 0; i < 50; ++i) {
          (*shared)->score(context, jobs, out);
          if (out != expect_a) ++mismatches;
        }
      });
    }
    for (auto& w : workers) w.join();
    CHECK(mismatches.load() == 0);
  }
}
