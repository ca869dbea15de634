#include "rlsched/sim/predicted_run_time.h"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>

#include "rlsched/sim/rlscheduler_compat.h"
#include "sim_fixtures.h"

namespace rlsched::test {
namespace {

PendingJob pending(JobId id, Seconds limit) {
  PendingJob p;
  p.id = id;
  p.time_limit = limit;
  return p;
}

sim::ScheduleEvent event(sim::ScheduleEvent::Kind kind, Seconds time, int job) {
  sim::ScheduleEvent e;
  e.kind = kind;
  e.time = time;
  e.job = job;
  return e;
}

std::unique_ptr<Scorer> rule(const std::string& name) {
  auto made = make_scorer(name);
  REQUIRE(made.ok());
  return std::move(*made);
}

/// Scores each job by its time limit, and keeps the jobs it was asked to score.
class LimitEcho final : public Scorer {
 public:
  explicit LimitEcho(std::vector<PendingJob>* seen) : seen_(seen) {}
  std::string_view name() const override { return "echo"; }
  void score(const ScoringContext&, const std::vector<PendingJob>& jobs, std::vector<double>& scores) const override {
    *seen_ = jobs;
    for (std::size_t i = 0; i < jobs.size(); ++i) scores[i] = static_cast<double>(jobs[i].time_limit);
  }

 private:
  std::vector<PendingJob>* seen_;
};

/// One node of 4 CPUs.
Cluster one_node() {
  Cluster cluster;
  cluster.nodes = {Node{"n1", 4, 0, {}}};
  cluster.partitions = {Partition{"all", {0}, 1, 1, 0, true}};
  return cluster;
}

/// Every job takes the whole node. a's first job ends after 20 s of its 1000; c's job holds the node from 30 to 130;
/// b's job (300 s asked, 300 run) and a's second (1000 asked, 10 run) wait for it.
std::vector<Job> waiting_behind_c() {
  return {cpu_job(1, 0, 20, 4, 1000, "a"), cpu_job(2, 30, 100, 4, 100, "c"), cpu_job(3, 40, 300, 4, 300, "b"),
          cpu_job(4, 50, 10, 4, 1000, "a")};
}

std::vector<double> scores_of(const sim::PredictedRunTimeScorer& scorer, const std::vector<PendingJob>& jobs) {
  std::vector<double> scores(jobs.size());
  scorer.score(ScoringContext{}, jobs, scores);
  return scores;
}

TEST_CASE("A rule on predicted run times sees each job as asking for its prediction, and nothing else changed",
          "[sim][predicted-run-time]") {
  using Kind = sim::ScheduleEvent::Kind;
  const std::vector<Job> jobs = {cpu_job(21, 0, 90, 8, 900, "a"), cpu_job(22, 0, 10, 8, 600, "a"),
                                 cpu_job(23, 0, 10, 2, 600, "b")};
  std::vector<PendingJob> seen;
  sim::PredictedRunTimeScorer scorer(jobs, std::make_unique<LimitEcho>(&seen));
  CHECK(scorer.name() == "predicted:echo");
  // a's first job used 90 s of its 900: a's next job of 600 s is seen as asking for 60 s; b has no ended job.
  scorer.observe(event(Kind::kStart, 0, 0));
  scorer.observe(event(Kind::kEnd, 90, 0));
  PendingJob a = pending(22, 600);
  a.cpus = 8;
  a.wait = 70;
  a.fits_now = true;
  PendingJob b = pending(23, 600);
  b.cpus = 2;
  const std::vector<PendingJob> queue = {a, b};
  CHECK(scores_of(scorer, queue) == std::vector<double>{60, 600});
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].time_limit == 60);
  CHECK(seen[0].cpus == 8);
  CHECK(seen[0].wait == 70);
  CHECK(seen[0].fits_now);
  CHECK(seen[1].time_limit == 600);
  CHECK(queue[0].time_limit == 600);  // the caller's jobs are its own
}

TEST_CASE("SJF on predicted run times ranks by the limit until a user's job ends, then by the share it used",
          "[sim][predicted-run-time]") {
  using Kind = sim::ScheduleEvent::Kind;
  // Users a and b; ids 11, 12, 13, 14 are the list's indexes 0..3.
  const std::vector<Job> jobs = {cpu_job(11, 0, 20, 4, 1000, "a"), cpu_job(12, 0, 10, 4, 1000, "a"),
                                 cpu_job(13, 0, 300, 4, 300, "b"), cpu_job(14, 0, 50, 4, 400, "a")};
  sim::PredictedRunTimeScorer scorer(jobs, rule("sjf"));
  CHECK(scorer.name() == "predicted:sjf");
  // No job has ended: plain SJF; an id not in the list ranks by its limit too.
  CHECK(scores_of(scorer, {pending(12, 1000), pending(13, 300), pending(99, 50)}) ==
        std::vector<double>{-1000, -300, -50});

  // Job 11 (a, limit 1000) runs from 100 to 120: a's jobs use 2% of their limit. Job 12 is now predicted to run
  // 0.02 * 1000 = 20 s and job 14 0.02 * 400 = 8 s; b has no ended job.
  scorer.observe(event(Kind::kStart, 100, 0));
  scorer.observe(event(Kind::kEnd, 120, 0));
  CHECK(scores_of(scorer, {pending(12, 1000), pending(13, 300), pending(14, 400)}) ==
        std::vector<double>{-20, -300, -8});

  // Job 13 (b) started at 200, was requeued, started again at 500 and ended at 530: its last run, 30 s of 300.
  scorer.observe(event(Kind::kBackfillStart, 200, 2));
  scorer.observe(event(Kind::kRequeue, 260, 2));
  scorer.observe(event(Kind::kStart, 500, 2));
  scorer.observe(event(Kind::kEnd, 530, 2));
  // b's next job of limit 600 would run 0.1 * 600 = 60 s; an end without a start teaches nothing.
  scorer.observe(event(Kind::kEnd, 600, 3));
  CHECK(scores_of(scorer, {pending(13, 600), pending(14, 400)}) == std::vector<double>{-60, -8});
}

TEST_CASE("SJF on predicted run times serves a user's short job first where SJF serves the shorter request",
          "[sim][predicted-run-time]") {
  const Cluster cluster = one_node();
  const std::vector<Job> jobs = waiting_behind_c();
  sim::SimConfig config;
  auto sjf = make_scorer("sjf");
  REQUIRE(sjf.ok());
  auto plain = sim::simulate(cluster, jobs, **sjf, config);
  REQUIRE(plain.ok());
  // SJF: b's job (300 < 1000) at 130, a's at 430.
  CHECK(plain->outcomes[2].start == 130);
  CHECK(plain->outcomes[3].start == 430);

  sim::PredictedRunTimeScorer predicted(jobs, rule("sjf"));
  config.observer = [&predicted](const sim::ScheduleEvent& e) { predicted.observe(e); };
  auto run = sim::simulate(cluster, jobs, predicted, config);
  REQUIRE(run.ok());
  // a's second job is predicted at 0.02 * 1000 = 20 s < 300: it runs at 130 and ends at 140, b's at 140.
  CHECK(run->outcomes[3].start == 130);
  CHECK(run->outcomes[2].start == 140);
}

/// Scores by the job's id; records the jobs with the predicted run time each was shown.
class PredictionRecorder final : public Scorer {
 public:
  explicit PredictionRecorder(bool reads) : reads_(reads) {}
  std::string_view name() const override { return "recorder"; }
  bool reads_predicted_run_time() const override { return reads_; }
  void score(const ScoringContext&, const std::vector<PendingJob>& jobs, std::vector<double>& scores) const override {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      shown[jobs[i].id] = jobs[i];
      scores[i] = -static_cast<double>(jobs[i].id);
    }
  }
  mutable std::map<JobId, PendingJob> shown;  ///< the last view of each job

 private:
  bool reads_;
};

TEST_CASE("The simulator shows a scorer that reads predicted run times each job's prediction beside its limit",
          "[sim][predicted-run-time]") {
  const Cluster cluster = one_node();
  const std::vector<Job> jobs = waiting_behind_c();
  PredictionRecorder reads(true), ignores(false);
  REQUIRE(sim::simulate(cluster, jobs, reads, {}).ok());
  REQUIRE(sim::simulate(cluster, jobs, ignores, {}).ok());
  CHECK(reads.shown.at(4).time_limit == 1000);
  CHECK(reads.shown.at(4).predicted_run_time == 20);   // 2% of a's first limit, times 1000
  CHECK(reads.shown.at(3).predicted_run_time == 300);  // b has no ended job: the limit
  CHECK(ignores.shown.at(4).predicted_run_time == 0);  // not asked for: not computed

  // The area rule on predicted run times schedules as SJF on predicted run times does here.
  auto rule_on_predicted = make_scorer("area:1/0/0/predicted");
  REQUIRE(rule_on_predicted.ok());
  auto run = sim::simulate(cluster, jobs, **rule_on_predicted, {});
  REQUIRE(run.ok());
  CHECK(run->outcomes[3].start == 130);
  CHECK(run->outcomes[2].start == 140);
}

/// Chooses the first job and records the queues it was shown.
class FirstChooser final : public sim::DecisionMaker {
 public:
  explicit FirstChooser(bool reads) : reads_(reads) {}
  bool reads_predicted_run_time() const override { return reads_; }
  std::size_t choose(const ScoringContext&, const std::vector<PendingJob>& queue) override {
    for (const PendingJob& p : queue) shown[p.id] = p;
    return 0;
  }
  std::map<JobId, PendingJob> shown;

 private:
  bool reads_;
};

TEST_CASE("The compat simulator shows an agent each job's predicted run time from the ends so far",
          "[sim][predicted-run-time]") {
  static Workload w;  // the prepared workload refers back to it
  // One 4-processor node. a's job 1 runs 90 s of its 900 (10%); b's job 2 holds the node until 400; a's job 3
  // (limit 600) and b's job 4 (limit 500) wait behind it and see a's prediction, 60 s; b's job has none yet.
  w.jobs = {cpu_job(1, 0, 90, 4, 900, "a"), cpu_job(2, 95, 300, 4, 300, "b"), cpu_job(3, 100, 10, 4, 600, "a"),
            cpu_job(4, 110, 10, 4, 500, "b")};
  auto prepared = sim::prepare_compat_workload(w, 1, 4);
  REQUIRE(prepared.ok());
  FirstChooser agent(true), ignores(false);
  sim::run_compat_sequence(*prepared, 0, prepared->jobs.size(), agent, false);
  sim::run_compat_sequence(*prepared, 0, prepared->jobs.size(), ignores, false);
  REQUIRE(agent.shown.count(3) == 1);
  CHECK(agent.shown.at(3).time_limit == 600);
  CHECK(agent.shown.at(3).predicted_run_time == 60);
  CHECK(agent.shown.at(4).predicted_run_time == 500);
  CHECK(ignores.shown.at(3).predicted_run_time == 0);  // not asked for: not computed
}

}  // namespace
}  // namespace rlsched::test
