#include "outcomes_csv.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

namespace rlsched::cli {

namespace {

// RFC 4180 quoting: user and partition names come from traces and may hold anything.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string time_or_empty(bool known, Seconds value) {
  return known ? std::to_string(value) : std::string();
}

// The nodes of the final run, as sacct's NodeList names them one by one ("a100-1,h200-1").
std::string node_names(const std::vector<int>& nodes, const Cluster& cluster) {
  std::string out;
  for (int n : nodes)
    if (n >= 0 && n < static_cast<int>(cluster.nodes.size())) out += (out.empty() ? "" : ",") + cluster.nodes[n].name;
  return out;
}

}  // namespace

Status write_outcomes_csv(const std::string& path, const std::vector<Job>& jobs,
                          const std::vector<sim::JobOutcome>& outcomes, const Cluster& cluster) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return Status::IoError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  file << "id,user,submit,start,end,wait,run,state,partition,accelerator_type,cpus,accelerators,restarts,nodes\n";
  for (const sim::JobOutcome& o : outcomes) {
    const Job& job = jobs.at(o.job);
    const bool started = o.start >= 0;
    const bool ended = o.ran();
    const std::string partition = o.partition >= 0 && o.partition < static_cast<int>(cluster.partitions.size())
                                      ? cluster.partitions[o.partition].name
                                      : std::string();
    const std::string type =
        o.accelerator_type >= 0 && o.accelerator_type < static_cast<int>(cluster.accelerator_types.size())
            ? cluster.accelerator_types[o.accelerator_type].name
            : std::string();
    file << job.id << ',' << csv_field(job.user) << ',' << o.submit << ',' << time_or_empty(started, o.start) << ','
         << time_or_empty(ended, o.end) << ',' << time_or_empty(started, o.wait()) << ','
         << time_or_empty(ended, o.run()) << ',' << sim::to_string(o.state) << ',' << csv_field(partition) << ','
         << csv_field(type) << ',' << o.cpus << ',' << o.accelerators << ',' << o.restarts << ','
         << csv_field(node_names(o.nodes, cluster)) << '\n';
  }
  file.close();
  if (!file) return Status::IoError(fmt::format("{}: write failed: {}", path, std::strerror(errno)));
  return Status::Ok();
}

}  // namespace rlsched::cli
