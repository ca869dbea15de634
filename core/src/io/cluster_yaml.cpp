// rlsched cluster YAML (docs/cluster-yaml.md). Every value is checked here, with the file:line and key path of the
// offending key, before rlsched::validate() sees the cluster: validate() can only name nodes and partitions, not lines.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "config/speed_schema.h"
#include "config/yaml_checks.h"
#include "io/cluster_common.h"
#include "io/line_source.h"
#include "rlsched/io/cluster_readers.h"
#include "text/duration.h"

namespace rlsched::io {

namespace {

using Keys = std::vector<std::string_view>;

const Keys kTopKeys = {"cluster", "accelerator_types", "nodes", "partitions", "qos", "priority", "suspend_time"};
const Keys kTypeKeys = {"name", "gres", "speed", "class_speed"};
const Keys kNodeKeys = {"name", "cpus", "mem_mb", "memory", "gres"};
const Keys kPartitionKeys = {"name", "nodes", "default", "max_time", "priority_job_factor", "priority_tier"};
const Keys kQosKeys = {"name", "priority"};
const Keys kPriorityKeys = {"weights", "max_age", "decay_half_life", "calc_period", "favor_small"};
const Keys kWeightKeys = {"age", "fairshare", "job_size", "partition", "qos", "site"};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// " (did you mean 'cpus'?)" for the closest allowed key within two edits, else "".
std::string suggestion(std::string_view key, const Keys& allowed) {
  const std::string lower = to_lower(key);
  std::size_t best = 3;
  std::string_view best_key;
  for (std::string_view candidate : allowed) {
    const std::size_t d = edit_distance(lower, candidate);
    if (d < best && d < candidate.size()) {
      best = d;
      best_key = candidate;
    }
  }
  return best_key.empty() ? std::string() : fmt::format(" (did you mean '{}'?)", best_key);
}

// Dotted key paths are spelt as rlsched.yaml's errors spell them.
std::string join_path(const std::string& parent, std::string_view key) {
  return config::YamlChecks::path(parent, key);
}

std::string index_path(const std::string& parent, std::size_t i) {
  return fmt::format("{}[{}]", parent, i);
}

// An accelerator type as written, with where it was written, for duplicate and speeds-file messages.
struct TypeEntry {
  AcceleratorType type;
  bool gres_given = false;
  YAML::Node at;
  std::string where;
};

class YamlReader {
 public:
  explicit YamlReader(const std::string& path) : path_(path) {}

  Status load(YAML::Node& root) const {
    std::ifstream in(path_);
    if (!in) return Status::NotFound(fmt::format("{}: cannot open: {}", path_, std::strerror(errno)));
    try {
      root = YAML::Load(in);
    } catch (const YAML::ParserException& e) {
      return Status::InvalidInput(fmt::format("{}:{}: YAML syntax error: {}", path_, e.mark.line + 1, e.msg));
    }
    if (!root.IsMap()) return fail(root, "", "expected a mapping with 'nodes' and 'partitions' at top level");
    return check_keys(root, "", kTopKeys);
  }

  Result<Cluster> read_cluster(const YAML::Node& root) const {
    Cluster cluster;
    Status s;
    if (auto v = root["cluster"]; v.IsDefined() && !(s = get_string(v, "cluster", cluster.name)).ok()) return s;
    std::vector<TypeEntry> types;
    if (auto v = root["accelerator_types"]; v.IsDefined()) {
      if (!(s = read_types(v, types)).ok()) return s;
      for (auto& t : types) cluster.accelerator_types.push_back(std::move(t.type));
    }
    std::unordered_map<std::string, int> node_index;
    YAML::Node nodes, partitions;
    if (!(s = need(root, "nodes", "", nodes)).ok() || !(s = read_nodes(nodes, node_index, cluster)).ok()) return s;
    if (!(s = need(root, "partitions", "", partitions)).ok() ||
        !(s = read_partitions(partitions, node_index, cluster)).ok())
      return s;
    if (auto v = root["qos"]; v.IsDefined() && !(s = read_qos(v, cluster)).ok()) return s;
    if (auto v = root["priority"]; v.IsDefined() && !(s = read_priority(v, cluster.priority)).ok()) return s;
    if (auto v = root["suspend_time"]; v.IsDefined() && !(s = read_suspend_time(v, cluster.suspend_time)).ok())
      return s;
    add_implicit_types(cluster);
    if (Status v = validate(cluster); !v.ok()) return Status::InvalidInput(fmt::format("{}: {}", path_, v.message()));
    return cluster;
  }

  Status read_types(const YAML::Node& seq, std::vector<TypeEntry>& out) const {
    if (!seq.IsSequence()) return fail(seq, "accelerator_types", "expected a list of types");
    for (std::size_t i = 0; i < seq.size(); ++i) {
      const YAML::Node item = seq[i];
      const std::string where = index_path("accelerator_types", i);
      TypeEntry entry;
      entry.at = item;
      entry.where = where;
      AcceleratorType& t = entry.type;
      t.gres = "gpu";
      Status s = check_keys(item, where, kTypeKeys);
      if (s.ok()) s = need_string(item, "name", where, t.name);
      if (s.ok() && item["gres"].IsDefined()) {
        entry.gres_given = true;
        s = get_string(item["gres"], join_path(where, "gres"), t.gres);
      }
      if (s.ok() && item["speed"].IsDefined()) s = get_speed(item["speed"], join_path(where, "speed"), t.speed);
      if (s.ok() && item["class_speed"].IsDefined())
        s = check(config::read_speed_map(item["class_speed"], join_path(where, "class_speed"), t.class_speed));
      if (!s.ok()) return s;
      for (const auto& earlier : out)
        if (earlier.type.name == t.name && earlier.type.gres == t.gres)
          return fail(item, where,
                      fmt::format("accelerator type '{}' of GRES '{}' is already defined at line {}", t.name, t.gres,
                                  line(earlier.at)));
      out.push_back(std::move(entry));
    }
    return Status::Ok();
  }

  Status fail(const YAML::Node& at, const std::string& where, const std::string& what) const {
    return config::yaml_error(path_, at.IsDefined() ? at.Mark() : YAML::Mark::null_mark(),
                              where.empty() ? what : fmt::format("{}: {}", where, what));
  }

 private:
  static int line(const YAML::Node& n) { return n.IsDefined() ? n.Mark().line + 1 : 0; }

  // Rejects keys the format does not have: a misspelt key silently taking its default is the worst failure here.
  Status check_keys(const YAML::Node& map, const std::string& where, const Keys& allowed) const {
    if (!map.IsMap()) return fail(map, where, "expected a mapping of keys");
    std::set<std::string> seen;
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) return fail(kv.first, where, "keys must be plain strings");
      const std::string& key = kv.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        return fail(kv.first, "",
                    fmt::format("unknown key '{}' {}{}", key, where.empty() ? "at top level" : "in " + where,
                                suggestion(key, allowed)));
      }
      if (!seen.insert(key).second) return fail(kv.first, where, fmt::format("duplicate key '{}'", key));
    }
    return Status::Ok();
  }

  // Looks up a key that must be present; its absence is reported at the enclosing mapping.
  Status need(const YAML::Node& map, const char* key, const std::string& where, YAML::Node& out) const {
    const YAML::Node v = map[key];  // a missing key gives an invalid node that cannot even be assigned
    if (!v.IsDefined()) return fail(map, where, fmt::format("missing required key '{}'", key));
    out.reset(v);
    return Status::Ok();
  }

  // need() + get_string() for the many required names.
  Status need_string(const YAML::Node& map, const char* key, const std::string& where, std::string& out) const {
    YAML::Node v;
    if (Status s = need(map, key, where, v); !s.ok()) return s;
    return get_string(v, join_path(where, key), out);
  }

  Status get_string(const YAML::Node& v, const std::string& where, std::string& out) const {
    if (!v.IsScalar() || v.Scalar().empty()) return fail(v, where, "expected a non-empty string");
    out = v.Scalar();
    return Status::Ok();
  }

  Status get_int(const YAML::Node& v, const std::string& where, long long lo, long long hi, long long& out) const {
    if (!v.IsScalar() || !parse_int(v.Scalar(), out))
      return fail(v, where, fmt::format("expected a whole number (got '{}')", v.IsScalar() ? v.Scalar() : ""));
    if (out < lo || out > hi) return fail(v, where, fmt::format("must be between {} and {} (got {})", lo, hi, out));
    return Status::Ok();
  }

  Status get_double(const YAML::Node& v, const std::string& where, double& out) const {
    if (!v.IsScalar() || !parse_double(v.Scalar(), out))
      return fail(v, where, fmt::format("expected a number (got '{}')", v.IsScalar() ? v.Scalar() : ""));
    return Status::Ok();
  }

  Status get_speed(const YAML::Node& v, const std::string& where, double& out) const {
    return check(config::read_speed(v, where, out));
  }

  Status check(const std::optional<config::SpeedProblem>& problem) const {
    return problem ? fail(problem->at, problem->key, problem->what) : Status::Ok();
  }

  Status get_bool(const YAML::Node& v, const std::string& where, bool& out) const {
    if (!v.IsScalar() || !parse_bool(v.Scalar(), out))
      return fail(v, where, fmt::format("expected true or false (got '{}')", v.IsScalar() ? v.Scalar() : ""));
    return Status::Ok();
  }

  // The duration grammar of text/duration.h; a bare number is seconds (unlike slurm.conf, where it is minutes).
  Status get_duration(const YAML::Node& v, const std::string& where, Seconds& out) const {
    if (!v.IsScalar()) return fail(v, where, "expected seconds or a Slurm time like 2-00:00:00");
    long long seconds = 0;
    if (parse_int(v.Scalar(), seconds) && seconds < 0)
      return fail(v, where, fmt::format("must be >= 0 (got {})", seconds));
    auto parsed = text::parse_duration(v.Scalar(), {/*bare_unit=*/1, /*infinite=*/true});
    if (!parsed.ok())
      return fail(v, where,
                  fmt::format("bad duration '{}': {} (expected seconds, 90s, 30m, 2h, 1d, a Slurm time like "
                              "2-00:00:00, or INFINITE)",
                              v.Scalar(), parsed.status().message()));
    out = *parsed;
    return Status::Ok();
  }

  // "512000" (MiB), or a number with a binary unit: "512G", "500000M", "2T", "1.5TiB".
  Status get_memory(const YAML::Node& v, const std::string& where, std::int64_t& out) const {
    const auto bad = [&] {
      return fail(v, where,
                  fmt::format("expected a size like 512G, 500000M or 2T (got '{}')", v.IsScalar() ? v.Scalar() : ""));
    };
    if (!v.IsScalar()) return bad();
    std::string_view text = trim(v.Scalar());
    std::string unit;
    while (!text.empty() && std::isalpha(static_cast<unsigned char>(text.back()))) {
      unit.insert(unit.begin(), static_cast<char>(std::toupper(static_cast<unsigned char>(text.back()))));
      text.remove_suffix(1);
    }
    double value = 0;
    if (!parse_double(trim(text), value) || value < 0) return bad();
    // Slurm counts memory in MiB, so every unit is binary and "GB", "GiB" and "G" are the same.
    if (!unit.empty() && unit.back() == 'B') unit.pop_back();
    if (unit.size() == 2 && unit.back() == 'I') unit.pop_back();
    double mib = 0;
    if (unit.empty() || unit == "M")
      mib = value;
    else if (unit == "G")
      mib = value * 1024;
    else if (unit == "T")
      mib = value * 1024 * 1024;
    else
      return bad();
    if (mib > 1e15) return bad();
    out = static_cast<std::int64_t>(std::llround(mib));
    return Status::Ok();
  }

  Status read_gres(const YAML::Node& v, const std::string& where, std::vector<GresCount>& out) const {
    std::vector<std::pair<std::string, YAML::Node>> specs;  // accepts a list or one Slurm-style comma list
    if (v.IsScalar()) {
      for (auto item : split_gres_list(v.Scalar())) specs.emplace_back(std::string(item), v);
    } else if (v.IsSequence()) {
      for (const auto& item : v) {
        if (!item.IsScalar()) return fail(item, where, "expected a GRES string like gpu:h200:8");
        specs.emplace_back(item.Scalar(), item);
      }
    } else if (!v.IsNull()) {
      return fail(v, where, "expected a list of GRES strings like [\"gpu:h200:8\"]");
    }
    for (const auto& [spec, at] : specs) {
      GresCount g;
      std::string error;
      if (!parse_gres_spec(spec, g, error)) return fail(at, where, error);
      for (const auto& earlier : out)
        if (earlier.name == g.name && earlier.type == g.type)
          return fail(at, where, fmt::format("GRES '{}' is given twice", spec));
      out.push_back(std::move(g));
    }
    return Status::Ok();
  }

  Status read_nodes(const YAML::Node& seq, std::unordered_map<std::string, int>& index, Cluster& cluster) const {
    if (!seq.IsSequence() || seq.size() == 0) return fail(seq, "nodes", "expected a non-empty list of nodes");
    std::vector<int> defined_at;  // line of each node's definition, for duplicate messages
    for (std::size_t i = 0; i < seq.size(); ++i) {
      const YAML::Node item = seq[i];
      const std::string where = index_path("nodes", i);
      Status s = check_keys(item, where, kNodeKeys);
      std::string hostlist;
      if (s.ok()) s = need_string(item, "name", where, hostlist);
      if (!s.ok()) return s;
      Node proto;
      if (auto v = item["cpus"]; v.IsDefined()) {
        long long cpus = 0;
        if (!(s = get_int(v, join_path(where, "cpus"), 1, 1'000'000, cpus)).ok()) return s;
        proto.cpus = static_cast<int>(cpus);
      }
      if (item["mem_mb"].IsDefined() && item["memory"].IsDefined())
        return fail(item["memory"], where, "give either mem_mb or memory, not both");
      if (auto v = item["mem_mb"]; v.IsDefined()) {
        long long mem = 0;
        if (!(s = get_int(v, join_path(where, "mem_mb"), 0, std::int64_t{1} << 50, mem)).ok()) return s;
        proto.mem_mb = mem;
      }
      if (auto v = item["memory"]; v.IsDefined() && !(s = get_memory(v, join_path(where, "memory"), proto.mem_mb)).ok())
        return s;
      if (auto v = item["gres"]; v.IsDefined() && !(s = read_gres(v, join_path(where, "gres"), proto.gres)).ok())
        return s;
      const YAML::Node name_node = item["name"];
      auto names = expand_hostlist(hostlist);
      if (!names.ok()) return fail(name_node, join_path(where, "name"), names.status().message());
      for (auto& name : *names) {
        auto [it, inserted] = index.emplace(name, static_cast<int>(cluster.nodes.size()));
        if (!inserted)
          return fail(name_node, join_path(where, "name"),
                      fmt::format("node '{}' is already defined at line {}", name, defined_at[it->second]));
        Node node = proto;
        node.name = std::move(name);
        cluster.nodes.push_back(std::move(node));
        defined_at.push_back(line(name_node));
      }
    }
    return Status::Ok();
  }

  Status read_partition_nodes(const YAML::Node& v, const std::string& where,
                              const std::unordered_map<std::string, int>& index, const Cluster& cluster,
                              std::vector<int>& out) const {
    std::vector<YAML::Node> hostlists;  // accepts one hostlist or a list of them
    if (v.IsSequence())
      for (const auto& item : v) hostlists.push_back(item);
    else
      hostlists.push_back(v);
    std::vector<bool> member(cluster.nodes.size(), false);
    for (const auto& h : hostlists) {
      if (!h.IsScalar() || h.Scalar().empty()) return fail(h, where, "expected a hostlist like \"h200-[1-4]\" or ALL");
      if (iequals(h.Scalar(), "ALL")) {
        member.assign(member.size(), true);
        continue;
      }
      auto names = expand_hostlist(h.Scalar());
      if (!names.ok()) return fail(h, where, names.status().message());
      for (const auto& name : *names) {
        auto it = index.find(name);
        if (it == index.end()) return fail(h, where, fmt::format("unknown node '{}'", name));
        member[it->second] = true;
      }
    }
    // Cluster order, as Slurm's partition bitmaps have it; a node listed twice is simply in the partition.
    out.clear();
    for (std::size_t i = 0; i < member.size(); ++i)
      if (member[i]) out.push_back(static_cast<int>(i));
    return Status::Ok();
  }

  Status read_partitions(const YAML::Node& seq, const std::unordered_map<std::string, int>& index,
                         Cluster& cluster) const {
    if (!seq.IsSequence() || seq.size() == 0) return fail(seq, "partitions", "expected a non-empty list of partitions");
    std::map<std::string, int> defined_at;
    int default_line = 0;
    for (std::size_t i = 0; i < seq.size(); ++i) {
      const YAML::Node item = seq[i];
      const std::string where = index_path("partitions", i);
      Partition p;
      Status s = check_keys(item, where, kPartitionKeys);
      if (s.ok()) s = need_string(item, "name", where, p.name);
      YAML::Node nodes;
      if (s.ok()) s = need(item, "nodes", where, nodes);
      if (s.ok()) s = read_partition_nodes(nodes, join_path(where, "nodes"), index, cluster, p.nodes);
      if (!s.ok()) return s;
      if (auto [it, inserted] = defined_at.emplace(p.name, line(item)); !inserted)
        return fail(item["name"], join_path(where, "name"),
                    fmt::format("partition '{}' is already defined at line {}", p.name, it->second));
      if (auto v = item["default"]; v.IsDefined()) {
        if (!(s = get_bool(v, join_path(where, "default"), p.is_default)).ok()) return s;
        if (p.is_default && default_line > 0)
          return fail(v, join_path(where, "default"),
                      fmt::format("a default partition is already set at line {}", default_line));
        if (p.is_default) default_line = line(v);
      }
      if (auto v = item["max_time"];
          v.IsDefined() && !(s = get_duration(v, join_path(where, "max_time"), p.max_time)).ok())
        return s;
      long long value = 0;
      if (auto v = item["priority_job_factor"]; v.IsDefined()) {
        if (!(s = get_int(v, join_path(where, "priority_job_factor"), 0, kMaxPartitionPriority, value)).ok()) return s;
        p.priority_job_factor = static_cast<int>(value);
      }
      if (auto v = item["priority_tier"]; v.IsDefined()) {
        if (!(s = get_int(v, join_path(where, "priority_tier"), 0, kMaxPartitionPriority, value)).ok()) return s;
        p.priority_tier = static_cast<int>(value);
      }
      cluster.partitions.push_back(std::move(p));
    }
    return Status::Ok();
  }

  Status read_qos(const YAML::Node& seq, Cluster& cluster) const {
    if (!seq.IsSequence()) return fail(seq, "qos", "expected a list of {name, priority}");
    for (std::size_t i = 0; i < seq.size(); ++i) {
      const YAML::Node item = seq[i];
      const std::string where = index_path("qos", i);
      Qos q;
      Status s = check_keys(item, where, kQosKeys);
      if (s.ok()) s = need_string(item, "name", where, q.name);
      long long priority = 0;
      if (s.ok() && item["priority"].IsDefined())
        s = get_int(item["priority"], join_path(where, "priority"), 0, 4'294'967'295LL, priority);
      if (!s.ok()) return s;
      for (const auto& earlier : cluster.qos)
        if (earlier.name == q.name) return fail(item, where, fmt::format("QOS '{}' is defined twice", q.name));
      q.priority = static_cast<int>(std::min<long long>(priority, std::numeric_limits<int>::max()));
      cluster.qos.push_back(std::move(q));
    }
    return Status::Ok();
  }

  // slurm.conf SuspendTime: a duration, or NONE / INFINITE for never (as when absent).
  Status read_suspend_time(const YAML::Node& v, Seconds& out) const {
    std::string text = v.IsScalar() ? v.Scalar() : std::string();
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (text == "none" || text == "infinite") {
      out = -1;
      return Status::Ok();
    }
    return get_duration(v, "suspend_time", out);
  }

  Status read_priority(const YAML::Node& map, PriorityWeights& w) const {
    Status s = check_keys(map, "priority", kPriorityKeys);
    if (!s.ok()) return s;
    if (auto weights = map["weights"]; weights.IsDefined()) {
      if (!(s = check_keys(weights, "priority.weights", kWeightKeys)).ok()) return s;
      const std::pair<const char*, double*> fields[] = {{"age", &w.age},           {"fairshare", &w.fairshare},
                                                        {"job_size", &w.job_size}, {"partition", &w.partition},
                                                        {"qos", &w.qos},           {"site", &w.site}};
      for (const auto& [key, field] : fields) {
        const YAML::Node v = weights[key];
        if (!v.IsDefined()) continue;
        const std::string where = join_path("priority.weights", key);
        if (!(s = get_double(v, where, *field)).ok()) return s;
        if (*field < 0) return fail(v, where, fmt::format("weight must be >= 0 (got {})", v.Scalar()));
      }
    }
    const std::pair<const char*, Seconds*> durations[] = {
        {"max_age", &w.max_age}, {"decay_half_life", &w.decay_half_life}, {"calc_period", &w.calc_period}};
    for (const auto& [key, field] : durations) {
      const YAML::Node v = map[key];
      if (!v.IsDefined()) continue;
      if (!(s = get_duration(v, join_path("priority", key), *field)).ok()) return s;
      // The age factor divides by max_age and the decay thread sleeps calc_period: zero makes no sense for either.
      if (*field == 0 && std::string_view(key) != "decay_half_life")
        return fail(v, join_path("priority", key), "must be > 0");
    }
    if (auto v = map["favor_small"]; v.IsDefined() && !(s = get_bool(v, "priority.favor_small", w.favor_small)).ok())
      return s;
    return Status::Ok();
  }

  const std::string& path_;
};

Status unexpected(const std::string& path, const YAML::Exception& e) {
  if (e.mark.is_null()) return Status::InvalidInput(fmt::format("{}: {}", path, e.msg));
  return Status::InvalidInput(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
}

}  // namespace

Result<Cluster> read_cluster_yaml(const std::string& path) {
  YamlReader reader(path);
  try {
    YAML::Node root;
    if (Status s = reader.load(root); !s.ok()) return s;
    return reader.read_cluster(root);
  } catch (const YAML::Exception& e) {  // a yaml-cpp surprise must still name the file, never escape
    return unexpected(path, e);
  }
}

Status apply_speeds_yaml(const std::string& path, Cluster& cluster) {
  YamlReader reader(path);
  try {
    YAML::Node loaded;
    if (Status s = reader.load(loaded); !s.ok()) return s;
    const YAML::Node& root = loaded;
    const YAML::Node seq = root["accelerator_types"];
    if (!seq.IsDefined()) return reader.fail(root, "", "missing required key 'accelerator_types'");
    std::vector<TypeEntry> entries;
    if (Status s = reader.read_types(seq, entries); !s.ok()) return s;
    for (const auto& entry : entries) {
      // Without an explicit gres, match the type by name alone: "910b" is unambiguous even though the default
      // GRES name "gpu" would not find it.
      std::vector<AcceleratorType*> matches;
      for (auto& t : cluster.accelerator_types)
        if (t.name == entry.type.name && (!entry.gres_given || t.gres == entry.type.gres)) matches.push_back(&t);
      if (matches.size() > 1)
        return reader.fail(entry.at, entry.where,
                           fmt::format("type '{}' exists for several GRES names; add 'gres:'", entry.type.name));
      if (matches.empty()) {
        std::string known;
        for (const auto& t : cluster.accelerator_types)
          known += fmt::format("{}{}:{}", known.empty() ? "" : ", ", t.gres, t.name);
        return reader.fail(entry.at, entry.where,
                           fmt::format("the cluster has no accelerator type '{}:{}' (it has: {})", entry.type.gres,
                                       entry.type.name, known.empty() ? "none" : known));
      }
      matches[0]->speed = entry.type.speed;
      matches[0]->class_speed = entry.type.class_speed;
    }
    return Status::Ok();
  } catch (const YAML::Exception& e) {
    return unexpected(path, e);
  }
}

}  // namespace rlsched::io
