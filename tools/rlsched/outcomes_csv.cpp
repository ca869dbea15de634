#include "outcomes_csv.h"

#include <algorithm>
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

std::string partition_name(int p, const Cluster& cluster) {
  return p >= 0 && p < static_cast<int>(cluster.partitions.size()) ? cluster.partitions[p].name : std::string();
}

std::string type_name(int t, const Cluster& cluster) {
  return t >= 0 && t < static_cast<int>(cluster.accelerator_types.size()) ? cluster.accelerator_types[t].name
                                                                          : std::string();
}

const char* event_name(sim::ScheduleEvent::Kind kind) {
  using Kind = sim::ScheduleEvent::Kind;
  switch (kind) {
    case Kind::kStart: return "start";
    case Kind::kBackfillStart: return "backfill_start";
    case Kind::kReservation: return "reservation";
    case Kind::kEnd: return "end";
    case Kind::kRequeue: return "requeue";
    case Kind::kPlacement: return "placement";
    case Kind::kPreempt: return "preempt";
  }
  return "?";
}

// Nodes as sacct's NodeList names them one by one ("a100-1,h200-1").
std::string node_names(const std::vector<int>& nodes, const Cluster& cluster) {
  std::string out;
  for (int n : nodes)
    if (n >= 0 && n < static_cast<int>(cluster.nodes.size())) out += (out.empty() ? "" : ",") + cluster.nodes[n].name;
  return out;
}

}  // namespace

Status write_outcomes_csv(const std::string& path, const std::vector<Job>& jobs,
                          const std::vector<sim::JobOutcome>& outcomes, const Cluster& cluster,
                          const sim::EnergyReport* energy) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return Status::IoError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  file << "id,user,submit,start,end,wait,run,state,partition,accelerator_type,cpus,accelerators,restarts,nodes,"
          "predicted_wait"
       << (energy ? ",kwh,cost,co2_g" : "") << '\n';
  for (const sim::JobOutcome& o : outcomes) {
    const Job& job = jobs.at(o.job);
    const bool started = o.start >= 0;
    const bool ended = o.ran();
    const std::string partition = partition_name(o.partition, cluster);
    const std::string type = type_name(o.accelerator_type, cluster);
    file << job.id << ',' << csv_field(job.user) << ',' << o.submit << ',' << time_or_empty(started, o.start) << ','
         << time_or_empty(ended, o.end) << ',' << time_or_empty(started, o.wait()) << ','
         << time_or_empty(ended, o.run()) << ',' << sim::to_string(o.state) << ',' << csv_field(partition) << ','
         << csv_field(type) << ',' << o.cpus << ',' << o.accelerators << ',' << o.restarts << ','
         << csv_field(node_names(o.nodes, cluster)) << ',';
    if (o.predicted_wait >= 0) file << fmt::format("{:.0f}", std::max(o.predicted_wait, 0.0) + 0.0);  // never "-0"
    if (energy && o.job < energy->jobs.size()) {
      const sim::EnergyFigures& e = energy->jobs[o.job];
      file << ',' << fmt::format("{:.6g},{:.6g},{:.6g}", e.kwh, e.cost, e.co2_g);
    } else if (energy) {
      file << ",,,";
    }
    file << '\n';
  }
  file.close();
  if (!file) return Status::IoError(fmt::format("{}: write failed: {}", path, std::strerror(errno)));
  return Status::Ok();
}

Status EventLog::open(const std::string& path, const std::vector<Job>& jobs, const Cluster& cluster) {
  path_ = path;
  jobs_ = &jobs;
  cluster_ = &cluster;
  file_.open(path, std::ios::binary | std::ios::trunc);
  if (!file_) return Status::IoError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  file_ << "time,event,id,partition,accelerator_type,expected_start,nodes\n";
  return Status::Ok();
}

void EventLog::write(const sim::ScheduleEvent& e) {
  file_ << e.time << ',' << event_name(e.kind) << ',' << jobs_->at(static_cast<std::size_t>(e.job)).id << ','
        << csv_field(partition_name(e.partition, *cluster_)) << ',' << csv_field(type_name(e.accelerator_type, *cluster_))
        << ',';
  if (e.kind == sim::ScheduleEvent::Kind::kReservation) file_ << e.reserved_start;
  file_ << ',' << csv_field(node_names(e.nodes, *cluster_)) << '\n';
}

Status EventLog::close() {
  file_.close();
  if (!file_) return Status::IoError(fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
  return Status::Ok();
}

}  // namespace rlsched::cli
