#include "rlsched/io/workload_writers.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "text/text.h"

namespace rlsched::io {
namespace {

// "u12" -> 12 when the name is the prefix and digits only (how read_swf names them), else -1.
long long numbered(const std::string& name, char prefix) {
  if (name.size() < 2 || name[0] != prefix || !text::all_digits(std::string_view(name).substr(1)) || name.size() > 12)
    return -1;
  return std::stoll(name.substr(1));
}

// Numbers for names read_swf cannot turn back ("alice"): the next free number, in order of appearance.
class Numbering {
 public:
  explicit Numbering(char prefix) : prefix_(prefix) {}
  long long of(const std::string& name) {
    if (name.empty()) return -1;
    if (const long long n = numbered(name, prefix_); n >= 0) return n;
    auto [it, added] = assigned_.try_emplace(name, next_);
    if (added) ++next_;
    return it->second;
  }
  void reserve(const std::string& name) { next_ = std::max(next_, numbered(name, prefix_) + 1); }

 private:
  char prefix_;
  long long next_ = 0;
  std::map<std::string, long long> assigned_;
};

Status open_for_writing(const std::string& path, std::ofstream& out) {
  out.open(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IoError(fmt::format("{}: cannot write ({})", path, std::strerror(errno)));
  return Status::Ok();
}

Status finish(const std::string& path, std::ofstream& out) {
  out.flush();
  if (!out) return Status::IoError(fmt::format("{}: write failed ({})", path, std::strerror(errno)));
  return Status::Ok();
}

// A YAML double-quoted scalar.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Node names as Slurm hostlists: runs of "prefixN" with consecutive unpadded N become "prefix[a-b]".
std::string hostlist(const std::vector<std::string>& names) {
  std::string out;
  std::size_t i = 0;
  const auto split = [](const std::string& name, std::string& prefix, long long& number) {
    std::size_t d = name.size();
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9') --d;
    prefix = name.substr(0, d);
    const std::string digits = name.substr(d);
    if (digits.empty() || digits.size() > 15 || (digits.size() > 1 && digits[0] == '0')) return false;
    number = std::stoll(digits);
    return true;
  };
  while (i < names.size()) {
    std::string prefix, next_prefix;
    long long first = 0, number = 0;
    std::size_t j = i + 1;
    if (split(names[i], prefix, first)) {
      while (j < names.size() && split(names[j], next_prefix, number) && next_prefix == prefix &&
             number == first + static_cast<long long>(j - i))
        ++j;
    }
    if (!out.empty()) out += ',';
    if (j - i == 1)
      out += names[i];
    else
      out += fmt::format("{}[{}-{}]", prefix, first, first + static_cast<long long>(j - i) - 1);
    i = j;
  }
  return out;
}

}  // namespace

Status write_swf(const std::vector<Job>& jobs, const Cluster& cluster, const std::string& path, Seconds unix_start,
                 const std::string& note) {
  for (const Job& j : jobs)
    if (j.accel.count > 0)
      return Status::InvalidInput(fmt::format("{}: job {} asks for accelerators, which SWF cannot hold", path, j.id));
  std::ofstream out;
  if (Status s = open_for_writing(path, out); !s.ok()) return s;
  Seconds longest = 0;
  for (const Job& j : jobs) {
    if (j.submit < 0) return Status::InvalidInput(fmt::format("{}: job {} has a negative submit time", path, j.id));
    longest = std::max(longest, j.run_time);
  }
  const int nodes = static_cast<int>(cluster.nodes.size());
  out << fmt::format(
      "; Version: 2.2\n; Computer: {}\n; MaxJobs: {}\n; MaxRecords: {}\n; MaxNodes: {}\n; MaxProcs: {}\n", cluster.name,
      jobs.size(), jobs.size(), nodes, cluster.total_cpus());
  out << fmt::format("; MaxRuntime: {}\n", longest);
  if (unix_start > 0) out << fmt::format("; UnixStartTime: {}\n; TimeZoneString: UTC\n", unix_start);
  if (!note.empty()) out << fmt::format("; Note: {}\n", note);
  Numbering users('u'), groups('g');
  for (const Job& j : jobs) {
    users.reserve(j.user);
    groups.reserve(j.account);
  }
  for (const Job& j : jobs) {
    const int status = j.time_limit > 0 && j.run_time >= j.time_limit ? 0 : 1;
    // id submit wait run alloc_procs avg_cpu used_mem req_procs req_time req_mem status user group exe queue
    // partition preceding think
    out << fmt::format("{} {} -1 {} {} -1 -1 {} {} -1 {} {} {} -1 {} -1 -1 -1\n", j.id, j.submit, j.run_time, j.cpus,
                       j.cpus, j.time_limit > 0 ? j.time_limit : -1, status, users.of(j.user), groups.of(j.account),
                       j.priority_tier > 0 ? j.priority_tier : -1);
  }
  return finish(path, out);
}

Status write_sacct(const std::vector<Job>& jobs, const std::string& path, Seconds epoch) {
  std::ofstream out;
  if (Status s = open_for_writing(path, out); !s.ok()) return s;
  out << "JobIDRaw|JobName|User|Account|Partition|QOS|Submit|Start|End|Elapsed|TimelimitRaw|ReqTRES|AllocTRES|NNodes|"
         "NCPUS|State\n";
  for (const Job& j : jobs) {
    const Seconds submit = epoch + j.submit, run = std::max<Seconds>(j.run_time, 0);
    std::string partitions;
    for (const std::string& p : j.partitions) partitions += (partitions.empty() ? "" : ",") + p;
    const int nodes = std::max(j.nodes, 1);
    std::string req = fmt::format("billing={},cpu={}", j.cpus, j.cpus);
    std::string alloc = req;
    if (j.accel.count > 0) {
      req += fmt::format(",gres/{}={}", j.accel.name, j.accel.count);
      for (const std::string& t : j.accel.types) req += fmt::format(",gres/{}:{}={}", j.accel.name, t, j.accel.count);
      alloc += fmt::format(",gres/{}={}", j.accel.name, j.accel.count);
      if (!j.ran_on_type.empty()) alloc += fmt::format(",gres/{}:{}={}", j.accel.name, j.ran_on_type, j.accel.count);
    }
    if (j.mem_mb > 0) req += fmt::format(",mem={}M", j.mem_mb * nodes);
    req += fmt::format(",node={}", nodes);
    alloc += fmt::format(",node={}", nodes);
    const Seconds minutes = (j.time_limit + 59) / 60;
    const bool killed = j.time_limit > 0 && run >= j.time_limit;
    out << fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}-{:02}:{:02}:{:02}|{}|{}|{}|{}|{}|{}\n", j.id, j.job_class, j.user,
                       j.account, partitions, j.qos, text::utc_iso8601(submit), text::utc_iso8601(submit),
                       text::utc_iso8601(submit + run), run / 86400, run % 86400 / 3600, run % 3600 / 60, run % 60,
                       j.time_limit > 0 ? fmt::format("{}", minutes) : std::string("UNLIMITED"), req, alloc, nodes,
                       j.cpus, killed ? "TIMEOUT" : "COMPLETED");
  }
  return finish(path, out);
}

Status write_cluster_yaml(const Cluster& cluster, const std::string& path) {
  std::ofstream out;
  if (Status s = open_for_writing(path, out); !s.ok()) return s;
  out << fmt::format("cluster: {}\n", quoted(cluster.name));
  if (!cluster.accelerator_types.empty()) {
    out << "accelerator_types:\n";
    for (const AcceleratorType& t : cluster.accelerator_types) {
      out << fmt::format("  - name: {}\n    gres: {}\n    speed: {}\n", quoted(t.name), quoted(t.gres), t.speed);
      if (t.class_speed.empty()) continue;
      out << "    class_speed:\n";
      for (const auto& [job_class, speed] : t.class_speed)
        out << fmt::format("      {}: {}\n", quoted(job_class), speed);
    }
  }
  out << "nodes:\n";
  // Consecutive nodes of one shape form one entry.
  for (std::size_t i = 0; i < cluster.nodes.size();) {
    const Node& n = cluster.nodes[i];
    const auto same_shape = [&](const Node& o) {
      if (o.cpus != n.cpus || o.mem_mb != n.mem_mb || o.gres.size() != n.gres.size()) return false;
      for (std::size_t g = 0; g < o.gres.size(); ++g)
        if (o.gres[g].name != n.gres[g].name || o.gres[g].type != n.gres[g].type || o.gres[g].count != n.gres[g].count)
          return false;
      return true;
    };
    std::vector<std::string> names;
    std::size_t j = i;
    for (; j < cluster.nodes.size() && same_shape(cluster.nodes[j]); ++j) names.push_back(cluster.nodes[j].name);
    out << fmt::format("  - name: {}\n    cpus: {}\n", quoted(hostlist(names)), n.cpus);
    if (n.mem_mb > 0) out << fmt::format("    mem_mb: {}\n", n.mem_mb);
    if (!n.gres.empty()) {
      std::string gres;
      for (const GresCount& g : n.gres)
        gres += fmt::format("{}{}", gres.empty() ? "" : ", ",
                            quoted(g.type.empty() ? fmt::format("{}:{}", g.name, g.count)
                                                  : fmt::format("{}:{}:{}", g.name, g.type, g.count)));
      out << fmt::format("    gres: [{}]\n", gres);
    }
    i = j;
  }
  out << "partitions:\n";
  for (const Partition& p : cluster.partitions) {
    std::vector<std::string> names;
    for (int n : p.nodes) names.push_back(cluster.nodes[static_cast<std::size_t>(n)].name);
    out << fmt::format("  - name: {}\n    nodes: {}\n", quoted(p.name), quoted(hostlist(names)));
    if (p.is_default) out << "    default: true\n";
    if (p.max_time > 0) out << fmt::format("    max_time: {}\n", p.max_time);
    out << fmt::format("    priority_job_factor: {}\n    priority_tier: {}\n", p.priority_job_factor, p.priority_tier);
  }
  if (!cluster.qos.empty()) {
    out << "qos:\n";
    for (const Qos& q : cluster.qos) out << fmt::format("  - {{name: {}, priority: {}}}\n", quoted(q.name), q.priority);
  }
  const PriorityWeights& w = cluster.priority;
  out << fmt::format(
      "priority:\n  weights: {{age: {}, fairshare: {}, job_size: {}, partition: {}, qos: {}, site: {}}}\n"
      "  max_age: {}\n  decay_half_life: {}\n  calc_period: {}\n  favor_small: {}\n",
      w.age, w.fairshare, w.job_size, w.partition, w.qos, w.site, w.max_age, w.decay_half_life, w.calc_period,
      w.favor_small ? "true" : "false");
  return finish(path, out);
}

}  // namespace rlsched::io
