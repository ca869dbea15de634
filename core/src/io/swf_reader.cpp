// Standard Workload Format reader. Large traces go through it (RICC: 447,794 records), so a record is parsed from
// string_views into integers and strings are built only for the job it becomes.
#include <algorithm>
#include <climits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "io/line_source.h"
#include "rlsched/io/workload_readers.h"

namespace rlsched::io {
namespace {

constexpr int kFieldCount = 18;

// Field numbers as the SWF definition counts them (1-based), for the fields the mapping uses.
constexpr int kId = 1, kSubmit = 2, kRunTime = 4, kAllocProcs = 5, kReqProcs = 8, kReqTime = 9, kUser = 12, kGroup = 13,
              kQueue = 15, kPartition = 16;

// Names from the SWF definition, for messages: field N is kFieldNames[N - 1].
constexpr std::string_view kFieldNames[kFieldCount] = {"job id",
                                                       "submit time",
                                                       "wait time",
                                                       "run time",
                                                       "allocated processors",
                                                       "average CPU time",
                                                       "used memory",
                                                       "requested processors",
                                                       "requested time",
                                                       "requested memory",
                                                       "status",
                                                       "user",
                                                       "group",
                                                       "executable",
                                                       "queue",
                                                       "partition",
                                                       "preceding job",
                                                       "think time"};

bool is_used(int field) {
  return field == kId || field == kSubmit || field == kRunTime || field == kAllocProcs || field == kReqProcs ||
         field == kReqTime || field == kUser || field == kGroup || field == kQueue || field == kPartition;
}


// Reads the "; Key: value" header comments the mapping uses; other comments are free text.
void read_header(std::string_view comment, Workload& workload, std::map<long long, std::string>& partition_names) {
  comment.remove_prefix(1);  // ';'
  const auto colon = comment.find(':');
  if (colon == std::string_view::npos) return;
  const std::string_view key = trim(comment.substr(0, colon));
  const std::string_view value = trim(comment.substr(colon + 1));
  long long number = 0;
  if (key == "MaxNodes" || key == "MaxProcs") {
    if (parse_int(value, number) && number > 0 && number <= INT_MAX) {
      (key == "MaxNodes" ? workload.max_nodes : workload.max_procs) = static_cast<int>(number);
    }
  } else if (key == "MaxRecords") {
    // Reserving up front saves the copies and page faults of growing a vector of 10^5..10^6 jobs; the cap keeps a
    // wrong header from reserving gigabytes.
    constexpr long long kMaxReserve = 1 << 20;
    if (parse_int(value, number) && number > 0) {
      workload.jobs.reserve(static_cast<std::size_t>(std::min(number, kMaxReserve)));
    }
  } else if (key == "Partition") {
    // "0 gpu" names partition 0; a bare number (RICC's "; Partition: 1") names nothing.
    const auto space = value.find_first_of(" \t");
    if (space != std::string_view::npos && parse_int(value.substr(0, space), number)) {
      partition_names[number] = std::string(trim(value.substr(space + 1)));
    }
  }
}

// Fills `job` from the fields of one record. \return why the record is unusable, or "" if it became `job`.
std::string parse_record(const std::vector<std::string_view>& fields,
                         const std::map<long long, std::string>& partition_names, Job& job) {
  if (fields.size() < kFieldCount) return fmt::format("expected {} fields, got {}", kFieldCount, fields.size());
  long long v[kFieldCount + 1];
  for (int i = 1; i <= kFieldCount; ++i) {
    const std::string_view text = fields[i - 1];
    if (parse_int(text, v[i])) continue;
    double unused = 0;
    // Some archive logs have fractional CPU time or memory; only the fields the mapping reads must be integers.
    if (!is_used(i) && parse_double(text, unused)) continue;
    return fmt::format("field {} ({}) is not {} (got '{}')", i, kFieldNames[i - 1],
                       is_used(i) ? "an integer" : "a number", excerpt(text));
  }
  if (v[kRunTime] < 0) return fmt::format("unknown run time (got '{}')", excerpt(fields[kRunTime - 1]));
  if (v[kSubmit] < 0) return fmt::format("negative submit time (got '{}')", excerpt(fields[kSubmit - 1]));
  const long long procs = std::max(v[kAllocProcs], v[kReqProcs]);
  if (procs <= 0) {
    return fmt::format("no processors (got '{}' allocated, '{}' requested)", excerpt(fields[kAllocProcs - 1]),
                       excerpt(fields[kReqProcs - 1]));
  }
  if (procs > INT_MAX) return fmt::format("processor count out of range (got '{}')", procs);
  if (v[kQueue] > INT_MAX) return fmt::format("queue number out of range (got '{}')", v[kQueue]);

  job.id = v[kId];
  job.submit = v[kSubmit];
  job.run_time = v[kRunTime];
  // No request (-1, as in Lublin): the run time stands in, as RLScheduler reads such traces.
  job.time_limit = v[kReqTime] > 0 ? v[kReqTime] : v[kRunTime];
  job.cpus = static_cast<int>(procs);
  if (v[kUser] >= 0) job.user = "u" + std::to_string(v[kUser]);
  if (v[kGroup] >= 0) job.account = "g" + std::to_string(v[kGroup]);
  job.priority_tier = v[kQueue] > 0 ? static_cast<int>(v[kQueue]) : 0;
  if (v[kPartition] >= 0) {
    const auto named = partition_names.find(v[kPartition]);
    job.partitions.push_back(named != partition_names.end() ? named->second : std::to_string(v[kPartition]));
  }
  return {};
}

}  // namespace

Result<Workload> read_swf(const std::string& path, const ReadOptions& options) {
  auto opened = LineSource::Open(path);
  if (!opened.ok()) return opened.status();
  LineSource& source = *opened;

  Workload workload;
  ReadReport& report = workload.report;
  report.source = path;
  std::map<long long, std::string> partition_names;
  std::vector<std::string_view> fields;
  bool any_line = false;
  std::string_view line;
  while (source.next(line)) {
    line = trim(line);
    if (line.empty()) continue;
    any_line = true;
    if (line.front() == ';') {
      read_header(line, workload, partition_names);
      continue;
    }
    ++report.records;
    split_whitespace(line, fields);
    // Some published traces carry a column of their own after the 18 of the format: the record is whole without it.
    if (fields.size() > kFieldCount) {
      report.warn(fmt::format("{}: {} fields, the format has {}: the last {} ignored", source.where(), fields.size(),
                              kFieldCount, fields.size() - kFieldCount));
      fields.resize(kFieldCount);
    }
    Job job;
    std::string problem = parse_record(fields, partition_names, job);
    if (!problem.empty()) {
      std::string reason = fmt::format("{}: {}", source.where(), problem);
      if (options.strict) return Status::InvalidInput(std::move(reason));
      report.skip(std::move(reason));
      continue;
    }
    workload.jobs.push_back(std::move(job));
    ++report.used;
  }
  if (!source.error().empty()) return Status::IoError(source.error());
  if (!any_line) return Status::InvalidInput(fmt::format("{}: empty file", path));
  return workload;
}

}  // namespace rlsched::io
