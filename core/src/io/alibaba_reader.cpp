// Reader for the pod lists of Alibaba's cluster-trace-gpu-v2023 (openb_pod_list_*.csv). The files are plain CSV
// without quoting, so a row is split on every ','.
#include <algorithm>
#include <climits>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "io/header_columns.h"
#include "io/line_source.h"
#include "rlsched/io/workload_readers.h"
#include "text/type_set.h"

namespace rlsched::io {
namespace {


// Positions of the header's columns; -1 where the file lacks one.
struct PodColumns {
  int cpu_milli = -1, memory_mib = -1, num_gpu = -1, creation_time = -1, deletion_time = -1, scheduled_time = -1;
  int name = -1, gpu_milli = -1, gpu_spec = -1, qos = -1, pod_phase = -1;
  std::size_t count = 0;
};

// Required columns first, so that a file with only the resource columns (openb_pod_list_multigpu50.csv) is told
// about the first time column it lacks. Without pod_phase, an empty scheduled_time still marks a pending pod; without
// gpu_milli, num_gpu alone gives the count.
constexpr ColumnName<PodColumns> kPodColumns[] = {
    {"cpu_milli", &PodColumns::cpu_milli, true},
    {"memory_mib", &PodColumns::memory_mib, true},
    {"num_gpu", &PodColumns::num_gpu, true},
    {"creation_time", &PodColumns::creation_time, true},
    {"deletion_time", &PodColumns::deletion_time, true},
    {"scheduled_time", &PodColumns::scheduled_time, true},
    {"name", &PodColumns::name, false},
    {"gpu_milli", &PodColumns::gpu_milli, false},
    {"gpu_spec", &PodColumns::gpu_spec, false},
    {"qos", &PodColumns::qos, false},
    {"pod_phase", &PodColumns::pod_phase, false},
};

// \return "" when the header has every required column, else the message naming the first one missing.
std::string read_pod_header(std::string_view line, PodColumns& columns) {
  const std::string_view missing = read_header_columns(line, ',', kPodColumns, columns);
  return missing.empty() ? std::string() : fmt::format("missing column '{}'", missing);
}

// Fills `job` from one pod row. \return "" or why the pod is left out.
std::string parse_row(const std::vector<std::string_view>& fields, const PodColumns& c, JobId id, Job& job) {
  const auto count = [&](int index, std::string_view name, long long& value) -> std::string {
    const std::string_view text = column_text(fields, index);
    value = 0;
    if (index < 0 || (parse_int(text, value) && value >= 0 && value <= INT_MAX)) return {};
    return fmt::format("pod {}: {} is not a count (got '{}')", id, name, excerpt(text));
  };
  // An empty time means the event has not happened (a pending pod is not scheduled).
  const auto time = [&](int index, std::string_view name, long long& value, bool& present) -> std::string {
    const std::string_view text = column_text(fields, index);
    present = !text.empty();
    if (!present || (parse_int(text, value) && value >= 0)) return {};
    return fmt::format("pod {}: {} is not a time in seconds (got '{}')", id, name, excerpt(text));
  };
  long long cpu_milli = 0, memory_mib = 0, num_gpu = 0, gpu_milli = 0, created = 0, deleted = 0, scheduled = 0;
  bool has_created = false, has_deleted = false, has_scheduled = false;
  for (std::string problem : {count(c.cpu_milli, "cpu_milli", cpu_milli), count(c.memory_mib, "memory_mib", memory_mib),
                              count(c.num_gpu, "num_gpu", num_gpu), count(c.gpu_milli, "gpu_milli", gpu_milli),
                              time(c.creation_time, "creation_time", created, has_created),
                              time(c.deletion_time, "deletion_time", deleted, has_deleted),
                              time(c.scheduled_time, "scheduled_time", scheduled, has_scheduled)}) {
    if (!problem.empty()) return problem;
  }
  const std::string_view phase = column_text(fields, c.pod_phase);
  if (phase == "Pending") return fmt::format("pod {} never scheduled (Pending)", id);
  if (!has_scheduled) return fmt::format("pod {} has no scheduled_time (pod_phase '{}')", id, excerpt(phase));
  if (!has_created) return fmt::format("pod {} has no creation_time", id);
  if (!has_deleted) return fmt::format("pod {} has no deletion_time", id);
  if (scheduled < created) {
    return fmt::format("pod {} scheduled before it was created (creation_time {}, scheduled_time {})", id, created,
                       scheduled);
  }
  if (deleted < scheduled) {
    return fmt::format("pod {} deleted before it was scheduled (scheduled_time {}, deletion_time {})", id, scheduled,
                       deleted);
  }

  job.id = id;
  job.submit = created;
  job.run_time = deleted - scheduled;  // pods still Running at the trace end are cut there, as the trace records them
  job.time_limit = job.run_time;       // pods have no wall-time request
  job.nodes = 1;                       // a pod runs on one node
  job.cpus = static_cast<int>(std::max((cpu_milli + 999) / 1000, 1LL));  // Slurm allocates whole CPUs, at least one
  job.mem_mb = memory_mib;
  // A GPU share (gpu_milli < 1000) takes a whole GPU: Slurm does not share GPUs between jobs.
  const long long gpus = num_gpu > 0 ? num_gpu : (gpu_milli > 0 ? 1 : 0);
  if (gpus > 0) {
    job.accel.count = static_cast<int>(gpus);
    job.accel.name = "gpu";
    if (const std::string_view spec = column_text(fields, c.gpu_spec); !spec.empty()) {
      job.accel.types = text::parse_type_set(spec);  // the trace repeats types in some sets ("V100M16|V100M32|V100M32")
    }
  }
  job.qos = std::string(column_text(fields, c.qos));
  return {};
}

}  // namespace

Result<Workload> read_alibaba_pods(const std::string& path, const ReadOptions& options) {
  auto opened = LineSource::Open(path);
  if (!opened.ok()) return opened.status();
  LineSource& source = *opened;

  Workload workload;
  ReadReport& report = workload.report;
  report.source = path;
  PodColumns columns;
  bool have_header = false;
  std::vector<std::string_view> fields;
  std::string_view line;
  while (source.next(line)) {
    if (trim(line).empty()) continue;
    if (!have_header) {
      if (std::string problem = read_pod_header(line, columns); !problem.empty()) {
        return Status::InvalidInput(fmt::format("{}: {}", source.where(), problem));
      }
      have_header = true;
      continue;
    }
    const auto id = static_cast<JobId>(report.records);  // the row index, so that id N is pod openb-pod-000N
    ++report.records;
    split_into(line, ',', fields);
    Job job;
    std::string problem = fields.size() == columns.count ? parse_row(fields, columns, id, job)
                                                         : fmt::format("expected {} fields as in the header, got {}",
                                                                       columns.count, fields.size());
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
  if (!have_header) return Status::InvalidInput(fmt::format("{}: empty file (expected a CSV header line)", path));
  return workload;
}

}  // namespace rlsched::io
