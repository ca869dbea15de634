// `rlsched train` end to end: Slurm-model rollouts on a Gavel folder, the teacher options, validation traces, one
// cluster per trace, the learning curve.
#include "cli_fixtures.h"

using namespace rlsched::cli_test;  // the fixtures every CLI test file shares

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
