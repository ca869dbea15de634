// The admin's commands: speeds, promote and rollback, import-sacct, estimate-replay, generate.
#include "cli_fixtures.h"

using namespace rlsched::cli_test;  // the fixtures every CLI test file shares

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
