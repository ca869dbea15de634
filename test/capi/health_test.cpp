// The plugins' health record (core/src/capi/health.h): written by the engine's own thread into health_dir, read
// back here as rlsched-exporter reads it.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "capi/health.h"
#include "capi_fixtures.h"
#include "rlsched/policy/model.h"
#include "rlsched/rlsched.h"

namespace rlsched {
namespace {

using testing::PrivateDir;

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

}  // namespace

TEST_CASE("the site_factor plugin's health record names its model and counts its updates", "[capi][health]") {
  PrivateDir dir;
  const std::string model = dir.model("policy.pt", 7);
  std::filesystem::create_directory(dir.file("health"));
  const std::string config =
      dir.write("rlsched.yaml", "model: " + model + "\nhealth_dir: " + dir.file("health") + "\n");
  rlsched_engine_options o{};
  o.abi_version = RLSCHED_ABI_VERSION;
  o.config_path = config.c_str();
  o.flags = RLSCHED_ENGINE_NO_RELOAD_THREAD;
  o.plugin_type = "site_factor/rlsched";
  rlsched_engine* engine = nullptr;
  REQUIRE(rlsched_engine_create(&o, &engine) == RLSCHED_OK);
  CHECK(rlsched_health_note_update(engine, 0.003) == RLSCHED_OK);   // in the 5 ms bucket
  CHECK(rlsched_health_note_update(engine, 0.0002) == RLSCHED_OK);  // in the first (0.5 ms)
  CHECK(rlsched_health_note_update(engine, 2.0) == RLSCHED_OK);     // above every bound
  rlsched_engine_destroy(engine);                                   // writes the final record

  const std::string path = dir.file("health") + "/site_factor.json";
  const nlohmann::json r = read_json(path);
  CHECK(r["schema"] == 1);
  const auto loaded = policy::load_model(model);
  REQUIRE(loaded.ok());
  CHECK(r["model"]["sha256"] == (*loaded)->metadata().weights_sha256);
  CHECK(r["model"]["path"] == model);
  CHECK(r["model"]["fallback_active"] == false);
  CHECK(r["model"]["loaded_at"].get<std::int64_t>() > 0);
  const auto& u = r["site_factor_update_seconds"];
  REQUIRE(u["bounds"].size() + 1 == u["counts"].size());
  CHECK(u["bounds"][3] == 0.005);
  CHECK(u["counts"][0] == 1);
  CHECK(u["counts"][3] == 1);
  CHECK(u["counts"].back() == 1);
  CHECK(u["sum"].get<double>() == Approx(2.0032));
  CHECK(r["preemptions"] == 0);
  // Nothing else is left in the folder: the temporary file was renamed over.
  CHECK(std::distance(std::filesystem::directory_iterator(dir.file("health")), {}) == 1);
}

TEST_CASE("the site_factor record says how much of Slurm's own order the learned rank overturns", "[capi][health]") {
  // Three pending jobs: the shortest limit has waited least. The policy here is SJF (no model; fallback sjf):
  // shortest first, A > B > C. Slurm's multifactor (age weight 1000, the other factors equal): oldest first,
  // C > B > A. Every one of the 3 pairs is reversed: share 1. In shadow mode, as configured.
  PrivateDir dir;
  std::filesystem::create_directory(dir.file("health"));
  const std::string config = dir.write("rlsched.yaml", "fallback: sjf\nhealth_dir: " + dir.file("health") + "\n");
  rlsched_engine_options o{};
  o.abi_version = RLSCHED_ABI_VERSION;
  o.config_path = config.c_str();
  o.flags = RLSCHED_ENGINE_NO_RELOAD_THREAD;
  o.plugin_type = "site_factor/rlsched";
  o.weight_age = 1000;
  rlsched_engine* engine = nullptr;
  REQUIRE(rlsched_engine_create(&o, &engine) == RLSCHED_OK);
  const rlsched_partition part = {"cpu", 1, 64, 64, 1, 0, nullptr, 0};
  const rlsched_cluster cluster = {64, 64, 1, nullptr, 0, &part, 1};
  const int64_t now = 1'700'000'000;
  std::vector<rlsched_job> jobs(3);
  for (int i = 0; i < 3; ++i) {
    rlsched_job& j = jobs[static_cast<std::size_t>(i)];
    j.job_id = static_cast<uint32_t>(i + 1);
    j.state = RLSCHED_JOB_PENDING;
    j.submit_time = now - 600 * (i + 1);
    j.time_limit = 600 * (i + 1);
    j.cpus = 1;
    j.nodes = 1;
    j.age_factor = 0.1 * (i + 1);
    j.partition = 0;
  }
  REQUIRE(rlsched_score_batch(engine, now, &cluster, jobs.data(), jobs.size(), nullptr, nullptr) == RLSCHED_OK);
  rlsched_engine_destroy(engine);
  const nlohmann::json r = read_json(dir.file("health") + "/site_factor.json");
  REQUIRE(r.contains("rank_disagreement"));
  CHECK(r["rank_disagreement"]["share"] == 1.0);
  CHECK(r["rank_disagreement"]["pairs"] == 3);
  CHECK(r["rank_disagreement"]["jobs"] == 3);
  CHECK(r["rank_disagreement"]["mode"] == "shadow");
}

TEST_CASE("a health record is replaced whole, and a folder that cannot be written is an error", "[capi][health]") {
  PrivateDir dir;
  REQUIRE(capi::write_health_record(dir.path(), "preempt", "{\"schema\": 1}").ok());
  REQUIRE(capi::write_health_record(dir.path(), "preempt", "{\"schema\": 1, \"preemptions\": 3}").ok());
  CHECK(read_json(dir.file("preempt.json"))["preemptions"] == 3);
  const Status missing = capi::write_health_record(dir.file("nope"), "preempt", "{}");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.message().find(dir.file("nope") + "/.preempt.json.tmp: cannot write the health record") == 0);
  CHECK(capi::health_record_name("job_submit/rlsched") == "job_submit");
}

TEST_CASE("the writer does not replace a file with the text it already holds", "[capi][health]") {
  PrivateDir dir;
  const std::string file = dir.file("state.json");
  std::mutex mutex;
  std::string text = "{\"n\": 1}\n";
  int renders = 0;
  std::vector<std::string> errors;
  const auto inode = [&] {
    struct stat st {};
    return ::stat(file.c_str(), &st) == 0 ? st.st_ino : ino_t{0};
  };
  const auto wait_for_renders = [&](int n) {
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (renders >= n) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL("the writer did not render");
  };
  auto writer = std::make_unique<capi::HealthWriter>(
      dir.path(), "state", 3600,
      [&] {
        std::lock_guard<std::mutex> lock(mutex);
        ++renders;
        return text;
      },
      [&](const std::string& line) {
        std::lock_guard<std::mutex> lock(mutex);
        errors.push_back(line);
      });
  wait_for_renders(1);  // the first write, at once
  const ino_t first = inode();
  REQUIRE(first != 0);

  SECTION("unchanged at the last write: the same file, not a new one renamed over it") {
    writer.reset();
    CHECK(renders == 2);
    CHECK(inode() == first);
  }
  SECTION("changed: replaced") {
    {
      std::lock_guard<std::mutex> lock(mutex);
      text = "{\"n\": 2}\n";
    }
    writer.reset();
    CHECK(inode() != first);
    CHECK(testing::read_file(file) == "{\"n\": 2}\n");
  }
  SECTION("unchanged but removed meanwhile: written again") {
    std::filesystem::remove(file);
    writer.reset();
    CHECK(testing::read_file(file) == "{\"n\": 1}\n");
  }
  CHECK(errors.empty());
}

}  // namespace rlsched

namespace rlsched {

TEST_CASE("the preempt plugin's record counts victims, their grace and the work they would lose", "[capi][health]") {
  PrivateDir dir;
  std::filesystem::create_directory(dir.file("health"));
  const std::string config =
      dir.write("rlsched.yaml",
                "health_dir: " + dir.file("health") + "\npreemption:\n  min_run_time: 10m\n  grace_margin: 20\n", 0600);
  rlsched_engine_options o{};
  o.abi_version = RLSCHED_ABI_VERSION;
  o.config_path = config.c_str();
  o.flags = RLSCHED_ENGINE_NO_POLICY | RLSCHED_ENGINE_NO_RELOAD_THREAD;
  o.plugin_type = "preempt/rlsched";
  rlsched_engine* engine = nullptr;
  REQUIRE(rlsched_engine_create(&o, &engine) == RLSCHED_OK);
  const int64_t now = 1700000000;
  // 40 min into its run with a checkpoint every 30 min (cost 1 min) on 2 GPUs: 10 min x 2 lost; grace 1 min + 20 s.
  rlsched_preempt_job victim{};
  victim.job_id = 4;
  victim.comment = "checkpoint:interval=30m,cost=1m";
  victim.run_start = now - 2400;
  victim.size = 2;
  uint32_t grace = 0;
  int64_t lost = 0;
  REQUIRE(rlsched_preempt_begin(engine, now, &victim, &grace, &lost) == RLSCHED_OK);
  rlsched_engine_destroy(engine);

  const nlohmann::json r = read_json(dir.file("health") + "/preempt.json");
  CHECK(r["preemptions"] == 1);
  CHECK(r["grace_seconds"] == 80);
  CHECK(r["lost_accelerator_hours"].get<double>() == Approx(2 * 600 / 3600.0));
  CHECK_FALSE(r.contains("model"));  // a plugin that scores nothing (NO_POLICY) says nothing of a model
}

}  // namespace rlsched
