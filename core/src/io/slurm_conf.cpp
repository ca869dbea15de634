// slurm.conf + gres.conf -> Cluster. Only what scheduling needs is read (nodes, partitions, GRES, priority weights);
// the hundreds of other keys are skipped. Include lines are refused rather than skipped: nodes and partitions often
// live in included files, and skipping them would give a silently smaller cluster.
#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "io/cluster_common.h"
#include "io/line_source.h"
#include "rlsched/io/cluster_readers.h"

namespace rlsched::io {

namespace {

struct Token {
  std::string key;   // lower case: slurm.conf keys are case-insensitive
  std::string name;  // as written, for messages
  std::string value;
};

// One logical line (continuations joined), split into Key=Value tokens.
struct ConfLine {
  int line = 0;  // first physical line
  std::vector<Token> tokens;
};

// Drops a '#' comment outside double quotes; "\#" is a literal '#', as in Slurm.
std::string strip_comment(std::string_view raw) {
  std::string out;
  bool quoted = false;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c == '"') quoted = !quoted;
    if (c == '\\' && i + 1 < raw.size() && raw[i + 1] == '#') {
      out += '#';
      ++i;
      continue;
    }
    if (c == '#' && !quoted) break;
    out += c;
  }
  return out;
}

Status tokenize(const std::string& path, int line, std::string_view text, ConfLine& out) {
  out.line = line;
  out.tokens.clear();
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i == text.size()) break;
    std::string word;
    bool quoted = false;
    for (; i < text.size() && (quoted || (text[i] != ' ' && text[i] != '\t')); ++i) {
      if (text[i] == '"')
        quoted = !quoted;
      else
        word += text[i];
    }
    words.push_back(std::move(word));
  }
  if (!words.empty() && iequals(words[0], "include")) {
    return Status::Unsupported(fmt::format(
        "{}:{}: Include lines are not supported; paste the contents of '{}' into {} instead (skipping them would "
        "silently drop whatever nodes or partitions they define)",
        path, line, words.size() > 1 ? words[1] : "", path));
  }
  for (const auto& word : words) {
    const std::size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0)
      return Status::InvalidInput(fmt::format("{}:{}: expected Key=Value, got '{}'", path, line, word));
    out.tokens.push_back(Token{to_lower(word.substr(0, eq)), word.substr(0, eq), word.substr(eq + 1)});
  }
  return Status::Ok();
}

// Reads a Slurm-style config file into logical lines.
Status read_conf_lines(const std::string& path, std::vector<ConfLine>& out) {
  auto source = LineSource::Open(path);
  if (!source.ok()) return source.status();
  std::string logical;
  int first_line = 0;
  bool pending = false;
  const auto flush = [&]() -> Status {
    ConfLine line;
    if (Status s = tokenize(path, first_line, logical, line); !s.ok()) return s;
    if (!line.tokens.empty()) out.push_back(std::move(line));
    logical.clear();
    pending = false;
    return Status::Ok();
  };
  std::string_view raw;
  while (source->next(raw)) {
    const std::string text = strip_comment(raw);
    std::string_view t = trim(text);
    if (!pending) first_line = source->line_number();
    const bool continued = !t.empty() && t.back() == '\\';
    if (continued) t.remove_suffix(1);
    logical += ' ';
    logical += t;
    pending = true;
    if (!continued)
      if (Status s = flush(); !s.ok()) return s;
  }
  if (!source->error().empty()) return Status::IoError(source->error());
  return pending ? flush() : Status::Ok();
}

// Where a message points: "slurm.conf:12: NodeName=h200-[1-4]".
struct Where {
  const std::string& path;
  int line;
  std::string context;

  Status error(const std::string& what) const {
    if (context.empty()) return Status::InvalidInput(fmt::format("{}:{}: {}", path, line, what));
    return Status::InvalidInput(fmt::format("{}:{}: {}: {}", path, line, context, what));
  }
};

Status get_int(const Where& where, const Token& t, long long lo, long long hi, long long& out) {
  if (!parse_int(trim(t.value), out)) return where.error(fmt::format("{}={} is not a whole number", t.name, t.value));
  if (out < lo || out > hi)
    return where.error(fmt::format("{} must be between {} and {} (got {})", t.name, lo, hi, out));
  return Status::Ok();
}

Status get_bool(const Where& where, const Token& t, bool& out) {
  if (!parse_bool(t.value, out)) return where.error(fmt::format("{}={} is not YES or NO", t.name, t.value));
  return Status::Ok();
}

Status get_duration(const Where& where, const Token& t, Seconds& out) {
  auto parsed = parse_slurm_duration(t.value);
  if (!parsed.ok()) return where.error(fmt::format("{}: {}", t.name, parsed.status().message()));
  out = *parsed;
  return Status::Ok();
}

// SuspendTime: seconds a node stays idle before power saving suspends it; NONE, INFINITE or a negative number
// turn it off (slurm.conf(5)).
Status get_suspend_time(const Where& where, const Token& t, Seconds& out) {
  const std::string value = to_lower(trim(t.value));
  long long v = 0;
  if (value == "none" || value == "infinite") {
    out = -1;
  } else if (parse_int(value, v)) {
    out = v < 0 ? -1 : v;
  } else {
    return where.error(fmt::format("{}={} is not a number of seconds, NONE or INFINITE", t.name, t.value));
  }
  return Status::Ok();
}

// Node attributes, accumulated over NodeName=DEFAULT lines and then the node's own line.
struct NodeSpec {
  std::optional<long long> cpus, boards, sockets, sockets_per_board, cores_per_socket, threads_per_core, real_memory;
  std::optional<std::string> gres, features;

  Status apply(const Where& where, const Token& t) {
    const std::pair<const char*, std::optional<long long>*> counts[] = {
        {"cpus", &cpus},
        {"procs", &cpus},  // Procs is the pre-2.x name of CPUs, still accepted by Slurm
        {"boards", &boards},
        {"sockets", &sockets},
        {"socketsperboard", &sockets_per_board},
        {"corespersocket", &cores_per_socket},
        {"threadspercore", &threads_per_core}};
    for (const auto& [key, field] : counts) {
      if (t.key != key) continue;
      long long value = 0;
      if (Status s = get_int(where, t, 1, 1'000'000, value); !s.ok()) return s;
      *field = value;
      return Status::Ok();
    }
    if (t.key == "realmemory") {
      long long value = 0;
      if (Status s = get_int(where, t, 0, std::int64_t{1} << 50, value); !s.ok()) return s;
      real_memory = value;
    } else if (t.key == "gres") {
      gres = t.value;
    } else if (t.key == "features" || t.key == "feature" || t.key == "availablefeatures") {
      features = t.value;
    }
    return Status::Ok();  // NodeAddr, Port, State, Weight, ...: nothing the simulator uses
  }

  // Slurm's rule: CPUs when given, else the product of the topology fields it was given (each defaulting to 1).
  int cpu_count() const {
    if (cpus) return static_cast<int>(*cpus);
    if (!boards && !sockets && !sockets_per_board && !cores_per_socket && !threads_per_core) return 1;
    const long long total_sockets = sockets ? *sockets : boards.value_or(1) * sockets_per_board.value_or(1);
    const long long product = total_sockets * cores_per_socket.value_or(1) * threads_per_core.value_or(1);
    return static_cast<int>(std::min<long long>(product, std::numeric_limits<int>::max()));
  }
};

struct PartitionSpec {
  std::optional<std::string> nodes;
  std::optional<bool> is_default;
  std::optional<Seconds> max_time;
  std::optional<long long> job_factor, tier;

  Status apply(const Where& where, const Token& t) {
    if (t.key == "nodes") {
      nodes = t.value;
    } else if (t.key == "default") {
      bool value = false;
      if (Status s = get_bool(where, t, value); !s.ok()) return s;
      is_default = value;
    } else if (t.key == "maxtime") {
      Seconds value = 0;
      if (Status s = get_duration(where, t, value); !s.ok()) return s;
      max_time = value;
    } else if (t.key == "priorityjobfactor" || t.key == "prioritytier" || t.key == "priority") {
      long long value = 0;
      if (Status s = get_int(where, t, 0, kMaxPartitionPriority, value); !s.ok()) return s;
      // Priority= is the pre-16.05 spelling that set both.
      if (t.key != "prioritytier") job_factor = value;
      if (t.key != "priorityjobfactor") tier = value;
    }
    return Status::Ok();  // State, AllowGroups, OverSubscribe, ...: not modelled
  }
};

struct PendingPartition {
  std::string name;
  int line = 0;
  PartitionSpec spec;
};

struct NodeSet {
  std::string name;
  int line = 0;
  std::optional<std::string> nodes, feature;
};

struct GresConfEntry {
  GresCount gres;
  int line = 0;
};

class SlurmConfReader {
 public:
  SlurmConfReader(const std::string& slurm_conf, const std::string& gres_conf)
      : path_(slurm_conf), gres_path_(gres_conf) {}

  Result<Cluster> read() {
    std::vector<ConfLine> lines;
    if (Status s = read_conf_lines(path_, lines); !s.ok()) return s;
    NodeSpec node_defaults;
    PartitionSpec partition_defaults;
    for (const auto& line : lines) {
      const Token& head = line.tokens[0];
      Status s;
      if (head.key == "nodename")
        s = node_line(line, node_defaults);
      else if (head.key == "partitionname")
        s = partition_line(line, partition_defaults);
      else if (head.key == "nodeset")
        s = nodeset_line(line);
      else if (head.key != "downnodes" && head.key != "frontendname")
        s = global_line(line);
      if (!s.ok()) return s;
    }
    Status s = check_gres_types();
    if (s.ok() && !gres_path_.empty()) s = merge_gres_conf();
    if (s.ok()) s = resolve_partitions();
    if (!s.ok()) return s;
    if (!memory_consumable())
      for (Node& node : cluster_.nodes) node.mem_mb = 0;  // RealMemory is there, but nothing allocates it
    add_implicit_types(cluster_);
    if (Status v = validate(cluster_); !v.ok()) return Status::InvalidInput(fmt::format("{}: {}", path_, v.message()));
    return std::move(cluster_);
  }

 private:
  Status node_line(const ConfLine& line, NodeSpec& defaults) {
    const std::string& hostlist = line.tokens[0].value;
    const Where where{path_, line.line, "NodeName=" + hostlist};
    const bool is_default = iequals(hostlist, "DEFAULT");
    NodeSpec spec = is_default ? NodeSpec{} : defaults;
    NodeSpec& target = is_default ? defaults : spec;  // DEFAULT lines add to the defaults, they do not reset them
    for (std::size_t i = 1; i < line.tokens.size(); ++i)
      if (Status s = target.apply(where, line.tokens[i]); !s.ok()) return s;
    if (is_default) return Status::Ok();

    Node proto;
    proto.cpus = spec.cpu_count();
    proto.mem_mb = spec.real_memory.value_or(0);
    if (spec.gres && !trim(*spec.gres).empty() && !iequals(trim(*spec.gres), "(null)")) {
      for (auto item : split_gres_list(*spec.gres)) {
        GresCount g;
        std::string error;
        if (!parse_gres_spec(item, g, error)) return where.error(error);
        for (const auto& earlier : proto.gres)
          if (earlier.name == g.name && earlier.type == g.type)
            return where.error(fmt::format("Gres lists '{}' twice", item));
        proto.gres.push_back(std::move(g));
      }
    }
    auto names = expand_hostlist(hostlist);
    if (!names.ok()) return where.error(names.status().message());
    for (auto& name : *names) {
      auto [it, inserted] = node_index_.emplace(name, static_cast<int>(cluster_.nodes.size()));
      if (!inserted)
        return where.error(fmt::format("node '{}' is already defined at line {}", name, node_lines_[it->second]));
      Node node = proto;
      node.name = std::move(name);
      cluster_.nodes.push_back(std::move(node));
      node_lines_.push_back(line.line);
      node_features_.push_back(spec.features.value_or(""));
    }
    return Status::Ok();
  }

  Status partition_line(const ConfLine& line, PartitionSpec& defaults) {
    const std::string& name = line.tokens[0].value;
    const Where where{path_, line.line, "PartitionName=" + name};
    const bool is_default = iequals(name, "DEFAULT");
    PendingPartition p{name, line.line, is_default ? PartitionSpec{} : defaults};
    PartitionSpec& target = is_default ? defaults : p.spec;
    for (std::size_t i = 1; i < line.tokens.size(); ++i)
      if (Status s = target.apply(where, line.tokens[i]); !s.ok()) return s;
    if (is_default) return Status::Ok();
    for (const auto& earlier : partitions_)
      if (earlier.name == name)
        return where.error(fmt::format("partition is already defined at line {}", earlier.line));
    partitions_.push_back(std::move(p));
    return Status::Ok();
  }

  Status nodeset_line(const ConfLine& line) {
    NodeSet set{line.tokens[0].value, line.line, {}, {}};
    for (std::size_t i = 1; i < line.tokens.size(); ++i) {
      if (line.tokens[i].key == "nodes") set.nodes = line.tokens[i].value;
      if (line.tokens[i].key == "feature") set.feature = line.tokens[i].value;
    }
    nodesets_.push_back(std::move(set));
    return Status::Ok();
  }

  Status global_line(const ConfLine& line) {
    PriorityWeights& w = cluster_.priority;
    for (const auto& t : line.tokens) {
      const Where where{path_, line.line, ""};
      const std::pair<const char*, double*> weights[] = {{"priorityweightage", &w.age},
                                                         {"priorityweightfairshare", &w.fairshare},
                                                         {"priorityweightjobsize", &w.job_size},
                                                         {"priorityweightpartition", &w.partition},
                                                         {"priorityweightqos", &w.qos}};
      const std::pair<const char*, Seconds*> durations[] = {{"prioritymaxage", &w.max_age},
                                                            {"prioritydecayhalflife", &w.decay_half_life},
                                                            {"prioritycalcperiod", &w.calc_period}};
      Status s;
      for (const auto& [key, field] : weights) {
        if (t.key != key) continue;
        long long value = 0;
        s = get_int(where, t, 0, 4'294'967'295LL, value);  // Slurm weights are uint32
        *field = static_cast<double>(value);
      }
      for (const auto& [key, field] : durations)
        if (t.key == key) s = get_duration(where, t, *field);
      if (t.key == "priorityfavorsmall") s = get_bool(where, t, w.favor_small);
      if (t.key == "suspendtime") s = get_suspend_time(where, t, cluster_.suspend_time);
      if (t.key == "clustername") cluster_.name = t.value;
      if (t.key == "selecttype") select_type_ = to_lower(t.value);
      if (t.key == "schedulerparameters") s = scheduler_parameters(where, t.value);
      if (t.key == "selecttypeparameters") select_parameters_ = to_lower(t.value);
      if (t.key == "grestypes") {
        gres_types_line_ = line.line;
        gres_types_.clear();
        std::vector<std::string_view> names;
        split_into(t.value, ',', names);
        for (auto n : names) gres_types_.insert(to_lower(trim(n)));
      }
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

  // sched/backfill's bf_interval, bf_resolution and bf_max_job_test, and the main scheduler's batch_sched_delay;
  // the other SchedulerParameters are skipped.
  Status scheduler_parameters(const Where& where, const std::string& value) {
    std::vector<std::string_view> items;
    split_into(value, ',', items);
    BackfillSettings& b = cluster_.backfill;
    for (auto item : items) {
      const std::size_t eq = item.find('=');
      if (eq == std::string_view::npos) continue;
      const std::string key = to_lower(trim(item.substr(0, eq)));
      struct Range {
        const char* name;
        long long least, most;
      };
      const Range ranges[] = {{"bf_interval", 1, 10800},
                              {"bf_resolution", 1, 3600},
                              {"bf_max_job_test", 1, 1'000'000},
                              {"batch_sched_delay", 0, 86400}};
      for (const auto& [name, least, most] : ranges) {
        if (key != name) continue;
        long long v = 0;
        if (!parse_int(trim(item.substr(eq + 1)), v) || v < least || v > most)
          return where.error(fmt::format("SchedulerParameters {}: must be a whole number from {} to {}",
                                         std::string(item), least, most));
        if (key == "bf_interval") b.interval = v;
        if (key == "bf_resolution") b.resolution = v;
        if (key == "bf_max_job_test") b.max_job_test = static_cast<int>(v);
        if (key == "batch_sched_delay") b.batch_sched_delay = v;
      }
    }
    return Status::Ok();
  }

  // Whether select/cons_tres (or cons_res, linear) allocates memory: only with a CR_*Memory parameter, which is
  // also cons_res/cons_tres's default when SelectTypeParameters is absent (slurm.conf(5), 22.05). Under CR_Core the
  // mem= of every job's ReqTRES is recorded but never binds.
  bool memory_consumable() const {
    if (select_parameters_) return select_parameters_->find("memory") != std::string::npos;
    return select_type_.find("linear") == std::string::npos;
  }

  // slurmctld refuses a node whose Gres= names a GRES missing from GresTypes; so does this reader.
  Status check_gres_types() const {
    if (gres_types_line_ == 0) return Status::Ok();
    for (std::size_t i = 0; i < cluster_.nodes.size(); ++i)
      for (const auto& g : cluster_.nodes[i].gres)
        if (gres_types_.count(to_lower(g.name)) == 0)
          return Where{path_, node_lines_[i], "NodeName=" + cluster_.nodes[i].name}.error(
              fmt::format("GRES '{}' is not listed in GresTypes (line {})", g.name, gres_types_line_));
    return Status::Ok();
  }

  Status add_nodeset_members(const NodeSet& set, std::vector<bool>& member) const {
    const Where where{path_, set.line, "NodeSet=" + set.name};
    if (set.nodes) {
      if (iequals(*set.nodes, "ALL")) {
        member.assign(member.size(), true);
      } else {
        auto names = expand_hostlist(*set.nodes);
        if (!names.ok()) return where.error(names.status().message());
        for (const auto& n : *names) {
          auto it = node_index_.find(n);
          if (it == node_index_.end()) return where.error(fmt::format("unknown node '{}'", n));
          member[it->second] = true;
        }
      }
    }
    if (set.feature) {
      for (std::size_t i = 0; i < cluster_.nodes.size(); ++i) {
        std::vector<std::string_view> features;
        split_into(node_features_[i], ',', features);
        for (auto f : features)
          if (trim(f) == *set.feature) member[i] = true;
      }
    }
    return Status::Ok();
  }

  Status resolve_partitions() {
    for (const auto& p : partitions_) {
      const Where where{path_, p.line, "PartitionName=" + p.name};
      if (!p.spec.nodes || trim(*p.spec.nodes).empty())
        return where.error("no Nodes= given (a partition without nodes cannot run jobs)");
      std::vector<bool> member(cluster_.nodes.size(), false);
      auto names = expand_hostlist(*p.spec.nodes);
      if (!names.ok()) return where.error(names.status().message());
      for (const auto& n : *names) {
        if (iequals(n, "ALL")) {
          member.assign(member.size(), true);
          continue;
        }
        if (auto it = node_index_.find(n); it != node_index_.end()) {
          member[it->second] = true;
          continue;
        }
        const NodeSet* set = nullptr;
        for (const auto& s : nodesets_)
          if (s.name == n) set = &s;
        if (set == nullptr) return where.error(fmt::format("unknown node '{}' in Nodes=", n));
        if (Status s = add_nodeset_members(*set, member); !s.ok()) return s;
      }
      Partition partition;
      partition.name = p.name;
      for (std::size_t i = 0; i < member.size(); ++i)  // cluster order, as Slurm's partition bitmaps have it
        if (member[i]) partition.nodes.push_back(static_cast<int>(i));
      partition.is_default = p.spec.is_default.value_or(false);
      partition.max_time = p.spec.max_time.value_or(0);
      partition.priority_job_factor = static_cast<int>(p.spec.job_factor.value_or(1));
      partition.priority_tier = static_cast<int>(p.spec.tier.value_or(1));
      // Slurm lets a later Default=YES replace an earlier one; keep its behaviour so real configs read as they run.
      if (partition.is_default)
        for (auto& earlier : cluster_.partitions) earlier.is_default = false;
      cluster_.partitions.push_back(std::move(partition));
    }
    return Status::Ok();
  }

  Status read_gres_conf(std::vector<std::vector<GresConfEntry>>& per_node) const {
    std::vector<ConfLine> lines;
    if (Status s = read_conf_lines(gres_path_, lines); !s.ok()) return s;
    per_node.assign(cluster_.nodes.size(), {});
    for (const auto& line : lines) {
      std::map<std::string, std::string> keys;
      for (const auto& t : line.tokens) keys[t.key] = t.value;
      const Where where{gres_path_, line.line, line.tokens[0].name + "=" + line.tokens[0].value};
      if (keys.count("name") == 0) {
        // "AutoDetect=nvml", alone or per node, detects devices on the node itself; there is nothing to read here.
        bool only_autodetect = true;
        for (const auto& [key, value] : keys) only_autodetect &= key == "autodetect" || key == "nodename";
        if (only_autodetect) continue;
        return where.error("missing Name= (the GRES name, e.g. Name=gpu)");
      }
      GresConfEntry entry{GresCount{keys["name"], keys.count("type") ? keys["type"] : "", 1}, line.line};
      long long count = -1;
      if (keys.count("count")) {
        if (!parse_int(trim(keys["count"]), count) || count <= 0 || count > 1'000'000)
          return where.error(fmt::format("Count={} is not a whole number between 1 and 1000000", keys["count"]));
      }
      if (keys.count("file")) {
        auto files = expand_hostlist(keys["file"]);  // "/dev/nvidia[0-3]" is a hostlist of four device files
        if (!files.ok()) return where.error(fmt::format("File=: {}", files.status().message()));
        const long long n = static_cast<long long>(files->size());
        if (count >= 0 && count != n)
          return where.error(fmt::format("Count={} but File= lists {} device files", count, n));
        count = n;
      }
      entry.gres.count = count < 0 ? 1 : static_cast<int>(count);  // Slurm's default Count is 1
      if (keys.count("nodename")) {
        auto names = expand_hostlist(keys["nodename"]);
        if (!names.ok()) return where.error(fmt::format("NodeName=: {}", names.status().message()));
        for (const auto& n : *names) {
          auto it = node_index_.find(n);
          if (it == node_index_.end())
            return where.error(fmt::format("unknown node '{}' (not defined in {})", n, path_));
          per_node[it->second].push_back(entry);
        }
      } else {
        // A line without NodeName= is read by every slurmd; it only matters where slurm.conf configures that GRES.
        for (std::size_t i = 0; i < cluster_.nodes.size(); ++i)
          for (const auto& g : cluster_.nodes[i].gres)
            if (g.name == entry.gres.name) {
              per_node[i].push_back(entry);
              break;
            }
      }
    }
    return Status::Ok();
  }

  // gres.conf supplies types that slurm.conf's Gres= leaves out, and must agree with it on counts.
  Status merge_gres_conf() {
    std::vector<std::vector<GresConfEntry>> per_node;
    if (Status s = read_gres_conf(per_node); !s.ok()) return s;
    for (std::size_t i = 0; i < cluster_.nodes.size(); ++i) {
      Node& node = cluster_.nodes[i];
      std::vector<std::string> names;  // GRES names in first-seen order
      for (const auto& e : per_node[i])
        if (std::find(names.begin(), names.end(), e.gres.name) == names.end()) names.push_back(e.gres.name);
      for (const auto& name : names) {
        std::vector<GresCount> from_gres_conf;  // aggregated by type, in gres.conf order
        int first_line = 0, gres_total = 0;
        for (const auto& e : per_node[i]) {
          if (e.gres.name != name) continue;
          if (first_line == 0) first_line = e.line;
          gres_total += e.gres.count;
          auto it = std::find_if(from_gres_conf.begin(), from_gres_conf.end(),
                                 [&](const GresCount& g) { return g.type == e.gres.type; });
          if (it == from_gres_conf.end())
            from_gres_conf.push_back(e.gres);
          else
            it->count += e.gres.count;
        }
        int conf_total = 0;
        bool conf_typed = true;
        std::string conf_text;
        for (const auto& g : node.gres) {
          if (g.name != name) continue;
          conf_total += g.count;
          conf_typed &= !g.type.empty();
          conf_text += fmt::format("{}{}{}{}:{}", conf_text.empty() ? "" : ",", g.name, g.type.empty() ? "" : ":",
                                   g.type, g.count);
        }
        const Where where{gres_path_, first_line, "node '" + node.name + "'"};
        if (conf_total != gres_total) {
          return where.error(fmt::format("gres.conf has {} {} but {}:{} gives Gres={} (counts must agree)", gres_total,
                                         name, path_, node_lines_[i], conf_text.empty() ? "(none)" : conf_text));
        }
        const bool gres_typed = std::all_of(from_gres_conf.begin(), from_gres_conf.end(),
                                            [](const GresCount& g) { return !g.type.empty(); });
        if (!gres_typed) continue;  // an untyped gres.conf line cannot say more than slurm.conf does
        for (const auto& g : node.gres) {
          if (g.name != name || g.type.empty()) continue;
          auto it = std::find_if(from_gres_conf.begin(), from_gres_conf.end(),
                                 [&](const GresCount& c) { return c.type == g.type; });
          if (it == from_gres_conf.end() || it->count != g.count)
            return where.error(fmt::format("gres.conf has {} {}:{} but {}:{} gives Gres={} (types must agree)",
                                           it == from_gres_conf.end() ? 0 : it->count, name, g.type, path_,
                                           node_lines_[i], conf_text));
        }
        if (conf_typed) continue;
        // slurm.conf said "gpu:8": take the types from gres.conf, in place of slurm.conf's entries for this name.
        auto first =
            std::find_if(node.gres.begin(), node.gres.end(), [&](const GresCount& g) { return g.name == name; });
        const auto position = first - node.gres.begin();
        node.gres.erase(
            std::remove_if(node.gres.begin(), node.gres.end(), [&](const GresCount& g) { return g.name == name; }),
            node.gres.end());
        node.gres.insert(node.gres.begin() + position, from_gres_conf.begin(), from_gres_conf.end());
      }
    }
    return Status::Ok();
  }

  const std::string& path_;
  const std::string& gres_path_;
  Cluster cluster_;
  std::unordered_map<std::string, int> node_index_;
  std::vector<int> node_lines_;  // slurm.conf line of each node, for messages
  std::vector<std::string> node_features_;
  std::vector<PendingPartition> partitions_;
  std::vector<NodeSet> nodesets_;
  std::set<std::string> gres_types_;
  int gres_types_line_ = 0;
  std::string select_type_;                       // lower case; empty: Slurm's default (select/cons_tres)
  std::optional<std::string> select_parameters_;  // lower case, as written
};

}  // namespace

Result<Cluster> read_slurm_conf(const std::string& slurm_conf, const std::string& gres_conf,
                                const std::string& speeds_yaml) {
  auto cluster = SlurmConfReader(slurm_conf, gres_conf).read();
  if (!cluster.ok() || speeds_yaml.empty()) return cluster;
  if (Status s = apply_speeds_yaml(speeds_yaml, *cluster); !s.ok()) return s;
  if (Status v = validate(*cluster); !v.ok())
    return Status::InvalidInput(fmt::format("{}: {}", speeds_yaml, v.message()));
  return cluster;
}

Result<Cluster> read_cluster(const std::string& path) {
  const std::string extension = to_lower(std::filesystem::path(path).extension().string());
  if (extension == ".yaml" || extension == ".yml") return read_cluster_yaml(path);
  const std::filesystem::path gres_conf = std::filesystem::path(path).parent_path() / "gres.conf";
  std::error_code ec;
  return read_slurm_conf(path, std::filesystem::is_regular_file(gres_conf, ec) ? gres_conf.string() : std::string());
}

}  // namespace rlsched::io
