// `rlsched estimate-replay`: how good start-time estimates are on a trace (issue 18, docs/estimates.md). The trace
// is simulated once with its true run times (the reference run); then, at the submit of each sampled job, the
// reference run's state at that moment is handed to sim::forecast with run times hidden, and the job's estimated
// start is compared with the start the reference run gave it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "commands.h"
#include "inputs.h"
#include "progress.h"
#include "rlsched/policy/torchscript_scorer.h"
#include "rlsched/run_time_prediction.h"
#include "rlsched/sim/forecast.h"
#include "run_options.h"

namespace rlsched::cli {

namespace {

struct ReplayOptions {
  RunOptions run;
  std::string policy = "multifactor";
  std::size_t sample = 1000;  ///< jobs whose start is estimated; 0: all
  int history = RunTimePredictorOptions{}.history;
  std::string basis = RunTimePredictorOptions{}.basis == RunTimeBasis::kLimitShare ? "limit-share" : "run-time";
};

/// What the reference run did with one job.
struct ReferenceStart {
  Seconds start = -1, end = -1;
  std::vector<int> nodes, node_cpus;
  int partition = -1, type = -1;
};

/// One kind of estimate's record over the sample.
struct Tally {
  std::vector<double> error, ratio;  ///< |estimated - actual| start; (estimated wait + 60) / (actual wait + 60)
  std::vector<double> waited_ratio;  ///< ratio of the jobs that waited in the reference run
  std::size_t covered = 0;
  double seconds = 0, slowest = 0;  ///< forecast wall time

  void add(Seconds submit, Seconds actual, const sim::StartEstimate& e) {
    constexpr double kNever = 1e18;  // beyond the horizon: wrong by any measure
    error.push_back(e.start < 0 ? kNever : std::abs(static_cast<double>(e.start - actual)));
    ratio.push_back(e.start < 0 ? kNever : static_cast<double>(e.start - submit + 60) /
                                                     static_cast<double>(actual - submit + 60));
    if (actual > submit) waited_ratio.push_back(ratio.back());
    if (e.earliest >= 0 && e.earliest <= actual && (e.latest < 0 || actual <= e.latest)) ++covered;
  }
  double share(const std::vector<double>& v, double low, double high) const {
    const auto n = std::count_if(v.begin(), v.end(), [&](double x) { return x >= low && x <= high; });
    return v.empty() ? 0 : static_cast<double>(n) / static_cast<double>(v.size());
  }
  double median_ratio() const {
    std::vector<double> r = ratio;
    if (r.empty()) return 0;
    std::nth_element(r.begin(), r.begin() + r.size() / 2, r.end());
    return r[r.size() / 2];
  }
  void print(const char* name, bool interval) const {
    const double n = static_cast<double>(std::max<std::size_t>(error.size(), 1));
    const auto percent = [](double x) { return fmt::format("{:.1f}%", 100 * x); };
    fmt::print("{:<28} {:>10.1f}% {:>10.1f}% {:>12.2f} {:>10.1f}% {:>11} {:>11} {:>9.0f} {:>9.0f}\n", name,
               100 * share(error, 0, 600), 100 * share(error, 0, 3600), median_ratio(), 100 * share(ratio, 0.5, 2),
               waited_ratio.empty() ? std::string("-") : percent(share(waited_ratio, 0.5, 2)),
               interval ? percent(static_cast<double>(covered) / n) : std::string("-"),
               1000 * seconds / n, 1000 * slowest);
  }
};

/// The jobs whose start is estimated: every one, or `sample` of them drawn evenly with `seed`, in submit order.
std::vector<int> sampled_jobs(const std::vector<Job>& jobs, const std::vector<ReferenceStart>& reference,
                              std::size_t sample, std::uint64_t seed) {
  std::vector<int> chosen;
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (reference[i].start >= 0) chosen.push_back(static_cast<int>(i));
  if (sample > 0 && chosen.size() > sample) {
    std::mt19937_64 rng(seed);
    std::shuffle(chosen.begin(), chosen.end(), rng);
    chosen.resize(sample);
  }
  std::sort(chosen.begin(), chosen.end(), [&](int a, int b) {
    return jobs[a].submit != jobs[b].submit ? jobs[a].submit < jobs[b].submit : a < b;
  });
  return chosen;
}

int run_estimate_replay(const ReplayOptions& options) {
  if (options.run.parsed_protocol() != sim::Protocol::kFull)
    return fail(Status::InvalidInput("estimate-replay runs the full protocol only"));
  auto inputs = load_inputs(options.run);
  if (!inputs.ok()) return fail(inputs.status());
  const sim::EvaluationOptions evaluation = make_evaluation_options(options.run, *inputs);
  if (!evaluation.sim.failures.empty() || evaluation.sim.preemption.mode != sim::PreemptionMode::kNone)
    return fail(Status::InvalidInput("estimate-replay replays runs without failures or preemption"));
  auto scorer = policy::make_policy_scorer(options.policy, scorer_settings(*inputs));
  if (!scorer.ok()) return fail(scorer.status());
  const Cluster& cluster = inputs->cluster;
  std::vector<Job> jobs = inputs->workload.jobs;
  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i].id = static_cast<JobId>(i + 1);  // traces repeat ids

  std::vector<ReferenceStart> reference(jobs.size());
  sim::SimConfig config = evaluation.sim;
  config.observer = [&](const sim::ScheduleEvent& e) {
    ReferenceStart& r = reference[e.job];
    if (e.kind == sim::ScheduleEvent::Kind::kStart || e.kind == sim::ScheduleEvent::Kind::kBackfillStart)
      r = {e.time, -1, e.nodes, e.node_cpus, e.partition, e.accelerator_type};
    if (e.kind == sim::ScheduleEvent::Kind::kEnd) r.end = e.time;
  };
  auto run = [&]() {
    ProgressBar bar("reference run");
    config.progress = bar.callback();
    return sim::simulate(cluster, jobs, **scorer, config);
  }();
  if (!run.ok()) return fail(run.status());
  config.observer = nullptr;
  config.progress = nullptr;

  const std::vector<int> samples = sampled_jobs(jobs, reference, options.sample, options.run.seed);
  std::vector<int> by_end;  // jobs that ended, in end order: the predictor learns from them as time passes
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (reference[i].end >= 0) by_end.push_back(static_cast<int>(i));
  std::sort(by_end.begin(), by_end.end(), [&](int a, int b) { return reference[a].end < reference[b].end; });
  RunTimePredictor predictor(
      {options.history, options.basis == "limit-share" ? RunTimeBasis::kLimitShare : RunTimeBasis::kRunTime});
  std::size_t learned = 0;

  Tally predicted, limits;
  std::size_t zero_waits = 0, largest_queue = 0;
  ProgressBar bar("estimates");
  for (std::size_t k = 0; k < samples.size(); ++k) {
    const int target = samples[k];
    const Seconds now = jobs[target].submit;
    for (; learned < by_end.size() && reference[by_end[learned]].end <= now; ++learned) {
      const Job& j = jobs[by_end[learned]];
      predictor.record(j.user, j.time_limit, reference[by_end[learned]].end - reference[by_end[learned]].start);
    }
    // The reference run's state at `now`, before its scheduling pass: running jobs started before, pending ones
    // submitted by now and not started before; run times as predicted or (Slurm's own estimate) unknown.
    sim::Snapshot snapshot;
    snapshot.now = now;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const ReferenceStart& r = reference[i];
      Job job = jobs[i];
      job.run_time = predictor.predict(job);
      if (r.start >= 0 && r.start < now && r.end > now) {
        snapshot.running.push_back({job, r.start, r.nodes, r.node_cpus, cluster.partitions[r.partition].name,
                                    r.type >= 0 ? cluster.accelerator_types[r.type].name : std::string()});
      } else if (job.submit <= now && (r.start >= now || (r.start < 0 && r.end < 0))) {
        snapshot.pending.push_back({job, job.submit});
      }
    }
    largest_queue = std::max(largest_queue, snapshot.pending.size());
    const Seconds actual = reference[target].start;
    zero_waits += actual == now ? 1 : 0;
    sim::ForecastOptions forecast;
    forecast.sim = config;
    forecast.targets = {jobs[target].id};
    const auto estimate = [&](Tally& tally) -> Status {
      const auto begin = std::chrono::steady_clock::now();
      auto e = sim::forecast(cluster, snapshot, **scorer, forecast);
      if (!e.ok()) return e.status();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      tally.seconds += seconds;
      tally.slowest = std::max(tally.slowest, seconds);
      tally.add(now, actual, e->front());
      return Status::Ok();
    };
    if (Status s = estimate(predicted); !s.ok()) return fail(s);
    for (sim::RunningJob& j : snapshot.running) j.job.run_time = -1;
    for (sim::QueuedJob& j : snapshot.pending) j.job.run_time = -1;
    forecast.interval = false;
    if (Status s = estimate(limits); !s.ok()) return fail(s);
    bar.callback()(static_cast<double>(k + 1) / static_cast<double>(samples.size()));
  }

  fmt::print("trace {} ({} jobs), cluster {}, policy {}, backfill {}\n", inputs->trace_label, jobs.size(),
             inputs->cluster_label, options.policy, options.run.backfill);
  fmt::print("{} jobs estimated at their submit ({}; seed {}); {:.1f}% started at once in the reference run; "
             "largest queue {}\n",
             samples.size(), samples.size() < jobs.size() ? "an even random sample" : "all that started",
             options.run.seed, 100.0 * static_cast<double>(zero_waits) / std::max(static_cast<double>(samples.size()), 1.0),
             largest_queue);
  fmt::print("{:<28} {:>11} {:>11} {:>12} {:>11} {:>11} {:>11} {:>9} {:>9}\n", "estimate", "<=10 min", "<=1 h",
             "median ratio", "within x2", "x2 waited", "coverage", "mean ms", "max ms");
  predicted.print("forecast, predicted runs", true);
  limits.print("forecast, time limits", false);
  return kExitOk;
}

}  // namespace

CommandRunner setup_estimate_replay(CLI::App& app) {
  auto options = std::make_shared<ReplayOptions>();
  app.add_option("--policy", options->policy, "The policy the cluster runs (fcfs, sjf, ..., multifactor, model:PATH)")
      ->type_name("NAME")
      ->capture_default_str();
  app.add_option("--sample", options->sample, "Jobs to estimate, drawn evenly with --seed; 0: every job that started")
      ->capture_default_str();
  app.add_option("--history", options->history, "Completed jobs per user the run-time prediction averages")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--basis", options->basis, "What it averages: their run times, or the share of their limits used")
      ->check(CLI::IsMember({"run-time", "limit-share"}))
      ->capture_default_str();
  add_run_options(app, options->run);
  return [options] { return run_estimate_replay(*options); };
}

}  // namespace rlsched::cli
