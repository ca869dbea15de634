#include "rlsched/sim/workload_generator.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "rlsched/io/cluster_readers.h"
#include "rlsched/io/workload_readers.h"
#include "rlsched/io/workload_writers.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/evaluation.h"
#include "rlsched/sim/simulator.h"
#include "temp_dir.h"

using namespace rlsched;
using namespace rlsched::sim;

namespace {

namespace fs = std::filesystem;

GeneratedWorkload generate(WorkloadFamily family, std::uint64_t seed, std::size_t jobs,
                           std::optional<double> load = std::nullopt, std::optional<int> cpus = std::nullopt) {
  GeneratorSpec spec;
  spec.family = family;
  spec.seed = seed;
  spec.jobs = jobs;
  spec.load = load;
  spec.cpus = cpus;
  auto g = generate_workload(spec);
  REQUIRE(g.ok());
  return std::move(*g);
}

// The load computed here from its definition, not by sim::offered_load, which the generator itself calls.
double load_by_hand(const GeneratedWorkload& g, bool gpu) {
  double capacity = 0, work = 0;
  for (const Node& n : g.cluster.nodes) {
    capacity += gpu ? 0 : n.cpus;
    for (const GresCount& r : n.gres) capacity += gpu ? r.count : 0;
  }
  Seconds first = g.workload.jobs.front().submit, last = first;
  for (const Job& j : g.workload.jobs) {
    work += static_cast<double>(gpu ? j.accel.count : j.cpus) * static_cast<double>(j.run_time);
    first = std::min(first, j.submit);
    last = std::max(last, j.submit);
  }
  return work / (capacity * static_cast<double>(last - first));
}

bool same_job(const Job& a, const Job& b) {
  return a.id == b.id && a.user == b.user && a.account == b.account && a.submit == b.submit &&
         a.run_time == b.run_time && a.time_limit == b.time_limit && a.cpus == b.cpus && a.nodes == b.nodes &&
         a.accel.count == b.accel.count && a.accel.types == b.accel.types && a.job_class == b.job_class &&
         a.ran_on_type == b.ran_on_type && a.partitions == b.partitions;
}

struct TempDir : rlsched::test::TempDir {
  TempDir() : rlsched::test::TempDir("rlsched_generator_test") {}
};

struct Totals {
  std::size_t jobs = 0;
  long long cpus = 0, gpus = 0, run = 0, limit = 0, submit_span = 0;
  std::map<std::string, int> ran_on;
  bool operator==(const Totals& o) const {
    return jobs == o.jobs && cpus == o.cpus && gpus == o.gpus && run == o.run && limit == o.limit &&
           submit_span == o.submit_span && ran_on == o.ran_on;
  }
};

Totals totals(const std::vector<Job>& jobs) {
  Totals t;
  t.jobs = jobs.size();
  Seconds first = jobs.front().submit, last = first;
  for (const Job& j : jobs) {
    t.cpus += j.cpus;
    t.gpus += j.accel.count;
    t.run += j.run_time;
    t.limit += j.time_limit;
    ++t.ran_on[j.ran_on_type];
    first = std::min(first, j.submit);
    last = std::max(last, j.submit);
  }
  t.submit_span = last - first;
  return t;
}

}  // namespace

TEST_CASE("a generator spec gives the same workload every time, and another seed another one") {
  for (WorkloadFamily family : {WorkloadFamily::kCpu, WorkloadFamily::kGpu}) {
    CAPTURE(to_string(family));
    const GeneratedWorkload a = generate(family, 7, 3000), b = generate(family, 7, 3000), c = generate(family, 8, 3000);
    REQUIRE(a.workload.jobs.size() == 3000);
    REQUIRE(b.workload.jobs.size() == 3000);
    CHECK(std::equal(a.workload.jobs.begin(), a.workload.jobs.end(), b.workload.jobs.begin(), same_job));
    CHECK(a.cluster.nodes.size() == b.cluster.nodes.size());
    CHECK(a.params.load == b.params.load);
    std::size_t same = 0;
    for (std::size_t i = 0; i < a.workload.jobs.size(); ++i)
      same += same_job(a.workload.jobs[i], c.workload.jobs[i]) ? 1 : 0;
    CHECK(same < 30);
    CHECK((a.params.load != c.params.load || a.params.cpus != c.params.cpus));
  }
}

TEST_CASE("the achieved offered load is within 10% of the target, drawn or given") {
  for (WorkloadFamily family : {WorkloadFamily::kCpu, WorkloadFamily::kGpu}) {
    const bool gpu = family == WorkloadFamily::kGpu;
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      CAPTURE(to_string(family), seed);
      const GeneratedWorkload drawn = generate(family, seed, 2000);
      CHECK(drawn.params.load >= 0.5);
      CHECK(drawn.params.load <= 0.95);
      CHECK(load_by_hand(drawn, gpu) == Approx(drawn.params.load).epsilon(0.10));
      CHECK(drawn.offered_load == Approx(load_by_hand(drawn, gpu)).epsilon(1e-9));
      const double target = 0.3 + 0.15 * static_cast<double>(seed);
      const GeneratedWorkload given = generate(family, seed, 2000, target);
      CHECK(given.params.load == target);
      CHECK(load_by_hand(given, gpu) == Approx(target).epsilon(0.10));
    }
  }
}

TEST_CASE("generated clusters span 64 to 8192 CPUs, and --cpus sets the size") {
  std::set<int> sizes;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const GeneratedWorkload g = generate(WorkloadFamily::kCpu, seed, 50);
    CHECK(g.cluster.total_cpus() >= 64);
    CHECK(g.cluster.total_cpus() <= 8192);
    sizes.insert(g.cluster.total_cpus());
  }
  CHECK(sizes.size() >= 5);
  CHECK(generate(WorkloadFamily::kCpu, 1, 50, std::nullopt, 8192).cluster.total_cpus() == 8192);
  CHECK(generate(WorkloadFamily::kCpu, 1, 50, std::nullopt, 96).cluster.total_cpus() == 96);
  const GeneratedWorkload small_gpu = generate(WorkloadFamily::kGpu, 1, 50, std::nullopt, 64);
  CHECK(small_gpu.cluster.partitions.size() >= 2);
  CHECK(small_gpu.cluster.total_cpus() <= 64 * 2);  // whole nodes, at least one per type
}

TEST_CASE("every generated job fits its cluster, asks at least its run time, and the simulator runs them all") {
  for (WorkloadFamily family : {WorkloadFamily::kCpu, WorkloadFamily::kGpu}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      CAPTURE(to_string(family), seed);
      const GeneratedWorkload g = generate(family, seed, 1500);
      REQUIRE(validate(g.cluster).ok());
      for (const Job& j : g.workload.jobs) {
        CAPTURE(j.id);
        REQUIRE(j.run_time >= 1);
        REQUIRE(j.time_limit >= j.run_time);
        REQUIRE(j.cpus >= 1);
        REQUIRE(j.cpus <= g.cluster.total_cpus());
        REQUIRE(j.time_limit <= g.params.max_limit);
      }
      CHECK(std::is_sorted(g.workload.jobs.begin(), g.workload.jobs.end(),
                           [](const Job& a, const Job& b) { return a.submit < b.submit; }));
      auto fcfs = make_scorer("fcfs");
      REQUIRE(fcfs.ok());
      auto run = simulate(g.cluster, g.workload.jobs, **fcfs);
      REQUIRE(run.ok());
      std::size_t rejected = 0;
      for (const JobOutcome& o : run->outcomes) rejected += o.state == JobEnd::kRejected ? 1 : 0;
      CHECK(rejected == 0);
    }
  }
}

TEST_CASE("time limits are the round values users pick, with a share at the maximum and some jobs killed") {
  for (WorkloadFamily family : {WorkloadFamily::kCpu, WorkloadFamily::kGpu}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      CAPTURE(to_string(family), seed);
      const GeneratedWorkload g = generate(family, seed, 4000);
      const std::vector<Seconds>& round = round_time_limits();
      double at_round = 0, at_max = 0, killed = 0, over_twice = 0;
      for (const Job& j : g.workload.jobs) {
        at_round += std::find(round.begin(), round.end(), j.time_limit) != round.end() ? 1 : 0;
        at_max += j.time_limit == g.params.max_limit ? 1 : 0;
        killed += j.run_time == j.time_limit ? 1 : 0;
        over_twice += j.time_limit >= 2 * j.run_time ? 1 : 0;
      }
      const double n = static_cast<double>(g.workload.jobs.size());
      CHECK(at_round / n >= 0.85);
      CHECK(at_max / n >= 0.03);
      CHECK(at_max / n <= 0.5);
      CHECK(killed / n > 0.005);
      CHECK(killed / n < 0.2);
      CHECK(over_twice / n > 0.4);  // users over-estimate: most ask for twice the run time or more
    }
  }
}

TEST_CASE("CPU job sizes: serial jobs, powers of two, and wider jobs that run longer") {
  const GeneratedWorkload g = generate(WorkloadFamily::kCpu, 3, 6000, std::nullopt, 1024);
  std::size_t serial = 0, parallel = 0, pow2 = 0;
  double small_log = 0, wide_log = 0;
  std::size_t small = 0, wide = 0;
  for (const Job& j : g.workload.jobs) {
    if (j.cpus == 1) ++serial;
    if (j.cpus > 1) {
      ++parallel;
      pow2 += (j.cpus & (j.cpus - 1)) == 0 ? 1 : 0;
    }
    if (j.cpus <= 2) small_log += std::log(static_cast<double>(j.run_time)), ++small;
    if (j.cpus >= 64) wide_log += std::log(static_cast<double>(j.run_time)), ++wide;
  }
  CHECK(serial > 0);
  CHECK(static_cast<double>(pow2) / static_cast<double>(parallel) > 0.5);
  REQUIRE(small > 100);
  REQUIRE(wide > 100);
  CHECK(wide_log / static_cast<double>(wide) > small_log / static_cast<double>(small) + 0.5);
}

namespace {

// Mean ln(run time) of the jobs of at most `narrow` and of at least `wide` CPUs (GPUs for the gpu family).
std::pair<double, double> mean_log_runs(const GeneratedWorkload& g, int narrow, int wide) {
  double narrow_log = 0, wide_log = 0;
  std::size_t narrow_jobs = 0, wide_jobs = 0;
  for (const Job& j : g.workload.jobs) {
    const int size = j.accel.count > 0 ? j.accel.count : j.cpus;
    const double log_run = std::log(static_cast<double>(j.run_time));
    if (size <= narrow) narrow_log += log_run, ++narrow_jobs;
    if (size >= wide) wide_log += log_run, ++wide_jobs;
  }
  REQUIRE(narrow_jobs > 100);
  REQUIRE(wide_jobs > 100);
  return {narrow_log / static_cast<double>(narrow_jobs), wide_log / static_cast<double>(wide_jobs)};
}

}  // namespace

TEST_CASE("a given short share of the widest jobs shortens wide jobs alone and changes nothing else") {
  // Seeds whose drawn sites have many wide jobs: 1,024 CPUs, and a GPU site with 868 jobs of 16 GPUs or more.
  for (const auto& [family, seed, cpus] : {std::tuple{WorkloadFamily::kCpu, 3, std::optional<int>(1024)},
                                           std::tuple{WorkloadFamily::kGpu, 5, std::optional<int>()}}) {
    CAPTURE(to_string(family));
    const bool gpu = family == WorkloadFamily::kGpu;
    const int narrow = gpu ? 1 : 2, wide = gpu ? 16 : 256;
    GeneratorSpec spec;
    spec.family = family;
    spec.seed = static_cast<std::uint64_t>(seed);
    spec.jobs = 20000;
    spec.cpus = cpus;
    auto drawn = generate_workload(spec);
    REQUIRE(drawn.ok());
    spec.short_share_widest = drawn->params.short_share_serial;
    auto flat = generate_workload(spec);
    REQUIRE(flat.ok());
    CHECK(flat->params.short_share_widest == drawn->params.short_share_serial);
    CHECK(flat->params.load == drawn->params.load);
    CHECK(flat->params.cpus == drawn->params.cpus);
    CHECK(flat->params.burst_share == drawn->params.burst_share);
    CHECK(flat->params.max_limit == drawn->params.max_limit);
    const auto [drawn_narrow, drawn_wide] = mean_log_runs(*drawn, narrow, wide);
    const auto [flat_narrow, flat_wide] = mean_log_runs(*flat, narrow, wide);
    CAPTURE(drawn_narrow, drawn_wide, flat_narrow, flat_wide);
    CHECK(drawn_wide > drawn_narrow + 0.5);             // drawn: wide jobs run longer
    CHECK(flat_wide < drawn_wide - 1.0);                // given the smallest jobs' share: far shorter ...
    CHECK(std::abs(flat_narrow - drawn_narrow) < 0.2);  // ... and the smallest jobs as they were
  }
  GeneratorSpec bad;
  bad.short_share_widest = 1.5;
  CHECK(generate_workload(bad).status().message() == "short share of the widest jobs must be in [0, 1] (got 1.5)");
}

TEST_CASE("users have habits: a user's run times vary less than everyone's") {
  for (WorkloadFamily family : {WorkloadFamily::kCpu, WorkloadFamily::kGpu}) {
    CAPTURE(to_string(family));
    const GeneratedWorkload g = generate(family, 5, 5000);
    std::map<std::string, std::vector<double>> by_user;
    std::vector<double> all;
    for (const Job& j : g.workload.jobs) {
      by_user[j.user].push_back(std::log(static_cast<double>(j.run_time)));
      all.push_back(by_user[j.user].back());
    }
    const auto variance = [](const std::vector<double>& v) {
      double mean = 0, sq = 0;
      for (double x : v) mean += x;
      mean /= static_cast<double>(v.size());
      for (double x : v) sq += (x - mean) * (x - mean);
      return sq / static_cast<double>(v.size());
    };
    double within = 0;
    for (const auto& [user, runs] : by_user) within += variance(runs) * static_cast<double>(runs.size());
    within /= static_cast<double>(all.size());
    CHECK(by_user.size() >= 10);
    CHECK(within < 0.8 * variance(all));
  }
}

TEST_CASE("arrivals follow a daily cycle and come in bursts") {
  const GeneratedWorkload g = generate(WorkloadFamily::kCpu, 2, 8000);
  std::vector<std::size_t> per_hour(24);
  std::size_t same_second_user = 0;
  for (std::size_t i = 0; i < g.workload.jobs.size(); ++i) {
    const Job& j = g.workload.jobs[i];
    ++per_hour[static_cast<std::size_t>((j.submit % 86400) / 3600)];
    if (i > 0 && j.user == g.workload.jobs[i - 1].user && j.submit - g.workload.jobs[i - 1].submit <= 10)
      ++same_second_user;
  }
  const auto [low, high] = std::minmax_element(per_hour.begin(), per_hour.end());
  CHECK(static_cast<double>(*high) > 1.5 * static_cast<double>(*low));
  CHECK(same_second_user > g.workload.jobs.size() / 20);
}

TEST_CASE(
    "GPU workloads: typed requests name the cluster's types, typeless ones any, in GPU counts of a node or more") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    CAPTURE(seed);
    const GeneratedWorkload g = generate(WorkloadFamily::kGpu, seed, 3000);
    const Cluster& c = g.cluster;
    REQUIRE(c.accelerator_types.size() >= 2);
    REQUIRE(c.partitions.size() == c.accelerator_types.size());
    std::size_t typed = 0, typeless = 0, multi_node = 0;
    std::set<int> counts;
    for (const Job& j : g.workload.jobs) {
      CAPTURE(j.id);
      REQUIRE(j.accel.count >= 1);
      REQUIRE(j.accel.name == "gpu");
      REQUIRE(c.find_type(j.ran_on_type, "gpu") != nullptr);
      REQUIRE(!j.job_class.empty());
      counts.insert(j.accel.count);
      if (j.accel.types.empty()) {
        ++typeless;
        CHECK(j.partitions.size() == c.partitions.size());
      } else {
        ++typed;
        REQUIRE(j.accel.types.size() == 1);
        REQUIRE(c.find_type(j.accel.types.front(), "gpu") != nullptr);
        CHECK(j.ran_on_type == j.accel.types.front());
        REQUIRE(j.partitions.size() == 1);
        CHECK(c.partitions[static_cast<std::size_t>(c.find_partition(j.partitions.front()))].nodes.size() * 8 >=
              static_cast<std::size_t>(j.accel.count));
      }
      multi_node += j.nodes > 1 ? 1 : 0;
    }
    CHECK(typed > 0);
    CHECK(typeless > 0);
    for (int n : counts) CHECK((n & (n - 1)) == 0);
    CHECK(counts.count(1) == 1);
    CHECK(counts.count(8) == 1);
    // Compute-bound classes gain more from the fastest type than memory-bound ones.
    const AcceleratorType& fastest = c.accelerator_types.back();
    double lo = 1e9, hi = 0;
    for (const auto& [cls, speed] : fastest.class_speed) lo = std::min(lo, speed), hi = std::max(hi, speed);
    CHECK(hi > 1.15 * lo);
    for (const auto& [cls, speed] : c.accelerator_types.front().class_speed) CHECK(speed == 1.0);
    std::size_t smallest = c.nodes.size();
    for (const Partition& p : c.partitions) smallest = std::min(smallest, p.nodes.size());
    if (smallest >= 2) CHECK(multi_node > 0);
  }
}

TEST_CASE("generated workloads written as SWF or sacct + cluster YAML read back to the same jobs and cluster") {
  TempDir dir;
  SECTION("cpu as SWF, its machine implied by the header") {
    const GeneratedWorkload g = generate(WorkloadFamily::kCpu, 11, 2500);
    const std::string path = dir.file("w.swf");
    REQUIRE(io::write_swf(g.workload.jobs, g.cluster, path, 1767571200, "test").ok());
    auto back = io::read_workload(path);
    REQUIRE(back.ok());
    CHECK(back->report.skipped == 0);
    CHECK(totals(back->jobs) == totals(g.workload.jobs));
    for (std::size_t i = 0; i < back->jobs.size(); ++i) {
      CAPTURE(i);
      REQUIRE(back->jobs[i].submit == g.workload.jobs[i].submit);
      REQUIRE(back->jobs[i].user == g.workload.jobs[i].user);
      REQUIRE(back->jobs[i].account == g.workload.jobs[i].account);
    }
    auto implied = implied_cluster(*back);
    REQUIRE(implied.ok());
    CHECK(implied->nodes.size() == g.cluster.nodes.size());
    CHECK(implied->total_cpus() == g.cluster.total_cpus());
    CHECK(offered_load(back->jobs, *implied) == Approx(g.offered_load));
  }
  SECTION("gpu as a sacct dump and a cluster YAML") {
    const GeneratedWorkload g = generate(WorkloadFamily::kGpu, 12, 2500);
    const std::string sacct = dir.file("w.sacct"), yaml = dir.file("w.cluster.yaml");
    REQUIRE(io::write_sacct(g.workload.jobs, sacct, 1767571200).ok());
    REQUIRE(io::write_cluster_yaml(g.cluster, yaml).ok());
    auto back = io::read_workload(sacct);
    REQUIRE(back.ok());
    CHECK(back->report.skipped == 0);
    CHECK(totals(back->jobs) == totals(g.workload.jobs));
    for (std::size_t i = 0; i < back->jobs.size(); ++i) {
      CAPTURE(i);
      REQUIRE(back->jobs[i].submit == g.workload.jobs[i].submit + 1767571200);
      REQUIRE(same_job(Job{back->jobs[i]}, [&] {
        Job j = g.workload.jobs[i];
        j.submit += 1767571200;
        return j;
      }()));
    }
    auto cluster = io::read_cluster(yaml);
    REQUIRE(cluster.ok());
    REQUIRE(cluster->nodes.size() == g.cluster.nodes.size());
    CHECK(cluster->total_cpus() == g.cluster.total_cpus());
    REQUIRE(cluster->partitions.size() == g.cluster.partitions.size());
    for (std::size_t p = 0; p < g.cluster.partitions.size(); ++p) {
      CHECK(cluster->partitions[p].nodes == g.cluster.partitions[p].nodes);
      CHECK(cluster->partitions[p].max_time == g.cluster.partitions[p].max_time);
    }
    REQUIRE(cluster->accelerator_types.size() == g.cluster.accelerator_types.size());
    for (std::size_t t = 0; t < g.cluster.accelerator_types.size(); ++t) {
      CHECK(cluster->accelerator_types[t].name == g.cluster.accelerator_types[t].name);
      CHECK(cluster->accelerator_types[t].speed == g.cluster.accelerator_types[t].speed);
      CHECK(cluster->accelerator_types[t].class_speed == g.cluster.accelerator_types[t].class_speed);
    }
    CHECK(offered_load(back->jobs, *cluster) == Approx(g.offered_load));
  }
}

TEST_CASE("generator specs out of range are refused with what was wrong") {
  GeneratorSpec spec;
  spec.jobs = 0;
  CHECK(generate_workload(spec).status().message() == "jobs must be > 0");
  spec.jobs = 10;
  spec.load = -1.0;
  CHECK(generate_workload(spec).status().message() == "load must be in (0, 10] (got -1)");
  spec.load.reset();
  spec.cpus = 4;
  CHECK(generate_workload(spec).status().message() == "cpus must be in [8, 1048576] (got 4)");
  CHECK(parse_workload_family("tpu").status().message() == "unknown workload family 'tpu' (known: cpu, gpu)");
  CHECK(*parse_workload_family("gpu") == WorkloadFamily::kGpu);
}

TEST_CASE("a load or size override changes only itself: the seed's other parameters stay") {
  const GeneratedWorkload drawn = generate(WorkloadFamily::kCpu, 9, 500);
  const GeneratedWorkload fixed = generate(WorkloadFamily::kCpu, 9, 500, 0.6);
  CHECK(fixed.params.load == 0.6);
  CHECK(fixed.params.cpus == drawn.params.cpus);
  CHECK(fixed.params.serial_share == drawn.params.serial_share);
  CHECK(fixed.params.burst_share == drawn.params.burst_share);
  const GeneratedWorkload sized = generate(WorkloadFamily::kCpu, 9, 500, std::nullopt, 2048);
  CHECK(sized.params.load == drawn.params.load);
  CHECK(sized.params.max_limit == drawn.params.max_limit);
}
