// Rollouts in the Slurm model (slurm_rollout.h): what is recorded, that it is what was played, that the deployed
// behaviour is the plain policy in sim::simulate, and that training there learns an obvious rule.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "networks.h"
#include "ppo.h"
#include "rlsched/policy/model.h"
#include "rlsched/sim/evaluation.h"
#include "rlsched/sim/simulator.h"
#include "rlsched/sim/workload_generator.h"
#include "rlsched/train/trainer.h"
#include "rollout.h"
#include "slurm_rollout.h"
#include "trace_split.h"

// Last: libtorch pulls in glog, whose CHECK would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace rlsched;
using namespace rlsched::train;

namespace {

/// One 4-CPU node, every job takes all of it: short (60 s) and long (3,600 s) jobs in random order, exact time
/// limits, arrivals at about 90% load. Nothing backfills, so the order is everything: shortest first gives a far
/// lower bounded slowdown than first come first served. No multifactor weights: the site factor alone orders.
TrainWorkload short_first_workload(std::size_t jobs, std::uint64_t seed, int nodes = 1) {
  TrainWorkload w;
  w.label = "short-first";
  w.cluster = Cluster::Homogeneous(nodes, 4);
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(1.0 / 2000.0);
  std::bernoulli_distribution is_short(0.5);
  double t = 0;
  for (std::size_t i = 0; i < jobs; ++i) {
    Job j;
    j.id = static_cast<JobId>(i + 1);
    j.user = "u" + std::to_string(i % 7);
    j.submit = static_cast<Seconds>(t);
    j.cpus = 4 * nodes;
    j.nodes = nodes;
    j.run_time = is_short(rng) ? 60 : 3600;
    j.time_limit = j.run_time;
    w.workload.jobs.push_back(j);
    t += gap(rng);
  }
  return w;
}

PolicyNets random_nets(std::uint64_t seed, const TraceSplit& t) {
  torch::manual_seed(seed);
  PolicyNets nets(static_cast<int>(features::kFeatureCount), std::vector<int>{16});
  // Normalise by the states of one greedy run, as the trainer does from its demonstrations.
  const SlurmSequence s{&t, 0, 128};
  std::mt19937_64 rng(1);
  Exploration plain;
  plain.record = true;
  plain.samples_per_job = 0;
  const ScoreEpisode e = run_slurm_policy(s, nets->to_plain(), plain, {}, CostModel(TrainConfig{}), 1.0, rng);
  Episode as_rows;
  as_rows.features = e.features;
  const auto [mean, std] = feature_statistics({as_rows});
  nets->set_normalisation(mean, std);
  return nets;
}

/// PPO from a random policy on short_first_workload, validated after every epoch: the run the selection tests
/// share.
TrainConfig shortest_first_config() {
  TrainConfig c;
  c.rollouts = Rollouts::kSlurm;
  c.workloads = {short_first_workload(1500, 7)};
  c.imitation_epochs = 0;  // from a random policy
  c.reference = "fcfs";
  c.sequence_length = 128;
  c.episodes_per_epoch = 16;
  c.rollouts_per_sequence = 4;
  c.score_noise = 1.0;
  c.epochs = 6;
  c.eval_every = 1;
  c.patience = 0;
  c.validation_sequences = 1;
  c.hidden = {16};
  c.seed = 3;
  c.threads = 2;
  return c;
}

/// One epoch at a learning rate too small to move the network: the runs that check where training starts.
TrainConfig start_config(std::vector<TrainWorkload> workloads) {
  TrainConfig c;
  c.rollouts = Rollouts::kSlurm;
  c.workloads = std::move(workloads);
  c.reference = "fcfs";
  c.sequence_length = 128;
  c.learning_rate = 1e-5;
  c.epochs = 1;
  c.episodes_per_epoch = 4;
  c.validation_sequences = 1;
  c.hidden = {8, 8};
  c.threads = 1;
  return c;
}

}  // namespace

// The time split an admin relies on: `rlsched train` never reads the jobs `rlsched evaluate --candidate` judges, so
// neither training nor model selection sees them.
TEST_CASE("training never reads the held-back jobs: the last share by submit time, which the verdict judges") {
  TrainWorkload w = short_first_workload(400, 5);
  std::reverse(w.workload.jobs.begin(), w.workload.jobs.end());  // read out of submit order
  Workload verdict_copy = w.workload;
  const Workload verdict = take_recent(verdict_copy, 0.25);  // what evaluate --candidate --held-back 0.25 keeps
  REQUIRE(verdict.jobs.size() == 100);
  REQUIRE(verdict_copy.jobs.size() == 300);

  TrainConfig config;
  config.held_back = 0.25;
  config.validation_share = 0.2;
  config.sequence_length = 32;
  auto split = split_workload(w, config);
  INFO(split.status().message());
  REQUIRE(split.ok());
  CHECK(split->held_back_jobs == 100);
  REQUIRE(split->workload.jobs.size() == 300);
  const Seconds first_verdict = verdict.jobs.front().submit;
  for (const Job& j : split->workload.jobs) CHECK(j.submit <= first_verdict);
  std::set<JobId> judged;
  for (const Job& j : verdict.jobs) judged.insert(j.id);
  for (const Job& j : split->workload.jobs) CHECK(judged.count(j.id) == 0);
  // Of the 300 read, the first 240 train and the last 60 validate.
  CHECK(split->train_end == 240);
  const Workload validation = validation_workload(*split);
  REQUIRE(validation.jobs.size() == 60);
  CHECK(validation.jobs.front().id == verdict_copy.jobs[240].id);
  CHECK(validation.jobs.back().id == verdict_copy.jobs[299].id);

  config.held_back = 0;  // judged on other workloads: every job is read
  auto all = split_workload(w, config);
  REQUIRE(all.ok());
  CHECK(all->held_back_jobs == 0);
  CHECK(all->workload.jobs.size() == 400);
  CHECK(all->train_end == 320);
}

// The figure that says whether imitation worked: the teacher rule's own ratio on the validation jobs, beside the
// ratio of the network that imitated it. Recomputed here: SJF over FCFS on the validation jobs in the Slurm model.
TEST_CASE("training reports the teacher's own validation figure, recomputed from the validation jobs") {
  TrainConfig c = start_config({short_first_workload(1500, 7)});
  c.teacher = "sjf";
  c.imitation_epochs = 5;
  c.hidden = {8};
  auto result = train_policy(c);
  INFO(result.status().message());
  REQUIRE(result.ok());
  auto split = split_workload(c.workloads[0], c);
  REQUIRE(split.ok());
  const Workload validation = validation_workload(*split);
  sim::EvaluationOptions options;
  options.sim.backfill = c.backfill;
  auto sjf = make_scorer("sjf");
  auto fcfs = make_scorer("fcfs");
  REQUIRE((sjf.ok() && fcfs.ok()));
  auto taught = sim::evaluate_policy(validation, split->cluster.get(), **sjf, options);
  auto reference = sim::evaluate_policy(validation, split->cluster.get(), **fcfs, options);
  REQUIRE((taught.ok() && reference.ok()));
  const double expected = taught->metrics.avg_bsld / reference->metrics.avg_bsld;
  CHECK(expected < 0.8);  // shortest first clearly beats FCFS on this workload
  CHECK(result->teacher_validation_cost_ratio == Approx(expected).epsilon(1e-9));
}

// SJF is a weighted sum of one feature (limit_log), so the network starts as SJF itself: its first validation figure
// is the teacher's to the last digit, where an imitated network only comes near it. Imitating with too few passes
// (one) to learn SJF shows the difference: the imitated start is not the teacher.
TEST_CASE("starting as the rule: the network's first validation figure is the teacher's own") {
  TrainConfig c = start_config({short_first_workload(1500, 7)});
  c.teacher = "sjf";
  c.imitation_epochs = 1;
  auto exact = train_policy(c);
  INFO(exact.status().message());
  REQUIRE(exact.ok());
  CHECK(exact->teacher.find("compute the rule exactly") != std::string::npos);
  CHECK(exact->teacher_validation_cost_ratio < 0.8);
  CHECK(exact->initial_validation_cost_ratio == Approx(exact->teacher_validation_cost_ratio).epsilon(1e-9));

  c.exact_teacher = false;
  auto imitated = train_policy(c);
  REQUIRE(imitated.ok());
  CHECK(imitated->teacher.find("exactly") == std::string::npos);
  CHECK(imitated->teacher_validation_cost_ratio == Approx(exact->teacher_validation_cost_ratio).epsilon(1e-12));
  CHECK(imitated->initial_validation_cost_ratio > exact->initial_validation_cost_ratio + 0.01);
}

// Several traces on clusters of different sizes: the search chooses one rule for all of them (in the cluster-relative
// form, one weighted sum of the features everywhere), and the network starts as that rule on every trace.
TEST_CASE("with several traces the search chooses one rule for all, and the network starts as it") {
  TrainConfig c = start_config({short_first_workload(1200, 7), short_first_workload(1200, 8, 4)});
  c.imitation_epochs = 2;
  c.threads = 2;
  auto joint = train_policy(c);
  INFO(joint.status().message());
  REQUIRE(joint.ok());
  INFO(joint->teacher);
  CHECK(joint->teacher.find("for all 2 traces") != std::string::npos);
  CHECK(joint->teacher.find("compute the rule exactly") != std::string::npos);
  CHECK(joint->teacher_validation_cost_ratio < 0.8);  // a shortest-first rule, far better than FCFS on both
  CHECK(joint->initial_validation_cost_ratio == Approx(joint->teacher_validation_cost_ratio).epsilon(1e-9));

  c.teacher = "search-each";
  auto each = train_policy(c);
  REQUIRE(each.ok());
  INFO(each->teacher);
  CHECK(each->teacher.find("for all") == std::string::npos);
  CHECK(each->teacher.find("; ") != std::string::npos);  // one teacher named per trace
}

namespace {

/// The teacher of the trace labelled `label` in a TrainResult::teacher line ("a: rule (cost ratio ...); b: ...").
std::string teacher_of(const std::string& line, const std::string& label) {
  for (std::size_t from = 0; from < line.size();) {
    const std::size_t end = std::min(line.find("; ", from), line.size());
    if (line.compare(from, label.size() + 2, label + ": ") == 0) return line.substr(from, end - from);
    from = end + 2;
  }
  return "";
}

/// A generated GPU site of 1,500 jobs at 90% load, on its own cluster: typed accelerators, several partitions.
TrainWorkload generated_gpu_site() {
  sim::GeneratorSpec spec;
  spec.family = sim::WorkloadFamily::kGpu;
  spec.seed = 5;
  spec.jobs = 1500;
  spec.load = 0.9;
  auto site = sim::generate_workload(spec);
  REQUIRE(site.ok());
  return TrainWorkload{"gpu-site", site->workload, site->cluster};
}

}  // namespace

// The compat simulator schedules GPU jobs as their CPUs on one pool. With slurm_teacher_for_accelerators a trace
// with accelerator jobs has its teacher searched in the Slurm model on its own cluster, as Slurm rollouts search it;
// a CPU trace's stays in the compat simulator.
TEST_CASE("compat rollouts can search a GPU trace's teacher in the Slurm model as Slurm rollouts do") {
  TrainConfig c = start_config({short_first_workload(1200, 7), generated_gpu_site()});
  c.rollouts = Rollouts::kCompat;
  c.teacher = "search-each";
  c.imitation_epochs = 1;
  c.threads = 2;
  auto compat = train_policy(c);
  INFO(compat.status().message());
  REQUIRE(compat.ok());
  INFO(compat->teacher);
  CHECK(compat->teacher.find("in the Slurm model") == std::string::npos);
  CHECK(teacher_of(compat->teacher, "gpu-site").find("training sequences)") != std::string::npos);

  c.slurm_teacher_for_accelerators = true;
  auto mixed = train_policy(c);
  REQUIRE(mixed.ok());
  INFO(mixed->teacher);
  const std::string gpu_teacher = teacher_of(mixed->teacher, "gpu-site");
  CHECK(gpu_teacher.find("training jobs in the Slurm model)") != std::string::npos);
  CHECK(teacher_of(mixed->teacher, "short-first").find("training sequences)") != std::string::npos);

  c.rollouts = Rollouts::kSlurm;
  c.slurm_teacher_for_accelerators = false;
  auto slurm = train_policy(c);
  REQUIRE(slurm.ok());
  INFO(slurm->teacher);
  CHECK(teacher_of(slurm->teacher, "gpu-site") == gpu_teacher);
}

// Mixed rollouts run each workload where its jobs can be seen: the GPU site in the Slurm model on its cluster, where
// the accelerator features vary between the jobs a decision ranks (so the model keeps them), the CPU trace in the
// compat simulator. Compat rollouts alone never show the network an accelerator.
TEST_CASE("mixed rollouts train a GPU site in the Slurm model and a CPU trace in compat, and keep accelerator inputs") {
  TrainConfig c = start_config({short_first_workload(1200, 7), generated_gpu_site()});
  c.teacher = "search-each";
  c.imitation_epochs = 1;
  c.episodes_per_epoch = 8;  // about half of the draws each kind's
  c.threads = 2;
  const auto reads_accelerators = [](const std::string& path) {
    auto model = policy::load_model(path);
    REQUIRE(model.ok());
    const std::vector<std::string> names = (*model)->metadata().feature_names();
    return std::find(names.begin(), names.end(), "accel_share") != names.end();
  };

  c.rollouts = Rollouts::kCompat;
  c.output = std::string(P_tmpdir) + "/rlsched_compat_rollouts.pt";
  auto compat = train_policy(c);
  INFO(compat.status().message());
  REQUIRE(compat.ok());
  CHECK_FALSE(reads_accelerators(c.output));

  c.rollouts = Rollouts::kMixed;
  c.output = std::string(P_tmpdir) + "/rlsched_mixed_rollouts.pt";
  auto mixed = train_policy(c);
  INFO(mixed.status().message());
  REQUIRE(mixed.ok());
  INFO(mixed->teacher);
  CHECK(teacher_of(mixed->teacher, "gpu-site").find("training jobs in the Slurm model)") != std::string::npos);
  CHECK(teacher_of(mixed->teacher, "short-first").find("training sequences)") != std::string::npos);
  CHECK(reads_accelerators(c.output));
  REQUIRE(mixed->curve.size() == 1);
  CHECK(std::isfinite(mixed->curve[0].train_cost_ratio));
  CHECK(mixed->curve[0].train_cost_ratio > 0);

  // Without accelerator jobs nothing runs in the Slurm model: mixed trains exactly as compat does.
  c.workloads.pop_back();
  c.output.clear();
  c.rollouts = Rollouts::kCompat;
  auto cpu_compat = train_policy(c);
  c.rollouts = Rollouts::kMixed;
  auto cpu_mixed = train_policy(c);
  REQUIRE(cpu_compat.ok());
  REQUIRE(cpu_mixed.ok());
  CHECK(cpu_mixed->teacher == cpu_compat->teacher);
  REQUIRE(cpu_mixed->curve.size() == 1);
  CHECK(cpu_mixed->curve[0].train_cost_ratio == cpu_compat->curve[0].train_cost_ratio);
  CHECK(cpu_mixed->curve[0].validation_cost_ratio == cpu_compat->curve[0].validation_cost_ratio);
}

TEST_CASE("a Slurm-model rollout records one sample per (job, scoring call), with held offsets and exact log-probs") {
  TrainConfig config;
  config.sequence_length = 128;
  auto split = split_workload(short_first_workload(800, 3), config);
  INFO(split.status().message());
  REQUIRE(split.ok());
  PolicyNets nets = random_nets(5, *split);
  const PlainMlp plain = nets->to_plain();
  const SlurmSequence s{&*split, 10, 128};
  const std::vector<Job> jobs = sequence_jobs(s);
  REQUIRE(jobs.size() == 128);
  CHECK(jobs.front().submit == 0);

  for (const double sign : {1.0, -1.0}) {
    Exploration x;
    x.sigma = 0.7;
    x.key = 42;
    x.sign = sign;
    x.samples_per_job = 0;  // keep every call
    std::mt19937_64 rng(1);
    const ScoreEpisode e = run_slurm_policy(s, plain, x, {}, CostModel(config), 1.0, rng);
    REQUIRE(e.samples() > jobs.size());  // jobs wait, so most are scored more than once
    CHECK(e.samples() == e.scored_rows);
    CHECK(e.calls > 0);
    CHECK(e.features.size() == e.samples() * features::kFeatureCount);

    // The played score minus the policy's own score is the job's offset, the same at every call.
    std::map<std::uint32_t, double> weight_sum;
    const auto rows = static_cast<int64_t>(e.samples());
    const torch::Tensor x_rows =
        torch::from_blob(const_cast<float*>(e.features.data()), {rows, static_cast<int64_t>(features::kFeatureCount)});
    const torch::Tensor played = torch::from_blob(const_cast<float*>(e.played.data()), {rows});
    torch::Tensor mean;
    {
      torch::NoGradGuard no_grad;
      mean = nets->scores(x_rows).contiguous();
    }
    for (std::size_t i = 0; i < e.samples(); ++i) {
      const double offset = sign * x.sigma * job_offset(x.key, jobs[e.job[i]].id);
      CHECK(e.played[i] - mean[static_cast<int64_t>(i)].item<float>() == Approx(offset).margin(1e-3));
      weight_sum[e.job[i]] += e.weight[i];
    }
    CHECK(weight_sum.size() == jobs.size());  // every job is scored at least at submit
    for (const auto& [job, sum] : weight_sum) CHECK(sum == Approx(1.0));

    // The recorded log-probabilities recompute from the features and the played scores alone.
    torch::Tensor logp;
    {
      torch::NoGradGuard no_grad;
      logp = score_log_densities(nets, x_rows, played, x.sigma).contiguous();
    }
    double worst = 0;
    for (std::size_t i = 0; i < e.samples(); ++i)
      worst = std::max(worst, std::abs(static_cast<double>(logp[static_cast<int64_t>(i)].item<float>() - e.logp[i])));
    CHECK(worst < 1e-3);
    CHECK(e.logp[0] == Approx(score_log_density(e.played[0], mean[0].item<float>(), x.sigma)).margin(1e-4));
  }

  // A bounded reservoir keeps at most k calls of each job, all of the job's weight still summing to 1.
  Exploration few;
  few.sigma = 0.7;
  few.key = 42;
  few.samples_per_job = 2;
  std::mt19937_64 rng(1);
  const ScoreEpisode e = run_slurm_policy(s, plain, few, {}, CostModel(config), 1.0, rng);
  std::map<std::uint32_t, int> per_job;
  for (std::uint32_t j : e.job) ++per_job[j];
  for (const auto& [job, n] : per_job) CHECK(n <= 2);
  CHECK(e.samples() < e.scored_rows);
}

TEST_CASE("with zero noise a Slurm-model rollout is sim::simulate with the greedy policy as scorer") {
  TrainConfig config;
  config.sequence_length = 128;
  auto split = split_workload(short_first_workload(800, 4), config);
  INFO(split.status().message());
  REQUIRE(split.ok());
  PolicyNets nets = random_nets(6, *split);
  const PlainMlp plain = nets->to_plain();
  const SlurmSequence s{&*split, 30, 200};
  Exploration none;
  none.record = true;  // recording must not change the schedule either
  none.samples_per_job = 0;
  std::mt19937_64 rng(1);
  const ScoreEpisode e = run_slurm_policy(s, plain, none, {}, CostModel(config), 1.0, rng, /*keep_outcomes=*/true);
  const PlainMlpScorer greedy(plain);
  auto direct = sim::simulate(*split->cluster, sequence_jobs(s), greedy, {});
  REQUIRE(direct.ok());
  REQUIRE(e.outcomes.size() == direct->outcomes.size());
  for (std::size_t i = 0; i < e.outcomes.size(); ++i) {
    CHECK(e.outcomes[i].start == direct->outcomes[i].start);
    CHECK(e.outcomes[i].end == direct->outcomes[i].end);
  }
  CHECK(e.cost == Approx(slurm_cost(direct->outcomes, CostModel(config))));
  // The same played scores as plain: every offset is zero.
  for (std::size_t i = 0; i < std::min<std::size_t>(e.samples(), 50); ++i) CHECK(e.logp[i] == 0.0f);
}

// A window of an empty cluster misses the backlog its jobs met in the trace. With a warm-up, the jobs before it run
// first and are not charged: the window's jobs wait as they would have.
TEST_CASE("a window's warm-up runs ahead of it on the same cluster and is not charged") {
  TrainConfig config;
  config.sequence_length = 64;
  auto split = split_workload(short_first_workload(800, 3), config);
  REQUIRE(split.ok());
  const SlurmSequence cold{&*split, 300, 64, 0};
  const SlurmSequence warm{&*split, 300, 64, 64};
  const std::vector<Job> alone = sequence_jobs(cold), after = sequence_jobs(warm);
  REQUIRE(alone.size() == 64);
  REQUIRE(after.size() == 128);
  for (std::size_t i = 0; i < 64; ++i) {  // the window's jobs last, their spacing kept
    CHECK(after[64 + i].id == alone[i].id);
    CHECK(after[64 + i].submit - after[64].submit == alone[i].submit);
  }
  CHECK(after[63].id + 1 == alone[0].id);
  CHECK(sequence_jobs(SlurmSequence{&*split, 10, 64, 64}).size() == 74);  // no jobs before the trace's first

  // The reference's cost is the window's jobs' mean bounded slowdown, recomputed here from a run of all 128.
  auto fcfs = make_scorer("fcfs");
  REQUIRE(fcfs.ok());
  const CostModel cost(config);
  auto run = sim::simulate(*split->cluster, after, **fcfs, {});
  REQUIRE(run.ok());
  double sum = 0;
  int counted = 0;
  for (const sim::JobOutcome& o : run->outcomes)
    if (o.job >= 64 && o.ran()) {
      sum += sim::bounded_slowdown(o.start - o.submit, o.end - o.start);
      ++counted;
    }
  REQUIRE(counted == 64);
  const double warm_cost = slurm_reference_cost(warm, **fcfs, {}, cost);
  CHECK(warm_cost == Approx(sum / counted));
  // At about 90% load the backlog is real: on average over windows, the same jobs wait longer after their warm-up
  // than on an empty cluster (some windows open after the queue emptied, as window 300 does: the same cost).
  double warm_sum = 0, cold_sum = 0;
  for (std::size_t first = 64; first < 640; first += 8) {
    warm_sum += slurm_reference_cost(SlurmSequence{&*split, first, 64, 64}, **fcfs, {}, cost);
    cold_sum += slurm_reference_cost(SlurmSequence{&*split, first, 64, 0}, **fcfs, {}, cost);
  }
  CHECK(warm_sum > 1.1 * cold_sum);
  CHECK(warm_cost >= slurm_reference_cost(cold, **fcfs, {}, cost));

  // A policy's episode: samples of the warm-up's jobs too (its order shapes the window), the cost of the window's.
  const PolicyNets nets = random_nets(5, *split);
  Exploration x;
  x.sigma = 0.5;
  x.key = 3;
  x.samples_per_job = 0;
  std::mt19937_64 rng(1);
  const ScoreEpisode e = run_slurm_policy(warm, nets->to_plain(), x, {}, cost, 1.0, rng, /*keep_outcomes=*/true);
  CHECK(std::any_of(e.job.begin(), e.job.end(), [](std::uint32_t j) { return j < 64; }));
  CHECK(std::any_of(e.job.begin(), e.job.end(), [](std::uint32_t j) { return j >= 64; }));
  CHECK(e.cost == Approx(slurm_cost(e.outcomes, cost, 64)));
  CHECK(e.cost != Approx(slurm_cost(e.outcomes, cost)));
}

TEST_CASE("training in the Slurm model learns shortest-first on a workload where it obviously wins") {
  TrainConfig c = shortest_first_config();
  auto result = train_policy(c);
  INFO(result.status().message());
  REQUIRE(result.ok());
  INFO("initial " << result->initial_validation_cost_ratio << ", best " << result->best_validation_cost_ratio);
  // Validation is the Slurm model over the 240 validation jobs: the learned policy's average bounded slowdown over
  // FCFS's. Shortest first roughly halves it here; a random ranking sits near FCFS.
  CHECK(result->best_validation_cost_ratio < 0.8 * result->initial_validation_cost_ratio);
  CHECK(result->best_validation_cost_ratio < 0.8);  // and beats FCFS clearly
  // Deterministic for a seed, whatever the number of threads the episodes ran on.
  c.threads = 1;
  auto again = train_policy(c);
  REQUIRE(again.ok());
  CHECK(again->best_validation_cost_ratio == result->best_validation_cost_ratio);
}

// A validation figure replaces the best one only when it is lower by more than min_improvement of it: smaller gains
// are the validation jobs' noise. Re-derived here from the curve the run reports, in compat rollouts, where no
// other condition applies.
TEST_CASE("a validation gain smaller than min_improvement does not replace the model kept") {
  TrainConfig c = shortest_first_config();
  c.rollouts = Rollouts::kCompat;
  c.min_improvement = 0.05;
  auto result = train_policy(c);
  INFO(result.status().message());
  REQUIRE(result.ok());
  double best = result->initial_validation_cost_ratio;
  int refused = 0;
  for (const TrainProgress& p : result->curve) {
    INFO("validation " << p.validation_cost_ratio << ", best so far " << best);
    if (p.validation_cost_ratio < best * (1 - c.min_improvement))
      best = p.validation_cost_ratio;
    else if (p.validation_cost_ratio < best)
      ++refused;
  }
  CHECK(refused > 0);  // the run met a gain too small to count
  CHECK(result->best_validation_cost_ratio == best);
  CHECK(result->training_cost_ratio == -1);  // not measured in compat rollouts

  c.min_improvement = 1.0;
  auto bad = train_policy(c);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "min improvement 1 is not a share in [0, 1)");
}

// In the Slurm model a checkpoint better on the validation jobs is kept only if it is no worse on the whole
// training part: the model kept never stands worse there than the model PPO started from.
TEST_CASE("in the Slurm model the model kept is no worse on the whole training part than the start") {
  TrainConfig c = shortest_first_config();
  c.min_improvement = 0;
  auto result = train_policy(c);
  INFO(result.status().message());
  REQUIRE(result.ok());
  INFO("training part: start " << result->initial_training_cost_ratio << ", kept " << result->training_cost_ratio
                               << "; validation: start " << result->initial_validation_cost_ratio << ", kept "
                               << result->best_validation_cost_ratio);
  REQUIRE(result->initial_training_cost_ratio > 0);
  CHECK(result->training_cost_ratio <= result->initial_training_cost_ratio);
  // The run did keep a better model (a random start, shortest first wins here), so the check above had a choice.
  CHECK(result->best_validation_cost_ratio < result->initial_validation_cost_ratio);
}

// TrainWorkload::weight: a workload of weight 2 is drawn, imitated and validated as the same workload given twice,
// in either simulator (compat rollouts selected in the Slurm model, as the default model's recipe does); the weight
// on the other workload changes the run.
TEST_CASE("a workload of weight 2 trains exactly as the same workload given twice") {
  const TrainWorkload one = short_first_workload(1500, 7), other = short_first_workload(1500, 9, 2);
  for (const Rollouts rollouts : {Rollouts::kSlurm, Rollouts::kCompat}) {
    INFO(to_string(rollouts));
    TrainConfig c = shortest_first_config();
    c.rollouts = rollouts;
    c.select_on_slurm = true;
    c.epochs = 3;
    c.workloads = {one, one, other};
    auto twice = train_policy(c);
    TrainWorkload heavy = one;
    heavy.weight = 2;
    c.workloads = {heavy, other};
    auto weighted = train_policy(c);
    TrainWorkload heavy_other = other;
    heavy_other.weight = 2;
    c.workloads = {one, heavy_other};
    auto reweighted = train_policy(c);
    INFO(twice.status().message() << weighted.status().message() << reweighted.status().message());
    REQUIRE((twice.ok() && weighted.ok() && reweighted.ok()));
    CHECK(weighted->initial_validation_cost_ratio == twice->initial_validation_cost_ratio);
    REQUIRE(weighted->curve.size() == twice->curve.size());
    for (std::size_t i = 0; i < twice->curve.size(); ++i) {
      CHECK(weighted->curve[i].train_cost_ratio == twice->curve[i].train_cost_ratio);
      CHECK(weighted->curve[i].validation_cost_ratio == twice->curve[i].validation_cost_ratio);
    }
    CHECK(weighted->best_validation_cost_ratio == twice->best_validation_cost_ratio);
    CHECK(reweighted->initial_validation_cost_ratio != weighted->initial_validation_cost_ratio);
  }
  TrainConfig c = shortest_first_config();
  TrainWorkload none = one;
  none.weight = 0;
  c.workloads = {none};
  CHECK(train_policy(c).status().message() == "short-first: weight 0: a training workload counts at least once");
}

// Not run by default (hidden): what an episode costs in each simulator, for docs/cli.md.
// train_tests "[.bench]" -s
TEST_CASE("episode cost: Slurm model vs compat", "[.bench]") {
  for (const std::string name :
       {"lublin/lublin_256.swf", "coare-saliksik-slurm/DOST-ASTI_COARE-Saliksik-2020-cln.swf"}) {
    TrainConfig c;
    c.sequence_length = 1024;
    auto split = split_trace(std::string(RLSCHED_SHARED_TRACES) + "/" + name, c);
    REQUIRE(split.ok());
    torch::manual_seed(1);
    PolicyNets nets(static_cast<int>(features::kFeatureCount), std::vector<int>{32, 32});
    const PlainMlp plain = nets->to_plain();
    const CostModel cost(c);
    for (const std::size_t length : {256, 512, 1024}) {
      constexpr int kRuns = 8;
      double slurm_ms = 0, compat_ms = 0, samples = 0, rows = 0;
      for (int i = 0; i < kRuns; ++i) {
        const std::size_t first = static_cast<std::size_t>(i) * (split->train_end - length) / kRuns;
        std::mt19937_64 rng(static_cast<std::uint64_t>(i));
        Exploration x;
        x.sigma = 0.5;
        x.key = static_cast<std::uint64_t>(i);
        auto t0 = std::chrono::steady_clock::now();
        const ScoreEpisode e = run_slurm_policy(SlurmSequence{&*split, first, length}, plain, x, {}, cost, 1.0, rng);
        auto t1 = std::chrono::steady_clock::now();
        (void)run_policy(Sequence{&split->prepared, first, length}, plain, true, 1.0, 256, cost, 1.0, rng);
        auto t2 = std::chrono::steady_clock::now();
        slurm_ms += std::chrono::duration<double, std::milli>(t1 - t0).count();
        compat_ms += std::chrono::duration<double, std::milli>(t2 - t1).count();
        samples += static_cast<double>(e.samples());
        rows += static_cast<double>(e.scored_rows);
      }
      std::printf("%s %zu jobs: slurm %.1f ms/episode (%.0f scored rows, %.0f samples kept), compat %.1f ms\n",
                  name.c_str(), length, slurm_ms / kRuns, rows / kRuns, samples / kRuns, compat_ms / kRuns);
    }
  }
}

// A short, quiet dump (the lab's retrain test: jobs of seconds, all ended before the first decay tick) has no tick
// with two pending jobs to imitate in the Slurm model; the warm start imitates in the compat simulator instead.
TEST_CASE("with no decay tick to imitate, Slurm-model training imitates in the compat simulator and says so") {
  TrainWorkload quiet;
  quiet.label = "quiet";
  quiet.cluster = Cluster::Homogeneous(4, 16);
  for (int i = 0; i < 48; ++i) {
    Job j;
    j.id = static_cast<JobId>(i + 1);
    j.user = "u";
    j.submit = i / 8;
    j.cpus = 8 << (i % 3);
    j.run_time = 3 + i % 4 * 5;
    j.time_limit = 600 * (1 + i % 5);
    quiet.workload.jobs.push_back(j);
  }
  TrainConfig c;
  c.workloads = {quiet};
  c.teacher = "sjf";
  c.imitation_epochs = 2;
  c.epochs = 1;
  c.episodes_per_epoch = 4;
  c.sequence_length = 8;
  c.validation_sequences = 1;
  c.threads = 1;
  auto result = train_policy(c);
  INFO(result.status().message());
  REQUIRE(result.ok());
  // (SJF is a weighted sum of the features: the network then starts as the rule, which the description adds.)
  CHECK(result->teacher.rfind("quiet: sjf (imitated in the compat simulator: no decay tick of the Slurm model saw "
                              "two pending jobs); the network set to compute the rule exactly",
                              0) == 0);
}

// A trace that is quiet for most of its training part (jobs that never overlap) and busy at its end: windows drawn
// uniformly would almost all be quiet, where every rule gives the same schedule and a search on them finds nothing
// better than FCFS. The teacher search runs the whole training part, busy end included, and finds a shortest-first
// rule.
TEST_CASE("a mostly quiet trace still teaches: the teacher search sees its busy end") {
  TrainWorkload w = short_first_workload(2000, 11);
  // The busy part keeps short_first_workload's arrivals (about 90% load), shifted after the quiet part, where one
  // job at a time arrives and is done before the next.
  const Seconds busy_from = w.workload.jobs[1500].submit;
  for (std::size_t i = 0; i < w.workload.jobs.size(); ++i)
    w.workload.jobs[i].submit =
        i < 1500 ? static_cast<Seconds>(i) * 10000 : 1500 * Seconds{10000} + (w.workload.jobs[i].submit - busy_from);
  TrainConfig c;
  c.rollouts = Rollouts::kSlurm;
  c.workloads = {w};
  c.reference = "fcfs";
  c.held_back = 0;  // the busy part must fall in the jobs trained on
  c.sequence_length = 64;
  c.imitation_epochs = 1;
  c.epochs = 1;
  c.episodes_per_epoch = 4;
  c.validation_sequences = 1;
  c.hidden = {8};
  c.seed = 5;
  c.threads = 2;
  auto result = train_policy(c);
  INFO(result.status().message());
  REQUIRE(result.ok());
  INFO(result->teacher);
  // "short-first: -(1 ln max(r,10) + ...) (cost ratio 0.42 to fcfs on the ... training jobs in the Slurm model)"
  const auto at = result->teacher.find("cost ratio ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(result->teacher.substr(at + 11)) < 0.9);
}
