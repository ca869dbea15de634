#include "rlsched/preemption.h"

#include <catch2/catch.hpp>

using namespace rlsched;
using namespace rlsched::preemption;

namespace {

std::string error_of(std::string_view comment) {
  auto r = parse_checkpoint_comment(comment);
  REQUIRE_FALSE(r.ok());
  return r.status().message();
}

Candidate job(JobId id, std::optional<Checkpoint> checkpoint, Seconds run_start, double size = 1, double rank = 0,
              std::string qos = "normal") {
  Candidate c;
  c.id = id;
  c.checkpoint = checkpoint;
  c.run_start = run_start;
  c.size = size;
  c.rank = rank;
  c.qos = std::move(qos);
  return c;
}

}  // namespace

TEST_CASE("a checkpoint declaration in the job comment is parsed strictly") {
  auto plain = parse_checkpoint_comment("my experiment 12");
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->has_value());

  auto declared = parse_checkpoint_comment("resnet sweep checkpoint:interval=30m,cost=90s");
  REQUIRE(declared.ok());
  REQUIRE(declared->has_value());
  CHECK((*declared)->interval == 1800);
  CHECK((*declared)->cost == 90);
  auto hours = parse_checkpoint_comment("checkpoint:cost=2m,interval=2h");
  REQUIRE((hours.ok() && hours->has_value()));
  CHECK((*hours)->interval == 7200);
  CHECK((*hours)->cost == 120);

  CHECK_THAT(error_of("checkpoint:interval=30x,cost=90s"),
             Catch::Contains("'30x' is not a duration: use 90s, 30m or 2h"));
  CHECK_THAT(error_of("checkpoint:interval=30m"), Catch::Contains("cost= is missing"));
  CHECK_THAT(error_of("checkpoint:cost=1m"), Catch::Contains("interval= is missing"));
  CHECK_THAT(error_of("checkpoint:"), Catch::Contains("give interval= and cost="));
  CHECK_THAT(error_of("checkpoint:interval=30m,cost=1m,every=5m"), Catch::Contains("unknown key 'every'"));
  CHECK_THAT(error_of("checkpoint:interval=30m,interval=20m,cost=1m"), Catch::Contains("'interval' is given twice"));
  CHECK_THAT(error_of("checkpoint:interval=10m,cost=10m"), Catch::Contains("less than the interval"));
  CHECK_THAT(error_of("checkpoint:interval=5s,cost=1s"), Catch::Contains("at least 10s"));
  CHECK_THAT(error_of("checkpoint:interval=5h,cost=2h"), Catch::Contains("at most 1h"));
  CHECK_THAT(error_of("checkpoint:interval=-5m,cost=1m"), Catch::Contains("'-5m' is not a duration"));
  CHECK_THAT(error_of("checkpoint=30m"), Catch::Contains("starts with 'checkpoint:'"));
  CHECK_THAT(error_of("checkpoint:interval=30m,cost=1m checkpoint:interval=20m,cost=1m"),
             Catch::Contains("once"));
  // ';' ends a word: job_submit/rlsched appends its placement record to the comment as "; rlsched: ...".
  CHECK_THAT(error_of("checkpoint:interval=30m;cost=1m"), Catch::Contains("cost= is missing"));
  auto recorded = parse_checkpoint_comment("checkpoint:interval=30m,cost=1m; rlsched: gpu:4 -> gpu:h200:4");
  REQUIRE((recorded.ok() && recorded->has_value()));
  CHECK((*recorded)->cost == 60);
  // Every message shows the form to use.
  CHECK_THAT(error_of("checkpoint:interval"), Catch::Contains("checkpoint:interval=30m,cost=90s"));
}

TEST_CASE("only checkpointable jobs or preemptable QOS are victims, after the minimum run time, within the cap") {
  Policy policy;
  policy.min_run_time = 600;
  policy.max_preemptions = 2;
  policy.window = 3600;
  policy.preemptable_qos = {"scavenger"};
  History history;
  const Seconds now = 10000;
  const Checkpoint every_30m{1800, 60};

  CHECK(refusal(policy, job(1, std::nullopt, 0), history, now) == Refusal::kNotCheckpointable);
  CHECK(refusal(policy, job(2, std::nullopt, 0, 1, 0, "scavenger"), history, now) == Refusal::kNone);
  CHECK(refusal(policy, job(3, every_30m, now - 599), history, now) == Refusal::kTooYoung);
  CHECK(refusal(policy, job(3, every_30m, now - 600), history, now) == Refusal::kNone);

  history.record(3, now - 3700);  // outside the window
  history.record(3, now - 1000);
  CHECK(refusal(policy, job(3, every_30m, 0), history, now) == Refusal::kNone);
  history.record(3, now - 10);
  CHECK(history.recent(3, now, 3600) == 2);
  CHECK(refusal(policy, job(3, every_30m, 0), history, now) == Refusal::kCapReached);
  CHECK(refusal(policy, job(3, every_30m, 0), history, now + 3600) == Refusal::kNone);  // the window moved on
  policy.max_preemptions = 0;  // no cap
  CHECK(refusal(policy, job(3, every_30m, 0), history, now) == Refusal::kNone);

  history.prune(now + 3600, 3600);
  CHECK(history.jobs() == 0);
}

TEST_CASE("victims go in order of work lost since their last checkpoint, then of learned rank") {
  Policy policy;
  policy.min_run_time = 0;
  policy.preemptable_qos = {"scavenger"};
  const Seconds now = 100000;
  // Ran 100 min with a 30 min interval: 10 min since its last checkpoint, on 4 GPUs = 40 GPU-minutes.
  const Candidate ckpt4 = job(1, Checkpoint{1800, 60}, now - 6000, 4, 0.9);
  // 25 min since the last checkpoint on 1 GPU = 25 GPU-minutes.
  const Candidate ckpt1 = job(2, Checkpoint{1800, 60}, now - 1500, 1, 0.9);
  // Same lost work as ckpt1, lower learned rank: goes before it.
  const Candidate ckpt1_low = job(3, Checkpoint{3600, 60}, now - 1500, 1, 0.1);
  // No checkpoint: its whole 30 min run on 2 GPUs = 60 GPU-minutes.
  const Candidate scavenger = job(4, std::nullopt, now - 1800, 2, 0.0, "scavenger");
  const Candidate protected_job = job(5, std::nullopt, now - 60, 1, 0.0);

  CHECK(run_time_lost(ckpt4, now) == 600);
  CHECK(work_lost(ckpt4, now) == 2400);
  CHECK(run_time_lost(scavenger, now) == 1800);
  CHECK(victim_order(ckpt1_low, now) < victim_order(ckpt1, now));
  CHECK(victim_order(ckpt1, now) < victim_order(ckpt4, now));
  CHECK(victim_order(ckpt4, now) < victim_order(scavenger, now));

  const std::vector<Candidate> all{ckpt4, ckpt1, ckpt1_low, scavenger, protected_job};
  CHECK(victims_in_order(policy, all, History{}, now) == std::vector<std::size_t>{2, 1, 0, 3});

  CHECK(grace_time(policy, ckpt4) == 60 + policy.grace_margin);
  CHECK(grace_time(policy, scavenger) == 0);
}

TEST_CASE("checkpointable means one thing: a declared checkpoint") {
  struct Case {
    const char* comment;
    Seconds interval;  // 0: not checkpointable
  };
  const Case cases[] = {
      {nullptr, 0},
      {"", 0},
      {"notes only", 0},
      {"train checkpoint:interval=30m,cost=90s", 1800},
      {"checkpoint:interval=1:00:00,cost=1m", 3600},
      {"checkpoint:interval=30m", 0},  // malformed: declares nothing
      {"checkpoint=30m", 0},
  };
  for (const Case& c : cases) {
    INFO((c.comment ? c.comment : "(null)"));
    const std::optional<Checkpoint> declared = declared_checkpoint(c.comment);
    CHECK(declared.has_value() == (c.interval > 0));
    if (declared) CHECK(declared->interval == c.interval);
    Job j;
    j.checkpoint_interval = declared ? declared->interval : 0;
    CHECK(j.checkpointable() == declared.has_value());
  }
}
