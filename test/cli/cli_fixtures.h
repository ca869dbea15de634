// What the end-to-end tests of the `rlsched` binary share: running it as a user would, and the library called
// directly on the same input to check its output against, so the CLI cannot pass by printing plausible numbers.
#pragma once

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

namespace rlsched::cli_test {

namespace fs = std::filesystem;
using nlohmann::json;
using rlsched::Cluster;
using rlsched::Workload;
using rlsched::sim::EvaluationOptions;
using rlsched::sim::PolicyResult;

inline const std::string kCli = RLSCHED_CLI;
using rlsched::test::kData;
inline const std::string kSmallSwf = kData + "/swf/small.swf";
inline const std::string kMalformedSwf = kData + "/swf/malformed.swf";
inline const std::string kLabSacct = kData + "/sacct/slurm22.05-lab.txt";
inline const std::string kLabYaml = kData + "/cluster/lab.yaml";

struct TempDir : rlsched::test::TempDir {
  TempDir() : rlsched::test::TempDir("rlsched_cli_test") {}
};

inline std::string slurp(const std::string& path) {
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
inline Run run_cli(const std::vector<std::string>& args) {
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

inline std::size_t count_lines(const std::string& text) {
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

inline Workload read(const std::string& path) {
  auto workload = rlsched::io::read_workload(path);
  REQUIRE(workload.ok());
  return std::move(*workload);
}

// What the CLI applies without --config: the shipped rlsched.yaml's score_scale as the site weight and its types'
// speeds for the types it names (read here with the plugins' own parser).
inline void apply_example_config(Cluster& cluster) {
  auto config = rlsched::config::load_plugin_config(std::string(RLSCHED_SOURCE_DIR) + "/slurm_conf_examples/rlsched.yaml",
                                                    {false});
  REQUIRE(config.ok());
  cluster.priority.site = config->score_scale;
  for (rlsched::AcceleratorType& t : cluster.accelerator_types)
    if (const rlsched::AcceleratorType* c = config->find_type(t.name, t.gres)) t.speed = c->speed;
}

// The machine the CLI simulates a trace on without --cluster: the one the library implies (multifactor with the
// example slurm.conf's weights), with the shipped rlsched.yaml applied.
inline Cluster implied_with_example(const Workload& workload) {
  auto cluster = rlsched::sim::implied_cluster(workload);
  REQUIRE(cluster.ok());
  CHECK(cluster->priority.multifactor_enabled());
  apply_example_config(*cluster);
  return std::move(*cluster);
}

inline PolicyResult evaluate(const Workload& workload, const Cluster* cluster, const std::string& policy,
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
inline void check_result(const json& got, const PolicyResult& want) {
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
inline void write_long_swf(const std::string& path) {
  const Workload w = rlsched::sim::synthetic_workload(10000, 64, 0.8, 7);
  std::ofstream out(path);
  out << "; MaxNodes: 64\n; MaxProcs: 64\n";
  for (const auto& job : w.jobs)
    out << job.id << ' ' << job.submit << " -1 " << job.run_time << ' ' << job.cpus << " -1 -1 " << job.cpus << ' '
        << job.time_limit << " -1 1 1 1 -1 1 -1 -1 -1\n";
}

}  // namespace rlsched::cli_test
