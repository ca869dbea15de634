#include "rlsched/io/gavel_workload.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/line_source.h"

namespace rlsched::io {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTypes[] = {"k80", "p100", "v100"};
constexpr int kTypeCount = 3;

// Throughput (steps/s) of (model, scale) on each type, as measured by Gavel (isolated, "null" entries).
using Throughputs = std::map<std::pair<std::string, int>, std::array<double, kTypeCount>>;

/// "('ResNet-50 (batch size 64)', 4)" -> model and scale.
bool parse_key(std::string_view key, std::string& model, int& scale) {
  const std::string_view open = "('", middle = "', ";
  if (key.size() < 8 || key.substr(0, open.size()) != open || key.back() != ')') return false;
  const std::size_t comma = key.rfind(middle);
  if (comma == std::string_view::npos || comma <= open.size()) return false;
  const std::string_view digits = key.substr(comma + middle.size(), key.size() - 1 - comma - middle.size());
  if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string_view::npos)
    return false;
  model = std::string(key.substr(open.size(), comma - open.size()));
  scale = std::stoi(std::string(digits));
  return true;
}

Result<Throughputs> read_throughputs(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidInput(fmt::format("{}: not JSON: {}", path, e.what()));
  }
  Throughputs out;
  for (int t = 0; t < kTypeCount; ++t) {
    if (!doc.is_object() || !doc.contains(kTypes[t]) || !doc[kTypes[t]].is_object())
      return Status::InvalidInput(fmt::format("{}: no throughputs for worker type '{}'", path, kTypes[t]));
    for (const auto& [key, entry] : doc[kTypes[t]].items()) {
      std::string model;
      int scale = 0;
      if (!parse_key(key, model, scale))
        return Status::InvalidInput(fmt::format("{}: {}: key '{}' is not \"('MODEL', SCALE)\"", path, kTypes[t], key));
      if (!entry.is_object() || !entry.contains("null") || !entry["null"].is_number())
        return Status::InvalidInput(fmt::format("{}: {}: {}: no isolated (\"null\") throughput", path, kTypes[t], key));
      const double v = entry["null"].get<double>();
      if (!std::isfinite(v) || v < 0)
        return Status::InvalidInput(fmt::format("{}: {}: {}: throughput {} is not >= 0", path, kTypes[t], key, v));
      auto& row = out.try_emplace({model, scale}, std::array<double, kTypeCount>{-1, -1, -1}).first->second;
      row[t] = v;
    }
  }
  for (const auto& [key, row] : out)
    for (int t = 0; t < kTypeCount; ++t)
      if (row[t] < 0)
        return Status::InvalidInput(
            fmt::format("{}: ('{}', {}) has no throughput on {}", path, key.first, key.second, kTypes[t]));
  return out;
}

struct TraceJob {
  std::string model, vc;
  double steps = 0;
  double arrival = 0;
  int scale = 0;
};

bool parse_number(std::string_view text, double& out) {
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && errno == 0 && std::isfinite(out);
}

// msr_seed0 format, tab-separated: model, command, num_steps_arg, needs_data_dir, total_steps, arrival_time, scale.
Status read_trace(const std::string& path, const std::string& vc, std::vector<TraceJob>& out, ReadReport& report,
                  const ReadOptions& options) {
  auto source = LineSource::Open(path);
  if (!source.ok()) return source.status();
  std::string_view line;
  std::vector<std::string_view> f;
  while (source->next(line)) {
    if (line.empty()) continue;
    ++report.records;
    f.clear();
    split_into(line, '\t', f);
    double steps = 0, arrival = 0, scale = 0;
    std::string why;
    if (f.size() != 7)
      why = fmt::format("expected 7 tab-separated fields, got {}", f.size());
    else if (!parse_number(f[4], steps) || steps <= 0)
      why = fmt::format("total_steps '{}' is not a positive number", f[4]);
    else if (!parse_number(f[5], arrival) || arrival < 0)
      why = fmt::format("arrival_time '{}' is not a number >= 0", f[5]);
    else if (!parse_number(f[6], scale) || scale < 1 || scale != std::floor(scale) || scale > 4096)
      why = fmt::format("scale_factor '{}' is not a GPU count", f[6]);
    if (!why.empty()) {
      report.skip(fmt::format("{}: {}", source->where(), why));
      if (options.strict) return Status::InvalidInput(report.reasons.back());
      continue;
    }
    out.push_back(TraceJob{std::string(f[0]), vc, steps, arrival, static_cast<int>(scale)});
  }
  if (!source->error().empty()) return Status::InvalidInput(source->error());
  return Status::Ok();
}

// Alibaba GPU types mapped onto Gavel's by training throughput class (docs/placement.md): index into kTypes, -1 for
// the undisclosed models (G1, G2, G3), which constrain nothing we can interpret. No Alibaba type is as old as a K80,
// so no pod asks for one by name.
int gavel_type(const std::string& alibaba) {
  if (alibaba == "P100" || alibaba == "T4") return 1;  // T4: 8.1 FP32 TFLOPS, P100: 9.3
  if (alibaba == "V100M16" || alibaba == "V100M32" || alibaba == "A10") return 2;
  return -1;
}

}  // namespace

Result<GavelWorkload> read_gavel_workload(const std::string& dir, const GavelOptions& options) {
  auto throughputs = read_throughputs((fs::path(dir) / "simulation_throughputs.json").string());
  if (!throughputs.ok()) return throughputs.status();

  GavelWorkload out;
  ReadReport& report = out.workload.report;
  report.source = dir;
  std::vector<std::string> traces;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(dir) / "msr_seed0", ec))
    if (entry.path().extension() == ".trace") traces.push_back(entry.path().string());
  if (ec || traces.empty())
    return Status::NotFound(fmt::format("{}/msr_seed0: no *.trace files{}", dir, ec ? ": " + ec.message() : ""));
  std::sort(traces.begin(), traces.end());
  std::vector<TraceJob> trace;
  for (const std::string& path : traces)
    if (Status s = read_trace(path, fs::path(path).stem().string(), trace, report, options.read); !s.ok()) return s;
  std::stable_sort(trace.begin(), trace.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.arrival < b.arrival; });

  // Type constraints: the GPU pods' sets in creation order, mapped to Gavel's types (bit t = kTypes[t] allowed).
  std::vector<unsigned> pod_sets;
  if (!options.any_of_pods.empty()) {
    auto pods = read_alibaba_pods(options.any_of_pods, options.read);
    if (!pods.ok()) return pods.status();
    std::vector<const Job*> gpu_pods;
    for (const Job& p : pods->jobs)
      if (p.accel.count > 0) gpu_pods.push_back(&p);
    std::stable_sort(gpu_pods.begin(), gpu_pods.end(), [](const Job* a, const Job* b) { return a->submit < b->submit; });
    for (const Job* p : gpu_pods) {
      unsigned set = 0;
      for (const std::string& t : p->accel.types)
        if (const int g = gavel_type(t); g >= 0) set |= 1u << g;
      pod_sets.push_back(p->accel.types.empty() || set == 0 ? 0u : set);  // 0: any type
    }
    if (pod_sets.empty())
      return Status::InvalidInput(fmt::format("{}: no GPU pods to take type constraints from", options.any_of_pods));
  }

  for (int t = 0; t < kTypeCount; ++t) {
    AcceleratorType type;
    type.name = kTypes[t];
    type.gres = "gpu";
    out.types.push_back(std::move(type));
  }
  std::mt19937_64 rng(options.seed);

  for (std::size_t i = 0; i < trace.size(); ++i) {
    const TraceJob& tj = trace[i];
    // The largest measured scale <= the job's GPU count.
    const std::array<double, kTypeCount>* row = nullptr;
    int scale = 0;
    for (int s : {8, 4, 2, 1}) {
      if (s > tj.scale) continue;
      auto it = throughputs->find({tj.model, s});
      if (it != throughputs->end()) {
        row = &it->second;
        scale = s;
        break;
      }
    }
    if (row == nullptr) {
      report.skip(fmt::format("{}: job {}: no throughput for '{}' at any scale <= {}", tj.vc, i, tj.model, tj.scale));
      if (options.read.strict) return Status::InvalidInput(report.reasons.back());
      continue;
    }
    unsigned usable = 0;
    double slowest = 0;
    for (int t = 0; t < kTypeCount; ++t)
      if ((*row)[t] > 0) {
        usable |= 1u << t;
        slowest = slowest == 0 ? (*row)[t] : std::min(slowest, (*row)[t]);
      }
    if (usable == 0) {
      report.skip(fmt::format("{}: job {}: '{}' x{} runs on no type (throughput 0 everywhere)", tj.vc, i, tj.model,
                              scale));
      continue;
    }
    Job job;
    job.id = static_cast<JobId>(i + 1);
    job.user = job.account = tj.vc;
    job.job_class = fmt::format("{} x{}", tj.model, scale);
    job.submit = static_cast<Seconds>(std::llround(tj.arrival));
    job.cpus = tj.scale;
    job.accel.count = tj.scale;
    job.accel.name = "gpu";
    for (int t = 0; t < kTypeCount; ++t) {
      if ((*row)[t] <= 0) continue;
      out.types[t].class_speed.emplace(job.job_class, (*row)[t] / slowest);
    }
    unsigned allowed = usable;
    if (!pod_sets.empty()) {
      // Pod k for the k-th job kept (skipped records do not shift the pairing of the others).
      const unsigned set = pod_sets[out.workload.jobs.size() % pod_sets.size()];  // 0: the pod allowed any type
      if (set != 0 && (set & usable) != 0) allowed = set & usable;
    }
    if (allowed != usable) ++out.constrained;
    if (allowed != (1u << kTypeCount) - 1)  // every type: a typeless request
      for (int t = 0; t < kTypeCount; ++t)
        if (allowed & (1u << t)) job.accel.types.emplace_back(kTypes[t]);
    std::vector<int> choices;
    double slowest_allowed = 0;
    for (int t = 0; t < kTypeCount; ++t)
      if (allowed & (1u << t)) {
        choices.push_back(t);
        slowest_allowed = slowest_allowed == 0 ? (*row)[t] : std::min(slowest_allowed, (*row)[t]);
      }
    const int recorded = choices[std::uniform_int_distribution<std::size_t>(0, choices.size() - 1)(rng)];
    const double per_scale = static_cast<double>(tj.scale) / scale;  // linear beyond the largest measured scale
    job.ran_on_type = kTypes[recorded];
    job.run_time = std::max<Seconds>(1, std::llround(tj.steps / ((*row)[recorded] * per_scale)));
    job.time_limit = static_cast<Seconds>(std::ceil(tj.steps / (slowest_allowed * per_scale))) + 60;
    out.workload.jobs.push_back(std::move(job));
    ++report.used;
  }
  // Default speed of each type: the geometric mean over the classes that run on it.
  for (int t = 0; t < kTypeCount; ++t) {
    double sum = 0;
    for (const auto& [cls, speed] : out.types[t].class_speed) sum += std::log(speed);
    const auto classes = static_cast<double>(out.types[t].class_speed.size());
    out.types[t].speed = classes > 0 ? std::exp(sum / classes) : 1.0;
  }
  return out;
}

Status use_measured_speeds(const std::vector<AcceleratorType>& measured, Cluster& cluster,
                           const std::string& cluster_source) {
  std::vector<AcceleratorType*> targets;
  for (const AcceleratorType& m : measured) {
    auto it = std::find_if(cluster.accelerator_types.begin(), cluster.accelerator_types.end(),
                           [&m](const AcceleratorType& t) { return t.name == m.name && t.gres == m.gres; });
    if (it == cluster.accelerator_types.end())
      return Status::InvalidInput(fmt::format(
          "{}: cluster has no accelerator type {}:{} (a Gavel workload runs on gpu:k80, gpu:p100 and gpu:v100)",
          cluster_source, m.gres, m.name));
    targets.push_back(&*it);
  }
  for (std::size_t i = 0; i < measured.size(); ++i) {
    targets[i]->speed = measured[i].speed;
    targets[i]->class_speed = measured[i].class_speed;
  }
  return Status::Ok();
}

}  // namespace rlsched::io
