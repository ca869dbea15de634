// `rlsched --help` and `rlsched evaluate`: its figures against evaluate_policy, its usage errors and trace errors.
#include "cli_fixtures.h"

using namespace rlsched::cli_test;  // the fixtures every CLI test file shares

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
