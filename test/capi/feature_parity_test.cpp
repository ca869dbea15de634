// The policy sees the same job in slurmctld as in the Slurm model: identical feature vectors and identical site
// factors.
//
// The simulator runs a heterogeneous workload (typed, typeless, any-of and multi-partition GPU jobs, CPU jobs, job
// classes with their own speeds, multifactor weights, node failures that requeue jobs) and reports every scoring call
// of the policy through its decision hook (SimConfig::on_scoring) with the snapshot it was made on. The test copies
// each snapshot into the C structs exactly as site_factor/rlsched fills them from slurmctld (rlsched_cluster,
// rlsched_job), builds the plugin-side views with capi::to_pending_job and scores them with rlsched_score_batch /
// rlsched_score_one under an rlsched.yaml that says what the simulator's cluster says. The model is a random 21-feature
// MLP, so a difference in any feature shows in the scores. Identical means to the last bit of the float features.
// The test's model reads every feature of the schema, the predicted run times of schema v2 among them, so the
// simulator fills them in from its own ends and the test passes the engine every job that has ended so far before
// each call (rlsched_jobs_ended), as the plugin passes the ended jobs Slurm keeps when the engine asks for them. With
// `run_time: predicted` the simulator serves the model on predicted run times (predicted:model:PATH).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "capi/engine.h"
#include "capi_fixtures.h"
#include "rlsched/energy.h"
#include "rlsched/features.h"
#include "rlsched/plugin_config.h"
#include "rlsched/policy/torchscript_scorer.h"
#include "rlsched/rlsched.h"
#include "rlsched/sim/predicted_run_time.h"
#include "rlsched/sim/simulator.h"
#include "rlsched/site_factor.h"

namespace rlsched {
namespace {

using testing::PrivateDir;

// fast: 2 nodes x 4 v100; slow: 3 nodes x 4 k80; npu: 1 node x 8 910b; cpu: 2 nodes without accelerators; all:
// every node. Class cnn gains 6x on the v100, rnn 1.5x; other jobs see the types' own speeds.
Cluster feature_cluster() {
  Cluster c;
  c.accelerator_types = {AcceleratorType{"v100", "gpu", 3.0, {{"cnn", 6.0}, {"rnn", 1.5}}},
                         AcceleratorType{"k80", "gpu", 1.0, {}}, AcceleratorType{"910b", "npu", 0.8, {}}};
  for (int i = 0; i < 2; ++i) c.nodes.push_back(Node{fmt::format("v{}", i), 16, 0, {GresCount{"gpu", "v100", 4}}});
  for (int i = 0; i < 3; ++i) c.nodes.push_back(Node{fmt::format("k{}", i), 16, 0, {GresCount{"gpu", "k80", 4}}});
  c.nodes.push_back(Node{"n0", 32, 0, {GresCount{"npu", "910b", 8}}});
  for (int i = 0; i < 2; ++i) c.nodes.push_back(Node{fmt::format("c{}", i), 32, 0, {}});
  c.partitions = {Partition{"fast", {0, 1}, 1, 1, 0, false}, Partition{"slow", {2, 3, 4}, 1, 1, 0, false},
                  Partition{"npu", {5}, 1, 1, 0, false}, Partition{"cpu", {6, 7}, 1, 1, 0, false},
                  Partition{"all", {0, 1, 2, 3, 4, 5, 6, 7}, 1, 1, 0, true}};
  c.qos = {Qos{"normal", 100}, Qos{"high", 1000}};
  c.priority = PriorityWeights::Typical();
  c.priority.calc_period = 120;
  c.priority.max_age = 86400;
  c.priority.site = 10000;
  return c;
}

const char* kFeatureConfig = R"(mode: enforce
fallback: fcfs
score_scale: 10000
reload_check_interval: 0
accelerator_types:
  - {name: v100, gres: gpu, speed: 3.0}
  - {name: k80, gres: gpu, speed: 1.0}
  - {name: 910b, gres: npu, speed: 0.8}
job_classes:
  - {name: cnn, match: {job_name: cnn}, speeds: {v100: 6.0, k80: 1.0, 910b: 0.8}}
  - {name: rnn, match: {job_name: rnn}, speeds: {v100: 1.5, k80: 1.0, 910b: 0.8}}
)";

std::vector<Job> feature_workload() {
  std::vector<Job> jobs;
  const char* classes[] = {"cnn", "rnn", "", ""};
  for (int i = 0; i < 120; ++i) {
    Job j;
    j.id = 100 + i;
    j.user = fmt::format("u{}", i % 5);
    j.account = "a";
    j.qos = i % 9 == 0 ? "high" : "normal";
    j.submit = 200 * i + (i % 4 == 0 ? 0 : 31 * (i % 7));
    j.job_class = classes[i % 4];
    j.time_limit = 1800 + 600 * ((i * 7) % 13);
    j.run_time = j.time_limit / (1 + i % 3);
    j.cpus = 1 + (i % 8);
    switch (i % 6) {
      case 0:  // typeless over its partitions
        j.accel = {1 + i % 4, "gpu", {}};
        j.partitions = {"fast", "slow"};
        break;
      case 1:  // typed
        j.accel = {2, "gpu", {"k80"}};
        j.partitions = {"slow"};
        break;
      case 2:  // any-of, in the catch-all partition
        j.accel = {1 + i % 2, "gpu", {"v100", "k80"}};
        j.partitions = {"all"};
        break;
      case 3:  // NPU
        j.accel = {4, "npu", {}};
        j.partitions = {"npu"};
        break;
      case 4:  // CPU job over two partitions
        j.cpus = 8 + 4 * (i % 5);
        j.partitions = {"cpu", "all"};
        break;
      default:  // CPU job, default partition
        break;
    }
    j.cpus = std::max(j.cpus, j.accel.count);
    if (i % 10 == 3) {
      j.checkpoint_interval = 600;
      j.checkpoint_cost = 30;
    }
    jobs.push_back(j);
  }
  return jobs;
}

/// The uid slurmctld would give the workload's user "u<N>": N.
uint32_t user_id(const Job& job) {
  return static_cast<uint32_t>(std::stoul(job.user.substr(1)));
}

/// A scoring call of the simulator copied into the C structs site_factor/rlsched fills (strings and arrays owned).
struct CSnapshot {
  std::vector<std::string> names;  // gres and type names, pointed into by the accel entries
  std::vector<rlsched_accel> cluster_accel;
  std::vector<std::vector<rlsched_accel>> partition_accel;
  std::vector<rlsched_partition> partitions;
  std::vector<std::string> partition_names;
  rlsched_cluster cluster{};
  std::vector<rlsched_job> jobs;
  std::vector<std::vector<int32_t>> job_partitions;
  std::vector<std::string> job_strings;  // gres, types, job names, accounts

  const char* keep(std::vector<std::string>& store, std::string_view s) {
    store.emplace_back(s);
    return store.back().c_str();
  }

  CSnapshot(const sim::ScoringDecision& d, const Cluster& model, const std::vector<Job>& workload) {
    names.reserve(2 * (d.cluster.pools.size() * (d.cluster.partitions.size() + 1)) + 1);
    auto accel_of = [&](const job_view::Pool& pool) {
      rlsched_accel a{};
      a.gres = keep(names, pool.gres);
      a.type = keep(names, pool.type);
      a.total = pool.total;
      a.idle = pool.idle;
      a.idle_nodes = -1;  // the job view has no node counts; placement is not part of these decisions
      return a;
    };
    for (const job_view::Pool& pool : d.cluster.pools) cluster_accel.push_back(accel_of(pool));
    partition_names.reserve(d.cluster.partitions.size());
    for (std::size_t p = 0; p < d.cluster.partitions.size(); ++p) {
      std::vector<rlsched_accel> accel;
      for (const job_view::Pool& pool : d.cluster.partitions[p].pools) accel.push_back(accel_of(pool));
      partition_accel.push_back(std::move(accel));
      partition_names.push_back(model.partitions[p].name);
    }
    for (std::size_t p = 0; p < d.cluster.partitions.size(); ++p) {
      rlsched_partition part{};
      part.name = partition_names[p].c_str();
      part.accepts_jobs = 1;
      part.cpus_idle = d.cluster.partitions[p].cpus_idle;
      part.accel = partition_accel[p].data();
      part.n_accel = static_cast<int32_t>(partition_accel[p].size());
      partitions.push_back(part);
    }
    cluster.cpus_total = d.cluster.cpus_total;
    cluster.cpus_idle = d.cluster.cpus_idle;
    cluster.nodes_total = d.cluster.nodes_total;
    cluster.accel = cluster_accel.data();
    cluster.n_accel = static_cast<int32_t>(cluster_accel.size());
    cluster.partitions = partitions.data();
    cluster.n_partitions = static_cast<int32_t>(partitions.size());

    job_strings.reserve(5 * d.states.size());
    job_partitions.reserve(d.states.size());
    for (std::size_t i = 0; i < d.states.size(); ++i) {
      const job_view::JobState& s = d.states[i];
      const Job& w = workload[d.jobs[i]];
      rlsched_job j{};
      j.job_id = static_cast<uint32_t>(s.id);
      j.state = RLSCHED_JOB_PENDING;
      j.submit_time = s.submit;
      j.begin_time = s.eligible > s.submit ? s.eligible : 0;
      j.time_limit = s.time_limit;
      j.cpus = s.cpus;
      j.nodes = s.nodes;
      j.accelerators = s.accelerators;
      j.gres = s.gres.empty() ? nullptr : keep(job_strings, s.gres);
      j.gres_type = s.types.empty() ? nullptr : keep(job_strings, s.types);
      j.restarts = s.restarts;
      j.comment = s.checkpointable ? "checkpoint:interval=10m,cost=30s" : nullptr;
      j.age_factor = s.age_factor;
      j.fairshare_factor = s.fairshare_factor;
      j.job_size_factor = s.job_size_factor;
      j.partition_factor = s.partition_factor;
      j.qos_factor = s.qos_factor;
      job_partitions.emplace_back(s.partitions, s.partitions + s.n_partitions);
      j.partition = job_partitions.back().empty() ? -1 : job_partitions.back().front();
      j.partitions = job_partitions.back().data();
      j.n_partitions = static_cast<int32_t>(job_partitions.back().size());
      j.user_id = user_id(w);
      j.job_name = keep(job_strings, w.job_class);
      j.account = keep(job_strings, w.account);
      j.qos = keep(job_strings, w.qos);
      jobs.push_back(j);
    }
  }
};

std::vector<float> features_of(const std::vector<PendingJob>& views, const ScoringContext& context) {
  std::vector<float> out(views.size() * features::kFeatureCount);
  features::FeatureMap::Canonical().extract(views, context, out.data());
  return out;
}

// Every moment of the workload's day (epoch 0 is a Thursday 00:00 UTC) alternates hourly between expensive and
// cheap until 07:00; normal-QOS jobs may wait 3 h for cheaper power.
const char* kEnergy = R"(energy:
  power:
    accelerators: {v100: {busy_w: 300, idle_w: 50}, k80: {busy_w: 150, idle_w: 30}, 910b: {busy_w: 400, idle_w: 60}}
    node: {busy_w: 400, idle_w: 150}
  price:
    weekly:
      - {days: daily, hours: "00:00-01:00", value: 0.5}
      - {days: daily, hours: "01:00-02:00", value: 0.1}
      - {days: daily, hours: "02:00-03:00", value: 0.5}
      - {days: daily, hours: "03:00-04:00", value: 0.1}
      - {days: daily, hours: "04:00-05:00", value: 0.5}
      - {days: daily, hours: "05:00-06:00", value: 0.1}
      - {days: daily, hours: "06:00-07:00", value: 0.5}
      - {days: daily, hours: "07:00-24:00", value: 0.2}
  deferrable: {qos: [normal], max_deferral: 3h}
)";

/// Replays every scoring call of the simulator through the C entry points under kFeatureConfig plus `extra` (an energy
/// section, or `run_time: predicted`); with energy, at least `min_ranked` scored jobs must have been ranked last, and
/// as many first, by the energy rule on both paths.
void check_parity(const std::string& extra, int min_ranked) {
  const bool predicted = extra.find("run_time: predicted") != std::string::npos;
  PrivateDir dir;
  const std::string model = dir.model("policy.pt", 7);
  const std::string config_path =
      dir.write("rlsched.yaml", std::string(kFeatureConfig) + extra + "model: " + model + "\n");
  auto config = config::load_plugin_config(config_path);
  REQUIRE(config.ok());
  rlsched_engine_options o{};
  o.abi_version = RLSCHED_ABI_VERSION;
  o.config_path = config_path.c_str();
  o.flags = RLSCHED_ENGINE_NO_RELOAD_THREAD;
  rlsched_engine* engine = nullptr;
  REQUIRE(rlsched_engine_create(&o, &engine) == RLSCHED_OK);
  rlsched_engine_info info{};
  REQUIRE(rlsched_engine_get_info(engine, &info) == RLSCHED_OK);
  REQUIRE(std::string(info.scorer) == "model:" + model);
  REQUIRE(info.reads_ended_jobs == 1);  // the model reads predicted run times: the plugin passes ended jobs
  // The engine's view of each job, to compare features with the simulator's: the same code as rlsched_score_batch
  // (Engine::show_run_times, what `rlsched explain` shows), in an engine of its own fed the same ended jobs.
  capi::EngineOptions view_options;
  view_options.config_path = config_path;
  view_options.no_reload_thread = true;
  view_options.log = [](int, const std::string&) {};
  auto made = capi::Engine::Create(view_options);
  REQUIRE(made.ok());
  const std::unique_ptr<capi::Engine> viewer = std::move(*made);

  const Cluster cluster = feature_cluster();
  const std::vector<Job> jobs = feature_workload();
  auto model_scorer = policy::make_policy_scorer("model:" + model);
  REQUIRE(model_scorer.ok());
  std::unique_ptr<Scorer> scorer = std::move(*model_scorer);
  sim::PredictedRunTimeScorer* predicted_scorer = nullptr;
  if (predicted) {
    auto wrapped = std::make_unique<sim::PredictedRunTimeScorer>(jobs, std::move(scorer));
    predicted_scorer = wrapped.get();
    scorer = std::move(wrapped);
  }
  // Predicted run times: every job ended so far (its last run), and an engine on time limits beside, to see that
  // the prediction changed scores.
  std::vector<rlsched_ended_job> ended;
  std::vector<Seconds> started(jobs.size(), -1);
  rlsched_engine* on_limits = nullptr;
  if (predicted) {
    const std::string limits_path = dir.write("limits.yaml", std::string(kFeatureConfig) + "model: " + model + "\n");
    o.config_path = limits_path.c_str();
    REQUIRE(rlsched_engine_create(&o, &on_limits) == RLSCHED_OK);
    REQUIRE(rlsched_engine_get_info(engine, &info) == RLSCHED_OK);
    REQUIRE(info.run_time_predicted == 1);
  }
  int changed_by_prediction = 0;
  int predicted_shorter = 0;  // jobs shown a predicted run time below their limit
  std::size_t passed = 0;  // ended jobs passed to the engine by the last call (the last ones end after it)

  int batches = 0, submits = 0, compared = 0, feature_mismatches = 0, site_mismatches = 0, mutations_seen = 0;
  int multi_partition = 0, typeless = 0, classed = 0;
  std::vector<double> sorted;  // the simulator's last batch, as the engine keeps its own
  sim::SimConfig sim_config;
  // Node failures requeue running jobs: they wait again from a later eligible time, with a restart counted.
  sim_config.failures = {{2, 6000, 9000}, {0, 12000, 15000}, {6, 8000, -1}, {4, 10000, 13000}, {1, 7000, 9500}};
  sim_config.requeue_delay = 120;
  int requeued = 0, sunk = 0, boosted = 0;
  sim_config.energy = &config->energy;
  sim_config.observer = [&](const sim::ScheduleEvent& e) {
    if (predicted) predicted_scorer->observe(e);
    if (e.kind == sim::ScheduleEvent::Kind::kStart || e.kind == sim::ScheduleEvent::Kind::kBackfillStart)
      started[e.job] = e.time;
    if (e.kind != sim::ScheduleEvent::Kind::kEnd) return;
    const Job& w = jobs[e.job];
    // Slurm's start time 0 means "never started": the simulator's clock starts at 0, so the record is a day later
    // (no run time and no order changes).
    ended.push_back({static_cast<uint32_t>(w.id), user_id(w), w.time_limit, started[e.job] + 86400, e.time + 86400, 0});
  };
  sim_config.on_scoring = [&](const sim::ScoringDecision& d) {
    CSnapshot c(d, cluster, jobs);
    REQUIRE(rlsched_jobs_ended(engine, ended.data(), ended.size(), nullptr) == RLSCHED_OK);
    passed = ended.size();
    std::size_t heard = 0;
    REQUIRE(viewer->jobs_ended(ended.data(), ended.size(), heard).ok());
    // The plugin path's views and features, as rlsched_score_batch builds them.
    capi::BatchView batch(c.cluster, *config);
    capi::ClassCache classes;
    std::vector<PendingJob> plugin_views;
    std::vector<std::string> job_classes;
    for (const rlsched_job& j : c.jobs) {
      const std::string& job_class =
          job_classes.emplace_back(classes.classify(*config, j.job_name, j.account, j.user_id));
      plugin_views.push_back(capi::to_pending_job(j, c.cluster, *config, d.now, batch, job_class));
      multi_partition += j.n_partitions > 1;
      requeued += j.restarts > 0 && j.begin_time > j.submit_time;
      typeless += j.accelerators > 0 && !j.gres_type;
      classed += !job_class.empty();
    }
    // As the policy sees them. Under run_time: predicted the simulator's views keep their limits (its scorer
    // substitutes them), so those are compared before the substitution.
    if (!predicted) viewer->show_run_times(c.jobs.data(), plugin_views);
    for (const PendingJob& v : plugin_views) predicted_shorter += v.predicted_run_time < v.time_limit;
    // The plugin's context: the batch it scores, or at submit the last batch and the new job.
    const ScoringContext plugin_context =
        batch.state.context(d.now, static_cast<int>(d.at_submit ? sorted.size() + 1 : plugin_views.size()));
    const std::vector<float> sim_features = features_of(d.views, d.context);
    const std::vector<float> plugin_features = features_of(plugin_views, plugin_context);
    REQUIRE(sim_features.size() == plugin_features.size());
    for (std::size_t k = 0; k < sim_features.size(); ++k) {
      if (std::memcmp(&sim_features[k], &plugin_features[k], sizeof(float)) == 0) continue;
      ++feature_mismatches;
      const std::size_t job = k / features::kFeatureCount, f = k % features::kFeatureCount;
      FAIL_CHECK(fmt::format("t={} job {} feature {}: simulator {} plugin {}", d.now, c.jobs[job].job_id,
                             features::schema()[f].name, sim_features[k], plugin_features[k]));
    }
    // A changed input must show: an hour more of time limit changes the job's features.
    if (!c.jobs.empty()) {
      rlsched_job longer = c.jobs.front();
      longer.time_limit += 3600;
      const PendingJob moved = capi::to_pending_job(longer, c.cluster, *config, d.now, batch, job_classes.front());
      mutations_seen += features_of({moved}, plugin_context) != features_of({plugin_views.front()}, plugin_context);
    }

    // What the simulator ranks: the policy's scores, or the energy rule's first or last rank.
    std::vector<double> ranked = d.scores;
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      ranked[i] = energy::ranked_score(d.energy_rank[i], d.scores[i]);
      sunk += d.energy_rank[i] == energy::Rank::kLast;
      boosted += d.energy_rank[i] == energy::Rank::kFirst;
    }
    // Site factors through the C entry points, exactly as the plugin calls them.
    std::vector<double> scores(c.jobs.size());
    std::vector<uint32_t> factors(c.jobs.size());
    if (d.at_submit) {
      ++submits;
      REQUIRE(c.jobs.size() == 1);
      REQUIRE(rlsched_score_one(engine, d.now, &c.cluster, c.jobs.data(), scores.data(), factors.data()) == RLSCHED_OK);
      CHECK(factors[0] == site_factor_of(ranked[0], sorted, 10000));
      site_mismatches += factors[0] != site_factor_of(ranked[0], sorted, 10000);
    } else {
      ++batches;
      REQUIRE(rlsched_score_batch(engine, d.now, &c.cluster, c.jobs.data(), c.jobs.size(), scores.data(),
                                  factors.data()) == RLSCHED_OK);
      std::vector<uint32_t> expected(ranked.size());
      site_factors_of(ranked, 10000, sorted, expected.data());
      CHECK(factors == expected);
      site_mismatches += factors != expected;
    }
    for (std::size_t i = 0; i < scores.size(); ++i) CHECK(scores[i] == ranked[i]);
    compared += static_cast<int>(c.jobs.size());
    if (predicted && !d.at_submit) {
      std::vector<double> limit_scores(c.jobs.size());
      REQUIRE(rlsched_score_batch(on_limits, d.now, &c.cluster, c.jobs.data(), c.jobs.size(), limit_scores.data(),
                                  nullptr) == RLSCHED_OK);
      changed_by_prediction += limit_scores != scores;
    }
  };
  auto run = sim::simulate(cluster, jobs, *scorer, sim_config);
  rlsched_counters counters{};
  REQUIRE(rlsched_engine_get_counters(engine, &counters) == RLSCHED_OK);
  rlsched_engine_destroy(engine);
  if (on_limits) rlsched_engine_destroy(on_limits);
  REQUIRE(run.ok());
  // Each ended job heard once, though passed again at every later call.
  CHECK(counters.ended_jobs == passed);
  CHECK(passed >= jobs.size() / 2);
  // The predicted run times were there to compare: below the limit for many of the jobs shown.
  if (!predicted) CHECK(predicted_shorter >= compared / 4);
  // And the prediction moved scores.
  if (predicted) CHECK(changed_by_prediction >= batches / 2);
  CHECK(feature_mismatches == 0);
  CHECK(site_mismatches == 0);
  // The replay covered what differs between the paths: queues, submits, multi-partition, typeless, classed jobs.
  CHECK(submits >= static_cast<int>(jobs.size()));  // requeued jobs enter again
  CHECK(batches >= 20);
  CHECK(compared >= 500);
  CHECK(multi_partition >= 30);
  CHECK(typeless >= 50);
  CHECK(classed >= 50);
  CHECK(requeued >= 3);
  CHECK(mutations_seen == batches + submits);
  if (min_ranked > 0) {
    CHECK(sunk >= min_ranked);
    CHECK(boosted >= min_ranked);
  } else {
    CHECK(sunk + boosted == 0);
  }
}

TEST_CASE("the simulator and site_factor/rlsched see the same features and give the same site factors",
          "[parity][features]") {
  check_parity("", 0);
}

TEST_CASE("the simulator and site_factor/rlsched rank the same jobs last and first for the price", "[parity][energy]") {
  check_parity(kEnergy, 30);
}

TEST_CASE("the simulator and site_factor/rlsched serve a model on the same predicted run times",
          "[parity][predicted-run-time]") {
  check_parity("run_time: predicted\n", 0);
}

}  // namespace
}  // namespace rlsched
