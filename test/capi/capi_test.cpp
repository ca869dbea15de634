// The C ABI end to end: engines from config files, batched scoring against the policy runtime called directly,
// fallbacks, hot reload, refusals, counters, and the job_submit mapping.
#include "rlsched/rlsched.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "capi/engine.h"
#include "capi_fixtures.h"
#include "rlsched/policy/torchscript_scorer.h"
#include "rlsched/site_factor.h"

namespace rlsched {
namespace {

using testing::PrivateDir;
using testing::read_file;

/// Collects log lines from the engine's callback.
struct LogLines {
  std::mutex mutex;
  std::vector<std::pair<int, std::string>> lines;

  static void callback(void* ctx, int level, const char* line) {
    auto* self = static_cast<LogLines*>(ctx);
    std::lock_guard<std::mutex> lock(self->mutex);
    self->lines.emplace_back(level, line);
  }
  int count(const std::string& substring, int level = -1) {
    std::lock_guard<std::mutex> lock(mutex);
    return static_cast<int>(std::count_if(lines.begin(), lines.end(), [&](const auto& l) {
      return (level < 0 || l.first == level) && l.second.find(substring) != std::string::npos;
    }));
  }
  std::string all() {
    std::lock_guard<std::mutex> lock(mutex);
    std::string out;
    for (const auto& l : lines) out += std::to_string(l.first) + ": " + l.second + "\n";
    return out;
  }
};

struct Engine {
  rlsched_engine* engine = nullptr;
  ~Engine() { rlsched_engine_destroy(engine); }
};

rlsched_engine_options options(const std::string& config, LogLines& log, uint32_t flags = 0) {
  rlsched_engine_options o{};
  o.abi_version = RLSCHED_ABI_VERSION;
  o.config_path = config.c_str();
  o.log = &LogLines::callback;
  o.log_ctx = &log;
  o.flags = flags | RLSCHED_ENGINE_NO_RELOAD_THREAD;
  return o;
}

/// A small heterogeneous cluster: partitions h200 (16, 8 idle), a100 (8 idle), npu (8 idle), cpu.
struct CCluster {
  std::vector<rlsched_accel> h200 = {{"gpu", "h200", 16, 8, 8, 2, 1}};
  std::vector<rlsched_accel> a100 = {{"gpu", "a100", 8, 8, 8, 1, 1}};
  std::vector<rlsched_accel> npu = {{"npu", "910b", 8, 8, 8, 1, 1}};
  std::vector<rlsched_accel> all = {
      {"gpu", "h200", 16, 8, 8, 2, 1}, {"gpu", "a100", 8, 8, 8, 1, 1}, {"npu", "910b", 8, 8, 8, 1, 1}};
  std::vector<rlsched_partition> parts;
  rlsched_cluster cluster{};

  CCluster() {
    parts = {{"h200", 1, 128, 64, 2, 2 * 86400, h200.data(), 1},
             {"a100", 1, 64, 64, 1, 3 * 86400, a100.data(), 1},
             {"npu", 1, 96, 96, 1, 3 * 86400, npu.data(), 1},
             {"cpu", 1, 64, 64, 1, 0, nullptr, 0}};
    cluster = {
        352, 288, 5, all.data(), static_cast<int32_t>(all.size()), parts.data(), static_cast<int32_t>(parts.size())};
  }
};

std::vector<rlsched_job> pending_jobs(int n, int64_t now) {
  std::vector<rlsched_job> jobs(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    rlsched_job& j = jobs[static_cast<std::size_t>(i)];
    j.job_id = static_cast<uint32_t>(i + 1);
    j.state = RLSCHED_JOB_PENDING;
    j.submit_time = now - 86400 + 60 * i;
    j.time_limit = 600 + 60 * (i % 50);
    j.cpus = 1 + i % 16;
    j.nodes = 1;
    if (i % 3 == 0) {
      j.accelerators = 1 + i % 8;
      j.gres = "gpu";
      j.gres_type = (i % 2) ? "a100" : nullptr;
    }
    j.age_factor = (i % 10) / 10.0;
    j.fairshare_factor = 0.5;
    j.partition = i % 4;
  }
  return jobs;
}

TEST_CASE("speed-table warnings are logged once at engine creation", "[capi][config]") {
  PrivateDir dir;
  LogLines log;
  Engine e;
  const std::string config = dir.write("rlsched.yaml",
                                       "accelerator_types: [{name: h200, gres: gpu, speed: 2}, {name: a100, gres: gpu}]\n"
                                       "job_classes:\n  - {name: llm, match: {job_name: 'llama*'}, speeds: {h200: 3}}\n");
  rlsched_engine_options o = options(config, log, RLSCHED_ENGINE_NO_POLICY);
  REQUIRE(rlsched_engine_create(&o, &e.engine) == RLSCHED_OK);
  CHECK(log.count("warning: " + config + ":3: job class 'llm' gives no speed for a100: the type's speed 1 is used",
                  RLSCHED_LOG_INFO) == 1);
}

TEST_CASE("engine creation fails cleanly and says why", "[capi]") {
  PrivateDir dir;
  LogLines log;
  rlsched_engine* engine = reinterpret_cast<rlsched_engine*>(0x1);

  CHECK(rlsched_engine_create(nullptr, &engine) == RLSCHED_EINVAL);
  CHECK(engine == nullptr);
  CHECK(rlsched_engine_create(nullptr, nullptr) == RLSCHED_EINVAL);

  const std::string missing = dir.file("missing.yaml");
  rlsched_engine_options o = options(missing, log);
  CHECK(rlsched_engine_create(&o, &engine) == RLSCHED_ECONFIG);
  CHECK(engine == nullptr);
  CHECK_THAT(rlsched_last_error(nullptr), Catch::Contains("missing.yaml: cannot stat config file"));

  const std::string bad = dir.write("bad.yaml", "mode: enforce\nfallback: nope\n");
  o = options(bad, log);
  CHECK(rlsched_engine_create(&o, &engine) == RLSCHED_ECONFIG);
  CHECK_THAT(rlsched_last_error(nullptr), Catch::Contains("bad.yaml:2: fallback 'nope' is not a scorer"));

  const std::string good = dir.write("good.yaml", "mode: enforce\n");
  o = options(good, log);
  o.abi_version = RLSCHED_ABI_VERSION + 1;
  CHECK(rlsched_engine_create(&o, &engine) == RLSCHED_EINVAL);
  CHECK_THAT(rlsched_last_error(nullptr), Catch::Contains("abi_version"));

  // NULL engines and arguments never crash
  rlsched_engine_destroy(nullptr);
  CHECK(rlsched_engine_reconfigure(nullptr) == RLSCHED_EINVAL);
  CHECK(rlsched_engine_check_model(nullptr) == RLSCHED_EINVAL);
  CHECK(rlsched_score_batch(nullptr, 0, nullptr, nullptr, 0, nullptr, nullptr) == RLSCHED_EINVAL);
  CHECK(rlsched_score_one(nullptr, 0, nullptr, nullptr, nullptr, nullptr) == RLSCHED_EINVAL);
  CHECK(rlsched_submit_map(nullptr, 0, nullptr, nullptr, 0, nullptr, nullptr) == RLSCHED_EINVAL);
  rlsched_submit_result_free(nullptr);
  CHECK(std::string(rlsched_last_error(nullptr)).find("NULL") != std::string::npos);
}

TEST_CASE("a batch is scored in one call and mapped to rank shares", "[capi]") {
  PrivateDir dir;
  LogLines log;
  Engine e;
  const std::string config = dir.write("rlsched.yaml", "mode: enforce\nfallback: fcfs\nscore_scale: 1000\n");
  rlsched_engine_options o = options(config, log);
  REQUIRE(rlsched_engine_create(&o, &e.engine) == RLSCHED_OK);

  rlsched_engine_info info{};
  REQUIRE(rlsched_engine_get_info(e.engine, &info) == RLSCHED_OK);
  CHECK(info.mode == RLSCHED_MODE_ENFORCE);
  CHECK(info.score_scale == 1000);
  CHECK(std::string(info.scorer) == "fcfs");

  CCluster c;
  const int64_t now = 1'700'000'000;
  std::vector<rlsched_job> jobs = pending_jobs(10, now);
  std::vector<double> scores(jobs.size());
  std::vector<uint32_t> factors(jobs.size());
  REQUIRE(rlsched_score_batch(e.engine, now, &c.cluster, jobs.data(), jobs.size(), scores.data(), factors.data()) ==
          RLSCHED_OK);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    CHECK(scores[i] == -static_cast<double>(jobs[i].submit_time));  // fcfs
    CHECK(factors[i] == 900 - 100 * i);                             // 9 - i of 10 score lower
  }
  // A new job ranks against the last batch.
  rlsched_job newest = jobs[0];
  newest.submit_time = now;
  double score = 0;
  uint32_t factor = 77;
  REQUIRE(rlsched_score_one(e.engine, now, &c.cluster, &newest, &score, &factor) == RLSCHED_OK);
  CHECK(factor == 0);
  newest.submit_time = now - 10 * 86400;
  REQUIRE(rlsched_score_one(e.engine, now, &c.cluster, &newest, &score, &factor) == RLSCHED_OK);
  CHECK(factor == 1000);

  // Empty batches and NULL outputs are fine; running jobs are a caller error that leaves outputs untouched.
  CHECK(rlsched_score_batch(e.engine, now, &c.cluster, nullptr, 0, nullptr, nullptr) == RLSCHED_OK);
  jobs[3].state = RLSCHED_JOB_RUNNING;
  std::fill(factors.begin(), factors.end(), 12345u);
  CHECK(rlsched_score_batch(e.engine, now, &c.cluster, jobs.data(), jobs.size(), nullptr, factors.data()) ==
        RLSCHED_EINVAL);
  CHECK_THAT(rlsched_last_error(e.engine), Catch::Contains("jobs[3] (job 4) is not pending"));
  CHECK(factors[0] == 12345u);
  rlsched_cluster broken = c.cluster;
  broken.partitions = nullptr;
  CHECK(rlsched_score_batch(e.engine, now, &broken, jobs.data(), 1, nullptr, nullptr) == RLSCHED_EINVAL);

  rlsched_counters counters{};
  REQUIRE(rlsched_engine_get_counters(e.engine, &counters) == RLSCHED_OK);
  CHECK(counters.score_calls == 4);
  CHECK(counters.jobs_scored == 10 + 1 + 1 + 0);
  CHECK(counters.fallback_calls == 4);  // no model configured: the fallback serves every call
  CHECK(counters.errors == 2);
}

/// User 7's job asking for an hour and user 8's asking for half an hour, pending at `now`.
std::vector<rlsched_job> two_users_jobs(int64_t now) {
  std::vector<rlsched_job> jobs = pending_jobs(2, now);
  jobs[0].user_id = 7;
  jobs[0].time_limit = 3600;
  jobs[1].user_id = 8;
  jobs[1].time_limit = 1800;
  return jobs;
}

/// The engine's scores of `jobs` in one batch at `now`.
std::vector<double> batch_scores(rlsched_engine* engine, const CCluster& c, int64_t now,
                                 const std::vector<rlsched_job>& jobs) {
  std::vector<double> scores(jobs.size());
  REQUIRE(rlsched_score_batch(engine, now, &c.cluster, jobs.data(), jobs.size(), scores.data(), nullptr) == RLSCHED_OK);
  return scores;
}

TEST_CASE("with run_time: predicted the policy sees the run time a user's ended jobs predict", "[capi][predicted]") {
  PrivateDir dir;
  LogLines log;
  Engine predicted, limits;
  const std::string config = dir.write("rlsched.yaml", "mode: enforce\nfallback: sjf\nrun_time: predicted\n");
  const std::string plain = dir.write("limits.yaml", "mode: enforce\nfallback: sjf\n");
  rlsched_engine_options o = options(config, log);
  REQUIRE(rlsched_engine_create(&o, &predicted.engine) == RLSCHED_OK);
  rlsched_engine_options p = options(plain, log);
  REQUIRE(rlsched_engine_create(&p, &limits.engine) == RLSCHED_OK);
  rlsched_engine_info info{};
  REQUIRE(rlsched_engine_get_info(predicted.engine, &info) == RLSCHED_OK);
  CHECK(info.run_time_predicted == 1);

  CCluster c;
  const int64_t now = 1'700'000'000;
  std::vector<rlsched_job> jobs = two_users_jobs(now);
  auto scores_of = [&](rlsched_engine* engine) { return batch_scores(engine, c, now, jobs); };
  CHECK(scores_of(predicted.engine) == std::vector<double>{-3600, -1800});  // no job has ended: the limits

  // User 7's job 50 ran 600 s of its 6000: 10%. Job 51 never started, job 52's end is before its start: skipped.
  std::vector<rlsched_ended_job> ended = {{50, 7, 6000, now - 5000, now - 4400, 0},
                                          {51, 8, 600, 0, now - 4000, 0},
                                          {52, 8, 600, now - 3000, now - 3100, 0}};
  std::size_t fresh = 99;
  REQUIRE(rlsched_jobs_ended(predicted.engine, ended.data(), ended.size(), &fresh) == RLSCHED_OK);
  CHECK(fresh == 1);
  CHECK(scores_of(predicted.engine) == std::vector<double>{-360, -1800});
  // Passed again at the next cycle (Slurm still keeps them): nothing new.
  REQUIRE(rlsched_jobs_ended(predicted.engine, ended.data(), ended.size(), &fresh) == RLSCHED_OK);
  CHECK(fresh == 0);
  CHECK(scores_of(predicted.engine) == std::vector<double>{-360, -1800});

  // Job 50 requeued and ended again (a new end time: heard again, 300 s of 6000 = 5%); user 8's job 53 ran 1000 s,
  // 500 of them suspended: 50% of its 1000. Job 51 and 52 are gone from Slurm's list.
  ended = {{53, 8, 1000, now - 2000, now - 1000, 500}, {50, 7, 6000, now - 900, now - 600, 0}};
  REQUIRE(rlsched_jobs_ended(predicted.engine, ended.data(), ended.size(), &fresh) == RLSCHED_OK);
  CHECK(fresh == 2);
  CHECK(scores_of(predicted.engine) == std::vector<double>{-270, -900});  // 7.5% of 3600; 50% of 1800
  double score = 0;
  rlsched_job newcomer = jobs[0];
  newcomer.time_limit = 1200;
  REQUIRE(rlsched_score_one(predicted.engine, now, &c.cluster, &newcomer, &score, nullptr) == RLSCHED_OK);
  CHECK(score == -90);

  // An engine on time limits hears them too (a reconfigure to predicted finds the history) but scores the limits.
  REQUIRE(rlsched_jobs_ended(limits.engine, ended.data(), ended.size(), &fresh) == RLSCHED_OK);
  CHECK(fresh == 2);
  CHECK(scores_of(limits.engine) == std::vector<double>{-3600, -1800});

  CHECK(rlsched_jobs_ended(predicted.engine, nullptr, 3, nullptr) == RLSCHED_EINVAL);
  CHECK_THAT(rlsched_last_error(predicted.engine), Catch::Contains("jobs is NULL"));
  rlsched_counters counters{};
  REQUIRE(rlsched_engine_get_counters(predicted.engine, &counters) == RLSCHED_OK);
  CHECK(counters.ended_jobs == 3);
  CHECK(counters.errors == 1);
}

TEST_CASE("what ended jobs taught the predicted run times survives a restart in the state folder",
          "[capi][predicted]") {
  PrivateDir dir;
  LogLines log;
  const std::string config = dir.write("rlsched.yaml", "mode: enforce\nfallback: sjf\nrun_time: predicted\n");
  rlsched_engine_options o = options(config, log, RLSCHED_ENGINE_KEEP_RUN_TIMES);
  o.state_dir = dir.path().c_str();
  const std::string file = dir.file("rlsched_run_times.json");
  CCluster c;
  const int64_t now = 1'700'000'000;
  std::vector<rlsched_job> jobs = two_users_jobs(now);
  auto scores_of = [&](rlsched_engine* engine) { return batch_scores(engine, c, now, jobs); };
  {
    Engine first;
    REQUIRE(rlsched_engine_create(&o, &first.engine) == RLSCHED_OK);
    // User 7: 600 s of 6000 (10%); user 8: 1000 s with 500 suspended, of 1000 (50%).
    const std::vector<rlsched_ended_job> ended = {{50, 7, 6000, now - 5000, now - 4400, 0},
                                                  {53, 8, 1000, now - 2000, now - 1000, 500}};
    REQUIRE(rlsched_jobs_ended(first.engine, ended.data(), ended.size(), nullptr) == RLSCHED_OK);
    REQUIRE(scores_of(first.engine) == std::vector<double>{-360, -900});
  }  // slurmctld stops: the engine's last write
  CHECK(read_file(file) ==
        "{\"schema\": 1, \"basis\": \"limit_share\", \"users\": {\"7\": [0.1], \"8\": [0.5]}, "
        "\"heard\": [[50, 1699995600], [53, 1699999000]]}\n");

  SECTION("a restarted slurmctld predicts as before, without hearing the jobs again (Slurm has forgotten them)") {
    Engine second;
    REQUIRE(rlsched_engine_create(&o, &second.engine) == RLSCHED_OK);
    CHECK(log.count("run-time history " + file + ": the ended jobs of 2 users, 2 still kept by Slurm",
                    RLSCHED_LOG_INFO) == 1);
    CHECK(scores_of(second.engine) == std::vector<double>{-360, -900});
    // Slurm still keeps job 53 (its MinJobAge has not passed) and passes it again: not taught twice. Job 54 is new.
    const std::vector<rlsched_ended_job> kept = {{53, 8, 1000, now - 2000, now - 1000, 500},
                                                 {54, 8, 1000, now - 900, now - 800, 0}};
    std::size_t fresh = 99;
    REQUIRE(rlsched_jobs_ended(second.engine, kept.data(), kept.size(), &fresh) == RLSCHED_OK);
    CHECK(fresh == 1);
    CHECK(scores_of(second.engine) == std::vector<double>{-360, -540});  // user 8: (50% + 10%) / 2 of 1800
  }
  SECTION("the file is replaced only when what it holds changes: a job heard, or one Slurm has forgotten") {
    const auto inode = [&] {
      struct stat st {};
      return ::stat(file.c_str(), &st) == 0 ? st.st_ino : ino_t{0};
    };
    const auto started = [&](Engine& e) {  // created, and its writer's first write (at once) done
      const ino_t before = inode();
      REQUIRE(rlsched_engine_create(&o, &e.engine) == RLSCHED_OK);
      for (int i = 0; i < 500 && inode() == before; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      REQUIRE(inode() != before);
      return inode();
    };
    const std::string written = read_file(file);
    const std::vector<rlsched_ended_job> same = {{50, 7, 6000, now - 5000, now - 4400, 0},
                                                 {53, 8, 1000, now - 2000, now - 1000, 500}};
    Engine second;
    const ino_t first = started(second);
    std::size_t fresh = 99;
    REQUIRE(rlsched_jobs_ended(second.engine, same.data(), same.size(), &fresh) == RLSCHED_OK);
    CHECK(fresh == 0);
    rlsched_engine_destroy(second.engine);  // the last write: nothing changed, nothing written
    second.engine = nullptr;
    CHECK(inode() == first);
    CHECK(read_file(file) == written);

    Engine third;
    started(third);
    REQUIRE(rlsched_jobs_ended(third.engine, same.data() + 1, 1, &fresh) == RLSCHED_OK);  // job 50 forgotten
    CHECK(fresh == 0);
    rlsched_engine_destroy(third.engine);
    third.engine = nullptr;
    CHECK(read_file(file) ==
          "{\"schema\": 1, \"basis\": \"limit_share\", \"users\": {\"7\": [0.1], \"8\": [0.5]}, "
          "\"heard\": [[53, 1699999000]]}\n");
  }
  SECTION("an engine not asked to keep them starts from nothing, and leaves the file alone") {
    o.flags &= ~static_cast<uint32_t>(RLSCHED_ENGINE_KEEP_RUN_TIMES);
    Engine second;
    REQUIRE(rlsched_engine_create(&o, &second.engine) == RLSCHED_OK);
    CHECK(scores_of(second.engine) == std::vector<double>{-3600, -1800});
    CHECK(log.count("run-time history") == 0);
  }
  SECTION("a damaged file is named with the bad entry, set aside and counted; the limits serve; never an error") {
    const std::string damaged =
        "{\"schema\": 1, \"basis\": \"limit_share\", \"users\": {\"7\": [0.1], \"8\": [0.5, 2]}, \"heard\": []}\n";
    dir.write("rlsched_run_times.json", damaged);
    Engine second;
    REQUIRE(rlsched_engine_create(&o, &second.engine) == RLSCHED_OK);
    CHECK(log.count(file +
                        ": not an rlsched run-time history: users[\"8\"][1] is not a number in [0, 1]; "
                        "predicted run times start from no history (set aside as " +
                        file + ".damaged)",
                    RLSCHED_LOG_ERROR) == 1);
    CHECK(scores_of(second.engine) == std::vector<double>{-3600, -1800});  // not even user 7's valid entry
    CHECK(read_file(file + ".damaged") == damaged);
    rlsched_counters counters{};
    REQUIRE(rlsched_engine_get_counters(second.engine, &counters) == RLSCHED_OK);
    CHECK(counters.errors == 1);
  }
  SECTION("a record of run times, not limit shares, is refused: its values would mean something else") {
    dir.write("rlsched_run_times.json",
              "{\"schema\": 1, \"basis\": \"run_time\", \"users\": {\"7\": [600]}, \"heard\": []}\n");
    Engine second;
    REQUIRE(rlsched_engine_create(&o, &second.engine) == RLSCHED_OK);
    CHECK(log.count(file + ": not an rlsched run-time history: \"basis\" is not \"limit_share\"") == 1);
    CHECK(scores_of(second.engine) == std::vector<double>{-3600, -1800});
  }
  SECTION("a number past a double's range: set aside like any damage, the engine still serves") {
    // nlohmann reports it as out_of_range, not parse_error: it used to escape the reader, fail the engine's creation
    // and leave the plugin without its policy until rlsched.yaml changed, the file still in place for the next start.
    dir.write("rlsched_run_times.json",
              "{\"schema\": 1, \"basis\": \"limit_share\", \"users\": {\"7\": [1e999]}, \"heard\": []}\n");
    Engine second;
    REQUIRE(rlsched_engine_create(&o, &second.engine) == RLSCHED_OK);
    CHECK(log.count(file + ": not JSON: ") == 1);
    CHECK(log.count("number overflow") == 1);
    CHECK(std::filesystem::exists(file + ".damaged"));
    CHECK(scores_of(second.engine) == std::vector<double>{-3600, -1800});
  }
  SECTION("not JSON: the line and column are named") {
    dir.write("rlsched_run_times.json", "{\"schema\": 1,\n \"users\": {\"7\": [0.1,]}}\n");
    Engine second;
    REQUIRE(rlsched_engine_create(&o, &second.engine) == RLSCHED_OK);
    CHECK(log.count(file + ": not JSON: ") == 1);
    CHECK(log.count("line 2") == 1);
  }
}

TEST_CASE("rlsched explain and estimate read the plugin's run-time history and never write it", "[capi][predicted]") {
  PrivateDir dir;
  const int64_t now = 1'700'000'000;
  const std::string file = dir.file("rlsched_run_times.json");
  const std::string kept =
      "{\"schema\": 1, \"basis\": \"limit_share\", \"users\": {\"7\": [0.1], \"8\": [0.5]}, "
      "\"heard\": [[50, 1699995600]]}\n";
  std::vector<std::pair<int, std::string>> lines;
  capi::EngineOptions o;
  o.config_path = dir.write("rlsched.yaml", "mode: enforce\nfallback: sjf\nrun_time: predicted\n");
  o.no_reload_thread = true;
  o.log = [&](int level, const std::string& line) { lines.emplace_back(level, line); };
  o.state_dir = dir.path();
  o.keep_run_times = true;
  o.state_read_only = true;
  const auto files = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  };

  SECTION("what the plugin kept predicts, then the ended jobs Slurm keeps; the file is left as it was") {
    dir.write("rlsched_run_times.json", kept);
    {
      Result<std::unique_ptr<capi::Engine>> engine = capi::Engine::Create(o);
      REQUIRE(engine.ok());
      capi::Engine& e = **engine;
      CHECK(e.predicted_run_time(7, 6000) == 600);
      CHECK(e.predicted_run_time(8, 1800) == 900);
      CHECK(e.predicted_run_time(9, 1200) == 1200);  // no history: the limit
      CHECK(e.predicted_run_time(9, 0) == -1);       // nor a limit: unknown
      // Job 50 was heard by the plugin already; job 54 (user 8, 100 s of 1000) is new.
      const std::vector<rlsched_ended_job> ended = {{50, 7, 6000, now - 5000, now - 4400, 0},
                                                    {54, 8, 1000, now - 900, now - 800, 0}};
      std::size_t fresh = 0;
      REQUIRE(e.jobs_ended(ended.data(), ended.size(), fresh).ok());
      CHECK(fresh == 1);
      CHECK(e.predicted_run_time(7, 6000) == 600);
      CHECK(e.predicted_run_time(8, 1800) == 540);  // (50% + 10%) / 2 of 1800
    }
    CHECK(read_file(file) == kept);
    CHECK(files() == std::vector<std::string>{"rlsched.yaml", "rlsched_run_times.json"});
  }
  SECTION("a damaged file is named and left in place for the plugin; the limits serve") {
    const std::string damaged = "{\"schema\": 1, \"basis\": \"limit_share\", \"users\": {\"7\": [2]}, \"heard\": []}\n";
    dir.write("rlsched_run_times.json", damaged);
    {
      Result<std::unique_ptr<capi::Engine>> engine = capi::Engine::Create(o);
      REQUIRE(engine.ok());
      CHECK((*engine)->predicted_run_time(7, 6000) == 6000);
    }
    CHECK(std::count(lines.begin(), lines.end(),
                     std::make_pair(int{RLSCHED_LOG_ERROR},
                                    file + ": not an rlsched run-time history: users[\"7\"][0] is not a number in "
                                           "[0, 1]; predicted run times start from no history")) == 1);
    CHECK(read_file(file) == damaged);
    CHECK(files() == std::vector<std::string>{"rlsched.yaml", "rlsched_run_times.json"});
  }
  SECTION("no file (a cluster without site_factor/rlsched): the ended jobs Slurm keeps, and nothing written") {
    {
      Result<std::unique_ptr<capi::Engine>> engine = capi::Engine::Create(o);
      REQUIRE(engine.ok());
      const std::vector<rlsched_ended_job> ended = {{54, 8, 1000, now - 900, now - 800, 0}};
      std::size_t fresh = 0;
      REQUIRE((*engine)->jobs_ended(ended.data(), ended.size(), fresh).ok());
      CHECK((*engine)->predicted_run_time(8, 1800) == 180);
    }
    CHECK(files() == std::vector<std::string>{"rlsched.yaml"});
  }
}

TEST_CASE("a model that reads predicted run times asks for ended jobs and sees its prediction beside its limit",
          "[capi][predicted]") {
  PrivateDir dir;
  LogLines log;
  // score = predicted_log = log1p(p) / log1p(7 d): a model of schema v2 whose scores say which run time it was shown.
  const std::string model = dir.path() + "/predicted.pt";
  REQUIRE(rlsched_test_write_predicted_model(model.c_str()) == 0);
  const std::string v1 = dir.path() + "/longest_first.pt";
  REQUIRE(rlsched_test_write_longest_first_model(v1.c_str()) == 0);
  auto reads_ended_jobs = [&](const std::string& yaml) {
    Engine e;
    const std::string path = dir.write("probe.yaml", yaml);
    rlsched_engine_options o = options(path, log);
    REQUIRE(rlsched_engine_create(&o, &e.engine) == RLSCHED_OK);
    rlsched_engine_info info{};
    REQUIRE(rlsched_engine_get_info(e.engine, &info) == RLSCHED_OK);
    return info.reads_ended_jobs;
  };
  CHECK(reads_ended_jobs("mode: enforce\nfallback: sjf\n") == 0);
  CHECK(reads_ended_jobs("mode: enforce\nfallback: sjf\nrun_time: predicted\n") == 1);
  CHECK(reads_ended_jobs("mode: enforce\nmodel: " + v1 + "\n") == 0);  // schema v1: nothing to learn from them
  CHECK(reads_ended_jobs("mode: enforce\nmodel: " + model + "\n") == 1);

  Engine e;
  const std::string config = dir.write("rlsched.yaml", "mode: enforce\nmodel: " + model + "\n");
  rlsched_engine_options o = options(config, log);
  REQUIRE(rlsched_engine_create(&o, &e.engine) == RLSCHED_OK);
  CCluster c;
  const int64_t now = 1'700'000'000;
  std::vector<rlsched_job> jobs = two_users_jobs(now);
  auto scores = [&] {
    std::vector<double> out(jobs.size());
    REQUIRE(rlsched_score_batch(e.engine, now, &c.cluster, jobs.data(), jobs.size(), out.data(), nullptr) ==
            RLSCHED_OK);
    return out;
  };
  const double week = std::log1p(7 * 86400.0);
  // No job has ended: the prediction is the limit.
  std::vector<double> before = scores();
  CHECK(before[0] == Approx(std::log1p(3600.0) / week).epsilon(1e-6));
  CHECK(before[1] == Approx(std::log1p(1800.0) / week).epsilon(1e-6));
  // User 7's job ran 600 s of its 6000: 10% of 3600 s; user 8 has none. Under run_time: limit the limit stays.
  const std::vector<rlsched_ended_job> ended = {{50, 7, 6000, now - 5000, now - 4400, 0}};
  REQUIRE(rlsched_jobs_ended(e.engine, ended.data(), ended.size(), nullptr) == RLSCHED_OK);
  std::vector<double> after = scores();
  CHECK(after[0] == Approx(std::log1p(360.0) / week).epsilon(1e-6));
  CHECK(after[1] == before[1]);
}

TEST_CASE("the features the engine builds are the schema's inputs", "[capi]") {
  config::PluginConfig config;
  config.accelerator_types = {{"h200", "gpu", 2.0, {}}, {"a100", "gpu", 1.0, {}}, {"910b", "npu", 0.8, {}}};
  CCluster c;
  const int64_t now = 1'700'000'000;
  rlsched_job j{};
  j.job_id = 5;
  j.submit_time = now - 3600;
  j.begin_time = now - 600;  // eligible 10 min ago
  j.time_limit = 7200;
  j.cpus = 8;
  j.nodes = 1;
  j.accelerators = 4;
  j.gres = "gpu";
  j.gres_type = "a100";
  j.restarts = 2;
  j.comment = "train checkpoint:interval=30m,cost=90s";
  j.age_factor = 1.5;  // clamped
  j.qos_factor = 0.25;
  j.partition = 1;  // a100: 8 idle
  const PendingJob p = capi::to_pending_job(j, c.cluster, config, now);
  CHECK(p.wait == 600);
  CHECK(p.time_limit == 7200);
  CHECK(p.accelerators == 4);
  CHECK(p.accel_speed == Approx(0.5));             // a100 (1.0) / fastest h200 (2.0)
  CHECK(p.idle_accel_share == Approx(8.0 / 8.0));  // 8 idle a100 in its partition / 8 in the cluster
  CHECK(p.fits_now);
  CHECK(p.restarts == 2);
  CHECK(p.checkpointable);
  CHECK(p.age_factor == 1.0);
  CHECK(p.qos_factor == 0.25);

  j.gres_type = nullptr;  // any gpu type: the fastest allowed is h200
  j.partition = 0;        // h200: 8 idle of 16
  const PendingJob any = capi::to_pending_job(j, c.cluster, config, now);
  CHECK(any.accel_speed == Approx(1.0));
  CHECK(any.idle_accel_share == Approx(8.0 / 24.0));  // 8 idle in h200 / 24 gpus in the cluster

  j.accelerators = 0;
  j.time_limit = 0;  // unknown: the partition's MaxTime
  const PendingJob cpu = capi::to_pending_job(j, c.cluster, config, now);
  CHECK(cpu.accel_speed == 1.0);
  CHECK(cpu.idle_accel_share == 0.0);
  CHECK(cpu.time_limit == 2 * 86400);
}

TEST_CASE("a model scores exactly as the policy runtime does", "[capi][model]") {
  PrivateDir dir;
  LogLines log;
  Engine e;
  const std::string model = dir.model("policy.pt", 42);
  const std::string config = dir.write("rlsched.yaml", "mode: shadow\nmodel: " + model +
                                                           "\nfallback: fcfs\nscore_scale: 100000\n"
                                                           "accelerator_types:\n"
                                                           "  - {name: h200, gres: gpu, speed: 2.0}\n"
                                                           "  - {name: a100, gres: gpu, speed: 1.0}\n");
  rlsched_engine_options o = options(config, log);
  REQUIRE(rlsched_engine_create(&o, &e.engine) == RLSCHED_OK);
  CHECK(log.count("loaded model " + model, RLSCHED_LOG_INFO) == 1);
  rlsched_engine_info info{};
  REQUIRE(rlsched_engine_get_info(e.engine, &info) == RLSCHED_OK);
  CHECK(std::string(info.scorer) == "model:" + model);
  CHECK(info.mode == RLSCHED_MODE_SHADOW);

  CCluster c;
  const int64_t now = 1'700'000'000;
  const std::vector<rlsched_job> jobs = pending_jobs(500, now);
  std::vector<double> scores(jobs.size());
  std::vector<uint32_t> factors(jobs.size());
  REQUIRE(rlsched_score_batch(e.engine, now, &c.cluster, jobs.data(), jobs.size(), scores.data(), factors.data()) ==
          RLSCHED_OK);

  // The same jobs through the runtime directly.
  auto direct = policy::make_policy_scorer("model:" + model);
  REQUIRE(direct.ok());
  auto parsed = config::load_plugin_config(config);
  REQUIRE(parsed.ok());
  std::vector<PendingJob> pending;
  for (const rlsched_job& j : jobs) pending.push_back(capi::to_pending_job(j, c.cluster, *parsed, now));
  ScoringContext context;
  context.now = now;
  context.total_cpus = c.cluster.cpus_total;
  context.idle_cpus = c.cluster.cpus_idle;
  context.total_nodes = c.cluster.nodes_total;
  context.total_accelerators = 32;
  context.pending_jobs = static_cast<int>(jobs.size());
  std::vector<double> expected(jobs.size());
  (*direct)->score(context, pending, expected);
  for (std::size_t i = 0; i < jobs.size(); ++i) CHECK(scores[i] == expected[i]);
  // Rank shares worked out from their definition, not with site_factors_of: floor(scale * (jobs scored lower) / n).
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    std::uint64_t below = 0;
    for (double other : expected) below += other < expected[i] ? 1 : 0;
    CHECK(factors[i] == below * 100000 / jobs.size());
  }

  rlsched_counters counters{};
  REQUIRE(rlsched_engine_get_counters(e.engine, &counters) == RLSCHED_OK);
  CHECK(counters.model_loads == 1);
  CHECK(counters.fallback_calls == 0);
}

TEST_CASE("a corrupt model: logged once, the fallback serves, a good file is picked up", "[capi][model]") {
  PrivateDir dir;
  LogLines log;
  Engine e;
  const std::string model = dir.write("policy.pt", "not a model");
  const std::string config =
      dir.write("rlsched.yaml", "mode: enforce\nmodel: " + model + "\nfallback: fcfs\nscore_scale: 1000\n");
  rlsched_engine_options o = options(config, log);
  REQUIRE(rlsched_engine_create(&o, &e.engine) == RLSCHED_OK);

  CCluster c;
  const int64_t now = 1'700'000'000;
  const std::vector<rlsched_job> jobs = pending_jobs(10, now);
  std::vector<uint32_t> factors(jobs.size());
  for (int k = 0; k < 3; ++k) {
    REQUIRE(rlsched_engine_check_model(e.engine) == RLSCHED_OK);
    REQUIRE(rlsched_score_batch(e.engine, now, &c.cluster, jobs.data(), jobs.size(), nullptr, factors.data()) ==
            RLSCHED_OK);
  }
  INFO(log.all());
  CHECK(log.count("serving fallback 'fcfs'", RLSCHED_LOG_ERROR) == 1);
  CHECK(factors[0] == 900);  // fcfs order
  rlsched_counters counters{};
  REQUIRE(rlsched_engine_get_counters(e.engine, &counters) == RLSCHED_OK);
  CHECK(counters.model_load_failures == 1);
  CHECK(counters.fallback_calls == 3);
  CHECK(counters.model_loads == 0);

  dir.model("policy.pt", 5);  // renamed over the bad one
  REQUIRE(rlsched_engine_check_model(e.engine) == RLSCHED_OK);
  CHECK(log.count("loaded model") == 1);
  REQUIRE(rlsched_engine_get_counters(e.engine, &counters) == RLSCHED_OK);
  CHECK(counters.model_loads == 1);

  // A second bad version keeps the good model.
  dir.write("policy.pt", "broken again");
  REQUIRE(rlsched_engine_check_model(e.engine) == RLSCHED_OK);
  CHECK(log.count("keeping previous model") == 1);
  rlsched_engine_info info{};
  REQUIRE(rlsched_engine_get_info(e.engine, &info) == RLSCHED_OK);
  CHECK(std::string(info.scorer) == "model:" + model);
}

TEST_CASE("a model file others could write is refused until fixed", "[capi][model][trust]") {
  PrivateDir dir;
  LogLines log;
  Engine e;
  const std::string model = dir.model("policy.pt", 8);
  REQUIRE(::chmod(model.c_str(), 0664) == 0);
  const std::string config = dir.write("rlsched.yaml", "mode: enforce\nmodel: " + model + "\nfallback: sjf\n");
  rlsched_engine_options o = options(config, log);
  REQUIRE(rlsched_engine_create(&o, &e.engine) == RLSCHED_OK);
  for (int k = 0; k < 3; ++k) REQUIRE(rlsched_engine_check_model(e.engine) == RLSCHED_OK);
  CHECK(log.count("refusing model file writable by group or others (mode 0664)", RLSCHED_LOG_ERROR) == 1);
  CHECK(log.count("loaded model") == 0);
  rlsched_counters counters{};
  REQUIRE(rlsched_engine_get_counters(e.engine, &counters) == RLSCHED_OK);
  CHECK(counters.model_untrusted == 1);

  REQUIRE(::chmod(model.c_str(), 0644) == 0);
  REQUIRE(rlsched_engine_check_model(e.engine) == RLSCHED_OK);
  CHECK(log.count("loaded model") == 1);

  // TRUST_ANY_FILE (tests only) skips the checks.
  Engine lax;
  const std::string open_config = dir.write("open.yaml", "mode: enforce\n", 0666);
  rlsched_engine_options lo = options(open_config, log, RLSCHED_ENGINE_TRUST_ANY_FILE);
  CHECK(rlsched_engine_create(&lo, &lax.engine) == RLSCHED_OK);
}

TEST_CASE("reconfigure applies a good file and keeps the old settings on a bad one", "[capi]") {
  PrivateDir dir;
  LogLines log;
  Engine e;
  const std::string config = dir.write("rlsched.yaml", "mode: shadow\nfallback: fcfs\n");
  rlsched_engine_options o = options(config, log);
  REQUIRE(rlsched_engine_create(&o, &e.engine) == RLSCHED_OK);
  rlsched_engine_info info{};

  dir.write("rlsched.yaml", "mode: enforce\nfallback: sjf\nscore_scale: 50\n");
  REQUIRE(rlsched_engine_reconfigure(e.engine) == RLSCHED_OK);
  REQUIRE(rlsched_engine_get_info(e.engine, &info) == RLSCHED_OK);
  CHECK(info.mode == RLSCHED_MODE_ENFORCE);
  CHECK(info.score_scale == 50);
  CHECK(std::string(info.scorer) == "sjf");

  dir.write("rlsched.yaml", "mode: shadow\nscore_scale: -1\n");
  CHECK(rlsched_engine_reconfigure(e.engine) == RLSCHED_ECONFIG);
  CHECK_THAT(rlsched_last_error(e.engine), Catch::Contains("rlsched.yaml:2: score_scale"));
  CHECK(log.count("rlsched.yaml:2", RLSCHED_LOG_ERROR) == 0);  // returned, not logged: the caller logs it
  REQUIRE(rlsched_engine_get_info(e.engine, &info) == RLSCHED_OK);
  CHECK(info.mode == RLSCHED_MODE_ENFORCE);
  CHECK(info.score_scale == 50);
}

TEST_CASE("the reload thread picks up a new model by itself", "[capi][model]") {
  PrivateDir dir;
  LogLines log;
  Engine e;
  const std::string model = dir.file("policy.pt");
  const std::string config = dir.write("rlsched.yaml", "model: " + model + "\nreload_check_interval: 1s\n");
  rlsched_engine_options o = options(config, log);
  o.flags = 0;  // with the thread
  REQUIRE(rlsched_engine_create(&o, &e.engine) == RLSCHED_OK);
  CHECK(log.count("serving fallback 'multifactor'") == 1);  // not there yet
  dir.model("policy.pt", 3);
  for (int i = 0; i < 100 && log.count("loaded model") == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(log.count("loaded model") == 1);
  // Scoring concurrently with the thread is safe.
  CCluster c;
  const std::vector<rlsched_job> jobs = pending_jobs(50, 1'700'000'000);
  for (int k = 0; k < 20; ++k)
    REQUIRE(rlsched_score_batch(e.engine, 1'700'000'000, &c.cluster, jobs.data(), jobs.size(), nullptr, nullptr) ==
            RLSCHED_OK);
}

TEST_CASE("submit mapping through the C ABI", "[capi][submit]") {
  PrivateDir dir;
  LogLines log;
  Engine e;
  const std::string config = dir.write("rlsched.yaml",
                                       "accelerator_types:\n"
                                       "  - {name: h200, gres: gpu, speed: 2.0}\n"
                                       "  - {name: a100, gres: gpu, speed: 1.0}\n"
                                       "  - {name: 910b, gres: npu, speed: 0.8}\n"
                                       "gres_equivalence: [[gpu, npu]]\n"
                                       "placement:\n  record: comment\n");
  rlsched_engine_options o = options(config, log, RLSCHED_ENGINE_NO_POLICY);
  REQUIRE(rlsched_engine_create(&o, &e.engine) == RLSCHED_OK);
  CCluster c;
  const int64_t now = 1'700'000'000;

  rlsched_submit job{};
  job.tres_per_node = "gres:gpu:4";
  job.time_limit = 3600;
  rlsched_submit_result r{};
  REQUIRE(rlsched_submit_map(e.engine, now, &c.cluster, nullptr, 0, &job, &r) == RLSCHED_OK);
  CHECK(r.action == RLSCHED_SUBMIT_MODIFIED);
  CHECK(std::string(r.tres_per_node) == "gres:gpu:h200:4");
  CHECK(std::string(r.partition) == "h200");
  CHECK(r.record == RLSCHED_RECORD_COMMENT);
  CHECK(r.predicted_run == Approx(1800));
  CHECK_THAT(r.message, Catch::StartsWith("rlsched: gpu:4 -> gpu:h200:4"));
  rlsched_submit_result_free(&r);
  CHECK(r.message == nullptr);

  // The queue: 40 pending 8-h200 jobs of 10 h each in partition h200 push the choice to a100; the faster h200
  // stays in the set (if it frees first after all, the job finishes sooner there), so the GRES is typeless.
  std::vector<rlsched_job> queue(40);
  for (auto& q : queue) {
    q.state = RLSCHED_JOB_PENDING;
    q.accelerators = 8;
    q.gres = "gpu";
    q.gres_type = "h200";
    q.time_limit = 36000;
    q.partition = 0;
  }
  REQUIRE(rlsched_submit_map(e.engine, now, &c.cluster, queue.data(), queue.size(), &job, &r) == RLSCHED_OK);
  CHECK(std::string(r.tres_per_node) == "gres:gpu:4");
  CHECK(std::string(r.partition) == "a100,h200");
  rlsched_submit_result_free(&r);

  job.tres_per_node = "gres:gpu:100";
  REQUIRE(rlsched_submit_map(e.engine, now, &c.cluster, nullptr, 0, &job, &r) == RLSCHED_OK);
  CHECK(r.action == RLSCHED_SUBMIT_REJECTED);
  CHECK_THAT(r.message, Catch::Contains("no partition has 100 gpu"));
  rlsched_submit_result_free(&r);

  rlsched_counters counters{};
  REQUIRE(rlsched_engine_get_counters(e.engine, &counters) == RLSCHED_OK);
  CHECK(counters.placements == 2);
  CHECK(counters.rejections == 1);

  // A placement-only engine refuses to score.
  rlsched_job one{};
  CHECK(rlsched_score_one(e.engine, now, &c.cluster, &one, nullptr, nullptr) == RLSCHED_EINVAL);
}

TEST_CASE("site factors are rank shares", "[capi]") {
  std::vector<double> sorted;
  std::vector<uint32_t> out(5);
  site_factors_of({3.0, 1.0, 2.0, 2.0, 5.0}, 100, sorted, out.data());
  CHECK(out == std::vector<uint32_t>{60, 0, 20, 20, 80});  // ties share a value; the best gets (n-1)/n
  CHECK(site_factor_of(10.0, sorted, 100) == 100);
  CHECK(site_factor_of(0.0, sorted, 100) == 0);
  CHECK(site_factor_of(1.0, {}, 100) == 0);
}

}  // namespace
}  // namespace rlsched
