#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "networks.h"
#include "ppo.h"
#include "rlsched/io/cluster_readers.h"
#include "rlsched/io/workload_readers.h"
#include "rlsched/policy/model.h"
#include "rlsched/policy/torchscript_scorer.h"
#include "rlsched/sim/evaluation.h"
#include "rlsched/sim/workload_generator.h"
#include "rlsched/train/trainer.h"
#include "rollout.h"

// Last: libtorch pulls in glog, whose CHECK would otherwise replace Catch's.
#include <fstream>
#include <optional>

#include <catch2/catch.hpp>

using namespace rlsched;
using namespace rlsched::train;

TEST_CASE("job costs follow the objective, with the starvation penalty past its threshold") {
  TrainConfig c;
  c.rollouts = Rollouts::kCompat;  // the compat protocol; slurm_rollout_test.cpp covers the Slurm model
  CostModel bsld(c);
  CHECK(bsld.job_cost(90, 10) == 10.0);
  CHECK(bsld.job_cost(0, 5) == 1.0);
  c.objective = Objective::kWait;
  c.starvation_penalty = 2;
  c.starvation_threshold = 100;
  CostModel wait(c);
  CHECK(wait.job_cost(50, 10) == 50.0);
  CHECK(wait.job_cost(300, 10) == 300.0 + 2.0 * (300 - 100) / 100.0);
  CHECK(parse_objective("wait").value() == Objective::kWait);
  CHECK(parse_objective("fast").status().message() == "unknown objective 'fast' (known: bsld, wait, utilization)");
}

TEST_CASE("GAE with gamma 1: advantages and returns of a two-decision episode") {
  Episode e;
  e.decisions.resize(2);
  e.rewards = {-1.0f, -2.0f};
  std::vector<float> adv, ret;
  // values 0.5 and 0.25; lambda 0.5: delta1 = -2 - 0.25 = -2.25; delta0 = -1 + 0.25 - 0.5 = -1.25;
  // A1 = -2.25, A0 = -1.25 + 0.5 * -2.25 = -2.375.
  advantages({e}, {0.5f, 0.25f}, 1.0, 0.5, adv, ret);
  CHECK(adv[1] == Approx(-2.25));
  CHECK(adv[0] == Approx(-2.375));
  CHECK(ret[0] == Approx(-1.875));
  CHECK(ret[1] == Approx(-2.0));
}

TEST_CASE("the per-decision softmax matches a softmax computed by hand, and plain inference matches torch") {
  torch::manual_seed(3);
  PolicyNets nets(static_cast<int>(features::kFeatureCount), std::vector<int>{8});
  nets->set_normalisation(torch::rand({static_cast<int64_t>(features::kFeatureCount)}),
                          torch::rand({static_cast<int64_t>(features::kFeatureCount)}) + 0.5);
  Episode e;
  e.features.resize(5 * features::kFeatureCount);
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<float> u(0, 1);
  for (float& f : e.features) f = u(rng);
  e.decisions = {Decision{0, 2, 1, 0.0f, 1.0f}, Decision{2, 3, 0, 0.0f, 0.5f}};
  e.rewards = {0, 0};
  const torch::Tensor rows =
      torch::from_blob(e.features.data(), {5, static_cast<int64_t>(features::kFeatureCount)}).clone();
  const torch::Tensor s = nets->scores(rows).detach();
  const double lse0 = std::log(std::exp(s[0].item<double>()) + std::exp(s[1].item<double>()));
  const double lse1 = std::log(std::exp(s[2].item<double>()) + std::exp(s[3].item<double>()) +
                               std::exp(s[4].item<double>()));
  std::vector<float> plain(5), scratch;
  nets->to_plain().forward(e.features.data(), 5, plain.data(), scratch);
  for (int i = 0; i < 5; ++i) CHECK(plain[i] == Approx(s[i].item<float>()).epsilon(1e-5));

  // imitation_pass computes exactly these log-probabilities; one step with lr 0 leaves them unchanged
  torch::optim::SGD frozen(nets->parameters(), torch::optim::SGDOptions(0.0));
  std::mt19937_64 shuffle(1);
  const double loss = imitation_pass(nets, frozen, {e}, 16, shuffle);
  const double expected = -((s[1].item<double>() - lse0) + (s[2].item<double>() - lse1)) / 2;
  CHECK(loss == Approx(expected).epsilon(1e-5));
}

TEST_CASE("the critic's warm-up fits the value head and leaves the policy exactly as it acted") {
  torch::manual_seed(5);
  constexpr auto kF = static_cast<int64_t>(features::kFeatureCount);
  PolicyNets nets(static_cast<int>(kF), std::vector<int>{8});
  nets->set_normalisation(torch::zeros({kF}), torch::ones({kF}));
  nets->set_used_features(std::vector<char>(features::kFeatureCount, 1));
  Episode e;  // 20 decisions of 4 jobs each, rewarded unevenly so that the value head has something to fit
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> u(0, 1);
  e.features.resize(80 * features::kFeatureCount);
  for (float& f : e.features) f = u(rng);
  for (std::uint32_t d = 0; d < 20; ++d) {
    e.decisions.push_back(Decision{4 * d, 4, d % 4, std::log(0.25f), 1.0f - static_cast<float>(d) / 20});
    e.rewards.push_back(d % 3 == 0 ? -1.0f : 0.2f);
  }
  const torch::Tensor rows = torch::from_blob(e.features.data(), {80, kF}).clone();
  const torch::Tensor scores_before = nets->scores(rows).detach().clone();
  TrainConfig config;
  config.minibatch = 8;

  // An optimiser over every parameter: the policy stays put because the loss leaves it out, not the optimiser.
  torch::optim::Adam value_only(nets->parameters(), torch::optim::AdamOptions(1e-2));
  double first_loss = 0, last_loss = 0;
  for (int step = 0; step < 30; ++step) {
    std::mt19937_64 shuffle(static_cast<std::uint64_t>(step));
    const UpdateStats stats = ppo_update(nets, value_only, {e}, config, shuffle, Fit::kValueOnly);
    if (step == 0) first_loss = stats.value_loss;
    last_loss = stats.value_loss;
  }
  CHECK(torch::equal(nets->scores(rows).detach(), scores_before));
  CHECK(last_loss < 0.5 * first_loss);

  // The same update fitting both moves the policy: the check above can fail.
  torch::optim::Adam both(nets->parameters(), torch::optim::AdamOptions(1e-2));
  std::mt19937_64 shuffle(99);
  ppo_update(nets, both, {e}, config, shuffle);
  CHECK_FALSE(torch::equal(nets->scores(rows).detach(), scores_before));
}

// --temperature: a compat rollout samples from softmax(score / T) and records that log-probability, and PPO's update
// reads its decisions the same way; near 0 the sampled policy is the greedy one that validation and slurmctld run.
TEST_CASE("a sampling temperature: rollouts record softmax(score / T), PPO reads it so, near 0 the play is greedy") {
  constexpr auto kF = static_cast<int64_t>(features::kFeatureCount);
  auto workload = io::read_swf(std::string(RLSCHED_SHARED_TRACES) + "/lublin/lublin_256.swf");
  REQUIRE(workload.ok());
  auto prepared = sim::prepare_compat_workload(*workload);
  REQUIRE(prepared.ok());
  const Sequence sequence{&*prepared, 2000, 512};
  TrainConfig config;
  config.rollouts = Rollouts::kCompat;
  const CostModel cost(config);
  torch::manual_seed(7);
  PolicyNets nets(static_cast<int>(kF), std::vector<int>{8});
  const Episode demo = run_imitation(sequence, *make_scorer("sjf").value(), true, 256, false);
  const auto [mean, std] = feature_statistics({demo});
  nets->set_normalisation(mean, std);
  nets->set_used_features(std::vector<char>(features::kFeatureCount, 1));
  const PlainMlp plain = nets->to_plain();

  // Share of an episode's decisions that took a highest-scoring job; checks each recorded log-probability.
  auto greedy_share = [&](double temperature) {
    std::mt19937_64 rng(3);
    const Episode e = run_policy(sequence, plain, true, temperature, 256, cost, 1.0, rng);
    REQUIRE(e.decisions.size() > 50);
    std::vector<float> s, scratch;
    std::vector<int64_t> segment, action_row;
    std::size_t greedy = 0;
    for (std::size_t d = 0; d < e.decisions.size(); ++d) {
      const Decision& decision = e.decisions[d];
      s.resize(decision.rows);
      plain.forward(e.features.data() + decision.first_row * features::kFeatureCount, decision.rows, s.data(),
                    scratch);
      const double top = *std::max_element(s.begin(), s.end());
      double sum = 0;
      for (float v : s) sum += std::exp((v - top) / temperature);
      const double expected = (s[decision.action] - top) / temperature - std::log(sum);
      CHECK(decision.logp == Approx(expected).margin(1e-3));
      greedy += s[decision.action] == top ? 1 : 0;
      for (std::uint32_t r = 0; r < decision.rows; ++r) segment.push_back(static_cast<int64_t>(d));
      action_row.push_back(static_cast<int64_t>(decision.first_row + decision.action));
    }
    // PPO's side: the same decisions, read back at the same temperature, give the recorded log-probabilities.
    DecisionBatch batch;
    const auto rows = static_cast<int64_t>(e.features.size()) / kF;
    batch.rows = torch::from_blob(const_cast<float*>(e.features.data()), {rows, kF}).clone();
    batch.segment = torch::tensor(segment);
    batch.action_row = torch::tensor(action_row);
    batch.decisions = static_cast<int64_t>(e.decisions.size());
    const torch::Tensor logp = nets->log_probs(batch, temperature).action.detach();
    for (std::size_t d = 0; d < e.decisions.size(); d += 7)
      CHECK(logp[static_cast<int64_t>(d)].item<double>() == Approx(e.decisions[d].logp).margin(1e-3));
    return static_cast<double>(greedy) / static_cast<double>(e.decisions.size());
  };
  const double at_one = greedy_share(1.0);
  const double near_zero = greedy_share(1e-3);
  INFO("greedy share at T = 1: " << at_one << ", at T = 0.001: " << near_zero);
  CHECK(at_one < 0.9);
  CHECK(near_zero > 0.95);  // near-ties (score gaps of about T) still split
}

TEST_CASE("networks over v1's columns read schema-wide rows and draw v1's initial weights") {
  constexpr auto kWide = static_cast<int64_t>(features::kFeatureCount);
  constexpr auto kV1 = static_cast<int64_t>(features::kV1FeatureCount);
  REQUIRE(kV1 < kWide);
  auto first_weight = [](PolicyNets& n) {
    return n->policy->children().front()->as<torch::nn::LinearImpl>()->weight.detach();
  };
  // A v1 build's first layer: a Linear over v1's 21 columns, the first thing drawn after the seed.
  torch::manual_seed(11);
  const torch::Tensor v1_build = torch::nn::Linear(kV1, 8)->weight.detach().clone();
  torch::manual_seed(11);
  PolicyNets wide(static_cast<int>(kWide), std::vector<int>{8, 4});
  CHECK_FALSE(torch::equal(first_weight(wide).narrow(1, 0, kV1), v1_build));
  torch::manual_seed(11);
  PolicyNets narrow(static_cast<int>(kV1), std::vector<int>{8, 4});
  CHECK(torch::equal(first_weight(narrow), v1_build));

  narrow->set_normalisation(torch::rand({kWide}), torch::rand({kWide}) + 0.5);
  std::vector<char> used(features::kFeatureCount, 1);
  narrow->set_used_features(used);
  // Columns past v1's are never used, whatever the caller asks.
  CHECK(narrow->used_features()[features::kV1FeatureCount] == 0);
  CHECK(narrow->used_features()[features::kV1FeatureCount - 1] == 1);

  std::vector<float> rows(4 * features::kFeatureCount);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(0, 1);
  for (float& f : rows) f = u(rng);
  const torch::Tensor x = torch::from_blob(rows.data(), {4, kWide}).clone();
  const torch::Tensor s = narrow->scores(x).detach();
  // What the network cannot read cannot change its scores.
  const torch::Tensor other = x.clone();
  other.narrow(1, kV1, kWide - kV1).fill_(1000.0f);
  CHECK(torch::equal(narrow->scores(other).detach(), s));

  // The rollout workers' plain form takes the same schema-wide rows.
  const PlainMlp plain = narrow->to_plain();
  CHECK(plain.inputs() == static_cast<int>(kWide));
  std::vector<float> out(4), scratch;
  plain.forward(rows.data(), 4, out.data(), scratch);
  for (int i = 0; i < 4; ++i) CHECK(out[i] == Approx(s[i].item<float>()).epsilon(1e-5));
  CHECK_FALSE(plain.reads_predicted_run_time);
}

namespace {

/// Average bounded slowdown of a policy choosing heads on one fixed Lublin sequence.
double bsld_on(const sim::CompatWorkload& w, sim::DecisionMaker& agent) {
  double sum = 0;
  const auto outcomes = sim::run_compat_sequence(w, 2000, 512, agent, true);
  for (const auto& o : outcomes) sum += sim::bounded_slowdown(o.wait(), o.run());
  return sum / static_cast<double>(outcomes.size());
}

class RandomChoice final : public sim::DecisionMaker {
 public:
  std::size_t choose(const ScoringContext&, const std::vector<PendingJob>& queue) override {
    return std::uniform_int_distribution<std::size_t>(0, queue.size() - 1)(rng_);
  }

 private:
  std::mt19937_64 rng_{5};
};

class ModelChoice final : public sim::DecisionMaker {
 public:
  explicit ModelChoice(const Scorer& s) : scorer_(s) {}
  std::size_t choose(const ScoringContext& c, const std::vector<PendingJob>& queue) override {
    scores_.assign(queue.size(), 0.0);
    scorer_.score(c, queue, scores_);
    return static_cast<std::size_t>(std::max_element(scores_.begin(), scores_.end()) - scores_.begin());
  }

 private:
  const Scorer& scorer_;
  std::vector<double> scores_;
};

}  // namespace

// The CI smoke test: PPO alone (no imitation warm start), a minute of training on Lublin-1, and the saved model
// must schedule a fixed sequence better than choosing at random.
TEST_CASE("PPO from scratch learns: the trained model beats a random policy on a fixed sequence") {
  const std::string trace = std::string(RLSCHED_SHARED_TRACES) + "/lublin/lublin_256.swf";
  TrainConfig c;
  c.rollouts = Rollouts::kCompat;  // the compat protocol; slurm_rollout_test.cpp covers the Slurm model
  c.traces = {trace};
  c.held_back = 0;  // judged below on the whole trace; this test is about learning, not the split
  c.imitation_epochs = 0;
  c.epochs = 12;
  c.episodes_per_epoch = 16;
  c.sequence_length = 256;
  c.validation_sequences = 2;
  c.eval_every = 4;
  c.patience = 0;
  c.output = std::string(P_tmpdir) + "/rlsched_smoke_model.pt";
  auto result = train_policy(c);
  INFO(result.status().message());
  REQUIRE(result.ok());
  CHECK(result->epochs_run == 12);

  auto model = policy::make_policy_scorer("model:" + c.output);
  INFO(model.status().message());
  REQUIRE(model.ok());
  auto workload = io::read_swf(trace);
  REQUIRE(workload.ok());
  auto prepared = sim::prepare_compat_workload(*workload);
  REQUIRE(prepared.ok());
  ModelChoice trained(**model);
  RandomChoice random;
  const double learned = bsld_on(*prepared, trained);
  const double chance = bsld_on(*prepared, random);
  INFO("trained " << learned << " random " << chance);
  CHECK(learned < 0.8 * chance);
}

// --select-on-slurm: the figure the trainer selects on is the saved model's average bounded slowdown over the
// validation jobs in the Slurm model, relative to the reference's; recomputed here from the model file.
namespace {
/// Two epochs on Lublin-1 in the compat protocol (slurm_rollout_test.cpp covers the Slurm model's rollouts), the
/// model selected in the Slurm model after each, written to `output`.
TrainConfig short_run_selected_on_slurm(const std::string& output) {
  TrainConfig c;
  c.rollouts = Rollouts::kCompat;
  c.traces = {std::string(RLSCHED_SHARED_TRACES) + "/lublin/lublin_256.swf"};
  c.select_on_slurm = true;
  c.imitation_epochs = 2;
  c.epochs = 2;
  c.episodes_per_epoch = 8;
  c.sequence_length = 256;
  c.validation_sequences = 1;
  c.eval_every = 1;
  c.patience = 0;
  c.output = output;
  return c;
}
}  // namespace

TEST_CASE("selecting on the Slurm model reports the saved model's slowdown ratio over the validation jobs") {
  TrainConfig c = short_run_selected_on_slurm(std::string(P_tmpdir) + "/rlsched_select_on_slurm.pt");
  const std::string trace = c.traces[0];
  auto result = train_policy(c);
  INFO(result.status().message());
  REQUIRE(result.ok());

  auto model = policy::make_policy_scorer("model:" + c.output);
  REQUIRE(model.ok());
  auto reference = make_scorer(c.reference);
  REQUIRE(reference.ok());
  auto workload = io::read_swf(trace);
  REQUIRE(workload.ok());
  // Lublin-1 (10,000 jobs, all usable, in submit order): the last 2,000 are held back unread, of the 8,000 before
  // them the last 1,600 validate. The held-back jobs must play no part in the figure.
  REQUIRE(workload->jobs.size() == 10000);
  Workload validation = *workload;
  validation.jobs.assign(workload->jobs.begin() + 6400, workload->jobs.begin() + 8000);
  sim::EvaluationOptions options;
  auto learned = sim::evaluate_policy(validation, nullptr, **model, options);
  auto ref = sim::evaluate_policy(validation, nullptr, **reference, options);
  REQUIRE(learned.ok());
  REQUIRE(ref.ok());
  const double ratio = learned->metrics.avg_bsld / ref->metrics.avg_bsld;
  INFO("recomputed " << ratio << ", reported " << result->best_validation_cost_ratio);
  CHECK(result->best_validation_cost_ratio == Approx(ratio).epsilon(0.02));
}

// --select-load-factors: the trainer selects on the geometric mean of the saved model's ratios over the validation
// jobs at each multiple of their load; recomputed here from the model file and the jobs scaled by sim::scale_to_load.
TEST_CASE("selection at several loads: the figure is the geometric mean of the model's ratios at each load") {
  TrainConfig c = short_run_selected_on_slurm(std::string(P_tmpdir) + "/rlsched_selection_loads.pt");
  c.selection_load_factors = {0.8, 1.25};
  auto result = train_policy(c);
  INFO(result.status().message());
  REQUIRE(result.ok());

  auto model = policy::make_policy_scorer("model:" + c.output);
  auto reference = make_scorer(c.reference);
  auto workload = io::read_swf(c.traces[0]);
  REQUIRE((model.ok() && reference.ok() && workload.ok()));
  Workload validation = *workload;  // jobs 6,400-7,999 of 10,000 (the last 2,000 are held back unread)
  validation.jobs.assign(workload->jobs.begin() + 6400, workload->jobs.begin() + 8000);
  auto cluster = sim::implied_cluster(*workload);
  REQUIRE(cluster.ok());
  cluster->priority.site = c.score_scale;  // as the plugin serves it
  const double own_load = sim::offered_load(validation.jobs, *cluster);
  auto ratio_at = [&](double factor) {
    Workload scaled = validation;
    REQUIRE(sim::scale_to_load(scaled.jobs, *cluster, own_load * factor).ok());
    auto learned = sim::evaluate_policy(scaled, &*cluster, **model, {});
    auto ref = sim::evaluate_policy(scaled, &*cluster, **reference, {});
    REQUIRE((learned.ok() && ref.ok()));
    return learned->metrics.avg_bsld / ref->metrics.avg_bsld;
  };
  const double lighter = ratio_at(0.8), heavier = ratio_at(1.25);
  const double over_loads = std::sqrt(lighter * heavier);
  INFO("x0.8 " << lighter << ", x1.25 " << heavier << ", reported " << result->best_validation_cost_ratio);
  REQUIRE(std::abs(std::log(lighter / heavier)) > 0.02);  // else one load's figure could pass for the mean
  CHECK(result->best_validation_cost_ratio == Approx(over_loads).epsilon(1e-3));

  std::ifstream card(std::string(P_tmpdir) + "/rlsched_selection_loads.md");
  const std::string text((std::istreambuf_iterator<char>(card)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Catch::Contains("over each trace's validation jobs at 2 loads (x0.8, x1.25 their own)"));
}

TEST_CASE("a teacher per window: windows taught by the rule that wins them where it beats the trace's by the margin") {
  const auto teacher_line = [](std::optional<double> margin, const std::string& output) {
    TrainConfig c = short_run_selected_on_slurm(output);
    c.epochs = 0;
    c.teacher_per_window = margin;
    auto result = train_policy(c);
    INFO(result.status().message());
    REQUIRE(result.ok());
    return result->teacher;
  };
  // How many of the 8 windows the line says a rule of their own taught.
  const auto taught_otherwise = [](const std::string& line) {
    const std::string mark = "per window: ";
    const std::size_t at = line.find(mark);
    REQUIRE(at != std::string::npos);
    return std::stoi(line.substr(at + mark.size()));
  };
  const std::string exact = "the network set to compute the rule exactly";
  // Without the option every window shows the trace's rule and the network starts as that rule exactly.
  const std::string per_trace = teacher_line(std::nullopt, std::string(P_tmpdir) + "/rlsched_per_trace.pt");
  CHECK_THAT(per_trace, !Catch::Contains("per window"));
  CHECK_THAT(per_trace, Catch::Contains(exact));
  // At margin 0 a window's cheapest rule teaches wherever it is cheaper than the trace's at all; at 0.9 only where
  // it costs a tenth of it. Fewer windows pass the larger margin, and a network shown several rules starts as their
  // imitation, not as one rule exactly.
  const std::string any_gain = teacher_line(0.0, std::string(P_tmpdir) + "/rlsched_per_window_0.pt");
  const std::string tenth = teacher_line(0.9, std::string(P_tmpdir) + "/rlsched_per_window_90.pt");
  INFO(any_gain << "\n" << tenth);
  CHECK_THAT(any_gain, Catch::Contains(" of 8 demonstration windows taught by a rule that beat their trace's teacher "
                                       "there by more than 0%: "));
  CHECK_THAT(tenth, Catch::Contains("there by more than 90%"));
  const int at_zero = taught_otherwise(any_gain), at_ninety = taught_otherwise(tenth);
  CHECK(at_zero > at_ninety);
  CHECK(at_zero > 0);
  CHECK_THAT(any_gain, !Catch::Contains(exact));
  if (at_ninety == 0) CHECK_THAT(tenth, Catch::Contains(exact));
  if (at_ninety > 0) CHECK_THAT(tenth, !Catch::Contains(exact));
}

TEST_CASE("with a given cluster, selection runs on it and the card names it") {
  // Lublin-1 on a larger machine (320 one-CPU nodes): the validation jobs queue less than on the implied 256.
  const std::string trace = std::string(RLSCHED_SHARED_TRACES) + "/lublin/lublin_256.swf";
  const std::string cluster_file = std::string(P_tmpdir) + "/rlsched_train_larger.yaml";
  std::ofstream(cluster_file) << "cluster: larger\nnodes:\n  - {name: \"n[001-320]\", cpus: 1}\n"
                                 "partitions:\n  - {name: batch, nodes: ALL, default: true}\n";
  TrainConfig c;
  c.rollouts = Rollouts::kCompat;  // the compat protocol; slurm_rollout_test.cpp covers the Slurm model
  c.traces = {trace};
  c.cluster = cluster_file;
  c.select_on_slurm = true;
  c.imitation_epochs = 2;
  c.epochs = 1;
  c.episodes_per_epoch = 4;
  c.sequence_length = 128;
  c.validation_sequences = 1;
  c.eval_every = 1;
  c.patience = 0;
  c.output = std::string(P_tmpdir) + "/rlsched_train_larger.pt";
  auto result = train_policy(c);
  INFO(result.status().message());
  REQUIRE(result.ok());
  auto cluster = io::read_cluster(cluster_file);
  REQUIRE(cluster.ok());
  auto model = policy::make_policy_scorer("model:" + c.output);
  auto reference = make_scorer(c.reference);
  auto workload = io::read_swf(trace);
  REQUIRE((model.ok() && reference.ok() && workload.ok()));
  Workload validation = *workload;  // jobs 6,400-7,999 of 10,000 (the last 2,000 are held back unread)
  validation.jobs.assign(workload->jobs.begin() + 6400, workload->jobs.begin() + 8000);
  auto learned = sim::evaluate_policy(validation, &*cluster, **model, {});
  auto ref = sim::evaluate_policy(validation, &*cluster, **reference, {});
  REQUIRE((learned.ok() && ref.ok()));
  CHECK(result->best_validation_cost_ratio == Approx(learned->metrics.avg_bsld / ref->metrics.avg_bsld).epsilon(0.02));
  std::ifstream card(std::string(P_tmpdir) + "/rlsched_train_larger.md");
  const std::string text((std::istreambuf_iterator<char>(card)), std::istreambuf_iterator<char>());
  CHECK(text.find(cluster_file) != std::string::npos);
}

namespace {
sim::GeneratedWorkload generated_site(std::uint64_t seed, std::size_t jobs) {
  sim::GeneratorSpec spec;
  spec.seed = seed;
  spec.jobs = jobs;
  spec.cpus = 256;
  auto g = sim::generate_workload(spec);
  REQUIRE(g.ok());
  return std::move(*g);
}
}  // namespace

// --validation-trace: the trainer selects on the saved model's average bounded slowdown over all of the validation
// sites' jobs, each site counted its weight times, relative to the reference's; recomputed here from the model file.
TEST_CASE("validation sites choose the model: the figure is the saved model's over all their jobs, by weight") {
  TrainConfig c = short_run_selected_on_slurm(std::string(P_tmpdir) + "/rlsched_validation_sites.pt");
  const std::vector<sim::GeneratedWorkload> sites = {generated_site(3, 1500), generated_site(4, 1500)};
  c.validation_workloads = {TrainWorkload{"site-3", sites[0].workload, sites[0].cluster, 2},
                            TrainWorkload{"site-4", sites[1].workload, sites[1].cluster, 1}};
  auto result = train_policy(c);
  INFO(result.status().message());
  REQUIRE(result.ok());

  auto model = policy::make_policy_scorer("model:" + c.output);
  auto reference = make_scorer(c.reference);
  REQUIRE((model.ok() && reference.ok()));
  auto ratio = [&](const sim::GeneratedWorkload& site) {
    Cluster cluster = site.cluster;
    cluster.priority.site = c.score_scale;  // as the plugin serves it
    auto learned = sim::evaluate_policy(site.workload, &cluster, **model, {});
    auto ref = sim::evaluate_policy(site.workload, &cluster, **reference, {});
    REQUIRE((learned.ok() && ref.ok()));
    return learned->metrics.avg_bsld / ref->metrics.avg_bsld;
  };
  const double first = ratio(sites[0]), second = ratio(sites[1]);
  const double weighted = (2 * first + second) / 3;
  INFO("sites " << first << " and " << second << ", reported " << result->best_validation_cost_ratio);
  REQUIRE(std::abs(first - second) > 0.01);  // else the weights could not show
  CHECK(result->best_validation_cost_ratio == Approx(weighted).epsilon(1e-3));
  // The teacher was searched for the training trace: no figure of it on sites it knows nothing of.
  CHECK(result->teacher_validation_cost_ratio == -1);

  std::ifstream card(std::string(P_tmpdir) + "/rlsched_validation_sites.md");
  const std::string text((std::istreambuf_iterator<char>(card)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Catch::Contains("| site-3 (counts 2 times) | 1500 | 256 CPUs |"));
  CHECK_THAT(text, Catch::Contains("selected in the Slurm model over the 2 validation sites' jobs"));
}

TEST_CASE("teachers ranked on the validation jobs: the rule of the recent past") {
  TrainConfig c;
  c.rollouts = Rollouts::kSlurm;  // the search runs in the Slurm model
  c.traces = {std::string(RLSCHED_SHARED_TRACES) + "/lublin/lublin_256.swf"};
  c.imitation_epochs = 1;
  c.epochs = 0;  // the teacher and its figures are all this test reads
  c.validation_sequences = 1;
  c.search_jobs = 1000;         // the training part's last 1,000 jobs, and
  c.validation_share = 0.0625;  // 500 validation jobs: the search runs 4 times here, fast enough under ASan
  auto on_training = train_policy(c);
  c.teacher_ranking = TeacherRanking::kValidation;
  auto on_validation = train_policy(c);
  c.teacher_ranking = TeacherRanking::kValidationIfBetter;
  auto if_better = train_policy(c);
  INFO(on_validation.status().message());
  REQUIRE((on_training.ok() && on_validation.ok() && if_better.ok()));
  INFO(on_training->teacher << "\n" << on_validation->teacher << "\n" << if_better->teacher);
  CHECK(on_training->teacher.find("training jobs in the Slurm model") != std::string::npos);
  // The search's figure for the rule it chose is the rule's figure on the validation jobs...
  const std::string key = "cost ratio ";
  const std::size_t at = on_validation->teacher.find(key);
  REQUIRE(at != std::string::npos);
  CHECK(on_validation->teacher.find("validation jobs in the Slurm model") != std::string::npos);
  const double searched = std::stod(on_validation->teacher.substr(at + key.size()));
  CHECK(searched == Approx(on_validation->teacher_validation_cost_ratio).margin(6e-4));
  // ...and no rule of the family does better there: the training part's choice is one of them.
  CHECK(on_validation->teacher_validation_cost_ratio <= on_training->teacher_validation_cost_ratio);
  // On Lublin-1 the training part's rule is far behind the validation jobs' best there (0.91 against 0.60 times
  // F1's slowdown), so the recent past overrides the history, and says what it replaced.
  REQUIRE(on_validation->teacher_validation_cost_ratio < 0.9 * on_training->teacher_validation_cost_ratio);
  CHECK(if_better->teacher_validation_cost_ratio == on_validation->teacher_validation_cost_ratio);
  CHECK(if_better->teacher.find("the training part's rule") != std::string::npos);

  c.rollouts = Rollouts::kCompat;  // validated in the compat simulator: no validation jobs to rank rules on
  auto refused = train_policy(c);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("--teacher-on") != std::string::npos);
}

TEST_CASE("the recent past keeps the history's rule where it cannot tell the rules apart") {
  // Lublin-1's validation jobs cut to a quiet few: every rule ties there, and the training part's rule stays.
  TrainConfig c;
  c.rollouts = Rollouts::kSlurm;
  c.traces = {std::string(RLSCHED_SHARED_TRACES) + "/lublin/lublin_256.swf"};
  c.imitation_epochs = 1;
  c.epochs = 0;
  c.validation_sequences = 1;
  c.validation_share = 0.002;  // 16 jobs
  c.sequence_length = 16;      // a validation sequence fits them
  c.search_jobs = 1000;        // the training part's last 1,000 jobs: fast enough under ASan
  auto on_training = train_policy(c);
  c.teacher_ranking = TeacherRanking::kValidationIfBetter;
  auto if_better = train_policy(c);
  INFO(on_training.status().message() << " " << if_better.status().message());
  REQUIRE((on_training.ok() && if_better.ok()));
  INFO(on_training->teacher << "\n" << if_better->teacher);
  const auto rule = [](const std::string& teacher) { return teacher.substr(0, teacher.find(" (cost ratio")); };
  CHECK(rule(if_better->teacher) == rule(on_training->teacher));
  CHECK(if_better->teacher.find("training jobs in the Slurm model; on the validation jobs it stood at") !=
        std::string::npos);
}

namespace {

/// A few seconds of training on Lublin-1, validated after every epoch.
TrainConfig short_run(int epochs) {
  TrainConfig c;
  c.rollouts = Rollouts::kCompat;  // the compat protocol; slurm_rollout_test.cpp covers the Slurm model
  c.traces = {std::string(RLSCHED_SHARED_TRACES) + "/lublin/lublin_256.swf"};
  c.imitation_epochs = 2;
  c.episodes_per_epoch = 4;
  c.sequence_length = 128;
  c.validation_sequences = 2;
  c.eval_every = 1;
  c.patience = 0;
  c.epochs = epochs;
  return c;
}

}  // namespace

TEST_CASE("training is reproducible for a seed, and a resumed run ends where an uninterrupted one does") {
  TrainConfig c = short_run(4);
  c.output = std::string(P_tmpdir) + "/rlsched_straight.pt";
  auto straight = train_policy(c);
  auto again = train_policy(c);
  REQUIRE(straight.ok());
  REQUIRE(again.ok());
  CHECK(straight->best_validation_cost_ratio == again->best_validation_cost_ratio);

  TrainConfig first = c;
  first.stop_after = 2;
  first.checkpoint = std::string(P_tmpdir) + "/rlsched_resume.ckpt";
  REQUIRE(train_policy(first).ok());
  TrainConfig rest = c;
  rest.resume = first.checkpoint;
  rest.output = std::string(P_tmpdir) + "/rlsched_resumed.pt";
  auto resumed = train_policy(rest);
  INFO(resumed.status().message());
  REQUIRE(resumed.ok());
  CHECK(resumed->best_validation_cost_ratio == straight->best_validation_cost_ratio);
  // The same model, with the same features: Lublin-1 varies only some of them, and the resumed run keeps the
  // others out as the uninterrupted one does.
  auto a = policy::load_model(c.output);
  auto b = policy::load_model(rest.output);
  REQUIRE((a.ok() && b.ok()));
  CHECK((*a)->metadata().feature_names().size() < features::kFeatureCount);
  CHECK((*b)->metadata().feature_names() == (*a)->metadata().feature_names());
  CHECK((*b)->metadata().weights_sha256 == (*a)->metadata().weights_sha256);
}

TEST_CASE("through the critic's warm-up epochs the policy validates as imitation left it") {
  const auto validations = [](const TrainResult& r) {
    std::vector<double> v;
    for (const TrainProgress& p : r.curve) v.push_back(p.validation_cost_ratio);
    return v;
  };
  TrainConfig c = short_run(4);
  auto plain = train_policy(c);
  c.critic_warmup = 4;
  auto warmed = train_policy(c);
  c.critic_warmup = 2;
  auto half = train_policy(c);
  REQUIRE((plain.ok() && warmed.ok() && half.ok()));
  REQUIRE(warmed->curve.size() == 4);
  const double start = warmed->initial_validation_cost_ratio;
  CHECK(plain->initial_validation_cost_ratio == start);
  for (double v : validations(*warmed)) CHECK(v == start);
  // Without the warm-up PPO moves the policy within these epochs, so the check above can fail; with two epochs of
  // it, those two validate as the start and the policy moves after them.
  const std::vector<double> moved = validations(*plain);
  CHECK(std::any_of(moved.begin(), moved.end(), [&](double v) { return v != start; }));
  const std::vector<double> h = validations(*half);
  CHECK(h[0] == start);
  CHECK(h[1] == start);
}

TEST_CASE("imitation restarts: PPO starts from the one that validates best, the first imitated as without them") {
  TrainConfig c = short_run(1);
  c.exact_teacher = false;  // set to one rule exactly, every restart would rank as that rule does
  auto once = train_policy(c);
  REQUIRE(once.ok());
  const double first = once->initial_validation_cost_ratio;
  // Runs k restarts; returns the figures of the card's "(imitation K: X; the others A, B, ...)", the kept one first.
  const auto restarts = [&](int k) {
    c.imitation_restarts = k;
    auto run = train_policy(c);
    REQUIRE(run.ok());
    const std::string& text = run->teacher;
    INFO(text);
    const std::size_t at =
        text.find("; the best of " + std::to_string(k) + " imitations from different initial weights");
    REQUIRE(at != std::string::npos);
    const std::string rule = once->teacher.substr(0, once->teacher.find(';'));
    CHECK(text.compare(0, rule.size(), rule) == 0);
    std::vector<double> figures{std::stod(text.substr(text.find(": ", text.find("(imitation ", at)) + 2))};
    for (std::size_t p = text.find("the others ", at) + 11; p != std::string::npos;) {
      figures.push_back(std::stod(text.substr(p)));
      p = text.find(", ", p);
      if (p != std::string::npos) p += 2;
    }
    REQUIRE(figures.size() == static_cast<std::size_t>(k));
    CHECK(run->initial_validation_cost_ratio == Approx(figures[0]).margin(5e-5));
    CHECK(figures[0] == *std::min_element(figures.begin(), figures.end()));
    // The first imitation is the run without restarts.
    CHECK(std::any_of(figures.begin(), figures.end(), [&](double f) { return std::abs(f - first) < 5e-5; }));
    return figures;
  };
  // At this seed the first of two is the better and the last of four the best: both places are kept.
  const std::vector<double> two = restarts(2);
  CHECK(two[0] == Approx(first).margin(5e-5));
  const std::vector<double> four = restarts(4);
  CHECK(four[0] < first - 1e-3);
  c.imitation_restarts = 0;
  CHECK(train_policy(c).status().message() == "--imitation-restarts 0: imitation runs at least once");
}

// A busy 64-processor machine whose 8 users run their jobs for 5% to 100% of their time limits, each user always
// about the same share: what predicted run times are made from.
std::string users_trace(const std::string& path) {
  std::ofstream out(path);
  out << "; MaxNodes: 64\n; MaxProcs: 64\n";
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> limit_of(6, 60), procs_of(1, 16), user_of(1, 8);
  for (int id = 1; id <= 1200; ++id) {
    const int user = user_of(rng);
    const int limit = 60 * limit_of(rng);
    const int run = std::max(1, limit * (user == 8 ? 100 : 5 * (1 + (user % 4))) / 100);
    const int procs = procs_of(rng);
    out << id << ' ' << id * 20 << " -1 " << run << ' ' << procs << " -1 -1 " << procs << ' ' << limit << " -1 1 "
        << user << " 1 -1 1 -1 -1 -1\n";
  }
  return path;
}

TEST_CASE("trained with predicted run times the model reads the prediction and without them it is one of schema v1") {
  TrainConfig c = short_run(2);
  c.traces = {users_trace(std::string(P_tmpdir) + "/rlsched_users.swf")};
  c.output = std::string(P_tmpdir) + "/rlsched_limits.pt";
  REQUIRE(train_policy(c).ok());
  auto limits = policy::load_model(c.output);
  REQUIRE(limits.ok());
  CHECK((*limits)->metadata().schema_version == 1);
  CHECK_FALSE(features::reads_predicted_run_time((*limits)->metadata().feature_names()));

  c.predicted_run_times = true;
  c.output = std::string(P_tmpdir) + "/rlsched_predicted.pt";
  auto trained = train_policy(c);
  INFO(trained.status().message());
  REQUIRE(trained.ok());
  auto predicted = policy::load_model(c.output);
  REQUIRE(predicted.ok());
  CHECK((*predicted)->metadata().schema_version == 2);
  const std::vector<std::string> names = (*predicted)->metadata().feature_names();
  CHECK(std::find(names.begin(), names.end(), "predicted_log") != names.end());
  CHECK(std::find(names.begin(), names.end(), "wait_over_predicted") != names.end());
}

// --time-budget counts from the command's start (TrainConfig::started), reading included: a budget already spent
// when training could begin runs no epoch, and the model is the teacher it started as.
TEST_CASE("the time budget counts from the command's start, and no epoch starts past it") {
  TrainConfig c = short_run(3);
  c.output = std::string(P_tmpdir) + "/rlsched_budget.pt";
  c.time_budget_seconds = 60;
  c.started = std::chrono::steady_clock::now() - std::chrono::minutes(5);  // a long read before training
  auto spent = train_policy(c);
  INFO(spent.status().message());
  REQUIRE(spent.ok());
  CHECK(spent->epochs_run == 0);
  CHECK(spent->stopped_early);
  CHECK(spent->seconds >= 300);  // the card's wall time is the command's
  CHECK(spent->best_validation_cost_ratio == spent->initial_validation_cost_ratio);
  CHECK(policy::load_model(c.output).ok());

  c.time_budget_seconds = 1e6;  // ample: every epoch runs
  auto ample = train_policy(c);
  REQUIRE(ample.ok());
  CHECK(ample->epochs_run == 3);
  CHECK_FALSE(ample->stopped_early);

  // A chunk that ends on the last epoch ran them all: the card must not say it stopped early.
  c.stop_after = 3;
  c.checkpoint = std::string(P_tmpdir) + "/rlsched_budget.ckpt";
  auto whole = train_policy(c);
  REQUIRE(whole.ok());
  CHECK(whole->epochs_run == 3);
  CHECK_FALSE(whole->stopped_early);
  c.stop_after = 2;
  auto part = train_policy(c);
  REQUIRE(part.ok());
  CHECK(part->epochs_run == 2);
  CHECK(part->stopped_early);
}

// --init-model: PPO goes on from an existing model. With no epochs the saved model is the starting one, weight for
// weight; with epochs its first validation is the starting model's figure.
TEST_CASE("a warm start goes on from the given model: its weights, widths, features and validation figure") {
  TrainConfig c = short_run(1);
  const std::string trace = c.traces[0];
  c.hidden = {16};
  c.output = std::string(P_tmpdir) + "/rlsched_warm_from.pt";
  auto current = train_policy(c);
  INFO(current.status().message());
  REQUIRE(current.ok());
  auto from = policy::load_model(c.output);
  REQUIRE(from.ok());

  TrainConfig same = c;
  same.init_model = c.output;
  same.hidden = {32, 32};  // replaced by the model's widths
  same.epochs = 0;
  same.output = std::string(P_tmpdir) + "/rlsched_warm_same.pt";
  auto copied = train_policy(same);
  INFO(copied.status().message());
  REQUIRE(copied.ok());
  auto copy = policy::load_model(same.output);
  REQUIRE(copy.ok());
  CHECK((*copy)->metadata().weights_sha256 == (*from)->metadata().weights_sha256);
  CHECK((*copy)->metadata().feature_names() == (*from)->metadata().feature_names());
  CHECK(copied->initial_validation_cost_ratio == Approx(current->best_validation_cost_ratio).epsilon(1e-9));

  TrainConfig more = same;
  more.epochs = 2;
  more.seed = 7;
  more.output = std::string(P_tmpdir) + "/rlsched_warm_more.pt";
  auto trained = train_policy(more);
  INFO(trained.status().message());
  REQUIRE(trained.ok());
  CHECK(trained->initial_validation_cost_ratio == Approx(current->best_validation_cost_ratio).epsilon(1e-9));
  CHECK(trained->best_validation_cost_ratio <= trained->initial_validation_cost_ratio);
  auto next = policy::load_model(more.output);
  REQUIRE(next.ok());
  CHECK((*next)->metadata().architecture == (*from)->metadata().architecture);
  std::ifstream card(std::string(P_tmpdir) + "/rlsched_warm_more.md");
  const std::string text((std::istreambuf_iterator<char>(card)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Catch::Contains("warm start: the policy of `" + c.output + "`"));
  CHECK_THAT(text, Catch::Contains((*from)->metadata().weights_sha256));

  TrainConfig bad = same;
  bad.init_model = trace;  // not a model file
  auto refused = train_policy(bad);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().rfind(trace, 0) == 0);
}

TEST_CASE("the Smith-width teachers reach the traces asked for") {
  REQUIRE(parse_smith_width("none").ok());
  CHECK(*parse_smith_width("none") == SmithWidth::kNone);
  CHECK(*parse_smith_width("all") == SmithWidth::kAll);
  CHECK(*parse_smith_width("accelerators") == SmithWidth::kAccelerators);
  CHECK_THAT(parse_smith_width("gpus").status().message(),
             Catch::Contains("'gpus'") && Catch::Contains("accelerators"));
  for (const bool gpus : {false, true}) {
    CHECK_FALSE(smith_width_for(SmithWidth::kNone, gpus));
    CHECK(smith_width_for(SmithWidth::kAll, gpus));
    CHECK(smith_width_for(SmithWidth::kAccelerators, gpus) == gpus);
  }
}

// Behaviour cloning draws max(--episodes, 8) sequences, the traces in turn, so with more traces than that the last
// teach nothing. Eight traces whose jobs never wait for each other (no decision with a choice) come before a busy
// one: 8 sequences come from the quiet ones alone and there is nothing to learn; one sequence of each reaches it.
TEST_CASE("with demonstrations per trace every trace teaches even the last ones") {
  const auto quiet = [](int k) {
    TrainWorkload w;
    w.label = "quiet-" + std::to_string(k);
    w.cluster = Cluster::Homogeneous(4, 16);
    for (int i = 0; i < 400; ++i) {
      Job j;
      j.id = static_cast<JobId>(i + 1);
      j.user = "u";
      j.submit = Seconds{1000} * i;
      j.cpus = 1 + i % 4;
      j.run_time = 10 + i % 7;
      j.time_limit = 60 * (1 + i % 3);
      w.workload.jobs.push_back(j);
    }
    return w;
  };
  TrainConfig c;
  c.rollouts = Rollouts::kCompat;
  c.teacher = "sjf";
  c.reference = "sjf";
  c.imitation_epochs = 2;
  c.epochs = 0;
  c.episodes_per_epoch = 8;
  c.sequence_length = 64;
  c.validation_sequences = 1;
  c.threads = 1;
  c.output = std::string(P_tmpdir) + "/rlsched_demonstrations.pt";
  for (int k = 0; k < 8; ++k) c.workloads.push_back(quiet(k));
  const sim::GeneratedWorkload busy = generated_site(5, 1500);
  c.workloads.push_back(TrainWorkload{"busy", busy.workload, busy.cluster, 1});
  const auto eight = train_policy(c);
  REQUIRE_FALSE(eight.ok());
  CHECK_THAT(eight.status().message(), Catch::Contains("no feature of the training jobs ever varies"));
  c.demonstrations_per_trace = 1;
  const auto each = train_policy(c);
  INFO(each.status().message());
  CHECK(each.ok());
}

TEST_CASE("bad training input is refused with a clear message") {
  TrainConfig c;
  c.rollouts = Rollouts::kCompat;  // the compat protocol; slurm_rollout_test.cpp covers the Slurm model
  CHECK(train_policy(c).status().message() == "no training traces given");
  c.traces = {std::string(RLSCHED_TEST_DATA) + "/swf/small.swf"};
  auto short_trace = train_policy(c);
  REQUIRE_FALSE(short_trace.ok());
  CHECK(short_trace.status().message().find("too few for training and validation sequences") != std::string::npos);
  c.reference = "nope";
  CHECK(train_policy(c).status().message().find("unknown policy 'nope'") == 0);
  c.reference = "f1";
  c.teacher_margin = 0.01;  // F1 cannot be imitated, so it cannot be the teacher a margin keeps
  CHECK(train_policy(c).status().message() ==
        "--teacher-margin keeps the reference as the teacher, and the teacher search cannot imitate --reference f1: "
        "use fcfs, sjf, wfp3 or unicep");
  c.reference = "sjf";
  c.teacher_margin = 1.0;
  CHECK(train_policy(c).status().message() == "--teacher-margin 1: must be a share in [0, 1)");
  c.teacher_margin.reset();
  c.teacher_per_window = 1.0;
  CHECK(train_policy(c).status().message() == "--teacher-per-window 1: must be a share in [0, 1)");
  c.teacher_per_window = 0.1;
  c.init_model = "current.pt";
  CHECK_THAT(train_policy(c).status().message(), Catch::StartsWith("--teacher-per-window chooses what imitation "
                                                                   "shows, and --init-model goes on from a model"));
  c.teacher_per_window.reset();
  c.init_model.clear();
  c.reference = "f1";
  c.traces = {std::string(RLSCHED_TEST_DATA) + "/sacct/speeds.txt"};  // accelerator jobs: the cluster is needed
  CHECK_THAT(train_policy(c).status().message(), Catch::Contains("give the cluster it ran on: --slurm-conf"));
  c.temperature = 0;
  CHECK(train_policy(c).status().message() == "--temperature 0: must be above 0");
  c.temperature = 0.1;
  c.rollouts = Rollouts::kSlurm;
  CHECK_THAT(train_policy(c).status().message(), Catch::Contains("Slurm-model rollouts explore with --score-noise"));

  c.temperature = 1;
  c.rollouts = Rollouts::kCompat;
  const sim::GeneratedWorkload site = generated_site(5, 300);
  c.validation_workloads = {TrainWorkload{"site-5", site.workload, site.cluster, 1}};
  CHECK_THAT(train_policy(c).status().message(),
             Catch::Contains("--validation-trace selects the model in the Slurm model"));
  c.select_on_slurm = true;
  c.validation_workloads[0].weight = 0;
  CHECK(train_policy(c).status().message() == "site-5: weight 0: a validation workload counts at least once");
  c.validation_workloads[0] = TrainWorkload{"empty", Workload{}, site.cluster, 1};
  CHECK(train_policy(c).status().message() == "empty: no job to validate on");

  c.validation_workloads.clear();
  c.select_on_slurm = false;
  c.selection_load_factors = {1, 1.03};
  CHECK_THAT(train_policy(c).status().message(),
             Catch::StartsWith("--select-load-factors runs the Slurm model's validation jobs at several loads"));
  c.select_on_slurm = true;
  c.validation_workloads = {TrainWorkload{"site-5", site.workload, site.cluster, 1}};
  CHECK_THAT(train_policy(c).status().message(), Catch::Contains("give one or the other"));
  c.validation_workloads.clear();
  c.selection_load_factors = {1, 0};
  CHECK(train_policy(c).status().message() == "--select-load-factors: 0 is not a load factor above 0");
  // Every job submitted at once offers no load to multiply: the trace is named.
  c.selection_load_factors = {1.03};
  c.traces.clear();
  Workload at_once = site.workload;
  for (Job& job : at_once.jobs) job.submit = 0;
  c.workloads = {TrainWorkload{"at-once", at_once, site.cluster, 1}};
  c.sequence_length = 32;
  const std::string at_once_error = train_policy(c).status().message();
  CHECK_THAT(at_once_error, Catch::StartsWith("--select-load-factors 1.03: at-once's "));
  CHECK_THAT(at_once_error, Catch::EndsWith(" validation jobs: they offer no load to multiply"));
}
