#include "rlsched/sim/self_tuning.h"

#include <algorithm>

#include <catch2/catch.hpp>

#include "sim_fixtures.h"

namespace rlsched::test {
namespace {

/// One node of 4 CPUs; every 500 s a 100 s job holds it, then a 300 s job and four 10 s jobs queue behind it, all
/// of the whole node. First come first served runs the long job before the short ones; SJF runs them first.
std::vector<Job> blocked_shorts(int cycles) {
  std::vector<Job> jobs;
  JobId id = 1;
  for (int c = 0; c < cycles; ++c) {
    const Seconds t = c * 500;
    jobs.push_back(cpu_job(id++, t, 100, 4));
    jobs.push_back(cpu_job(id++, t + 1, 300, 4));
    for (int s = 0; s < 4; ++s) jobs.push_back(cpu_job(id++, t + 2 + s, 10, 4));
  }
  return jobs;
}

Cluster one_node() {
  Cluster c;
  c.nodes = {Node{"n1", 4, 0, {}}};
  c.partitions = {Partition{"all", {0}, 1, 1, 0, true}};
  return c;
}

struct TunedRun {
  sim::SimResult result;
  std::vector<sim::SelfTuningScorer::Choice> choices;
};

TunedRun run_tuned(const Cluster& cluster, const std::vector<Job>& jobs, const std::string& spec, std::size_t warm_up,
                   std::size_t every, std::size_t window) {
  sim::SimConfig config;
  auto settings = sim::parse_self_tuning(spec);
  INFO(settings.status().message());
  REQUIRE(settings.ok());
  settings->warm_up = warm_up;
  settings->every = every;
  settings->window = window;
  auto scorer = sim::SelfTuningScorer::Make(cluster, jobs, config, *settings);
  REQUIRE(scorer.ok());
  sim::SelfTuningScorer& tuned = **scorer;
  config.observer = [&tuned](const sim::ScheduleEvent& e) { tuned.observe(e); };
  auto result = sim::simulate(cluster, jobs, tuned, config);
  INFO(result.status().message());
  REQUIRE(result.ok());
  return {std::move(*result), tuned.choices()};
}

TEST_CASE("a self-tuning policy switches to the candidate that served the site's recent jobs better",
          "[sim][self-tuning]") {
  const Cluster cluster = one_node();
  const std::vector<Job> jobs = blocked_shorts(100);
  const double fcfs = run(cluster, jobs, "fcfs").metrics.avg_bsld;
  const double sjf = run(cluster, jobs, "sjf").metrics.avg_bsld;
  REQUIRE(sjf < fcfs / 2);  // the workload is one where the order matters

  const TunedRun tuned = run_tuned(cluster, jobs, "self-tuning:fcfs+sjf", 60, 60, 300);
  // It starts as FCFS and changes once, to SJF, at its first choice: once the first 60 jobs started.
  REQUIRE(tuned.choices.size() == 2);
  CHECK(tuned.choices[0].candidate == 0);
  CHECK(tuned.choices[1].candidate == 1);
  CHECK(tuned.choices[1].replayed == 60);
  CHECK(tuned.choices[1].at >= tuned.result.outcomes[59].start);
  const double self = tuned.result.metrics.avg_bsld;
  CHECK(self < fcfs / 2);
  CHECK(self >= sjf);  // the first 60 jobs ran first come first served
}

TEST_CASE("a self-tuning policy replays every job before the first one still waiting, as far as it is known",
          "[sim][self-tuning]") {
  const Cluster cluster = one_node();
  std::vector<Job> jobs = blocked_shorts(20);
  auto settings = sim::parse_self_tuning("self-tuning:fcfs+sjf");
  REQUIRE(settings.ok());
  settings->window = 50;
  sim::SimConfig config;
  auto made = sim::SelfTuningScorer::Make(cluster, jobs, config, *settings);
  REQUIRE(made.ok());
  sim::SelfTuningScorer& tuned = **made;
  // At every start, what a choice then would replay.
  struct Seen {
    Seconds at;
    std::vector<Job> known;
  };
  std::vector<Seen> seen;
  config.observer = [&](const sim::ScheduleEvent& e) {
    tuned.observe(e);
    if (e.kind == sim::ScheduleEvent::Kind::kStart) seen.push_back({e.time, tuned.known_jobs(e.time)});
  };
  auto result = sim::simulate(cluster, jobs, tuned, config);
  REQUIRE(result.ok());
  std::size_t longest = 0, running = 0, ended = 0;
  for (const Seen& s : seen) {
    INFO("at " << s.at);
    // The jobs (in submit order, as the list is) before the first one that had not started by then.
    std::size_t prefix = 0;
    while (prefix < jobs.size() && result->outcomes[prefix].start <= s.at) ++prefix;
    REQUIRE(s.known.size() == std::min<std::size_t>(prefix, 50));
    for (std::size_t k = 0; k < s.known.size(); ++k) {
      const std::size_t i = prefix - s.known.size() + k;
      INFO("job " << jobs[i].id);
      CHECK(s.known[k].id == jobs[i].id);
      const bool has_ended = result->outcomes[i].end <= s.at;
      const Seconds so_far = std::max<Seconds>(s.at - result->outcomes[i].start, 1);
      CHECK(s.known[k].run_time == (has_ended ? jobs[i].run_time : so_far));
      ++(has_ended ? ended : running);
    }
    longest = std::max(longest, s.known.size());
  }
  CHECK(longest == 50);  // the window was full at the end
  CHECK(running > 0);
  CHECK(ended > 0);
}

TEST_CASE("a job the cluster can never run does not hold back what a self-tuning policy replays",
          "[sim][self-tuning]") {
  const Cluster cluster = one_node();
  std::vector<Job> jobs = blocked_shorts(100);
  jobs.insert(jobs.begin(), cpu_job(1000, 0, 10, 64));  // 64 CPUs on a node of 4: rejected, never started
  const TunedRun tuned = run_tuned(cluster, jobs, "self-tuning:fcfs+sjf", 60, 60, 300);
  REQUIRE(tuned.choices.size() == 2);
  CHECK(tuned.choices[1].candidate == 1);
}

TEST_CASE("a self-tuning policy with the better candidate first keeps it and ranks exactly as it does",
          "[sim][self-tuning]") {
  const Cluster cluster = one_node();
  const std::vector<Job> jobs = blocked_shorts(60);
  const sim::SimResult sjf = run(cluster, jobs, "sjf");
  const TunedRun tuned = run_tuned(cluster, jobs, "self-tuning:sjf+fcfs", 30, 30, 120);
  CHECK(tuned.choices.size() == 1);
  REQUIRE(tuned.result.outcomes.size() == sjf.outcomes.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    INFO("job " << jobs[i].id);
    CHECK(tuned.result.outcomes[i].start == sjf.outcomes[i].start);
  }
}

TEST_CASE("a self-tuning spec names its candidates, and a bad one is refused with the part that is wrong",
          "[sim][self-tuning]") {
  auto plain = sim::parse_self_tuning("self-tuning");
  REQUIRE(plain.ok());
  CHECK(plain->candidates == sim::default_self_tuning_candidates());
  CHECK(plain->candidates.size() == 12);
  for (const std::string& name : plain->candidates) CHECK(make_scorer(name).ok());

  auto own = sim::parse_self_tuning("self-tuning:sjf+area:1/1/0.5");
  REQUIRE(own.ok());
  CHECK(own->candidates == std::vector<std::string>{"sjf", "area:1/1/0.5"});

  CHECK(sim::is_self_tuning_spec("self-tuning:"));
  CHECK_FALSE(sim::is_self_tuning_spec("self-tuningx"));
  CHECK_FALSE(sim::is_self_tuning_spec("sjf"));
  for (const char* bad : {"self-tuning:", "self-tuning:sjf++f1", "self-tuning:sjf+lifo", "self-tuning:area:1/x/0"}) {
    INFO(bad);
    auto parsed = sim::parse_self_tuning(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().message().find(bad) != std::string::npos);
  }
  CHECK(sim::parse_self_tuning("self-tuning:sjf+lifo").status().message().find("lifo") != std::string::npos);
}

}  // namespace
}  // namespace rlsched::test
