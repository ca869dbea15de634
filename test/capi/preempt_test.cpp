// The preemption half of the C ABI (preempt/rlsched's calls): checkpoint declarations, who may be a victim under
// rlsched.yaml's preemption section, the victim order and the cap the engine's history enforces.
#include <ctime>
#include <string>
#include <vector>

#include "capi_fixtures.h"
#include "rlsched/rlsched.h"

namespace {

using rlsched::testing::PrivateDir;
using rlsched::testing::read_file;

struct Engine {
  rlsched_engine* engine = nullptr;
  ~Engine() { rlsched_engine_destroy(engine); }
};

rlsched_preempt_job running(uint32_t id, const char* comment, int64_t run_start, double size = 1, double rank = 0) {
  rlsched_preempt_job j{};
  j.job_id = id;
  j.comment = comment;
  j.qos = "normal";
  j.run_start = run_start;
  j.size = size;
  j.rank = rank;
  return j;
}

}  // namespace

TEST_CASE("checkpoint declarations through the C ABI: declared, absent, malformed with the user's message",
          "[capi][preempt]") {
  int32_t declared = -1;
  rlsched_checkpoint c{};
  REQUIRE(rlsched_checkpoint_parse("train checkpoint:interval=20m,cost=45s", &declared, &c) == RLSCHED_OK);
  CHECK(declared == 1);
  CHECK(c.interval == 1200);
  CHECK(c.cost == 45);
  REQUIRE(rlsched_checkpoint_parse(nullptr, &declared, &c) == RLSCHED_OK);
  CHECK(declared == 0);
  REQUIRE(rlsched_checkpoint_parse("notes only", &declared, &c) == RLSCHED_OK);
  CHECK(declared == 0);
  CHECK(rlsched_checkpoint_parse("checkpoint:interval=20m", &declared, &c) == RLSCHED_EINVAL);
  CHECK(declared == 0);
  CHECK_THAT(std::string(rlsched_last_error(nullptr)), Catch::Contains("cost= is missing"));
  CHECK(rlsched_checkpoint_parse("x", nullptr, &c) == RLSCHED_EINVAL);
}

TEST_CASE("preempt/rlsched's questions: victims, order, grace and the cap, under the config", "[capi][preempt]") {
  PrivateDir dir;
  const std::string config = dir.write("rlsched.yaml",
                                       "preemption:\n  min_run_time: 10m\n  max_preemptions: 1\n  window: 1h\n"
                                       "  preemptable_qos: [scavenger]\n  grace_margin: 20\n",
                                       0600);
  rlsched_engine_options o{};
  o.abi_version = RLSCHED_ABI_VERSION;
  o.config_path = config.c_str();
  o.flags = RLSCHED_ENGINE_NO_POLICY | RLSCHED_ENGINE_NO_RELOAD_THREAD;
  Engine e;
  REQUIRE(rlsched_engine_create(&o, &e.engine) == RLSCHED_OK);

  const int64_t now = 1700000000;
  int32_t allowed = -1;
  const char* why = nullptr;
  const rlsched_preempt_job plain = running(1, "no declaration", now - 3600);
  REQUIRE(rlsched_preempt_allowed(e.engine, now, &plain, &allowed, &why) == RLSCHED_OK);
  CHECK(allowed == 0);
  CHECK_THAT(std::string(why), Catch::Contains("not checkpointable"));
  rlsched_preempt_job scavenger = running(2, nullptr, now - 3600);
  scavenger.qos = "scavenger";
  REQUIRE(rlsched_preempt_allowed(e.engine, now, &scavenger, &allowed, &why) == RLSCHED_OK);
  CHECK(allowed == 1);
  const rlsched_preempt_job young = running(3, "checkpoint:interval=30m,cost=1m", now - 300);
  REQUIRE(rlsched_preempt_allowed(e.engine, now, &young, &allowed, &why) == RLSCHED_OK);
  CHECK(allowed == 0);
  CHECK_THAT(std::string(why), Catch::Contains("minimum run time"));

  // 40 min run, 30 min interval: 10 min lost on 2 GPUs; the other 25 min on 1 GPU: the first goes first.
  const rlsched_preempt_job ckpt = running(4, "checkpoint:interval=30m,cost=1m", now - 2400, 2);
  const rlsched_preempt_job other = running(5, "checkpoint:interval=30m,cost=1m", now - 1500, 1);
  uint32_t a = 0, b = 0;
  REQUIRE(rlsched_preempt_order(e.engine, now, &ckpt, &a) == RLSCHED_OK);
  REQUIRE(rlsched_preempt_order(e.engine, now, &other, &b) == RLSCHED_OK);
  CHECK(a < b);

  uint32_t grace = 0;
  int64_t lost = -1;
  const rlsched_checkpoint declared{1800, 60};
  REQUIRE(rlsched_checkpoint_grace(e.engine, &declared, &grace) == RLSCHED_OK);
  CHECK(grace == 60 + 20);
  REQUIRE(rlsched_preempt_allowed(e.engine, now, &ckpt, &allowed, &why) == RLSCHED_OK);
  CHECK(allowed == 1);
  REQUIRE(rlsched_preempt_begin(e.engine, now, &ckpt, &grace, &lost) == RLSCHED_OK);
  CHECK(grace == 60 + 20);
  CHECK(lost == 600);
  // Back from its requeue and running again: the cap (1 per hour) keeps it safe until the window has passed.
  rlsched_preempt_job resumed = ckpt;
  resumed.run_start = now + 60;
  REQUIRE(rlsched_preempt_allowed(e.engine, now + 1200, &resumed, &allowed, &why) == RLSCHED_OK);
  CHECK(allowed == 0);
  CHECK_THAT(std::string(why), Catch::Contains("most times"));
  REQUIRE(rlsched_preempt_allowed(e.engine, now + 3601, &resumed, &allowed, &why) == RLSCHED_OK);
  CHECK(allowed == 1);
  REQUIRE(rlsched_preempt_begin(e.engine, now, &scavenger, &grace, &lost) == RLSCHED_OK);
  CHECK(grace == 0);
  CHECK(lost == 3600);

  CHECK(rlsched_preempt_allowed(nullptr, now, &ckpt, &allowed, &why) == RLSCHED_EINVAL);
  CHECK(rlsched_preempt_begin(e.engine, now, nullptr, &grace, &lost) == RLSCHED_EINVAL);
}

namespace {

void keep_line(void* ctx, int, const char* line) {
  static_cast<std::vector<std::string>*>(ctx)->push_back(line);
}

}  // namespace

TEST_CASE("the preemption cap survives a restart: the history is kept in slurmctld's state folder", "[capi][preempt]") {
  PrivateDir dir;
  const std::string config =
      dir.write("rlsched.yaml", "preemption:\n  min_run_time: 10m\n  max_preemptions: 1\n  window: 1h\n", 0600);
  std::vector<std::string> lines;
  rlsched_engine_options o{};
  o.abi_version = RLSCHED_ABI_VERSION;
  o.config_path = config.c_str();
  o.flags = RLSCHED_ENGINE_NO_POLICY | RLSCHED_ENGINE_NO_RELOAD_THREAD | RLSCHED_ENGINE_KEEP_PREEMPTIONS;
  o.log = keep_line;
  o.log_ctx = &lines;
  o.state_dir = dir.path().c_str();
  const std::string file = dir.file("rlsched_preemptions.json");
  // The engine prunes what it loads to the window before the wall clock: the times here are real ones.
  const int64_t now = std::time(nullptr);
  const rlsched_preempt_job victim = running(7, "checkpoint:interval=30m,cost=1m", now - 2400);
  rlsched_preempt_job resumed = victim;
  resumed.run_start = now + 60;
  int32_t allowed = -1;
  const char* why = nullptr;
  uint32_t grace = 0;
  int64_t lost = 0;

  {
    Engine first;
    REQUIRE(rlsched_engine_create(&o, &first.engine) == RLSCHED_OK);
    REQUIRE(rlsched_preempt_allowed(first.engine, now, &victim, &allowed, &why) == RLSCHED_OK);
    REQUIRE(allowed == 1);
    REQUIRE(rlsched_preempt_begin(first.engine, now, &victim, &grace, &lost) == RLSCHED_OK);
  }  // slurmctld stops: the engine's last write
  CHECK(read_file(file) == "{\"schema\": 1, \"preemptions\": [[7, " + std::to_string(now) + "]]}\n");

  SECTION("a restarted slurmctld still refuses a second preemption within the window") {
    Engine second;
    REQUIRE(rlsched_engine_create(&o, &second.engine) == RLSCHED_OK);
    REQUIRE(rlsched_preempt_allowed(second.engine, now + 1200, &resumed, &allowed, &why) == RLSCHED_OK);
    CHECK(allowed == 0);
    CHECK_THAT(std::string(why), Catch::Contains("most times"));
    REQUIRE(rlsched_preempt_allowed(second.engine, now + 3601, &resumed, &allowed, &why) == RLSCHED_OK);
    CHECK(allowed == 1);
  }
  SECTION("without a state folder the history is in memory only") {
    o.state_dir = nullptr;
    Engine second;
    REQUIRE(rlsched_engine_create(&o, &second.engine) == RLSCHED_OK);
    REQUIRE(rlsched_preempt_allowed(second.engine, now + 1200, &resumed, &allowed, &why) == RLSCHED_OK);
    CHECK(allowed == 1);
  }
  SECTION("a damaged file is logged with its name and the cap starts from no history; never an error") {
    dir.write("rlsched_preemptions.json", "{\"schema\": 1,\n \"preemptions\": [[7, ]]}\n");
    Engine second;
    REQUIRE(rlsched_engine_create(&o, &second.engine) == RLSCHED_OK);
    bool logged = false;
    for (const std::string& line : lines)
      logged = logged || (line.find(file + ": not JSON: ") == 0 && line.find("line 2") != std::string::npos &&
                          line.find("starts from no history") != std::string::npos);
    CHECK(logged);
    REQUIRE(rlsched_preempt_allowed(second.engine, now + 1200, &resumed, &allowed, &why) == RLSCHED_OK);
    CHECK(allowed == 1);
    // Set aside, not replaced by the next write: what an admin may recover is not lost.
    CHECK(read_file(file + ".damaged") == "{\"schema\": 1,\n \"preemptions\": [[7, ]]}\n");
  }
  SECTION("a record of another shape is refused the same way") {
    dir.write("rlsched_preemptions.json", "{\"schema\": 1, \"preemptions\": [[7]]}\n");
    Engine second;
    REQUIRE(rlsched_engine_create(&o, &second.engine) == RLSCHED_OK);
    bool logged = false;
    for (const std::string& line : lines)
      logged = logged || line.find(file + ": not an rlsched preemption history: preemptions[0]") == 0;
    CHECK(logged);
  }
}
