#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rlsched/io/cluster_readers.h"
#include "temp_dir.h"
#include "test_data.h"

using rlsched::Cluster;
using rlsched::GresCount;
using rlsched::Status;
using rlsched::io::read_cluster;
using rlsched::io::read_cluster_yaml;

namespace {

using rlsched::test::kClusterData;

const rlsched::test::ProcessScratch kYamlScratch{"rlsched_yaml_test"};


// Writes `text` into this process's folder (CTest runs test cases as parallel processes).
std::string write_temp(const std::string& name, const std::string& text) {
  const auto dir = kYamlScratch.path;
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

// A valid cluster into which the malformed cases below splice one mistake each.
const char* const kValid = R"(cluster: t
nodes:
  - name: "g[1-2]"
    cpus: 8
    gres: ["gpu:h200:4"]
partitions:
  - name: p
    nodes: "g[1-2]"
)";

}  // namespace

TEST_CASE("read_cluster_yaml reads the lab cluster") {
  auto cluster = read_cluster_yaml(kClusterData + "lab.yaml");
  REQUIRE(cluster.ok());
  const Cluster& c = *cluster;
  CHECK(c.name == "lab");

  REQUIRE(c.nodes.size() == 3);
  CHECK(c.nodes[0].name == "h200-1");
  CHECK(c.nodes[1].name == "a100-1");
  CHECK(c.nodes[2].name == "npu-1");
  for (const auto& n : c.nodes) {
    INFO(n.name);
    CHECK(n.cpus == 8);
    CHECK(n.mem_mb == 8000);  // mem_mb: 8000, memory: 8000M and memory: "7.8125G" all mean 8000 MiB
  }
  CHECK(c.nodes[0].gres == std::vector<GresCount>{{"gpu", "h200", 4}});
  CHECK(c.nodes[1].gres == std::vector<GresCount>{{"gpu", "a100", 4}});
  CHECK(c.nodes[2].gres == std::vector<GresCount>{{"npu", "910b", 8}});

  REQUIRE(c.accelerator_types.size() == 3);
  const auto* h200 = c.find_type("h200", "gpu");
  REQUIRE(h200 != nullptr);
  CHECK(h200->speed == 2.0);
  CHECK(h200->speed_for("ResNet-50") == 3.1);
  CHECK(h200->speed_for("Transformer") == 2.4);
  CHECK(h200->speed_for("other") == 2.0);
  const auto* a100 = c.find_type("a100", "gpu");
  REQUIRE(a100 != nullptr);
  CHECK(a100->speed == 1.0);
  CHECK(a100->class_speed.empty());
  const auto* npu = c.find_type("910b", "npu");  // implicit: used on a node, not listed
  REQUIRE(npu != nullptr);
  CHECK(npu->speed == 1.0);

  REQUIRE(c.partitions.size() == 4);
  CHECK(c.partitions[0].name == "h200");
  CHECK(c.partitions[0].nodes == std::vector<int>{0});
  CHECK(c.partitions[0].max_time == 0);
  CHECK(c.partitions[0].priority_job_factor == 1);
  CHECK(c.partitions[0].priority_tier == 1);
  CHECK_FALSE(c.partitions[0].is_default);
  CHECK(c.partitions[1].max_time == 86400 + 12 * 3600);
  CHECK(c.partitions[1].priority_job_factor == 5);
  CHECK(c.partitions[2].max_time == 3600);  // a bare number is seconds in YAML
  CHECK(c.partitions[2].priority_tier == 2);
  CHECK(c.partitions[3].name == "all");
  CHECK(c.partitions[3].nodes == std::vector<int>{0, 1, 2});
  CHECK(c.partitions[3].is_default);
  CHECK(c.default_partition() == 3);

  REQUIRE(c.qos.size() == 2);
  CHECK(c.qos[0].name == "normal");
  CHECK(c.qos[0].priority == 0);
  CHECK(c.qos[1].name == "high");
  CHECK(c.qos[1].priority == 1000);

  CHECK(c.priority.age == 1000);
  CHECK(c.priority.fairshare == 0);  // not given: default
  CHECK(c.priority.job_size == 100);
  CHECK(c.priority.partition == 1000);
  CHECK(c.priority.qos == 10000);
  CHECK(c.priority.site == 100000);
  CHECK(c.priority.max_age == 86400);
  CHECK(c.priority.decay_half_life == 0);
  CHECK(c.priority.calc_period == 60);
  CHECK(c.priority.favor_small);
}

TEST_CASE("read_cluster_yaml applies defaults for optional keys") {
  auto cluster = read_cluster_yaml(write_temp("minimal.yaml", kValid));
  REQUIRE(cluster.ok());
  const rlsched::PriorityWeights defaults;
  CHECK(cluster->nodes.size() == 2);
  CHECK(cluster->nodes[1].name == "g2");
  CHECK(cluster->nodes[1].mem_mb == 0);
  CHECK(cluster->partitions[0].nodes == std::vector<int>{0, 1});
  CHECK_FALSE(cluster->partitions[0].is_default);
  CHECK(cluster->qos.empty());
  CHECK(cluster->priority.site == defaults.site);
  CHECK(cluster->priority.max_age == defaults.max_age);
  CHECK(cluster->priority.calc_period == defaults.calc_period);
  REQUIRE(cluster->accelerator_types.size() == 1);
  CHECK(cluster->accelerator_types[0].gres == "gpu");
  CHECK(cluster->accelerator_types[0].speed == 1.0);
}

TEST_CASE("read_cluster_yaml names file, line and key of each mistake") {
  struct Case {
    const char* name;
    std::string text;
    const char* message;  // expected after "<path>:"
  };
  const Case cases[] = {
      {"syntax", "nodes: [a, b\npartitions: []\n", "2: YAML syntax error"},
      {"unknown_key", "cluster: t\nnodes:\n  - name: g1\n    cpu: 8\npartitions: [{name: p, nodes: g1}]\n",
       "4: unknown key 'cpu' in nodes[0] (did you mean 'cpus'?)"},
      {"unknown_top_key", std::string(kValid) + "partition: []\n",
       "9: unknown key 'partition' at top level (did you mean 'partitions'?)"},
      {"unknown_key_far", std::string(kValid) + "colour: red\n", "9: unknown key 'colour' at top level"},
      {"duplicate_key", "nodes:\n  - name: g1\n    cpus: 2\n    cpus: 4\npartitions: [{name: p, nodes: g1}]\n",
       "4: nodes[0]: duplicate key 'cpus'"},
      {"negative_speed", std::string("accelerator_types:\n  - name: h200\n    speed: -1\n") + kValid,
       "3: accelerator_types[0].speed: speed must be > 0 (got -1)"},
      {"zero_class_speed", std::string("accelerator_types:\n  - name: h200\n    class_speed: {BERT: 0}\n") + kValid,
       "3: accelerator_types[0].class_speed.BERT: speed must be > 0 (got 0)"},
      // The speed schema rlsched.yaml's job_classes[].speeds is read by (config_test): the same words.
      {"twice_class_speed",
       std::string("accelerator_types:\n  - name: h200\n    class_speed: {BERT: 1, BERT: 2}\n") + kValid,
       "3: accelerator_types[0].class_speed: 'BERT' is given twice"},
      {"text_class_speed", std::string("accelerator_types:\n  - name: h200\n    class_speed: {BERT: fast}\n") + kValid,
       "3: accelerator_types[0].class_speed.BERT: expected a number (got 'fast')"},
      {"speed_not_number", std::string("accelerator_types:\n  - {name: h200, speed: fast}\n") + kValid,
       "2: accelerator_types[0].speed: expected a number (got 'fast')"},
      {"duplicate_type", std::string("accelerator_types:\n  - name: h200\n  - name: a100\n  - name: h200\n") + kValid,
       "4: accelerator_types[2]: accelerator type 'h200' of GRES 'gpu' is already defined at line 2"},
      {"unknown_node", std::string(kValid) + "  - name: q\n    nodes: \"g[1-3]\"\n",
       "10: partitions[1].nodes: unknown node 'g3'"},
      {"duplicate_node",
       "nodes:\n  - name: \"g[1-3]\"\n  - name: x\n  - name: \"g[3-4]\"\npartitions: [{name: p, nodes: ALL}]\n",
       "4: nodes[2].name: node 'g3' is already defined at line 2"},
      {"bad_hostlist", "nodes:\n  - name: \"g[1-3\"\npartitions: [{name: p, nodes: ALL}]\n",
       "2: nodes[0].name: hostlist 'g[1-3': unbalanced '['"},
      {"bad_partition_hostlist", std::string(kValid) + "  - name: q\n    nodes: \"g[2-1]\"\n",
       "10: partitions[1].nodes: hostlist 'g[2-1]': reversed range '2-1'"},
      {"missing_nodes", "cluster: t\npartitions: [{name: p, nodes: ALL}]\n", "1: missing required key 'nodes'"},
      {"empty_nodes", "nodes: []\npartitions: [{name: p, nodes: ALL}]\n", "1: nodes: expected a non-empty list"},
      {"missing_partition_nodes", "nodes: [{name: g1}]\npartitions:\n  - name: p\n",
       "3: partitions[0]: missing required key 'nodes'"},
      {"missing_name", "nodes:\n  - cpus: 4\npartitions: [{name: p, nodes: ALL}]\n",
       "2: nodes[0]: missing required key 'name'"},
      {"zero_cpus", "nodes:\n  - name: g1\n    cpus: 0\npartitions: [{name: p, nodes: ALL}]\n",
       "3: nodes[0].cpus: must be between 1 and 1000000 (got 0)"},
      {"bad_memory", "nodes:\n  - name: g1\n    memory: 12Q\npartitions: [{name: p, nodes: ALL}]\n",
       "3: nodes[0].memory: expected a size like 512G"},
      {"both_memory", "nodes:\n  - name: g1\n    mem_mb: 4\n    memory: 4M\npartitions: [{name: p, nodes: ALL}]\n",
       "4: nodes[0]: give either mem_mb or memory"},
      {"bad_gres", "nodes:\n  - name: g1\n    gres: [\"gpu:h200:x\"]\npartitions: [{name: p, nodes: ALL}]\n",
       "3: nodes[0].gres: GRES 'gpu:h200:x': count is not a whole number"},
      {"twice_gres", "nodes:\n  - name: g1\n    gres: [gpu:h200:2, gpu:h200:2]\npartitions: [{name: p, nodes: ALL}]\n",
       "3: nodes[0].gres: GRES 'gpu:h200:2' is given twice"},
      {"bad_max_time", std::string(kValid) + "    max_time: 1-2-3\n",
       "9: partitions[0].max_time: bad duration '1-2-3'"},
      {"negative_max_time", std::string(kValid) + "    max_time: -60\n",
       "9: partitions[0].max_time: must be >= 0 (got -60)"},
      {"two_defaults",
       "nodes: [{name: g1}]\npartitions:\n  - {name: p, nodes: ALL, default: true}\n  - {name: q, nodes: ALL, default: "
       "yes}\n",
       "4: partitions[1].default: a default partition is already set at line 3"},
      {"bad_bool", std::string(kValid) + "    default: maybe\n",
       "9: partitions[0].default: expected true or false (got 'maybe')"},
      {"duplicate_partition", std::string(kValid) + "  - name: p\n    nodes: g1\n",
       "9: partitions[1].name: partition 'p' is already defined at line 7"},
      {"tier_range", std::string(kValid) + "    priority_tier: 70000\n",
       "9: partitions[0].priority_tier: must be between 0 and 65533 (got 70000)"},
      {"negative_weight", std::string(kValid) + "priority:\n  weights: {age: -5}\n",
       "10: priority.weights.age: weight must be >= 0 (got -5)"},
      {"weight_typo", std::string(kValid) + "priority:\n  weights:\n    fairshares: 5\n",
       "11: unknown key 'fairshares' in priority.weights (did you mean 'fairshare'?)"},
      {"zero_calc_period", std::string(kValid) + "priority:\n  calc_period: 0\n",
       "10: priority.calc_period: must be > 0"},
      {"duplicate_qos", std::string(kValid) + "qos: [{name: a}, {name: a}]\n", "9: qos[1]: QOS 'a' is defined twice"},
      {"not_a_map", "- just\n- a list\n", "1: expected a mapping with 'nodes' and 'partitions'"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const std::string path = write_temp(std::string(c.name) + ".yaml", c.text);
    auto cluster = read_cluster_yaml(path);
    REQUIRE_FALSE(cluster.ok());
    CHECK(cluster.status().code() == Status::Code::kInvalidInput);
    CHECK_THAT(cluster.status().message(), Catch::StartsWith(path + ":" + c.message));
  }
}

TEST_CASE("read_cluster_yaml reports a missing file") {
  auto cluster = read_cluster_yaml(kClusterData + "no_such.yaml");
  REQUIRE_FALSE(cluster.ok());
  CHECK(cluster.status().code() == Status::Code::kNotFound);
  CHECK_THAT(cluster.status().message(), Catch::Contains("no_such.yaml"));
}

TEST_CASE("read_cluster picks the YAML reader by extension") {
  auto cluster = read_cluster(kClusterData + "lab.yaml");
  REQUIRE(cluster.ok());
  CHECK(cluster->nodes.size() == 3);
  CHECK(cluster->priority.site == 100000);  // only the YAML reader sets the site weight
  auto yml = read_cluster(write_temp("upper.YML", kValid));
  REQUIRE(yml.ok());
  CHECK(yml->nodes.size() == 2);
}

TEST_CASE("read_cluster_yaml reads suspend_time as slurm.conf's SuspendTime: a duration, or NONE for never") {
  auto absent = read_cluster_yaml(write_temp("suspend-absent.yaml", kValid));
  REQUIRE(absent.ok());
  CHECK(absent->suspend_time == -1);
  auto set = read_cluster_yaml(write_temp("suspend-set.yaml", std::string(kValid) + "suspend_time: 10m\n"));
  REQUIRE(set.ok());
  CHECK(set->suspend_time == 600);
  auto never = read_cluster_yaml(write_temp("suspend-none.yaml", std::string(kValid) + "suspend_time: NONE\n"));
  REQUIRE(never.ok());
  CHECK(never->suspend_time == -1);
  auto bad = read_cluster_yaml(write_temp("suspend-bad.yaml", std::string(kValid) + "suspend_time: soon\n"));
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("suspend-bad.yaml:") && Catch::Contains("suspend_time"));
}
