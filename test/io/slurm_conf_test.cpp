#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "rlsched/io/cluster_readers.h"
#include "temp_dir.h"
#include "test_data.h"

using rlsched::Cluster;
using rlsched::GresCount;
using rlsched::Status;
using rlsched::io::read_cluster;
using rlsched::io::read_cluster_yaml;
using rlsched::io::read_slurm_conf;

namespace {

using rlsched::test::kClusterData;

const rlsched::test::ProcessScratch kConfScratch{"rlsched_slurm_conf_test"};

const std::string kExamples = std::string(RLSCHED_TEST_DATA) + "/../../slurm_conf_examples/";

// A folder per case: read_cluster looks for gres.conf beside slurm.conf.
std::string temp_dir(const std::string& name) {
  const auto dir = kConfScratch.path / name;
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

const char* const kNodes =
    "GresTypes=gpu,npu\n"
    "NodeName=g[1-2] CPUs=8 Gres=gpu:h200:4\n"
    "NodeName=n1 CPUs=8 Gres=npu:8\n"
    "PartitionName=p Nodes=ALL Default=YES\n";

}  // namespace

TEST_CASE("read_slurm_conf reads the lab recipe's slurm.conf and gres.conf") {
  auto cluster = read_slurm_conf(kClusterData + "lab/slurm.conf", kClusterData + "lab/gres.conf");
  REQUIRE(cluster.ok());
  const Cluster& c = *cluster;
  CHECK(c.name == "lab");
  REQUIRE(c.nodes.size() == 3);
  CHECK(c.nodes[0].name == "h200-1");
  CHECK(c.nodes[2].name == "npu-1");
  for (const auto& n : c.nodes) {
    INFO(n.name);
    CHECK(n.cpus == 8);
    CHECK(n.mem_mb == 0);  // RealMemory=8000, but SelectTypeParameters=CR_Core allocates no memory
  }
  CHECK(c.nodes[0].gres == std::vector<GresCount>{{"gpu", "h200", 4}});
  CHECK(c.nodes[1].gres == std::vector<GresCount>{{"gpu", "a100", 4}});
  CHECK(c.nodes[2].gres == std::vector<GresCount>{{"npu", "910b", 8}});
  REQUIRE(c.accelerator_types.size() == 3);
  for (const auto& t : c.accelerator_types) CHECK(t.speed == 1.0);
  CHECK(c.find_type("910b", "npu") != nullptr);

  REQUIRE(c.partitions.size() == 4);
  CHECK(c.partitions[0].name == "h200");
  CHECK(c.partitions[0].nodes == std::vector<int>{0});
  CHECK(c.partitions[1].nodes == std::vector<int>{1});
  CHECK(c.partitions[2].nodes == std::vector<int>{2});
  CHECK(c.partitions[3].name == "all");
  CHECK(c.partitions[3].nodes == std::vector<int>{0, 1, 2});
  CHECK(c.default_partition() == 3);
  for (const auto& p : c.partitions) CHECK(p.max_time == 0);  // INFINITE

  CHECK(c.priority.age == 1000);
  CHECK(c.priority.fairshare == 0);
  CHECK(c.priority.job_size == 100);
  CHECK(c.priority.partition == 1000);
  CHECK(c.priority.qos == 10000);
  CHECK(c.priority.max_age == 86400);              // PriorityMaxAge=1-0
  CHECK(c.priority.calc_period == 60);             // PriorityCalcPeriod=1 is minutes
  CHECK(c.priority.decay_half_life == 7 * 86400);  // Slurm's default
  CHECK(c.qos.empty());                            // QOS live in slurmdbd
}

TEST_CASE("read_slurm_conf keeps memory only where SelectTypeParameters makes it consumable") {
  const std::string dir = temp_dir("memory");
  // (SelectType line, SelectTypeParameters line, RealMemory the simulator allocates): slurm.conf(5) 22.05 says
  // cons_res/cons_tres default to CR_Core_Memory and select/linear tracks memory only with CR_Memory.
  const std::vector<std::tuple<std::string, std::string, long long>> cases = {
      {"SelectType=select/cons_tres\n", "SelectTypeParameters=CR_Core\n", 0},
      {"SelectType=select/cons_tres\n", "SelectTypeParameters=CR_CPU\n", 0},
      {"SelectType=select/cons_tres\n", "SelectTypeParameters=CR_Core_Memory\n", 8000},
      {"SelectType=select/cons_res\n", "SelectTypeParameters=cr_socket_memory\n", 8000},
      {"SelectType=select/cons_tres\n", "", 8000},
      {"", "", 8000},
      {"SelectType=select/linear\n", "", 0},
      {"SelectType=select/linear\n", "SelectTypeParameters=CR_Memory\n", 8000},
  };
  for (const auto& [type, parameters, memory] : cases) {
    INFO(type << parameters);
    const std::string conf = write(dir + "/slurm.conf", type + parameters +
                                                           "NodeName=n[1-2] CPUs=8 RealMemory=8000\n"
                                                           "PartitionName=p Nodes=ALL Default=YES\n");
    auto cluster = read_slurm_conf(conf, "");
    REQUIRE(cluster.ok());
    for (const auto& n : cluster->nodes) CHECK(n.mem_mb == memory);
  }
}

TEST_CASE("read_slurm_conf handles defaults, continuations, topology, nodesets and gres.conf types") {
  auto cluster = read_slurm_conf(kClusterData + "features/slurm.conf", kClusterData + "features/gres.conf");
  REQUIRE(cluster.ok());
  const Cluster& c = *cluster;
  CHECK(c.name == "features");
  REQUIRE(c.nodes.size() == 9);
  const char* names[] = {"gpu-01", "gpu-02", "gpu-03", "gpu-04", "cpu1-n1", "cpu1-n2", "cpu2-n1", "cpu2-n2", "npu-1"};
  for (std::size_t i = 0; i < 9; ++i) CHECK(c.nodes[i].name == names[i]);
  for (int i = 0; i < 4; ++i) {
    CHECK(c.nodes[i].cpus == 64);  // Sockets=2 x CoresPerSocket=16 x ThreadsPerCore=2 from NodeName=DEFAULT
    CHECK(c.nodes[i].mem_mb == 256000);
  }
  CHECK(c.nodes[0].gres == std::vector<GresCount>{{"gpu", "h200", 8}});  // type from gres.conf
  CHECK(c.nodes[3].gres == std::vector<GresCount>{{"gpu", "h200", 4}, {"gpu", "a100", 4}});
  CHECK(c.nodes[4].cpus == 64);        // CPUs= wins over the default topology
  CHECK(c.nodes[4].mem_mb == 128000);  // continued lines
  CHECK(c.nodes[4].gres.empty());
  CHECK(c.nodes[8].gres == std::vector<GresCount>{{"npu", "910b", 8}, {"gpu", "t4", 1}});

  std::set<std::string> types;
  for (const auto& t : c.accelerator_types) types.insert(t.gres + ":" + t.name);
  CHECK(types == std::set<std::string>{"gpu:h200", "gpu:a100", "gpu:t4", "npu:910b"});

  REQUIRE(c.partitions.size() == 4);
  const auto& gpu = c.partitions[0];
  CHECK(gpu.nodes == std::vector<int>{0, 1, 2, 3});  // NodeSet by feature
  CHECK(gpu.priority_job_factor == 20);
  CHECK(gpu.priority_tier == 3);     // PartitionName=DEFAULT
  CHECK(gpu.max_time == 2 * 86400);  // PartitionName=DEFAULT
  const auto& cpu = c.partitions[1];
  CHECK(cpu.nodes == std::vector<int>{4, 5, 6, 7});
  CHECK(cpu.max_time == 90 * 60);  // bare MaxTime is minutes
  CHECK_FALSE(cpu.is_default);
  const auto& mixed = c.partitions[2];
  CHECK(mixed.nodes == std::vector<int>{3, 8});  // cluster order, not Nodes= order
  CHECK(mixed.max_time == 5400);
  const auto& everything = c.partitions[3];
  CHECK(everything.nodes.size() == 9);
  CHECK(everything.is_default);
  CHECK(everything.max_time == 0);
  CHECK(everything.priority_job_factor == 7);  // old Priority= sets both
  CHECK(everything.priority_tier == 7);

  CHECK(c.priority.fairshare == 10000);
  CHECK(c.priority.age == 0);
  CHECK(c.priority.decay_half_life == 14 * 86400);
  CHECK(c.priority.calc_period == 300);
  CHECK(c.priority.max_age == 7 * 86400);
  CHECK(c.priority.favor_small);
}

TEST_CASE("read_slurm_conf without gres.conf keeps untyped GRES") {
  auto cluster = read_slurm_conf(kClusterData + "features/slurm.conf");
  REQUIRE(cluster.ok());
  CHECK(cluster->nodes[0].gres == std::vector<GresCount>{{"gpu", "", 8}});
  std::set<std::string> types;
  for (const auto& t : cluster->accelerator_types) types.insert(t.gres + ":" + t.name);
  CHECK(types == std::set<std::string>{"gpu:t4", "npu:910b"});
}

TEST_CASE("read_cluster reads slurm.conf with the gres.conf beside it") {
  auto cluster = read_cluster(kClusterData + "features/slurm.conf");
  REQUIRE(cluster.ok());
  CHECK(cluster->nodes[3].gres == std::vector<GresCount>{{"gpu", "h200", 4}, {"gpu", "a100", 4}});

  const std::string dir = temp_dir("no_gres_conf");
  auto alone = read_cluster(write(dir + "/slurm.conf", kNodes));
  REQUIRE(alone.ok());
  CHECK(alone->nodes[2].gres == std::vector<GresCount>{{"npu", "", 8}});
}

TEST_CASE("read_slurm_conf names file and line of each mistake") {
  struct Case {
    const char* name;
    std::string slurm_conf;
    std::string gres_conf;  // empty: none
    const char* file;       // "slurm.conf" or "gres.conf": where the message must point
    const char* message;    // expected after "<path>:"
    Status::Code code = Status::Code::kInvalidInput;
  };
  const Case cases[] = {
      {"no_equals", std::string("ClusterName=x\n# comment\n\nNodeName=g1 CPUs=8 oops\n") + kNodes, "", "slurm.conf",
       "4: expected Key=Value, got 'oops'"},
      {"include", std::string(kNodes) + "Include /etc/slurm/nodes.conf\n", "", "slurm.conf",
       "5: Include lines are not supported; paste the contents of '/etc/slurm/nodes.conf'", Status::Code::kUnsupported},
      {"include_lower", std::string("include other.conf\n") + kNodes, "", "slurm.conf", "1: Include lines",
       Status::Code::kUnsupported},
      {"duplicate_node", std::string(kNodes) + "NodeName=g[2-3] CPUs=4\n", "", "slurm.conf",
       "5: NodeName=g[2-3]: node 'g2' is already defined at line 2"},
      {"bad_hostlist", std::string(kNodes) + "NodeName=g[3-4 CPUs=4\n", "", "slurm.conf",
       "5: NodeName=g[3-4: hostlist 'g[3-4': unbalanced '['"},
      {"unknown_node", std::string(kNodes) + "PartitionName=q Nodes=g[1-3]\n", "", "slurm.conf",
       "5: PartitionName=q: unknown node 'g3' in Nodes="},
      {"no_partition_nodes", std::string(kNodes) + "PartitionName=q MaxTime=60\n", "", "slurm.conf",
       "5: PartitionName=q: no Nodes= given"},
      {"duplicate_partition", std::string(kNodes) + "PartitionName=p Nodes=n1\n", "", "slurm.conf",
       "5: PartitionName=p: partition is already defined at line 4"},
      {"bad_max_time", std::string(kNodes) + "PartitionName=q Nodes=n1 MaxTime=1:2:3:4\n", "", "slurm.conf",
       "5: PartitionName=q: MaxTime: bad duration '1:2:3:4'"},
      {"bad_cpus", std::string(kNodes) + "NodeName=x CPUs=eight\n", "", "slurm.conf",
       "5: NodeName=x: CPUs=eight is not a whole number"},
      {"bad_gres", std::string(kNodes) + "NodeName=x Gres=gpu:h200:4:2\n", "", "slurm.conf",
       "5: NodeName=x: GRES 'gpu:h200:4:2': too many ':' fields"},
      {"gres_not_in_types", std::string(kNodes) + "NodeName=x Gres=fpga:2\n", "", "slurm.conf",
       "5: NodeName=x: GRES 'fpga' is not listed in GresTypes (line 1)"},
      {"bad_weight", std::string(kNodes) + "PriorityWeightAge=-3\n", "", "slurm.conf",
       "5: PriorityWeightAge must be between 0 and 4294967295 (got -3)"},
      {"bad_favor_small", std::string(kNodes) + "PriorityFavorSmall=perhaps\n", "", "slurm.conf",
       "5: PriorityFavorSmall=perhaps is not YES or NO"},
      {"continued_error", std::string(kNodes) + "NodeName=x \\\n  CPUs=8 \\\n  broken\n", "", "slurm.conf",
       "5: expected Key=Value, got 'broken'"},
      {"gres_count_mismatch", kNodes,
       "NodeName=g1 Name=gpu Type=h200 File=/dev/nvidia[0-3]\nNodeName=g2 Name=gpu Type=h200 File=/dev/nvidia[0-7]\n",
       "gres.conf", "2: node 'g2': gres.conf has 8 gpu but "},
      {"gres_type_mismatch", kNodes, "NodeName=g[1-2] Name=gpu Type=a100 File=/dev/nvidia[0-3]\n", "gres.conf",
       "1: node 'g1': gres.conf has 0 gpu:h200 but "},
      {"gres_file_count", kNodes, "NodeName=n1 Name=npu Count=8 File=/dev/davinci[0-3]\n", "gres.conf",
       "1: NodeName=n1: Count=8 but File= lists 4 device files"},
      {"gres_unknown_node", kNodes, "NodeName=g[1-3] Name=gpu Type=h200 Count=4\n", "gres.conf",
       "1: NodeName=g[1-3]: unknown node 'g3'"},
      {"gres_not_configured", kNodes, "NodeName=n1 Name=gpu Type=h200 Count=4\n", "gres.conf",
       "1: node 'n1': gres.conf has 4 gpu but "},
      {"gres_no_equals", kNodes, "AutoDetect=nvml\n\nNodeName=n1 Name=npu Count 8\n", "gres.conf",
       "3: expected Key=Value, got 'Count'"},
      {"gres_no_name", kNodes, "NodeName=n1 Count=8\n", "gres.conf", "1: NodeName=n1: missing Name="},
      {"gres_include", kNodes, "Include more.conf\n", "gres.conf", "1: Include lines", Status::Code::kUnsupported},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const std::string dir = temp_dir(c.name);
    const std::string slurm_conf = write(dir + "/slurm.conf", c.slurm_conf);
    const std::string gres_conf = c.gres_conf.empty() ? "" : write(dir + "/gres.conf", c.gres_conf);
    auto cluster = read_slurm_conf(slurm_conf, gres_conf);
    REQUIRE_FALSE(cluster.ok());
    CHECK(cluster.status().code() == c.code);
    CHECK_THAT(cluster.status().message(), Catch::StartsWith(dir + "/" + c.file + ":" + c.message));
  }
}

TEST_CASE("read_slurm_conf mismatch messages name both files") {
  const std::string dir = temp_dir("mismatch");
  const std::string slurm_conf = write(dir + "/slurm.conf", kNodes);
  const std::string gres_conf = write(dir + "/gres.conf", "NodeName=g[1-2] Name=gpu Type=h200 File=/dev/nvidia[0-1]\n");
  auto cluster = read_slurm_conf(slurm_conf, gres_conf);
  REQUIRE_FALSE(cluster.ok());
  CHECK(cluster.status().message() == gres_conf + ":1: node 'g1': gres.conf has 2 gpu but " + slurm_conf +
                                          ":2 gives Gres=gpu:h200:4 (counts must agree)");
}

TEST_CASE("read_slurm_conf applies speeds from a YAML file") {
  const std::string dir = temp_dir("speeds");
  const std::string slurm_conf = write(dir + "/slurm.conf", kNodes);
  const std::string gres_conf = write(dir + "/gres.conf", "NodeName=n1 Name=npu Type=910b Count=8\n");
  // 910b without gres: matched by name alone, though the default GRES name is gpu.
  const std::string speeds = write(dir + "/speeds.yaml",
                                   "accelerator_types:\n"
                                   "  - {name: h200, speed: 2.5, class_speed: {BERT: 3}}\n"
                                   "  - {name: 910b, speed: 0.75}\n");
  auto cluster = read_slurm_conf(slurm_conf, gres_conf, speeds);
  REQUIRE(cluster.ok());
  const auto* h200 = cluster->find_type("h200", "gpu");
  REQUIRE(h200 != nullptr);
  CHECK(h200->speed == 2.5);
  CHECK(h200->speed_for("BERT") == 3.0);
  const auto* npu = cluster->find_type("910b", "npu");
  REQUIRE(npu != nullptr);
  CHECK(npu->speed == 0.75);

  SECTION("a type the cluster lacks is an error") {
    const std::string bad = write(dir + "/bad_speeds.yaml",
                                  "accelerator_types:\n  - {name: h200, speed: 2}\n  - {name: v100, speed: 0.5}\n");
    auto result = read_slurm_conf(slurm_conf, gres_conf, bad);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().message() == bad +
                                           ":3: accelerator_types[1]: the cluster has no accelerator type 'gpu:v100' "
                                           "(it has: gpu:h200, npu:910b)");
  }
  SECTION("the wrong GRES name is an error") {
    const std::string bad = write(dir + "/bad_gres.yaml", "accelerator_types:\n  - {name: 910b, gres: gpu}\n");
    auto result = read_slurm_conf(slurm_conf, gres_conf, bad);
    REQUIRE_FALSE(result.ok());
    CHECK_THAT(result.status().message(), Catch::StartsWith(bad + ":2: accelerator_types[0]: the cluster has no"));
  }
  SECTION("a speeds file is checked like any cluster YAML") {
    const std::string bad = write(dir + "/negative.yaml", "accelerator_types:\n  - {name: h200, speed: -2}\n");
    auto result = read_slurm_conf(slurm_conf, gres_conf, bad);
    REQUIRE_FALSE(result.ok());
    CHECK_THAT(result.status().message(), Catch::StartsWith(bad + ":2: accelerator_types[0].speed: speed must be > 0"));
  }
  SECTION("a speeds file needs accelerator_types") {
    const std::string bad = write(dir + "/empty.yaml", "cluster: x\n");
    auto result = read_slurm_conf(slurm_conf, gres_conf, bad);
    REQUIRE_FALSE(result.ok());
    CHECK_THAT(result.status().message(), Catch::Contains("missing required key 'accelerator_types'"));
  }
}

TEST_CASE("slurm_conf_examples: cluster.yaml and slurm.conf + gres.conf describe the same cluster") {
  auto yaml = read_cluster(kExamples + "cluster.yaml");
  REQUIRE(yaml.ok());
  auto conf = read_cluster(kExamples + "slurm.conf");  // picks up gres.conf beside it
  REQUIRE(conf.ok());
  const Cluster& y = *yaml;
  const Cluster& s = *conf;

  CHECK(y.name == s.name);
  REQUIRE(y.nodes.size() == 32);
  REQUIRE(s.nodes.size() == y.nodes.size());
  for (std::size_t i = 0; i < y.nodes.size(); ++i) {
    INFO(y.nodes[i].name);
    CHECK(s.nodes[i].name == y.nodes[i].name);
    CHECK(s.nodes[i].cpus == y.nodes[i].cpus);
    CHECK(s.nodes[i].mem_mb == y.nodes[i].mem_mb);
    CHECK(s.nodes[i].gres == y.nodes[i].gres);
  }
  // Spot checks that both did not agree on something wrong.
  CHECK(y.nodes[0].name == "h200-1");
  CHECK(y.nodes[0].gres == std::vector<GresCount>{{"gpu", "h200", 8}});
  CHECK(y.nodes[4].name == "a100-01");
  CHECK(y.nodes[11].gres == std::vector<GresCount>{{"gpu", "a100", 8}});
  CHECK(y.nodes[12].name == "npu-1");
  CHECK(y.nodes[12].cpus == 192);
  CHECK(y.nodes[15].gres == std::vector<GresCount>{{"npu", "910b", 8}});
  CHECK(y.nodes[16].name == "cpu-001");
  CHECK(y.nodes[31].name == "cpu-016");
  CHECK(y.nodes[31].gres.empty());
  CHECK(y.nodes[31].mem_mb == 256000);

  REQUIRE(s.partitions.size() == y.partitions.size());
  for (std::size_t i = 0; i < y.partitions.size(); ++i) {
    INFO(y.partitions[i].name);
    CHECK(s.partitions[i].name == y.partitions[i].name);
    CHECK(s.partitions[i].nodes == y.partitions[i].nodes);
    CHECK(s.partitions[i].is_default == y.partitions[i].is_default);
    CHECK(s.partitions[i].max_time == y.partitions[i].max_time);
    CHECK(s.partitions[i].priority_job_factor == y.partitions[i].priority_job_factor);
    CHECK(s.partitions[i].priority_tier == y.partitions[i].priority_tier);
  }
  std::vector<std::string> partition_names;
  for (const auto& p : y.partitions) partition_names.push_back(p.name);
  CHECK(partition_names == std::vector<std::string>{"h200", "a100", "npu", "cpu", "all"});
  CHECK(y.partitions[4].nodes.size() == 32);
  CHECK(y.default_partition() == 4);

  std::set<std::tuple<std::string, std::string>> y_types, s_types;
  for (const auto& t : y.accelerator_types) y_types.emplace(t.gres, t.name);
  for (const auto& t : s.accelerator_types) s_types.emplace(t.gres, t.name);
  CHECK(s_types == y_types);
  CHECK(y_types.size() == 3);

  CHECK(s.priority.age == y.priority.age);
  CHECK(s.priority.fairshare == y.priority.fairshare);
  CHECK(s.priority.job_size == y.priority.job_size);
  CHECK(s.priority.partition == y.priority.partition);
  CHECK(s.priority.qos == y.priority.qos);
  CHECK(s.priority.max_age == y.priority.max_age);
  CHECK(s.priority.decay_half_life == y.priority.decay_half_life);
  CHECK(s.priority.calc_period == y.priority.calc_period);
  CHECK(s.priority.favor_small == y.priority.favor_small);
  CHECK(y.priority.fairshare == 10000);
  CHECK(y.priority.calc_period == 300);

  std::vector<std::string> qos;
  for (const auto& q : y.qos) qos.push_back(q.name);
  CHECK(qos == std::vector<std::string>{"normal", "high", "low"});

  // The YAML's speeds applied to the slurm.conf cluster give the YAML's types.
  auto with_speeds = read_slurm_conf(kExamples + "slurm.conf", kExamples + "gres.conf", kExamples + "cluster.yaml");
  REQUIRE(with_speeds.ok());
  for (const auto& t : y.accelerator_types) {
    INFO(t.name);
    const auto* u = with_speeds->find_type(t.name, t.gres);
    REQUIRE(u != nullptr);
    CHECK(u->speed == t.speed);
    CHECK(u->class_speed == t.class_speed);
  }
  CHECK(with_speeds->find_type("h200", "gpu")->speed_for("ResNet-50") == 2.6);
  CHECK(with_speeds->find_type("910b", "npu")->speed == 0.8);
}

TEST_CASE("read_slurm_conf reads bf_interval, bf_resolution, bf_max_job_test and batch_sched_delay") {
  const std::string dir = temp_dir("backfill");
  const std::string nodes = "NodeName=n1 CPUs=8\nPartitionName=p Nodes=ALL Default=YES\n";
  auto defaults = read_slurm_conf(write(dir + "/slurm.conf", nodes), "");
  REQUIRE(defaults.ok());
  CHECK(defaults->backfill.interval == 30);  // slurm.conf(5) 22.05 defaults
  CHECK(defaults->backfill.resolution == 60);
  CHECK(defaults->backfill.max_job_test == 500);
  CHECK(defaults->backfill.batch_sched_delay == 3);
  auto lab = read_slurm_conf(
      write(dir + "/slurm.conf",
            "SchedulerParameters=bf_continue,bf_interval=5,BF_RESOLUTION=1,bf_max_job_test=100,batch_sched_delay=0\n" +
                nodes),
      "");
  REQUIRE(lab.ok());
  CHECK(lab->backfill.interval == 5);
  CHECK(lab->backfill.resolution == 1);
  CHECK(lab->backfill.max_job_test == 100);
  CHECK(lab->backfill.batch_sched_delay == 0);
  auto bad = read_slurm_conf(write(dir + "/slurm.conf", "SchedulerParameters=bf_interval=0\n" + nodes), "");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("slurm.conf:1") && Catch::Contains("bf_interval=0"));
  auto negative = read_slurm_conf(write(dir + "/slurm.conf", "SchedulerParameters=batch_sched_delay=-1\n" + nodes), "");
  REQUIRE_FALSE(negative.ok());
  CHECK_THAT(negative.status().message(),
             Catch::Contains("slurm.conf:1") && Catch::Contains("batch_sched_delay=-1") && Catch::Contains("from 0"));
}

TEST_CASE("read_slurm_conf reads SuspendTime: seconds, or never when absent, NONE, INFINITE or negative") {
  const std::string dir = temp_dir("suspend");
  const std::string nodes = "NodeName=n1 CPUs=8\nPartitionName=p Nodes=ALL Default=YES\n";
  auto absent = read_slurm_conf(write(dir + "/slurm.conf", nodes), "");
  REQUIRE(absent.ok());
  CHECK(absent->suspend_time == -1);
  auto set = read_slurm_conf(write(dir + "/slurm.conf", "SuspendTime=600\n" + nodes), "");
  REQUIRE(set.ok());
  CHECK(set->suspend_time == 600);
  for (const char* never : {"NONE", "INFINITE", "-1"}) {
    auto off = read_slurm_conf(write(dir + "/slurm.conf", std::string("SuspendTime=") + never + "\n" + nodes), "");
    REQUIRE(off.ok());
    CHECK(off->suspend_time == -1);
  }
  auto bad = read_slurm_conf(write(dir + "/slurm.conf", "SuspendTime=10min\n" + nodes), "");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("slurm.conf:1") && Catch::Contains("SuspendTime=10min"));
}
