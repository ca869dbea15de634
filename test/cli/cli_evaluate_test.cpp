// `rlsched evaluate`'s options: --candidate and its verdict, --preemption, --config (run_time, score_scale),
// --energy.
#include "cli_fixtures.h"

using namespace rlsched::cli_test;  // the fixtures every CLI test file shares

TEST_CASE("evaluate --candidate judges a model against the current one on the held-back recent jobs") {
  const std::string trace = std::string(RLSCHED_SHARED_TRACES) +
                            "/coare-saliksik-slurm/DOST-ASTI_COARE-Saliksik-2020-cln.swf";
  const std::string models = std::string(RLSCHED_SOURCE_DIR) + "/policy_models";
  const std::string a = models + "/default/policy.pt", b = models + "/lublin1-easy/policy.pt";
  TempDir dir;
  const std::string out = dir.file("verdict.json");
  const Run run = run_cli({"evaluate", "--trace", trace, "--candidate", a, "--current", b, "--policies", "sjf",
                           "--json", out});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);

  // The same through the library: the last 20% of the jobs by submit time, both models.
  Workload w = read(trace);
  std::stable_sort(w.jobs.begin(), w.jobs.end(), [](const rlsched::Job& x, const rlsched::Job& y) {
    return x.submit < y.submit;
  });
  const std::size_t keep = static_cast<std::size_t>(std::ceil(static_cast<double>(w.jobs.size()) * 0.2));
  w.jobs.erase(w.jobs.begin(), w.jobs.end() - static_cast<std::ptrdiff_t>(keep));
  const Cluster cluster = implied_with_example(w);
  auto result_of = [&](const std::string& model) {
    auto scorer = rlsched::policy::make_policy_scorer("model:" + model);
    REQUIRE(scorer.ok());
    auto r = rlsched::sim::evaluate_policy(w, &cluster, **scorer, {});
    REQUIRE(r.ok());
    return std::move(*r);
  };
  const PolicyResult ra = result_of(a), rb = result_of(b);
  const PolicyResult sjf = evaluate(w, &cluster, "sjf");
  const PolicyResult* rs = &sjf;
  // PROMOTE only when the candidate beats both the current model and the best heuristic of the run (here sjf alone).
  auto beats = [](const PolicyResult& x, const PolicyResult& y) {
    return x.metrics.avg_bsld < y.metrics.avg_bsld && x.metrics.p99_wait <= y.metrics.p99_wait * 1.1;
  };
  const json doc = json::parse(slurp(out));
  REQUIRE(doc.contains("verdict"));
  const json& v = doc["verdict"];
  CHECK(v.at("avg_bsld").get<double>() == Approx(ra.metrics.avg_bsld));
  REQUIRE(v.at("against").size() == 2);
  CHECK(v.at("against")[0].at("policy") == "model:" + b);
  CHECK(v.at("against")[0].at("avg_bsld").get<double>() == Approx(rb.metrics.avg_bsld));
  CHECK(v.at("against")[0].at("beaten").get<bool>() == beats(ra, rb));
  CHECK(v.at("against")[1].at("policy") == "sjf");
  CHECK(v.at("against")[1].at("avg_bsld").get<double>() == Approx(rs->metrics.avg_bsld));
  CHECK(v.at("against")[1].at("beaten").get<bool>() == beats(ra, *rs));
  const bool promote = beats(ra, rb) && beats(ra, *rs);
  CHECK(v.at("promote").get<bool>() == promote);
  CHECK(contains(run.out, promote ? "verdict: PROMOTE model:" + a : "verdict: KEEP model:" + b));
  CHECK(contains(run.out, fmt::format("held back: the last 20% by submit time, {} jobs", keep)));

  // The other way round: the candidate b must beat a and sjf.
  const Run swapped = run_cli({"evaluate", "--trace", trace, "--candidate", b, "--current", a, "--policies", "sjf"});
  REQUIRE(swapped.exit_code == 0);
  const bool swapped_promote = beats(rb, ra) && beats(rb, *rs);
  CHECK(contains(swapped.out, swapped_promote ? "verdict: PROMOTE model:" + b : "verdict: KEEP model:" + a));
  CHECK_FALSE((promote && swapped_promote));
  CHECK(run_cli({"evaluate", "--trace", trace}).exit_code == 2);  // neither --policies nor --candidate
}

// A 10-hour job holds all 4 CPUs; an urgent 10-minute job arrives an hour in. Every figure below is worked out by
// hand from docs/preemption.md's rules (minimum run time 10 min, grace = cost 90 s + margin 30 s).
TEST_CASE("evaluate --preemption: no preemption, requeue from scratch and checkpoint, with rlsched.yaml's rules") {
  TempDir dir;
  const std::string swf = dir.file("urgent.swf");
  std::ofstream(swf) << "; MaxNodes: 4\n; MaxProcs: 4\n"
                        "1 0 0 36000 4 -1 -1 4 40000 -1 1 1 1 -1 1 -1 -1 -1\n"
                        "2 3600 0 600 4 -1 -1 4 1200 -1 1 2 1 -1 1 -1 -1 -1\n";
  const std::vector<std::string> common = {"evaluate", "--trace", swf, "--policies", "fcfs", "--urgent", "1",
                                           "--checkpoint", "interval=30m,cost=90s",
                                           "--preemption", "none,requeue,checkpoint", "--json", "-"};
  struct Expected {
    const char* mode;
    int preemptions;
    double lost_cpu_hours, urgent_wait, other_wait;
  };
  auto check = [](const Run& run, const std::vector<Expected>& expected) {
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    const json doc = json::parse(run.out);
    REQUIRE(doc.at("results").size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const json& r = doc["results"][i];
      INFO(r.dump());
      CHECK(r.at("preemption") == expected[i].mode);
      CHECK(r.at("preemptions") == expected[i].preemptions);
      CHECK(r.at("lost_cpu_hours").get<double>() == Approx(expected[i].lost_cpu_hours));
      for (const json& q : r.at("per_qos"))
        CHECK(q.at("avg_wait").get<double>() ==
              (q.at("name") == "urgent" ? expected[i].urgent_wait : expected[i].other_wait));
    }
  };
  // none: the urgent job waits for the long one to end (36,000 - 3,600 s). requeue: it starts at once, the long
  // job restarts from scratch when it ends (4 CPUs x 1 h lost). checkpoint: it waits out the 120 s grace, the long
  // job loses only its checkpoint's 90 s on 4 CPUs and resumes when the urgent job ends.
  check(run_cli(common), {{"none", 0, 0.0, 32400, 0}, {"requeue", 1, 4.0, 0, 4200}, {"checkpoint", 1, 0.1, 120, 4320}});

  // The rules an admin gives preempt/rlsched: with a 2 h minimum run time the long job becomes a victim at 7,200 s,
  // the urgent job starts after the grace (7,320 s) and the long one resumes when it ends (7,920 s).
  std::vector<std::string> protective = common;
  const std::string config = dir.file("rlsched.yaml");
  std::ofstream(config) << "preemption:\n  min_run_time: 2h\n";
  protective.insert(protective.end(), {"--config", config});
  check(run_cli(protective),
        {{"none", 0, 0.0, 32400, 0}, {"requeue", 1, 4.0, 0, 4200}, {"checkpoint", 1, 0.1, 3720, 7920}});

  std::ofstream(config) << "preemption:\n  min_run_time: soon\n";
  const Run bad = run_cli(protective);
  CHECK(bad.exit_code == 1);
  CHECK(contains(bad.err, config + ":2: preemption.min_run_time must be a duration"));
  std::vector<std::string> no_urgent(common.begin(), common.begin() + 5);
  no_urgent.insert(no_urgent.end(), {"--preemption", "checkpoint"});
  const Run needs_urgent = run_cli(no_urgent);
  CHECK(needs_urgent.exit_code == 2);
  CHECK(contains(needs_urgent.err, "add --urgent"));
}

// rlsched.yaml's run_time: predicted serves a model on predicted run times, in the simulator as in the plugin: the
// same schedule as predicted:model:PATH under a config on time limits. The rules of thumb stay as they are.
TEST_CASE("evaluate --config with run_time: predicted runs a model as predicted:model does") {
  TempDir dir;
  const std::string predicted = dir.file("predicted.yaml"), limits = dir.file("limits.yaml");
  std::ofstream(predicted) << "run_time: predicted\n";
  std::ofstream(limits) << "run_time: limit\n";
  // 400 jobs of a generated CPU site: many users, whose jobs end well inside their limits.
  REQUIRE(
      run_cli({"generate", "--family", "cpu", "--seed", "3", "--jobs", "400", "--out", dir.file("site")}).exit_code ==
      0);
  const std::string trace = dir.file("site.swf");
  const std::string model = "model:" + std::string(RLSCHED_SOURCE_DIR) + "/policy_models/default/policy.pt";
  const std::string served = dir.file("served.json"), named = dir.file("named.json");
  const Run a =
      run_cli({"evaluate", "--trace", trace, "--policies", "sjf," + model, "--config", predicted, "--json", served});
  INFO(a.err);
  REQUIRE(a.exit_code == 0);
  const Run b = run_cli({"evaluate", "--trace", trace, "--policies", "sjf,predicted:" + model + "," + model, "--config",
                         limits, "--json", named});
  INFO(b.err);
  REQUIRE(b.exit_code == 0);
  const json on_config = json::parse(slurp(served)).at("results");
  const json on_name = json::parse(slurp(named)).at("results");
  REQUIRE(on_config.size() == 2);
  REQUIRE(on_name.size() == 3);
  for (const char* key : {"avg_bsld", "avg_wait", "max_wait", "makespan"}) {
    INFO(key);
    CHECK(on_config[0].at(key).get<double>() == on_name[0].at(key).get<double>());  // sjf either way
    CHECK(on_config[1].at(key).get<double>() == on_name[1].at(key).get<double>());  // the model, predicted
  }
  // ... and the prediction changed the model's schedule on this workload.
  CHECK(on_name[1].at("avg_wait").get<double>() != on_name[2].at("avg_wait").get<double>());

  const Run compat = run_cli(
      {"simulate", "--trace", kSmallSwf, "--policy", model, "--protocol", "rlscheduler", "--config", predicted});
  CHECK(compat.exit_code != 0);
  CHECK(
      contains(compat.err,
               "runs under --protocol full only (it hears the run's job ends: rlsched.yaml says run_time: predicted)"));
}

// The site factor's weight is the score_scale of the rlsched.yaml given: at 1 the learned rank is worth nothing
// beside the lab's multifactor weights (every site factor is floor(1 x share) = 0), so every policy runs as stock
// Slurm and a candidate model cannot beat the current one; at 1,000,000 the rank decides, as the library computes
// with weights.site = 1,000,000.
TEST_CASE("evaluate --config: score_scale weighs the learned rank beside multifactor, and the verdict follows it") {
  TempDir dir;
  const std::string tiny = dir.file("tiny.yaml"), huge = dir.file("huge.yaml");
  std::ofstream(tiny) << "score_scale: 1\n";
  std::ofstream(huge) << "score_scale: 1000000\n";
  const Workload workload = read(kLabSacct);
  auto cluster = rlsched::io::read_cluster(kLabYaml);
  REQUIRE(cluster.ok());

  const std::string out = dir.file("tiny.json");
  const Run low = run_cli({"evaluate", "--trace", kLabSacct, "--cluster", kLabYaml, "--policies", "sjf,fcfs,multifactor",
                           "--config", tiny, "--json", out});
  INFO(low.err);
  REQUIRE(low.exit_code == 0);
  const json doc = json::parse(slurp(out));
  CHECK(doc.at("config").at("source") == tiny);
  CHECK(doc.at("priority").at("site") == 1);
  const json& r = doc.at("results");
  for (const char* key : {"avg_bsld", "avg_wait", "max_wait", "makespan"}) {
    INFO(key);
    CHECK(r[0].at(key).get<double>() == r[2].at(key).get<double>());  // sjf ranks for nothing: stock Slurm
    CHECK(r[1].at(key).get<double>() == r[2].at(key).get<double>());
  }

  const std::string out_huge = dir.file("huge.json");
  const Run high = run_cli(
      {"evaluate", "--trace", kLabSacct, "--cluster", kLabYaml, "--policies", "sjf", "--config", huge, "--json", out_huge});
  REQUIRE(high.exit_code == 0);
  cluster->priority.site = 1000000;
  check_result(json::parse(slurp(out_huge)).at("results")[0], evaluate(workload, &*cluster, "sjf"));
  CHECK(contains(run_cli({"evaluate", "--trace", kLabSacct, "--cluster", kLabYaml, "--policies", "sjf", "--config",
                          huge}).out,
                 "+ the policy's rank as site factor, 0..1000000 (score_scale)"));

  // The verdict: at score_scale 1 two different models give the same schedule, so the candidate is kept out.
  const std::string models = std::string(RLSCHED_SOURCE_DIR) + "/policy_models";
  const std::string a = models + "/default/policy.pt", b = models + "/lublin1-easy/policy.pt";
  const std::string verdict = dir.file("verdict.json");
  const Run keep = run_cli({"evaluate", "--trace", kLabSacct, "--cluster", kLabYaml, "--candidate", a, "--current", b,
                            "--config", tiny, "--json", verdict});
  INFO(keep.err);
  REQUIRE(keep.exit_code == 0);
  const json verdict_doc = json::parse(slurp(verdict));
  const json& v = verdict_doc.at("verdict");
  REQUIRE(v.at("against").size() == 2);  // the current model and the best heuristic
  CHECK(v.at("avg_bsld").get<double>() == v.at("against")[0].at("avg_bsld").get<double>());
  CHECK_FALSE(v.at("promote").get<bool>());
  CHECK(contains(keep.out, "verdict: KEEP model:" + b));
}

// Two one-CPU jobs submitted at 0 (Thursday 00:00 UTC) on four one-CPU nodes; power 500 W busy, 100 W idle per
// node; 0.40/kWh on Thursday before 06:00, 0.10 otherwise; QOS standby may wait 8 h. Every figure is worked out by
// hand: each job draws 500 - 100 = 400 W for an hour (0.4 kWh).
TEST_CASE("evaluate --energy: the cluster's and the deferrable jobs' energy, cost and wait change with the rule") {
  TempDir dir;
  const std::string swf = dir.file("two.swf");
  std::ofstream(swf) << "; MaxNodes: 4\n; MaxProcs: 4\n"
                        "1 0 0 3600 1 -1 -1 1 3600 -1 1 1 1 -1 1 -1 -1 -1\n"
                        "2 0 0 3600 1 -1 -1 1 3600 -1 1 2 1 -1 1 -1 -1 -1\n";
  const std::string config = dir.file("rlsched.yaml");
  std::ofstream(config) << "energy:\n"
                           "  power: {node: {busy_w: 500, idle_w: 100}}\n"
                           "  price:\n"
                           "    weekly:\n"
                           "      - {days: thu, hours: \"00:00-06:00\", value: 0.40}\n"
                           "      - {days: thu, hours: \"06:00-24:00\", value: 0.10}\n"
                           "      - {days: \"mon-wed,fri-sun\", hours: \"00:00-24:00\", value: 0.10}\n"
                           "  deferrable: {qos: [standby], max_deferral: 8h}\n";
  const std::string out = dir.file("energy.json");
  const Run run = run_cli({"evaluate", "--trace", swf, "--policies", "fcfs", "--config", config, "--energy",
                           "--energy-rule", "none,least-cost", "--deferrable", "1", "--json", out});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(contains(run.out, "deferrable: 2 jobs of QOS standby"));
  CHECK(contains(run.out, "defer_cost"));
  const json doc = json::parse(slurp(out));
  CHECK(doc.at("energy").at("deferrable_jobs") == 2);
  const json& results = doc.at("results");
  REQUIRE(results.size() == 2);
  const json& none = results[0].at("energy");
  const json& least = results[1].at("energy");
  CHECK(none.at("rule") == "none");
  CHECK(least.at("rule") == "least-cost");
  // none: both run 00:00-01:00 at 0.40. Jobs 0.8 kWh (0.32); four idle nodes 4 x 100 W for the hour, 0.4 kWh.
  CHECK(none.at("kwh").get<double>() == Approx(1.2));
  CHECK(none.at("cost").get<double>() == Approx(0.48));
  CHECK(none.at("deferrable").at("cost").get<double>() == Approx(0.32));
  CHECK(none.at("deferrable").at("avg_wait").get<double>() == 0);
  CHECK(none.at("other").at("jobs") == 0);
  // least-cost: both wait for 06:00 and cost 0.04 each; the idle nodes draw 400 W from 00:00 to 07:00, 2.8 kWh,
  // 2.4 of them at 0.40 and 0.4 at 0.10: 1.00.
  CHECK(least.at("deferrable").at("cost").get<double>() == Approx(0.08));
  CHECK(least.at("deferrable").at("avg_wait").get<double>() == 21600);
  CHECK(least.at("kwh").get<double>() == Approx(3.6));
  CHECK(least.at("cost").get<double>() == Approx(1.08));
  CHECK(least.at("series").at("price").at(0).get<double>() == Approx(0.40));
  CHECK(least.at("series").at("busy_share").at(0).get<double>() == 0);  // no accelerators in this cluster

  // --report: the price-against-load figure from the runs' series, and the per-job energy in the outcomes.
  const std::string folder = dir.file("report");
  const Run report = run_cli({"evaluate", "--trace", swf, "--policies", "fcfs", "--config", config, "--energy",
                              "--energy-rule", "least-cost", "--deferrable", "1", "--report", folder});
  INFO(report.err);
  REQUIRE(report.exit_code == 0);
  CHECK(fs::file_size(fs::path(folder) / "price_load.png") > 0);
  CHECK(contains(slurp(folder + "/index.html"), "price_load.png"));
  CHECK(contains(slurp(folder + "/outcomes-0.csv"), ",0.4,0.04,0\n"));  // deferred to 06:00, at 0.10

  // simulate: the text report and the per-job columns of --outcomes.
  const std::string outcomes = dir.file("outcomes.csv");
  const Run sim = run_cli({"simulate", "--trace", swf, "--policy", "fcfs", "--config", config, "--energy",
                           "--energy-rule", "none", "--outcomes", outcomes});
  INFO(sim.err);
  REQUIRE(sim.exit_code == 0);
  CHECK(contains(sim.out, "cluster energy (kWh)"));
  CHECK(contains(sim.out, "avg price (EUR/kWh)"));
  const std::string csv = slurp(outcomes);
  CHECK(contains(csv.substr(0, csv.find('\n')), ",kwh,cost,co2_g"));
  CHECK(contains(csv, ",0.4,0.16,0\n"));
}

TEST_CASE("energy options (--energy, --energy-rule, --deferrable) refuse what they cannot use, saying what and where") {
  TempDir dir;
  const std::string no_price = dir.file("no-price.yaml"), no_qos = dir.file("no-qos.yaml");
  std::ofstream(no_price) << "energy:\n  power: {node: {busy_w: 500, idle_w: 100}}\n";
  std::ofstream(no_qos) << "energy:\n  power: {node: {busy_w: 500}}\n  price:\n    weekly:\n"
                           "      - {days: daily, hours: \"00:00-24:00\", value: 0.2}\n";
  const std::vector<std::string> base = {"simulate", "--trace", kSmallSwf, "--policy", "fcfs"};
  auto with = [&base](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  };
  const std::string none = dir.file("no-energy.yaml");
  std::ofstream(none) << "score_scale: 1000\n";
  const Run nothing = with({"--energy", "--config", none});
  CHECK(nothing.exit_code == 1);
  CHECK(contains(nothing.err, "--energy: " + none + " has no energy.power"));
  const Run price = with({"--energy", "--config", no_price});
  CHECK(price.exit_code == 1);
  CHECK(contains(price.err, "--energy: " + no_price + " has no energy.price"));
  const Run qos = with({"--energy", "--config", no_qos, "--deferrable", "0.5"});
  CHECK(qos.exit_code == 1);
  CHECK(contains(qos.err, "--deferrable: " + no_qos + "'s energy.deferrable names no QOS"));
  const Run rule = with({"--energy", "--config", no_qos, "--energy-rule", "cheapest"});
  CHECK(rule.exit_code == 2);
  CHECK(contains(rule.err, "unknown energy rule 'cheapest'"));
  const Run share = with({"--energy", "--config", no_qos, "--deferrable", "1.5"});
  CHECK(share.exit_code == 2);
  CHECK(contains(share.err, "the share of jobs made deferrable"));
  const Run alone = with({"--energy-rule", "none"});
  CHECK(alone.exit_code == 2);
  CHECK(contains(alone.err, "--energy"));
  const Run compat = with({"--energy", "--config", no_qos, "--protocol", "rlscheduler"});
  CHECK(compat.exit_code == 2);
  CHECK(contains(compat.err, "--energy: applies to --protocol full only"));
}
