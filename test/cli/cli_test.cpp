// End-to-end tests of the `rlsched` binary: run it as a user would, then check its output against the library
// called directly on the same input, so the CLI cannot pass by printing plausible numbers.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "temp_dir.h"

#include "rlsched/area_rule.h"
#include "rlsched/io/cluster_readers.h"
#include "rlsched/io/gavel_workload.h"
#include "rlsched/plugin_config.h"
#include "rlsched/policy/torchscript_scorer.h"
#include "rlsched/io/workload_readers.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/evaluation.h"
#include "rlsched/sim/workload_generator.h"
#include "test_data.h"
#include "text_checks.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using rlsched::Cluster;
using rlsched::Workload;
using rlsched::sim::EvaluationOptions;
using rlsched::sim::PolicyResult;

const std::string kCli = RLSCHED_CLI;
using rlsched::test::kData;
const std::string kSmallSwf = kData + "/swf/small.swf";
const std::string kMalformedSwf = kData + "/swf/malformed.swf";
const std::string kLabSacct = kData + "/sacct/slurm22.05-lab.txt";
const std::string kLabYaml = kData + "/cluster/lab.yaml";

struct TempDir : rlsched::test::TempDir {
  TempDir() : rlsched::test::TempDir("rlsched_cli_test") {}
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs the CLI with stdout and stderr sent to files (pipes could fill up and deadlock on large outputs); stdin and
// the outputs are not terminals, as in scripts.
Run run_cli(const std::vector<std::string>& args) {
  TempDir dir;
  const std::string out_path = dir.file("stdout"), err_path = dir.file("stderr");
  std::vector<std::string> argv_storage{kCli};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, kCli.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(spawned == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));

  Run run;
  run.exit_code = WEXITSTATUS(status);
  run.out = slurp(out_path);
  run.err = slurp(err_path);
  return run;
}

using rlsched::test::contains;

std::size_t count_lines(const std::string& text) {
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

Workload read(const std::string& path) {
  auto workload = rlsched::io::read_workload(path);
  REQUIRE(workload.ok());
  return std::move(*workload);
}

// What the CLI applies without --config: the shipped rlsched.yaml's score_scale as the site weight and its types'
// speeds for the types it names (read here with the plugins' own parser).
void apply_example_config(Cluster& cluster) {
  auto config = rlsched::config::load_plugin_config(std::string(RLSCHED_SOURCE_DIR) + "/slurm_conf_examples/rlsched.yaml",
                                                    {false});
  REQUIRE(config.ok());
  cluster.priority.site = config->score_scale;
  for (rlsched::AcceleratorType& t : cluster.accelerator_types)
    if (const rlsched::AcceleratorType* c = config->find_type(t.name, t.gres)) t.speed = c->speed;
}

// The machine the CLI simulates a trace on without --cluster: the one the library implies (multifactor with the
// example slurm.conf's weights), with the shipped rlsched.yaml applied.
Cluster implied_with_example(const Workload& workload) {
  auto cluster = rlsched::sim::implied_cluster(workload);
  REQUIRE(cluster.ok());
  CHECK(cluster->priority.multifactor_enabled());
  apply_example_config(*cluster);
  return std::move(*cluster);
}

PolicyResult evaluate(const Workload& workload, const Cluster* cluster, const std::string& policy,
                      const EvaluationOptions& options = {}) {
  rlsched::ScorerSettings settings;
  if (cluster != nullptr && cluster->priority.multifactor_enabled()) settings.multifactor = cluster->priority;
  auto scorer = rlsched::make_scorer(policy, settings);
  REQUIRE(scorer.ok());
  auto result = rlsched::sim::evaluate_policy(workload, cluster, **scorer, options);
  REQUIRE(result.ok());
  return std::move(*result);
}

// The documented result keys carry exactly what evaluate_policy computed.
void check_result(const json& got, const PolicyResult& want) {
  INFO("policy " << want.policy);
  CHECK(got.at("policy") == want.policy);
  CHECK(got.at("backfill") == rlsched::sim::to_string(want.backfill));
  CHECK(got.at("protocol") == rlsched::sim::to_string(want.protocol));
  const auto& m = want.metrics;
  const std::vector<std::pair<const char*, double>> numbers = {
      {"avg_bsld", m.avg_bsld},       {"avg_wait", m.avg_wait},
      {"p50_wait", m.p50_wait},       {"p95_wait", m.p95_wait},
      {"p99_wait", m.p99_wait},       {"max_wait", m.max_wait},
      {"utilization", m.utilization}, {"avg_completion", m.avg_completion},
      {"makespan", m.makespan},       {"jain_fairness", m.jain_fairness},
  };
  for (const auto& [key, value] : numbers) {
    INFO(key);
    REQUIRE(got.at(key).is_number());
    CHECK(got.at(key).get<double>() == Approx(value).epsilon(1e-12).margin(1e-12));
  }
  CHECK(got.at("jobs").get<std::size_t>() == m.jobs);
  CHECK(got.at("completed").get<std::size_t>() == m.completed);
  CHECK(got.at("timed_out").get<std::size_t>() == m.timed_out);
  CHECK(got.at("rejected").get<std::size_t>() == m.rejected);
  CHECK(got.at("unfinished").get<std::size_t>() == m.unfinished);
  REQUIRE(got.at("sim_seconds").is_number());
  CHECK(got.at("sim_seconds").get<double>() >= 0);
  if (want.protocol == rlsched::sim::Protocol::kFull) {
    CHECK(got.at("fragmentation").get<double>() == Approx(m.fragmentation).epsilon(1e-12).margin(1e-12));
    CHECK(got.at("counters").at("events").get<std::size_t>() == want.counters.events);
  } else {
    CHECK(got.at("fragmentation").is_null());
    REQUIRE(got.at("sequence_bsld").size() == want.sequence_bsld.size());
    for (std::size_t i = 0; i < want.sequence_bsld.size(); ++i)
      CHECK(got.at("sequence_bsld")[i].get<double>() == Approx(want.sequence_bsld[i]).epsilon(1e-12));
  }
  REQUIRE(got.at("per_type").size() == m.per_type.size());
  for (std::size_t i = 0; i < m.per_type.size(); ++i) {
    CHECK(got.at("per_type")[i].at("name") == m.per_type[i].name);
    CHECK(got.at("per_type")[i].at("jobs").get<std::size_t>() == m.per_type[i].jobs);
    CHECK(got.at("per_type")[i].at("utilization").get<double>() == Approx(m.per_type[i].utilization).epsilon(1e-12));
  }
}

// An SWF long enough for the rlscheduler protocol (it needs 9,983 usable jobs), from the synthetic model.
void write_long_swf(const std::string& path) {
  const Workload w = rlsched::sim::synthetic_workload(10000, 64, 0.8, 7);
  std::ofstream out(path);
  out << "; MaxNodes: 64\n; MaxProcs: 64\n";
  for (const auto& job : w.jobs)
    out << job.id << ' ' << job.submit << " -1 " << job.run_time << ' ' << job.cpus << " -1 -1 " << job.cpus << ' '
        << job.time_limit << " -1 1 1 1 -1 1 -1 -1 -1\n";
}

}  // namespace

TEST_CASE("version and help") {
  const Run version = run_cli({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out == "rlsched 0.1.0\n");

  const Run help = run_cli({"--help"});
  CHECK(help.exit_code == 0);
  CHECK(contains(help.out, "evaluate"));
  CHECK(contains(help.out, "simulate"));

  const Run nothing = run_cli({});
  CHECK(nothing.exit_code == 2);
}

TEST_CASE("evaluate reports what evaluate_policy computes, as a table and as JSON") {
  TempDir dir;
  const std::string out = dir.file("results.json");
  const Run run = run_cli({"evaluate", "--trace", kSmallSwf, "--policies", "fcfs,sjf,f1", "--json", out});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.err.empty());  // not a terminal: no progress bar, no notes

  // The report above the table, then one row per policy.
  CHECK(contains(run.out, "trace:     " + kSmallSwf));
  CHECK(contains(run.out, "4 records, 4 used, 0 skipped, 0 merged"));
  CHECK(contains(run.out, "24 nodes, 1728 CPUs"));
  CHECK(contains(run.out, "protocol:  full"));
  CHECK(contains(run.out, "avg_bsld"));
  for (const char* policy : {"\nfcfs ", "\nsjf ", "\nf1 "}) CHECK(contains(run.out, policy));

  const json doc = json::parse(slurp(out));
  CHECK(doc.at("trace") == kSmallSwf);
  CHECK(doc.at("report").at("records") == 4);
  CHECK(doc.at("cluster").at("nodes") == 24);
  const Workload workload = read(kSmallSwf);
  REQUIRE(doc.at("results").size() == 3);
  CHECK(doc["results"][0].at("policy") == "fcfs");
  CHECK(doc["results"][1].at("policy") == "sjf");
  CHECK(doc["results"][2].at("policy") == "f1");
  const Cluster cluster = implied_with_example(workload);
  for (const json& result : doc.at("results"))
    check_result(result, evaluate(workload, &cluster, result.at("policy").get<std::string>()));
}

TEST_CASE("evaluate without --trace runs the built-in synthetic workload and says so") {
  // EASY backfill: without it FCFS queues the synthetic load for months, and the decay thread rescoring that queue
  // every 5 minutes makes the run take a minute.
  const Run run = run_cli({"evaluate", "--policies", "fcfs", "--json", "-"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(contains(run.err, "no --trace: using the built-in synthetic workload"));
  CHECK(count_lines(run.err) == 1);
  CHECK(!contains(run.err, "\r"));  // runs over a second draw no bar when stderr is not a terminal

  const json doc = json::parse(run.out);  // --json - leaves stdout to the JSON alone
  CHECK(doc.at("synthetic") == true);
  REQUIRE(doc.at("results").size() == 1);
  EvaluationOptions options;
  const Workload synthetic = rlsched::sim::synthetic_workload(10000, 256, 0.7, 1);
  const Cluster cluster = implied_with_example(synthetic);
  check_result(doc["results"][0], evaluate(synthetic, &cluster, "fcfs", options));
}

TEST_CASE("evaluate with policies all runs every built-in scorer in order") {
  const Run run = run_cli({"evaluate", "--trace", kSmallSwf, "--policies", "all", "--json", "-"});
  REQUIRE(run.exit_code == 0);
  const json doc = json::parse(run.out);
  std::vector<std::string> policies;
  for (const json& result : doc.at("results")) policies.push_back(result.at("policy"));
  CHECK(policies == rlsched::scorer_names());
}

TEST_CASE("the rlscheduler protocol matches evaluate_policy and fails clearly on a short trace") {
  TempDir dir;
  const std::string swf = dir.file("long.swf");
  write_long_swf(swf);
  for (const char* backfill : {"none", "easy"}) {
    const Run run = run_cli({"evaluate", "--trace", swf, "--protocol", "rlscheduler", "--backfill", backfill,
                             "--policies", "fcfs,sjf", "--json", "-"});
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    const json doc = json::parse(run.out);
    CHECK(doc.at("protocol") == "rlscheduler");
    const Workload workload = read(swf);
    EvaluationOptions options;
    options.protocol = rlsched::sim::Protocol::kRlScheduler;
    options.sim.backfill = *rlsched::sim::parse_backfill(backfill);
    REQUIRE(doc.at("results").size() == 2);
    for (const json& result : doc.at("results"))
      check_result(result, evaluate(workload, nullptr, result.at("policy").get<std::string>(), options));
  }

  const Run short_trace =
      run_cli({"evaluate", "--trace", kSmallSwf, "--protocol", "rlscheduler", "--policies", "fcfs"});
  CHECK(short_trace.exit_code == 1);
  CHECK(contains(short_trace.err, "rlsched: error: " + kSmallSwf + ": the rlscheduler protocol needs jobs"));
}

TEST_CASE("options for the full protocol only are usage errors under rlscheduler") {
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {"--failures-mtbf", "100"}, {"--bf-max-job-test", "10"}, {"--outcomes", "/dev/null"}}) {
    std::vector<std::string> args{"simulate", "--trace", kSmallSwf, "--policy", "fcfs", "--protocol", "rlscheduler"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Run run = run_cli(args);
    INFO(extra[0] << ": " << run.err);
    CHECK(run.exit_code == 2);
    CHECK(contains(run.err, extra[0] + ": applies to --protocol full only"));
  }
}

TEST_CASE("unknown policies and bad option values are usage errors naming the choices") {
  const Run evaluate_run = run_cli({"evaluate", "--trace", kSmallSwf, "--policies", "fcfs,bogus"});
  CHECK(evaluate_run.exit_code == 2);
  CHECK(contains(evaluate_run.err, "unknown policy 'bogus'"));
  for (const std::string& name : rlsched::scorer_names()) CHECK(contains(evaluate_run.err, name));
  CHECK(evaluate_run.out.empty());

  const Run simulate_run = run_cli({"simulate", "--trace", kSmallSwf, "--policy", "all"});
  CHECK(simulate_run.exit_code == 2);  // "all" is for --policies only
  CHECK(contains(simulate_run.err, "unknown policy 'all' (known: fcfs, sjf"));

  const Run rule = run_cli({"evaluate", "--trace", kSmallSwf, "--policies", "sjf,area:1/y/0"});
  CHECK(rule.exit_code == 2);
  CHECK(contains(rule.err, "policy 'area:1/y/0': B = 'y' is not a number"));
  const Run good_rule = run_cli({"evaluate", "--trace", kSmallSwf, "--policies", "sjf,area:1/1.5/0.25/relative"});
  CHECK(good_rule.exit_code == 0);
  CHECK(contains(good_rule.out, "\narea:1/1.5/0.25/relative "));

  const Run tuned_bad = run_cli({"evaluate", "--trace", kSmallSwf, "--policies", "sjf,self-tuning:sjf+lifo"});
  CHECK(tuned_bad.exit_code == 2);
  CHECK(contains(tuned_bad.err, "policy 'self-tuning:sjf+lifo': unknown policy 'lifo'"));
  const Run tuned_simulate = run_cli({"simulate", "--trace", kSmallSwf, "--policy", "self-tuning"});
  CHECK(tuned_simulate.exit_code == 2);  // it replays the run's own jobs: evaluate only
  CHECK(contains(tuned_simulate.err, "unknown policy 'self-tuning'"));
  const Run tuned = run_cli({"evaluate", "--trace", kSmallSwf, "--policies", "sjf,self-tuning:fcfs+sjf"});
  CHECK(tuned.exit_code == 0);
  CHECK(contains(tuned.out, "\nself-tuning "));
  CHECK(contains(tuned.err, "self-tuning: chose "));
  const Run predicted =
      run_cli({"evaluate", "--trace", kSmallSwf, "--policies", "sjf,predicted:sjf,predicted:area:1/1/0/relative"});
  CHECK(predicted.exit_code == 0);
  CHECK(contains(predicted.out, "\npredicted:sjf "));
  CHECK(contains(predicted.out, "\npredicted:area:1/1/0/relative "));
  const Run predicted_compat =
      run_cli({"evaluate", "--trace", kSmallSwf, "--policies", "predicted:sjf", "--protocol", "rlscheduler"});
  CHECK(predicted_compat.exit_code != 0);  // it hears the simulator's ends: the full protocol only
  CHECK(contains(predicted_compat.err, "policy 'predicted:sjf' runs under --protocol full only"));
  const Run predicted_simulate = run_cli({"simulate", "--trace", kSmallSwf, "--policy", "predicted:sjf"});
  CHECK(predicted_simulate.exit_code == 0);
  CHECK(contains(predicted_simulate.out, "predicted:sjf"));
  for (const std::string inner : {"bogus", "all", "predicted:sjf", "self-tuning"}) {
    const Run no_rule = run_cli({"evaluate", "--trace", kSmallSwf, "--policies", "predicted:" + inner});
    CHECK(no_rule.exit_code == 2);
    CHECK(contains(no_rule.err, "unknown policy '" + inner + "'"));
  }
  const Run no_model = run_cli({"evaluate", "--trace", kSmallSwf, "--policies", "predicted:model:/nonexistent.pt"});
  CHECK(no_model.exit_code != 0);
  CHECK(contains(no_model.err, "/nonexistent.pt"));

  const Run backfill = run_cli({"evaluate", "--trace", kSmallSwf, "--policies", "fcfs", "--backfill", "maybe"});
  CHECK(backfill.exit_code == 2);
  CHECK(contains(backfill.err, "unknown backfill 'maybe' (known: easy, slurm, none)"));

  const Run missing = run_cli({"evaluate", "--trace", kSmallSwf});
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "--policies"));
}

TEST_CASE("trace errors exit 1 naming the file and line") {
  const Run strict = run_cli({"evaluate", "--trace", kMalformedSwf, "--strict", "--policies", "fcfs"});
  CHECK(strict.exit_code == 1);
  CHECK(contains(strict.err, "rlsched: error: " + kMalformedSwf + ":3: "));

  // Without --strict the bad records are skipped and the report says which.
  const Run lenient = run_cli({"evaluate", "--trace", kMalformedSwf, "--policies", "fcfs"});
  CHECK(lenient.exit_code == 0);
  CHECK(contains(lenient.out, "12 records, 3 used, 9 skipped"));
  CHECK(contains(lenient.out, "skipped: " + kMalformedSwf + ":3: "));

  // Nothing usable: the error says why, record by record, not only how many were skipped.
  {
    TempDir bad;
    const std::string swf = bad.file("nothing.swf");
    std::ofstream(swf) << "; MaxProcs: 4\n1 0 0 10\n2 5 0 x 1 -1 -1 1 60 -1 1 1 1 -1 1 1 -1 -1\n";
    const Run nothing = run_cli({"evaluate", "--trace", swf, "--policies", "fcfs"});
    CHECK(nothing.exit_code == 1);
    CHECK(contains(nothing.err, swf + ": no usable jobs (2 records, 2 skipped):"));
    CHECK(contains(nothing.err, "skipped: " + swf + ":2: expected 18 fields, got 4"));
    CHECK(contains(nothing.err, "skipped: " + swf + ":3: field 4 (run time) is not an integer (got 'x')"));
  }
  // An extra trailing column is read past, and the report counts it.
  {
    TempDir extra;
    const std::string swf = extra.file("extra.swf");
    std::ofstream(swf) << "1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 1 1 -1 -1 9\n2 5 0 20 1 -1 -1 1 60 -1 1 1 1 -1 1 1 -1 -1 9\n";
    const Run read = run_cli({"evaluate", "--trace", swf, "--policies", "fcfs", "--strict"});
    CHECK(read.exit_code == 0);
    CHECK(contains(read.out, "2 records, 2 used, 0 skipped"));
    CHECK(contains(read.out, "warning: " + swf + ":1: 19 fields, the format has 18: the last 1 ignored"));
  }

  const std::string absent = kData + "/swf/no_such_trace.swf";
  const Run missing = run_cli({"evaluate", "--trace", absent, "--policies", "fcfs"});
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, "rlsched: error: " + absent));

  const std::string absent_cluster = kData + "/cluster/no_such_cluster.yaml";
  const Run no_cluster = run_cli({"evaluate", "--trace", kSmallSwf, "--cluster", absent_cluster, "--policies", "fcfs"});
  CHECK(no_cluster.exit_code == 1);
  CHECK(contains(no_cluster.err, "rlsched: error: " + absent_cluster));

  TempDir dir;
  const std::string unwritable = dir.file("no_such_dir/out.json");
  const Run json_error = run_cli({"evaluate", "--trace", kSmallSwf, "--policies", "fcfs", "--json", unwritable});
  CHECK(json_error.exit_code == 1);
  CHECK(contains(json_error.err, "rlsched: error: " + unwritable));
}

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

TEST_CASE("speeds learns job classes from a sacct dump that rlsched.yaml accepts") {
  TempDir dir;
  const std::string yaml = dir.file("speeds.yaml");
  const Run run = run_cli({"speeds", "--sacct", kData + "/sacct/speeds.txt", "--output", yaml});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(contains(run.err, "2 classes with speeds, 2 left out"));
  auto config = rlsched::config::parse_plugin_config(slurp(yaml), "speeds.yaml");
  INFO(slurp(yaml));
  REQUIRE(config.ok());
  CHECK(config->classify("cnn", "proj", "alice") == "cnn");
  CHECK(config->classify("etl", "proj", "alice").empty());
  const rlsched::AcceleratorType* h200 = config->find_type("h200", "gpu");
  REQUIRE(h200);
  // cnn runs twice as fast on h200 as on a100 (median 2025 vs 1000 s at 4 GPUs, 1200 vs 600 at 8), to 3 digits.
  CHECK(h200->speed_for("cnn") == Approx(2.01).margin(0.005));
  CHECK(config->warnings.empty());

  const Run missing = run_cli({"speeds", "--sacct", kData + "/sacct/nope.txt"});
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, "nope.txt"));
  const Run nothing = run_cli({"speeds", "--sacct", kSmallSwf});
  CHECK(nothing.exit_code == 1);
}

TEST_CASE("promote installs a verified model by rename and keeps the one it replaces, rollback puts it back") {
  TempDir dir;
  const std::string models = std::string(RLSCHED_SOURCE_DIR) + "/policy_models";
  const std::string first = models + "/lublin1-easy/policy.pt", second = models + "/default/policy.pt";
  const std::string model = dir.file("policy.pt");

  Run run = run_cli({"promote", first, "--model", model});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(slurp(model) == slurp(first));
  CHECK(slurp(dir.file("policy.md")) == slurp(models + "/lublin1-easy/policy.md"));  // the card travels along
  CHECK_FALSE(fs::exists(model + ".previous"));

  run = run_cli({"promote", second, "--model", model});
  REQUIRE(run.exit_code == 0);
  CHECK(slurp(model) == slurp(second));
  CHECK(slurp(model + ".previous") == slurp(first));
  CHECK(contains(run.out, "kept the model it replaced as " + model + ".previous"));
  CHECK((fs::status(model).permissions() & fs::perms::others_write) == fs::perms::none);

  // A candidate that does not verify changes nothing, and leaves no temporary file behind.
  const std::string bad = dir.file("bad.pt");
  std::ofstream(bad) << "not a model";
  run = run_cli({"promote", bad, "--model", model});
  CHECK(run.exit_code == 1);
  CHECK(contains(run.err, "candidate refused: " + bad));
  CHECK(slurp(model) == slurp(second));
  CHECK(slurp(model + ".previous") == slurp(first));
  for (const auto& entry : fs::directory_iterator(dir.path))
    CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);

  run = run_cli({"rollback", "--model", model});
  REQUIRE(run.exit_code == 0);
  CHECK(slurp(model) == slurp(first));
  CHECK(slurp(model + ".rolled-back") == slurp(second));
  CHECK_FALSE(fs::exists(model + ".previous"));
  run = run_cli({"rollback", "--model", model});
  CHECK(run.exit_code == 1);
  CHECK(contains(run.err, "no previous model to roll back to"));

  // The model path from rlsched.yaml.
  const std::string config = dir.file("rlsched.yaml");
  std::ofstream(config) << "model: " << model << "\n";
  run = run_cli({"promote", second, "--config", config});
  REQUIRE(run.exit_code == 0);
  CHECK(slurp(model) == slurp(second));
  CHECK(run_cli({"rollback"}).exit_code == 2);  // neither --model nor --config
}

TEST_CASE("import-sacct summarises a dump as the reader reads it and names what the cluster cannot run") {
  const std::string dump = kData + "/sacct/edge_cases.txt";
  const Run run = run_cli({"import-sacct", dump, "--cluster", kLabYaml});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const Workload w = read(dump);
  CHECK(contains(run.out, fmt::format("records:   {} data lines: {} jobs, {} merged", w.report.records,
                                      w.report.used, w.report.merged)));
  CHECK(contains(run.out, fmt::format("{} skipped", w.report.skipped)));
  for (const std::string& why : w.report.reasons) CHECK(contains(run.out, "  skipped: " + why));
  // The simulator's own verdict on the same jobs and cluster.
  auto cluster = rlsched::io::read_cluster(kLabYaml);
  REQUIRE(cluster.ok());
  const PolicyResult r = evaluate(w, &*cluster, "fcfs");
  CHECK(contains(run.out, fmt::format("{} of {} jobs could run there", w.jobs.size() - r.metrics.rejected,
                                      w.jobs.size())));
  for (const auto& [why, n] : r.counters.rejections) CHECK(contains(run.out, fmt::format("  {} jobs: {}", n, why)));

  const Run strict = run_cli({"import-sacct", dump, "--strict"});
  CHECK(strict.exit_code == 1);
  CHECK(contains(strict.err, w.report.reasons.front().substr(0, 40)));
}

TEST_CASE("import-sacct --config says which jobs the plugins' job classes match and which types it lacks") {
  TempDir dir;
  const std::string config = dir.file("rlsched.yaml");
  std::ofstream(config) << "accelerator_types:\n"
                           "  - {name: h200, gres: gpu, speed: 2.0}\n"
                           "  - {name: 910b, gres: npu, speed: 1.0}\n"
                           "job_classes:\n"
                           "  - name: training\n"
                           "    match: {job_name: \"train-*\"}\n"
                           "    speeds: {h200: 3.0, 910b: 1.0}\n";
  // Counted by hand in the dump: 15 jobs, two named train-h200 and train-a100; six ran on A100s (jobs 2, 5, 11, 15,
  // 16, 17), a type this config does not list.
  const std::string dump = kData + "/sacct/slurm22.05-lab.txt";
  Run run = run_cli({"import-sacct", dump, "--config", config, "--cluster", kLabYaml});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(contains(run.out, "config:    " + config));
  CHECK(contains(run.out, "job classes: (none) 13, training 2"));
  CHECK(contains(run.out, "not in the config's accelerator_types (speed 1.0): gpu:a100 6"));
  CHECK(contains(run.out, "15 of 15 jobs could run there"));

  run = run_cli({"import-sacct", dump});
  CHECK(contains(run.out, "config:    slurm_conf_examples/rlsched.yaml (built in; no --config)"));

  std::ofstream(config) << "accelerator_types:\n  - {name: h200, speed: fast}\n";
  run = run_cli({"import-sacct", dump, "--config", config});
  CHECK(run.exit_code == 1);
  CHECK(contains(run.err, config + ":2"));
  CHECK_FALSE(contains(run.out, "records:"));  // refused before the dump is read
}

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

TEST_CASE("estimate-replay estimates every job of a small trace and reports both kinds of estimate") {
  const Run run = run_cli({"estimate-replay", "--trace", kSmallSwf, "--policy", "fcfs", "--sample", "0"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("estimated at their submit (all that started"));
  CHECK_THAT(run.out, Catch::Contains("forecast, predicted runs"));
  CHECK_THAT(run.out, Catch::Contains("forecast, time limits"));
  const Run compat = run_cli({"estimate-replay", "--trace", kSmallSwf, "--protocol", "rlscheduler"});
  CHECK(compat.exit_code == 1);
  CHECK_THAT(compat.err, Catch::Contains("full protocol only"));
}

TEST_CASE("generate writes what the library generates, in files evaluate reads, bad options say what is wrong") {
  TempDir dir;
  const std::string cpu = dir.file("cpu"), gpu = dir.file("gpu");
  const Run cpu_run = run_cli({"generate", "--family", "cpu", "--seed", "4", "--jobs", "600", "--load", "0.8",
                               "--cpus", "256", "--short-share-widest", "0.7", "--out", cpu});
  REQUIRE(cpu_run.exit_code == 0);
  CHECK(contains(cpu_run.out, "wrote " + cpu + ".swf"));
  CHECK(contains(cpu_run.out, "600 jobs, 256 CPUs"));
  CHECK(contains(cpu_run.out, "offered load 0.800 (target 0.800)"));
  rlsched::sim::GeneratorSpec spec;
  spec.seed = 4;
  spec.jobs = 600;
  spec.load = 0.8;
  spec.cpus = 256;
  spec.short_share_widest = 0.7;
  auto expected = rlsched::sim::generate_workload(spec);
  REQUIRE(expected.ok());
  const Workload swf = read(cpu + ".swf");
  REQUIRE(swf.jobs.size() == expected->workload.jobs.size());
  for (std::size_t i = 0; i < swf.jobs.size(); ++i) {
    CAPTURE(i);
    CHECK(swf.jobs[i].cpus == expected->workload.jobs[i].cpus);
    CHECK(swf.jobs[i].run_time == expected->workload.jobs[i].run_time);
    CHECK(swf.jobs[i].time_limit == expected->workload.jobs[i].time_limit);
    CHECK(swf.jobs[i].submit == expected->workload.jobs[i].submit);
  }
  CHECK(swf.max_procs == 256);

  const Run gpu_run = run_cli({"generate", "--family", "gpu", "--seed", "4", "--jobs", "600", "--out", gpu});
  REQUIRE(gpu_run.exit_code == 0);
  CHECK(contains(gpu_run.out, "wrote " + gpu + ".sacct"));
  CHECK(contains(gpu_run.out, "wrote " + gpu + ".cluster.yaml"));
  CHECK(contains(gpu_run.out, "of the GPUs"));
  const Run evaluate = run_cli({"evaluate", "--trace", gpu + ".sacct", "--cluster", gpu + ".cluster.yaml",
                                "--policies", "fcfs,sjf,multifactor", "--json", dir.file("evaluate.json")});
  INFO(evaluate.err);
  REQUIRE(evaluate.exit_code == 0);
  const json doc = json::parse(slurp(dir.file("evaluate.json")));
  REQUIRE(doc.at("results").size() == 3);
  for (const json& r : doc.at("results")) {
    CHECK(r.at("jobs") == 600);
    CHECK(r.at("rejected") == 0);
  }

  const Run family = run_cli({"generate", "--family", "tpu", "--out", cpu});
  CHECK(family.exit_code == 2);
  CHECK(contains(family.err, "--family"));
  const Run jobs = run_cli({"generate", "--family", "cpu", "--jobs", "0", "--out", cpu});
  CHECK(jobs.exit_code == 2);
  CHECK(contains(jobs.err, "--jobs"));
  const Run widest = run_cli({"generate", "--family", "cpu", "--short-share-widest", "1.2", "--out", cpu});
  CHECK(widest.exit_code == 2);
  CHECK(contains(widest.err, "--short-share-widest"));
  const Run no_out = run_cli({"generate", "--family", "cpu"});
  CHECK(no_out.exit_code == 2);
  CHECK(contains(no_out.err, "--out"));
  const Run unwritable = run_cli({"generate", "--family", "cpu", "--jobs", "10", "--out", dir.file("missing/w")});
  CHECK(unwritable.exit_code == 1);
  CHECK(contains(unwritable.err, "missing/w.swf: cannot write"));
}

// `rlsched train` reads workloads as evaluate does (here a Gavel folder on its cluster, with the plugin config) and
// by default runs its episodes in the Slurm model there.
TEST_CASE("train on a Gavel folder with a cluster runs Slurm-model rollouts end to end") {
  TempDir dir;
  const std::string gavel = std::string(RLSCHED_SHARED_TRACES) + "/gavel-throughputs";
  const std::string source = RLSCHED_SOURCE_DIR;
  const std::string model = dir.file("gavel.pt");
  const Run run = run_cli({"train", "--trace", gavel, "--cluster", source + "/slurm_conf_examples/gavel-cluster.yaml",
                           "--config", source + "/slurm_conf_examples/rlsched.yaml", "--output", model, "--epochs", "2",
                           "--episodes", "4", "--sequence-length", "128", "--imitation-epochs", "2",
                           "--validation-sequences", "1", "--eval-every", "1", "--threads", "1",
                           // Every candidate of the teacher search runs once: 400 jobs, not the 9,800 of the
                           // training part (about 10 s each on this overloaded workload).
                           "--search-jobs", "400"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(contains(run.out, "trained 2 epochs"));
  CHECK(contains(run.out, "in the Slurm model"));  // the teacher was searched there
  const std::string card = slurp(dir.file("gavel.md"));
  CHECK(contains(card, "simulated in the Slurm model on each trace's cluster"));
  // The folder's 15,264 jobs, read as evaluate reads them: the last 20% (3,053) held back unread, the 20% of the
  // rest before them validate.
  CHECK(contains(card, "| " + gavel + " | 12211 | first 9768 | next 2443 | last 3053 |"));
  CHECK(contains(card, "full Slurm model over the 2443 validation jobs"));

  const Run bad = run_cli({"train", "--trace", gavel, "--output", model, "--rollouts", "bogus"});
  CHECK(bad.exit_code != 0);
  CHECK(contains(bad.err, "--rollouts"));
}

namespace {

/// Generates a CPU trace (seed 7) and a GPU dump (seed 2) of 600 jobs each in `dir` (cpu.swf, gpu.sacct and its
/// cluster) and returns the `rlsched train` arguments that search each one's teacher in the compat simulator,
/// train no epoch and write `model` (and its card beside it).
std::vector<std::string> teachers_of_two_generated_traces(TempDir& dir, const std::string& model) {
  const std::string cpu = dir.file("cpu"), gpu = dir.file("gpu");
  REQUIRE(run_cli({"generate", "--family", "cpu", "--seed", "7", "--jobs", "600", "--out", cpu}).exit_code == 0);
  REQUIRE(run_cli({"generate", "--family", "gpu", "--seed", "2", "--jobs", "600", "--out", gpu}).exit_code == 0);
  return {"train", "--trace", cpu + ".swf", "--trace", gpu + ".sacct", "--cluster", "implied", "--cluster",
          gpu + ".cluster.yaml", "--rollouts", "compat", "--teacher", "search-each", "--epochs", "0",
          "--sequence-length", "64", "--validation-sequences", "2", "--output", model};
}

/// Runs `train` (teachers_of_two_generated_traces's arguments) with `flags` and returns what the card at `card`
/// says of each trace's teacher, cpu.swf's then gpu.sacct's: the text after the trace's name to the next "; ".
std::vector<std::string> teachers_in_card(std::vector<std::string> train, const std::vector<std::string>& flags,
                                          const std::string& card) {
  train.insert(train.end(), flags.begin(), flags.end());
  const Run run = run_cli(train);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const std::string text = slurp(card);
  std::vector<std::string> teachers;
  for (const std::string trace : {"cpu.swf: ", "gpu.sacct: "}) {
    const std::size_t at = text.find(trace);
    REQUIRE(at != std::string::npos);
    const std::size_t from = at + trace.size();
    teachers.push_back(text.substr(from, text.find("; ", from) - from));
  }
  return teachers;
}

}  // namespace

// --smith-width-teachers: bare, every trace's teacher weighs width at most half as much as run time; with
// =accelerators only the GPU dump's; an unknown value is refused by name. The two generated traces' best rules
// without it weigh width three times run time (area:0.5/1.5/0), so each form shows in the card's teacher.
TEST_CASE("train --smith-width-teachers caps the teachers' width weight on the traces asked for") {
  TempDir dir;
  const std::string model = dir.file("smith.pt");
  const std::vector<std::string> train = teachers_of_two_generated_traces(dir, model);
  // Whether each trace's teacher (cpu.swf, gpu.sacct) is an area rule heavier in width than Smith's ratio.
  auto heavy_width = [&](const std::vector<std::string>& flags) {
    std::vector<bool> heavy;
    for (const std::string& teacher : teachers_in_card(train, flags, dir.file("smith.md"))) {
      const std::size_t rule = teacher.find("(area:"), end = teacher.find(')', rule);
      REQUIRE(rule != std::string::npos);  // an area rule, not a heuristic
      auto parsed = rlsched::parse_area_rule(teacher.substr(rule + 1, end - rule - 1));
      REQUIRE(parsed.ok());
      heavy.push_back(parsed->b > parsed->a / 2);
    }
    return heavy;
  };
  CHECK(heavy_width({}) == std::vector<bool>{true, true});
  CHECK(heavy_width({"--smith-width-teachers"}) == std::vector<bool>{false, false});
  CHECK(heavy_width({"--smith-width-teachers=accelerators"}) == std::vector<bool>{true, false});
  const Run bad = run_cli({"train", "--trace", dir.file("cpu.swf"), "--output", model, "--smith-width-teachers=gpus"});
  CHECK(bad.exit_code != 0);
  CHECK(contains(bad.err, "--smith-width-teachers"));
}

// --teacher-margin: the reference teaches a trace unless a rule beats it there by the margin. Without it both
// generated traces' best rule, area:0.5/1.5/0, teaches (2.3% below SJF on the CPU trace, 0.3% on the GPU dump); at
// 1% the GPU dump imitates SJF, at 20% both do; a reference no network imitates is refused by name.
TEST_CASE("train --teacher-margin keeps the reference as the teacher where no rule beats it by the margin") {
  TempDir dir;
  const std::string model = dir.file("margin.pt");
  const std::vector<std::string> train = teachers_of_two_generated_traces(dir, model);
  // Whether each trace's teacher (cpu.swf, gpu.sacct) is the reference, SJF.
  auto taught_by_sjf = [&](std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"--reference", "sjf"});
    std::vector<bool> sjf;
    for (const std::string& teacher : teachers_in_card(train, flags, dir.file("margin.md")))
      sjf.push_back(teacher.rfind("sjf ", 0) == 0);
    return sjf;
  };
  CHECK(taught_by_sjf({}) == std::vector<bool>{false, false});
  CHECK(taught_by_sjf({"--teacher-margin", "0.01"}) == std::vector<bool>{false, true});
  CHECK(taught_by_sjf({"--teacher-margin", "0.2"}) == std::vector<bool>{true, true});
  CHECK(contains(slurp(dir.file("margin.md")), "sjf (the reference: nothing tried was 20% cheaper"));

  std::vector<std::string> f1 = train;
  f1.insert(f1.end(), {"--reference", "f1", "--teacher-margin", "0.01"});
  const Run refused = run_cli(f1);
  CHECK(refused.exit_code != 0);
  CHECK(contains(refused.err, "cannot imitate --reference f1"));
  std::vector<std::string> wide = train;
  wide.insert(wide.end(), {"--reference", "sjf", "--teacher-margin", "0.9"});
  const Run out_of_range = run_cli(wide);
  CHECK(out_of_range.exit_code != 0);
  CHECK(contains(out_of_range.err, "--teacher-margin"));
}

// --demonstrations-per-trace reaches imitation: eight SWF traces whose jobs never wait for each other, then a busy
// generated one. With 8 episodes imitation is shown the quiet traces only and has nothing to learn; with one
// demonstration of each trace the busy one teaches too.
TEST_CASE("train --demonstrations-per-trace lets the last of many traces teach") {
  TempDir dir;
  std::vector<std::string> args{"train", "--rollouts", "compat", "--teacher", "sjf", "--reference", "sjf",
                                "--epochs", "0", "--episodes", "8", "--sequence-length", "64",
                                "--validation-sequences", "1", "--threads", "1", "--output", dir.file("d.pt")};
  for (int k = 0; k < 8; ++k) {
    const std::string swf = dir.file("quiet-" + std::to_string(k) + ".swf");
    std::ofstream out(swf);
    out << "; MaxProcs: 16\n";
    for (int i = 0; i < 400; ++i)
      out << i + 1 << ' ' << 1000 * i << " 0 " << 10 + i % 7 << ' ' << 1 + i % 4 << " -1 -1 " << 1 + i % 4 << ' '
          << 60 * (1 + i % 3) << " -1 1 1 1 -1 1 1 -1 -1\n";
    args.insert(args.end(), {"--trace", swf});
  }
  const std::string busy = dir.file("busy");
  REQUIRE(run_cli({"generate", "--family", "cpu", "--seed", "7", "--jobs", "600", "--out", busy}).exit_code == 0);
  args.insert(args.end(), {"--trace", busy + ".swf"});
  const Run eight = run_cli(args);
  CHECK(eight.exit_code != 0);
  CHECK(contains(eight.err, "no feature of the training jobs ever varies"));
  args.insert(args.end(), {"--demonstrations-per-trace", "1"});
  const Run each = run_cli(args);
  INFO(each.err);
  CHECK(each.exit_code == 0);
}

// --validation-trace: a workload the model is selected on and never trained on, read as --trace is, on the cluster
// --validation-cluster gives it; the card lists it with all its jobs.
TEST_CASE("train selects the model on validation traces, each on its own cluster") {
  TempDir dir;
  const std::string cpu = dir.file("cpu"), gpu = dir.file("gpu"), other = dir.file("other"),
                    model = dir.file("sites.pt");
  REQUIRE(run_cli({"generate", "--family", "cpu", "--seed", "1", "--jobs", "600", "--out", cpu}).exit_code == 0);
  REQUIRE(run_cli({"generate", "--family", "gpu", "--seed", "2", "--jobs", "500", "--out", gpu}).exit_code == 0);
  REQUIRE(run_cli({"generate", "--family", "cpu", "--seed", "3", "--jobs", "400", "--out", other}).exit_code == 0);
  const Run run = run_cli({"train", "--trace", cpu + ".swf", "--validation-trace", gpu + ".sacct",
                           "--validation-trace", other + ".swf", "--validation-cluster", gpu + ".cluster.yaml",
                           "--validation-cluster", "implied", "--epochs", "1", "--sequence-length", "64",
                           "--validation-sequences", "2", "--output", model});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const std::string card = slurp(dir.file("sites.md"));
  CHECK(contains(card, "| " + gpu + ".sacct | 500 | "));  // every job: none held back, none trained on
  CHECK(contains(card, "| " + other + ".swf | 400 | "));
  CHECK(contains(card, "over the 2 validation sites' jobs (`--validation-trace`)"));

  const Run one_cluster_short = run_cli({"train", "--trace", cpu + ".swf", "--validation-trace", gpu + ".sacct",
                                         "--validation-trace", other + ".swf", "--validation-cluster", "implied",
                                         "--validation-cluster", "implied", "--validation-cluster", "implied",
                                         "--output", model});
  CHECK(one_cluster_short.exit_code == 1);
  CHECK(contains(one_cluster_short.err, "--validation-cluster is given 3 times for 2 traces"));
  // The GPU dump says nothing of its machine: without its cluster it is refused, by name.
  const Run no_cluster =
      run_cli({"train", "--trace", cpu + ".swf", "--validation-trace", gpu + ".sacct", "--output", model});
  CHECK(no_cluster.exit_code == 1);
  CHECK(contains(no_cluster.err, gpu + ".sacct"));
  const Run compat = run_cli({"train", "--trace", cpu + ".swf", "--validation-trace", other + ".swf", "--rollouts",
                              "compat", "--output", model});
  CHECK(compat.exit_code == 1);
  CHECK(contains(compat.err, "--validation-trace selects the model in the Slurm model"));
}

// One --cluster per --trace: a CPU trace on the machine its header gives and a GPU dump on its own cluster, trained
// together; a count that pairs with neither one nor every trace is refused before anything is read.
TEST_CASE("train takes one cluster per trace, in --trace order") {
  TempDir dir;
  const std::string cpu = dir.file("cpu"), gpu = dir.file("gpu"), model = dir.file("mixed.pt");
  REQUIRE(run_cli({"generate", "--family", "cpu", "--seed", "1", "--jobs", "600", "--out", cpu}).exit_code == 0);
  REQUIRE(run_cli({"generate", "--family", "gpu", "--seed", "2", "--jobs", "600", "--out", gpu}).exit_code == 0);
  const Run run = run_cli({"train", "--trace", cpu + ".swf", "--trace", gpu + ".sacct", "--cluster", "implied",
                           "--cluster", gpu + ".cluster.yaml", "--epochs", "1", "--sequence-length", "64",
                           "--validation-sequences", "2", "--output", model});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const std::string card = slurp(dir.file("mixed.md"));
  CHECK(contains(card, "Cluster: `implied for " + cpu + ".swf; " + gpu + ".cluster.yaml for " + gpu + ".sacct`"));
  // The GPU dump's machine is its cluster file's (gpu nodes), not one implied from its largest job.
  CHECK(contains(card, "| " + gpu + ".sacct | 480 |"));  // 600, of which the last 120 are held back

  const Run three = run_cli({"train", "--trace", cpu + ".swf", "--trace", gpu + ".sacct", "--cluster", "implied",
                             "--cluster", gpu + ".cluster.yaml", "--cluster", "implied", "--output", model});
  CHECK(three.exit_code == 1);
  CHECK(contains(three.err, "--cluster is given 3 times for 2 traces"));
  // --trace-weight pairs with --trace as --cluster does; a weight counts in the card, and below 1 is refused.
  const Run weighted = run_cli({"train", "--trace", cpu + ".swf", "--trace", gpu + ".sacct", "--cluster", "implied",
                                "--cluster", gpu + ".cluster.yaml", "--trace-weight", "3", "--trace-weight", "1",
                                "--epochs", "1", "--sequence-length", "64", "--validation-sequences", "2",
                                "--output", model});
  INFO(weighted.err);
  REQUIRE(weighted.exit_code == 0);
  const std::string weighted_card = slurp(dir.file("mixed.md"));
  CHECK(contains(weighted_card, "| " + cpu + ".swf (counts 3 times) | "));
  CHECK(contains(weighted_card, "| " + gpu + ".sacct | 480 |"));
  const Run one_weight = run_cli({"train", "--trace", cpu + ".swf", "--trace", gpu + ".sacct", "--cluster",
                                  "implied", "--cluster", gpu + ".cluster.yaml", "--trace-weight", "2", "--output",
                                  model});
  CHECK(one_weight.exit_code == 1);
  CHECK(contains(one_weight.err, "--trace-weight is given 1 times for 2 traces"));
  // The card names the BLAS kernels the weights depend on: those OPENBLAS_CORETYPE chose (Prescott: SSE3, which
  // every x86-64 CPU this runs on has), not this CPU's own.
  setenv("OPENBLAS_CORETYPE", "Prescott", 1);
  const Run prescott = run_cli({"train", "--trace", cpu + ".swf", "--epochs", "1", "--sequence-length", "64",
                                "--validation-sequences", "2", "--output", model});
  unsetenv("OPENBLAS_CORETYPE");
  REQUIRE(prescott.exit_code == 0);
  CHECK(contains(slurp(dir.file("mixed.md")), "\nTrained with OpenBLAS Prescott kernels. "));
  const Run zero = run_cli({"train", "--trace", cpu + ".swf", "--trace-weight", "0", "--output", model});
  CHECK(zero.exit_code == 1);
  CHECK(contains(zero.err, "--trace-weight 0 for " + cpu + ".swf: a trace counts at least once"));
  // A model that could not be written is refused before training, not after minutes of it.
  const Run nowhere = run_cli({"train", "--trace", cpu + ".swf", "--sequence-length", "64", "--epochs", "1",
                               "--validation-sequences", "2", "--output", dir.file("missing/model.pt")});
  CHECK(nowhere.exit_code == 1);
  CHECK(contains(nowhere.err, "folder " + dir.file("missing") + " does not exist"));
  CHECK_FALSE(contains(nowhere.err, "epoch 1/1"));
  // Without a cluster the GPU dump has none to run on.
  const Run none = run_cli({"train", "--trace", gpu + ".sacct", "--epochs", "1", "--output", model});
  CHECK(none.exit_code == 1);
  // Too few jobs: the message names the trace.
  const Run few = run_cli({"train", "--trace", cpu + ".swf", "--epochs", "1", "--output", model});
  CHECK(few.exit_code == 1);
  CHECK(contains(few.err, cpu + ".swf: 480 usable jobs are too few"));
  CHECK(contains(few.err, "120 later jobs held back"));
}

// The model card's learning curve: one CSV row per epoch run, drawn as a PNG beside the card and shown in it.
TEST_CASE("train writes its learning curve beside the model card, as CSV and PNG") {
  TempDir dir;
  const std::string cpu = dir.file("cpu"), model = dir.file("curve.pt");
  REQUIRE(run_cli({"generate", "--family", "cpu", "--seed", "3", "--jobs", "600", "--out", cpu}).exit_code == 0);
  const Run run = run_cli({"train", "--trace", cpu + ".swf", "--epochs", "3", "--patience", "0", "--sequence-length",
                           "64", "--validation-sequences", "2", "--output", model});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(contains(run.out, "learning curve: " + dir.file("curve.curve.png")));
  std::istringstream csv(slurp(dir.file("curve.curve.csv")));
  std::string line;
  REQUIRE(std::getline(csv, line));
  CHECK(line == "epoch,seconds,train_cost_ratio,validation_cost_ratio,best_validation_cost_ratio");
  int rows = 0;
  double best_before = 1e300;
  while (std::getline(csv, line)) {
    ++rows;
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    REQUIRE(fields.size() == 5);
    CHECK(std::stoi(fields[0]) == rows);  // epochs 1, 2, 3 in order
    const double best = std::stod(fields[4]);
    CHECK(best <= best_before);  // the best validation never rises
    best_before = best;
  }
  CHECK(rows == 3);
  const std::string png = slurp(dir.file("curve.curve.png"));
  REQUIRE(png.size() > 8);
  CHECK(png.substr(1, 3) == "PNG");
  CHECK_FALSE(std::filesystem::exists(dir.file("curve.curve.png.log")));  // the plot said nothing: no empty log
  const std::string card = slurp(dir.file("curve.md"));
  CHECK(contains(card, "## Learning curve"));
  CHECK(contains(card, "![learning curve](curve.curve.png)"));
  CHECK(contains(card, "within a time budget of 10 min"));  // the default: a site's retraining ends in 10 minutes

  // Two models as one whose score is the mean of theirs (train/ensemble_test.cpp checks the scores).
  const Run pair = run_cli({"ensemble", model, model, "--output", dir.file("pair.pt")});
  INFO(pair.err);
  CHECK(pair.exit_code == 0);
  CHECK(contains(pair.out, dir.file("pair.pt") + ": the mean of 2 models"));
  CHECK(contains(slurp(dir.file("pair.md")), "an ensemble of 2 models"));
  const Run alone = run_cli({"ensemble", model, "--output", dir.file("alone.pt")});
  CHECK(alone.exit_code == 1);
  CHECK(contains(alone.err, "an ensemble needs at least two models (1 given)"));
  CHECK_FALSE(std::filesystem::exists(dir.file("alone.pt")));
}
