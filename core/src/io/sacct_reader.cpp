// Reader for `sacct -a -P -D` dumps (docs/sacct.md). A job's records are not adjacent: a requeued job appears once per
// run, the later runs after other jobs, so records are gathered per JobIDRaw first and judged once the file is read.
#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "io/header_columns.h"
#include "io/line_source.h"
#include "io/time_parse.h"
#include "rlsched/io/workload_readers.h"

namespace rlsched::io {
namespace {


// Positions of the header's fields; -1 where the dump lacks one.
struct SacctColumns {
  int job_id_raw = -1, submit = -1, start = -1, end = -1, state = -1;  // required
  int elapsed = -1, timelimit_raw = -1, req_tres = -1, alloc_tres = -1, nnodes = -1, ncpus = -1;
  int user = -1, account = -1, partition = -1, qos = -1, job_name = -1, node_list = -1;
  std::size_t count = 0;
};

constexpr ColumnName<SacctColumns> kSacctColumns[] = {
    {"JobIDRaw", &SacctColumns::job_id_raw, true},
    {"Submit", &SacctColumns::submit, true},
    {"Start", &SacctColumns::start, true},
    {"End", &SacctColumns::end, true},
    {"State", &SacctColumns::state, true},
    {"Elapsed", &SacctColumns::elapsed, false},
    {"TimelimitRaw", &SacctColumns::timelimit_raw, false},
    {"ReqTRES", &SacctColumns::req_tres, false},
    {"AllocTRES", &SacctColumns::alloc_tres, false},
    {"NNodes", &SacctColumns::nnodes, false},
    {"NCPUS", &SacctColumns::ncpus, false},
    {"User", &SacctColumns::user, false},
    {"Account", &SacctColumns::account, false},
    {"Partition", &SacctColumns::partition, false},
    {"QOS", &SacctColumns::qos, false},
    {"JobName", &SacctColumns::job_name, false},
    {"NodeList", &SacctColumns::node_list, false},
};

// \return "" when the header has every required column, else the message naming the first one missing.
std::string read_sacct_header(std::string_view line, SacctColumns& columns) {
  const std::string_view missing = read_header_columns(line, '|', kSacctColumns, columns);
  if (missing.empty()) return {};
  return fmt::format("missing field '{}' (is this `sacct --parsable2` output with its header line?)", missing);
}

// One GRES kind in a TRES string: "gres/gpu=2" (typeless total) and "gres/gpu:h200=2" (per type).
struct GresCount {
  std::string name;
  long long total = -1;  // from the typeless entry; -1 when only typed entries appear
  long long typed_total = 0;
  std::vector<std::string> types;
};

// What a ReqTRES or AllocTRES string says; -1 for counts it does not give.
struct Tres {
  long long cpu = -1;
  long long node = -1;
  std::int64_t mem_mb = -1;
  std::vector<GresCount> gres;
};

// Converts a TRES memory value ("8000M", "1.50G", "0") to MiB; Slurm's unit without a suffix is MiB.
bool parse_mem_mb(std::string_view text, std::int64_t& mb) {
  constexpr std::string_view kUnits = "KMGTP";  // powers of 1024, from KiB
  double scale = 1;
  if (const auto unit = text.empty() ? std::string_view::npos : kUnits.find(text.back());
      unit != std::string_view::npos) {
    scale = std::pow(1024.0, static_cast<double>(unit) - 1);
    text.remove_suffix(1);
  }
  double value = 0;
  if (!parse_double(text, value) || value < 0 || value * scale > 1e15) return false;  // 1e15 MiB: clearly garbage
  mb = static_cast<std::int64_t>(std::ceil(value * scale));
  return true;
}

// Parses "billing=1,cpu=1,gres/gpu:h200=2,gres/gpu=2,mem=8000M,node=1". TRES this model has no use for (billing,
// energy, licenses, ...) are ignored. \return "" or what is wrong.
std::string parse_tres(std::string_view text, Tres& tres) {
  if (text.empty()) return {};
  std::vector<std::string_view> entries;
  split_into(text, ',', entries);
  for (std::string_view entry : entries) {
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) return fmt::format("entry without '=' (got '{}')", excerpt(entry));
    const std::string_view key = entry.substr(0, eq);
    const std::string_view value = entry.substr(eq + 1);
    long long count = 0;
    if (key == "mem") {
      if (!parse_mem_mb(value, tres.mem_mb)) return fmt::format("mem is not a size (got '{}')", excerpt(value));
    } else if (key == "cpu" || key == "node" || key.rfind("gres/", 0) == 0) {
      if (!parse_int(value, count) || count < 0 || count > INT_MAX) {
        return fmt::format("{} is not a count (got '{}')", excerpt(key), excerpt(value));
      }
      if (key == "cpu") {
        tres.cpu = count;
      } else if (key == "node") {
        tres.node = count;
      } else if (count > 0) {
        const std::string_view gres = key.substr(5);
        const auto colon = gres.find(':');
        const std::string_view name = gres.substr(0, colon);
        auto it = std::find_if(tres.gres.begin(), tres.gres.end(), [&](const GresCount& g) { return g.name == name; });
        if (it == tres.gres.end()) it = tres.gres.insert(tres.gres.end(), GresCount{std::string(name), -1, 0, {}});
        if (colon == std::string_view::npos) {
          it->total = count;
        } else {
          it->typed_total += count;
          it->types.emplace_back(gres.substr(colon + 1));
        }
      }
    }
  }
  return {};
}

// A job's state as its record gives it, for the judgement made once all its records are read.
struct Entry {
  Job job;
  std::string state;  // the last record's, as printed ("CANCELLED by 0")
  bool started = false;
  bool ended = false;
  Seconds start = 0, end = 0;
  int line = 0;  // of the last record
};

bool parse_count(std::string_view text, long long& value) {
  return parse_int(text, value) && value >= 0 && value <= INT_MAX;
}

// Fills `entry` from one job record (not a step). \return "" or what is wrong with the record.
std::string parse_record(const std::vector<std::string_view>& fields, const SacctColumns& c, Entry& entry) {
  Job& job = entry.job;
  const std::string_view id_text = column_text(fields, c.job_id_raw);
  long long id = 0;
  if (!parse_int(id_text, id) || id < 0) {
    return fmt::format("JobIDRaw is not a job number (got '{}')", excerpt(id_text));
  }
  job.id = id;
  const std::string_view submit = column_text(fields, c.submit);
  switch (parse_slurm_time(submit, job.submit)) {
    case TimeField::kValue:
      break;
    case TimeField::kAbsent:
      return fmt::format("job {} has no submit time (got '{}')", job.id, excerpt(submit));
    case TimeField::kInvalid:
      return fmt::format("job {}: Submit is not a time (got '{}')", job.id, excerpt(submit));
  }
  const auto read_time = [&](int index, const char* name, Seconds& value, bool& present) -> std::string {
    const std::string_view text = column_text(fields, index);
    const TimeField parsed = parse_slurm_time(text, value);
    if (parsed == TimeField::kInvalid) {
      return fmt::format("job {}: {} is not a time (got '{}')", job.id, name, excerpt(text));
    }
    present = parsed == TimeField::kValue;
    return {};
  };
  if (std::string problem = read_time(c.start, "Start", entry.start, entry.started); !problem.empty()) return problem;
  if (std::string problem = read_time(c.end, "End", entry.end, entry.ended); !problem.empty()) return problem;
  entry.state = std::string(column_text(fields, c.state));
  // Some Slurm versions give a job cancelled while pending a Start equal to its End; its NodeList tells the truth.
  if (column_text(fields, c.node_list) == "None assigned") entry.started = false;

  if (entry.started && entry.ended) {
    // Elapsed leaves out time suspended and does not jump at daylight-saving changes, unlike End - Start.
    const std::string_view elapsed = column_text(fields, c.elapsed);
    if (elapsed.empty()) {
      job.run_time = entry.end - entry.start;
    } else if (!parse_elapsed(elapsed, job.run_time)) {
      return fmt::format("job {}: Elapsed is not [D-]HH:MM:SS (got '{}')", job.id, excerpt(elapsed));
    }
  }

  const std::string_view limit = column_text(fields, c.timelimit_raw);
  long long minutes = 0;
  if (limit.empty() || limit == "UNLIMITED" || limit == "Partition_Limit") {
    job.time_limit = 0;  // no limit of its own: filled with the run time below
  } else if (parse_int(limit, minutes) && minutes >= 0 && minutes <= LLONG_MAX / 60) {
    job.time_limit = minutes * 60;
  } else {
    return fmt::format("job {}: TimelimitRaw is not minutes (got '{}')", job.id, excerpt(limit));
  }

  Tres req, alloc;
  if (std::string problem = parse_tres(column_text(fields, c.req_tres), req); !problem.empty()) {
    return fmt::format("job {}: ReqTRES: {}", job.id, problem);
  }
  if (std::string problem = parse_tres(column_text(fields, c.alloc_tres), alloc); !problem.empty()) {
    return fmt::format("job {}: AllocTRES: {}", job.id, problem);
  }
  long long count = req.cpu;
  if (count < 0 && !parse_count(column_text(fields, c.ncpus), count)) count = 1;
  job.cpus = static_cast<int>(std::max(count, 1LL));
  count = req.node;
  if (count < 0 && !parse_count(column_text(fields, c.nnodes), count)) count = 0;
  job.nodes = static_cast<int>(count);
  if (req.mem_mb > 0) {
    // ReqTRES gives the job's total; Job::mem_mb is per node.
    const std::int64_t nodes = std::max(job.nodes, 1);
    job.mem_mb = (req.mem_mb + nodes - 1) / nodes;
  }
  if (req.gres.size() > 1) {
    return fmt::format("job {}: asks for several GRES kinds ({}, {}); a job has one accelerator request", job.id,
                       req.gres[0].name, req.gres[1].name);
  }
  if (!req.gres.empty()) {
    GresCount& gres = req.gres.front();
    job.accel.count = static_cast<int>(std::min<long long>(gres.total >= 0 ? gres.total : gres.typed_total, INT_MAX));
    job.accel.name = gres.name;
    job.accel.types = std::move(gres.types);
    for (const GresCount& allocated : alloc.gres) {
      if (allocated.name == job.accel.name && !allocated.types.empty()) job.ran_on_type = allocated.types.front();
    }
  }

  job.user = std::string(column_text(fields, c.user));
  job.account = std::string(column_text(fields, c.account));
  job.qos = std::string(column_text(fields, c.qos));
  job.job_class = std::string(column_text(fields, c.job_name));
  job.partitions.clear();
  if (const std::string_view partitions = column_text(fields, c.partition); !partitions.empty()) {
    std::vector<std::string_view> names;
    split_into(partitions, ',', names);
    for (std::string_view name : names) {
      if (!name.empty()) job.partitions.emplace_back(name);
    }
  }
  return {};
}

// The first word of a state: "CANCELLED by 0" -> "CANCELLED".
std::string_view state_word(std::string_view state) {
  return state.substr(0, state.find(' '));
}

// \return "" when the job's last record describes a finished run, else why the job is left out.
std::string judge(const Entry& entry) {
  const std::string_view state = state_word(entry.state);
  const JobId id = entry.job.id;
  if (!entry.started || state == "PENDING") return fmt::format("job {} never started ({})", id, entry.state);
  if (!entry.ended || state == "RUNNING") return fmt::format("job {} still running ({})", id, entry.state);
  if (state.rfind("REQUEUE", 0) == 0) {
    return fmt::format("job {} was requeued and has no later run in the dump ({})", id, entry.state);
  }
  if (entry.job.run_time < 0) {
    return fmt::format("job {} ends before it starts (run time {} s)", id, entry.job.run_time);
  }
  return {};
}

}  // namespace

Result<Workload> read_sacct(const std::string& path, const ReadOptions& options) {
  auto opened = LineSource::Open(path);
  if (!opened.ok()) return opened.status();
  LineSource& source = *opened;

  Workload workload;
  ReadReport& report = workload.report;
  report.source = path;
  SacctColumns columns;
  bool have_header = false;
  std::vector<std::string_view> fields;
  std::vector<Entry> entries;  // one per job, in order of first appearance
  std::unordered_map<JobId, std::size_t> entry_of;
  std::string_view line;
  while (source.next(line)) {
    if (trim(line).empty()) continue;
    if (!have_header) {
      if (std::string problem = read_sacct_header(line, columns); !problem.empty()) {
        return Status::InvalidInput(fmt::format("{}: {}", source.where(), problem));
      }
      have_header = true;
      continue;
    }
    ++report.records;
    split_into(line, '|', fields);
    std::string problem;
    Entry record;
    if (fields.size() != columns.count) {
      problem = fmt::format("expected {} fields as in the header, got {}{}", columns.count, fields.size(),
                            fields.size() > columns.count ? " (a '|' inside a field such as JobName?)" : "");
    } else if (column_text(fields, columns.job_id_raw).find('.') != std::string_view::npos) {
      ++report.merged;  // a step ("N.batch", "N.0"): its resources and time are its job's
      continue;
    } else {
      problem = parse_record(fields, columns, record);
    }
    if (!problem.empty()) {
      std::string reason = fmt::format("{}: {}", source.where(), problem);
      if (options.strict) return Status::InvalidInput(std::move(reason));
      report.skip(std::move(reason));
      continue;
    }
    record.line = source.line_number();
    const auto [it, first] = entry_of.try_emplace(record.job.id, entries.size());
    if (first) {
      entries.push_back(std::move(record));
      continue;
    }
    // A later run of a requeued job: it is the job's state from now on, but the job was submitted with the first.
    Entry& entry = entries[it->second];
    ++report.merged;
    record.job.submit = entry.job.submit;
    record.job.restarts = entry.job.restarts + 1;
    entry = std::move(record);
  }
  if (!source.error().empty()) return Status::IoError(source.error());
  if (!have_header) return Status::InvalidInput(fmt::format("{}: empty file (expected a sacct header line)", path));

  for (Entry& entry : entries) {
    if (std::string problem = judge(entry); !problem.empty()) {
      std::string reason = fmt::format("{}:{}: {}", path, entry.line, problem);
      if (options.strict) return Status::InvalidInput(std::move(reason));
      report.skip(std::move(reason));
      continue;
    }
    if (entry.job.time_limit == 0) entry.job.time_limit = entry.job.run_time;
    workload.jobs.push_back(std::move(entry.job));
    ++report.used;
  }
  return workload;
}

}  // namespace rlsched::io
