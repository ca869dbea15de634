// `rlsched simulate` (per-job outcomes, events, node failures) and evaluate on other workloads: placement on a
// Gavel folder, held-back jobs at a load, load factors.
#include "cli_fixtures.h"

using namespace rlsched::cli_test;  // the fixtures every CLI test file shares

TEST_CASE("simulate on a GPU cluster reports per-type metrics and writes one CSV row per job") {
  TempDir dir;
  const std::string csv = dir.file("outcomes.csv"), out = dir.file("sim.json");
  const Run run = run_cli(
      {"simulate", "--trace", kLabSacct, "--cluster", kLabYaml, "--policy", "f1", "--outcomes", csv, "--json", out});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(contains(run.out, "policy f1, backfill easy, protocol full"));
  CHECK(contains(run.out, "accelerator type"));
  CHECK(contains(run.out, "h200"));
  CHECK(contains(run.out, "scheduling passes"));

  const Workload workload = read(kLabSacct);
  auto cluster = rlsched::io::read_cluster(kLabYaml);
  REQUIRE(cluster.ok());
  apply_example_config(*cluster);  // no --config: the shipped example's score_scale and speeds (910b: 0.8)
  const PolicyResult want = evaluate(workload, &*cluster, "f1");
  REQUIRE(!want.metrics.per_type.empty());
  const json doc = json::parse(slurp(out));
  REQUIRE(doc.at("results").size() == 1);
  check_result(doc["results"][0], want);
  CHECK(doc.at("cluster").at("name") == "lab");

  std::istringstream lines(slurp(csv));
  std::string line;
  REQUIRE(std::getline(lines, line));
  CHECK(line ==
        "id,user,submit,start,end,wait,run,state,partition,accelerator_type,cpus,accelerators,restarts,nodes,"
        "predicted_wait");
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  REQUIRE(rows.size() == workload.jobs.size());
  bool gpu_row = false;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO(rows[i]);
    CHECK(std::count(rows[i].begin(), rows[i].end(), ',') == 14);  // the lab's jobs use one node each
    CHECK(rows[i].back() == ',');                                  // no --placement predictive: no predicted wait
    const std::string fields = rows[i].substr(0, rows[i].size() - 1);
    const std::string node = fields.substr(fields.rfind(',') + 1);
    CHECK((node == "h200-1" || node == "a100-1" || node == "npu-1"));
    CHECK(rows[i].rfind(std::to_string(workload.jobs[i].id) + ",", 0) == 0);
    gpu_row = gpu_row || contains(rows[i], ",h200,h200,");
  }
  CHECK(gpu_row);  // partition and accelerator type names, not indices
}

TEST_CASE("simulate --events: every start with its nodes, and the backfill plans, agreeing with the outcomes") {
  TempDir dir;
  const std::string events = dir.file("events.csv"), csv = dir.file("outcomes.csv");
  const Run run = run_cli({"simulate", "--trace", kLabSacct, "--cluster", kLabYaml, "--policy", "fcfs", "--backfill",
                           "slurm", "--events", events, "--outcomes", csv});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  std::istringstream lines(slurp(events));
  std::string line;
  REQUIRE(std::getline(lines, line));
  CHECK(line == "time,event,id,partition,accelerator_type,expected_start,nodes");
  // id -> (start time, nodes) from the start rows; every row's time never goes back.
  std::map<std::string, std::pair<std::string, std::string>> starts;
  std::size_t ends = 0;
  long long last = 0;
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    REQUIRE(f.size() >= 6);
    CHECK(std::stoll(f[0]) >= last);
    last = std::stoll(f[0]);
    if (f[1] == "start" || f[1] == "backfill_start") starts[f[2]] = {f[0], f.size() > 6 ? f[6] : ""};
    if (f[1] == "end") ++ends;
    if (f[1] == "reservation") CHECK(std::stoll(f[5]) > std::stoll(f[0]));  // planned for later
  }
  std::istringstream rows(slurp(csv));
  REQUIRE(std::getline(rows, line));
  std::size_t ran = 0;
  while (std::getline(rows, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    REQUIRE(f.size() == 14);
    if (f[3].empty()) continue;
    ++ran;
    INFO(line);
    REQUIRE(starts.count(f[0]) == 1);
    CHECK(starts[f[0]].first == f[3]);
    CHECK(starts[f[0]].second == f[13]);
  }
  CHECK(ran > 0);
  CHECK(ends == ran);
}

TEST_CASE("simulate with random node failures requeues jobs") {
  const Run run = run_cli({"simulate", "--trace", kLabSacct, "--cluster", kLabYaml, "--policy", "fcfs",
                           "--failures-mtbf", "0.005", "--failures-mttr", "0.002", "--seed", "3", "--json", "-"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const json doc = json::parse(run.out);
  CHECK(doc.at("failures").at("node_failures").get<int>() > 0);
  CHECK(doc["results"][0].at("restarts").get<int>() > 0);
  CHECK(doc["results"][0].at("counters").at("requeues").get<int>() > 0);

  const Run no_mtbf = run_cli({"simulate", "--trace", kSmallSwf, "--policy", "fcfs", "--failures-mttr", "1"});
  CHECK(no_mtbf.exit_code == 2);
}

const std::string kGavel = kData + "/gavel";
const std::string kGavelCluster = std::string(RLSCHED_SOURCE_DIR) + "/slurm_conf_examples/gavel-cluster.yaml";

/// The test Gavel folder through the library as evaluate reads it with `--any-of pods.csv`: the derived workload,
/// and the cluster with its measured speeds.
std::pair<rlsched::io::GavelWorkload, Cluster> gavel_on_cluster() {
  rlsched::io::GavelOptions g;
  g.any_of_pods = kGavel + "/pods.csv";
  auto derived = rlsched::io::read_gavel_workload(kGavel, g);
  REQUIRE(derived.ok());
  auto cluster = rlsched::io::read_cluster(kGavelCluster);
  REQUIRE(cluster.ok());
  REQUIRE(rlsched::io::use_measured_speeds(derived->types, *cluster, kGavelCluster).ok());
  return {std::move(*derived), std::move(*cluster)};
}

TEST_CASE("evaluate --placement on a Gavel folder matches the library placement by placement") {
  TempDir dir;
  const std::string out = dir.file("placements.json");
  const Run run = run_cli({"evaluate", "--trace", kGavel, "--any-of", kGavel + "/pods.csv", "--cluster", kGavelCluster,
                           "--load", "0.8", "--policies", "fcfs", "--placement", "first-fit,fastest,predictive",
                           "--placement-partitions", "k80,p100,v100", "--json", out});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(contains(run.out, "Gavel msr_seed0 jobs, measured speeds of"));
  CHECK(contains(run.out, "arrivals scaled"));
  CHECK(contains(run.out, "jct_vs_pred"));
  CHECK(contains(run.out, "fcfs / first-fit"));

  // The same through the library: the derived workload, its measured speeds on the cluster, the load.
  auto [derived, cluster] = gavel_on_cluster();
  REQUIRE(rlsched::sim::scale_to_load(derived.workload.jobs, cluster, 0.8).ok());
  const json doc = json::parse(slurp(out));
  REQUIRE(doc.at("results").size() == 3);
  const char* names[] = {"first-fit", "fastest", "predictive"};
  for (std::size_t i = 0; i < 3; ++i) {
    EvaluationOptions options;
    options.sim.placement = {*rlsched::sim::parse_placement(names[i]), {"k80", "p100", "v100"}, 3600};
    const PolicyResult want = evaluate(derived.workload, &cluster, "fcfs", options);
    CHECK(doc["results"][i].at("placement") == names[i]);
    check_result(doc["results"][i], want);
  }

  // simulate --outcomes: each placed job's predicted wait beside its actual one, as the library predicted it.
  const std::string csv = dir.file("outcomes.csv");
  const Run sim_run = run_cli({"simulate", "--trace", kGavel, "--any-of", kGavel + "/pods.csv", "--cluster",
                               kGavelCluster, "--load", "0.8", "--policy", "fcfs", "--placement", "predictive",
                               "--placement-partitions", "k80,p100,v100", "--outcomes", csv});
  INFO(sim_run.err);
  REQUIRE(sim_run.exit_code == 0);
  EvaluationOptions options;
  options.sim.placement = {rlsched::sim::Placement::kPredictive, {"k80", "p100", "v100"}, 3600};
  options.keep_outcomes = true;
  const PolicyResult want = evaluate(derived.workload, &cluster, "fcfs", options);
  std::istringstream lines(slurp(csv));
  std::string line;
  REQUIRE(std::getline(lines, line));
  CHECK(line.substr(line.rfind(',') + 1) == "predicted_wait");
  std::size_t row = 0, predicted = 0;
  while (std::getline(lines, line)) {
    REQUIRE(row < want.outcomes.size());
    INFO(line);
    const double expected = want.outcomes[row++].predicted_wait;
    const std::string field = line.substr(line.rfind(',') + 1);
    if (expected < 0) {
      CHECK(field.empty());
    } else {
      ++predicted;
      CHECK(std::stod(field) == Approx(expected).margin(0.5));
    }
  }
  CHECK(row == want.outcomes.size());
  CHECK(predicted > 0);
}

TEST_CASE("evaluate --held-back scales the held-back jobs to --load, so that the jobs judged offer that load") {
  TempDir dir;
  const std::string out = dir.file("held-back.json");
  const Run run = run_cli({"evaluate", "--trace", kGavel, "--any-of", kGavel + "/pods.csv", "--cluster", kGavelCluster,
                           "--load", "0.8", "--held-back", "0.5", "--policies", "fcfs,sjf", "--json", out});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);

  // The library: the last half by submit time, then its arrivals scaled to 0.8. Scaled first, the recent half of
  // this folder would offer another load than the one asked for.
  auto [derived, cluster] = gavel_on_cluster();
  Workload recent = rlsched::take_recent(derived.workload, 0.5);
  REQUIRE(rlsched::sim::scale_to_load(recent.jobs, cluster, 0.8).ok());
  CHECK(rlsched::sim::offered_load(recent.jobs, cluster) == Approx(0.8).epsilon(0.01));
  CHECK(contains(run.out, fmt::format("held back: the last 50% by submit time, {} jobs", recent.jobs.size())));
  const json doc = json::parse(slurp(out));
  REQUIRE(doc.at("results").size() == 2);
  check_result(doc["results"][0], evaluate(recent, &cluster, "fcfs"));
  check_result(doc["results"][1], evaluate(recent, &cluster, "sjf"));
}

TEST_CASE("evaluate --load-factor multiplies the offered load, --load's or the trace's own") {
  TempDir dir;
  SECTION("after --load") {
    const std::string out = dir.file("gavel.json");
    const Run run = run_cli({"evaluate", "--trace", kGavel, "--any-of", kGavel + "/pods.csv", "--cluster",
                             kGavelCluster, "--load", "0.8", "--load-factor", "1.1", "--policies", "fcfs,sjf", "--json",
                             out});
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(contains(run.out, "to 0.88 (--load 0.8 --load-factor 1.1)"));
    auto [derived, cluster] = gavel_on_cluster();
    REQUIRE(rlsched::sim::scale_to_load(derived.workload.jobs, cluster, 0.88).ok());
    const json doc = json::parse(slurp(out));
    REQUIRE(doc.at("results").size() == 2);
    check_result(doc["results"][0], evaluate(derived.workload, &cluster, "fcfs"));
    check_result(doc["results"][1], evaluate(derived.workload, &cluster, "sjf"));
  }
  SECTION("of the trace's own arrivals") {
    const std::string swf = dir.file("long.swf"), out = dir.file("long.json");
    write_long_swf(swf);
    const Run run = run_cli({"evaluate", "--trace", swf, "--load-factor", "0.9", "--policies", "sjf", "--json", out});
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    Workload workload = read(swf);
    const Cluster cluster = implied_with_example(workload);
    const double own = rlsched::sim::offered_load(workload.jobs, cluster);
    REQUIRE(rlsched::sim::scale_to_load(workload.jobs, cluster, own * 0.9).ok());
    CHECK(contains(run.out, fmt::format("from load {:.3g} to {:.3g} (--load-factor 0.9)", own, own * 0.9)));
    const json doc = json::parse(slurp(out));
    REQUIRE(doc.at("results").size() == 1);
    check_result(doc["results"][0], evaluate(workload, &cluster, "sjf"));
  }
  SECTION("a workload that offers no load has none to multiply") {
    const std::string swf = dir.file("at-once.swf");
    std::ofstream(swf) << "; MaxNodes: 4\n; MaxProcs: 4\n"
                       << "1 100 -1 50 2 -1 -1 2 60 -1 1 1 1 -1 1 -1 -1 -1\n"
                       << "2 100 -1 80 4 -1 -1 4 90 -1 1 1 1 -1 1 -1 -1 -1\n";
    const Run run = run_cli({"evaluate", "--trace", swf, "--load-factor", "1.1", "--policies", "sjf"});
    CHECK(run.exit_code == 1);
    CHECK(contains(run.err, "--load-factor 1.1: the workload offers no load to multiply"));
    const Run zero = run_cli({"evaluate", "--trace", swf, "--load-factor", "0", "--policies", "sjf"});
    CHECK(zero.exit_code == 2);
  }
}
