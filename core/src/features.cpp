#include "rlsched/features.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

namespace rlsched::features {
namespace {

constexpr double kWeek = 7 * 86400.0;

constexpr std::array<FeatureSpec, kFeatureCount> kSchema = {{
    {"wait_log", "s", "log1p(wait) / log1p(7 d)"},
    {"limit_log", "s", "log1p(time limit) / log1p(7 d)"},
    {"wait_over_limit", "ratio", "log1p(wait / time limit) / log(101)"},
    {"cpus_share", "CPUs", "cpus / cluster CPUs"},
    {"cpus_log", "CPUs", "log2(cpus) / log2(max(2, cluster CPUs))"},
    {"nodes_share", "nodes", "nodes / cluster nodes"},
    {"area_log", "CPU-s", "log1p(cpus * time limit) / log1p(cluster CPUs * 7 d)"},
    {"size_log_limit", "CPU", "cpus * log10(max(time limit, 1)) / (cluster CPUs * log10(7 d)) (F1's size term)"},
    {"accel_share", "accelerators", "accelerators / cluster accelerators (0 without)"},
    {"accel_speed", "ratio", "fastest allowed type's speed / fastest type's speed (1 without accelerators)"},
    {"fits_now", "bool", "1 if the request fits the idle resources of one of its partitions"},
    {"restarts", "count", "min(restarts, 5) / 5"},
    {"checkpointable", "bool", "1 if the job declared it can checkpoint"},
    {"age_factor", "Slurm factor", "as priority/multifactor computes it, [0, 1]"},
    {"fairshare_factor", "Slurm factor", "as priority/multifactor computes it, [0, 1]"},
    {"job_size_factor", "Slurm factor", "as priority/multifactor computes it, [0, 1]"},
    {"partition_factor", "Slurm factor", "as priority/multifactor computes it, [0, 1]"},
    {"qos_factor", "Slurm factor", "as priority/multifactor computes it, [0, 1]"},
    {"queue_log", "jobs", "log1p(pending jobs) / log1p(10000)"},
    {"idle_cpu_share", "CPUs", "idle CPUs / cluster CPUs"},
    {"idle_accel_share", "accelerators", "idle accelerators of its allowed types / all of them (0 without)"},
    // v2: p = the predicted run time (PendingJob::predicted_run_time), its time limit where none is predicted.
    {"predicted_log", "s", "log1p(p) / log1p(7 d)"},
    {"wait_over_predicted", "ratio", "log1p(wait / p) / log(101)"},
}};

/// The first column of schema v2's features on the predicted run time.
constexpr std::size_t kFirstPredicted = kV1FeatureCount;

inline float share(double part, double whole) { return whole > 0 ? static_cast<float>(part / whole) : 0.0f; }

}  // namespace

const std::vector<FeatureSpec>& schema() {
  static const std::vector<FeatureSpec> specs(kSchema.begin(), kSchema.end());
  return specs;
}

std::vector<std::string> schema_names() {
  std::vector<std::string> names;
  for (const FeatureSpec& f : kSchema) names.emplace_back(f.name);
  return names;
}

void extract_all(const PendingJob& job, const ScoringContext& c, float* row) {
  static const double log1p_week = std::log1p(kWeek);
  static const double log10_week = std::log10(kWeek);
  const double wait = static_cast<double>(std::max<Seconds>(job.wait, 0));
  const double limit = static_cast<double>(std::max<Seconds>(job.time_limit, 1));
  const double cpus = std::max(job.cpus, 1);
  const double total_cpus = std::max(c.total_cpus, 1);
  int i = 0;
  row[i++] = static_cast<float>(std::log1p(wait) / log1p_week);
  row[i++] = static_cast<float>(std::log1p(limit) / log1p_week);
  row[i++] = static_cast<float>(std::log1p(wait / limit) / std::log(101.0));
  row[i++] = share(cpus, total_cpus);
  row[i++] = static_cast<float>(std::log2(cpus) / std::log2(std::max(2.0, total_cpus)));
  row[i++] = share(std::max(job.nodes, 1), c.total_nodes);
  row[i++] = static_cast<float>(std::log1p(cpus * limit) / std::log1p(total_cpus * kWeek));
  row[i++] = static_cast<float>(cpus * std::log10(limit) / (total_cpus * log10_week));
  row[i++] = share(job.accelerators, c.total_accelerators);
  row[i++] = static_cast<float>(job.accel_speed);
  row[i++] = job.fits_now ? 1.0f : 0.0f;
  row[i++] = static_cast<float>(std::min(job.restarts, 5)) / 5.0f;
  row[i++] = job.checkpointable ? 1.0f : 0.0f;
  row[i++] = static_cast<float>(job.age_factor);
  row[i++] = static_cast<float>(job.fairshare_factor);
  row[i++] = static_cast<float>(job.job_size_factor);
  row[i++] = static_cast<float>(job.partition_factor);
  row[i++] = static_cast<float>(job.qos_factor);
  row[i++] = static_cast<float>(std::log1p(std::max(c.pending_jobs, 0)) / std::log1p(10000.0));
  row[i++] = share(c.idle_cpus, total_cpus);
  row[i++] = static_cast<float>(job.idle_accel_share);
  const double predicted =
      job.predicted_run_time > 0 ? std::min(static_cast<double>(job.predicted_run_time), limit) : limit;
  row[i++] = static_cast<float>(std::log1p(predicted) / log1p_week);
  row[i++] = static_cast<float>(std::log1p(wait / predicted) / std::log(101.0));
  (void)i;  // i == kFeatureCount; the schema test checks every column is written
}

bool reads_predicted_run_time(const std::vector<std::string>& names) {
  for (const std::string& name : names)
    for (std::size_t k = kFirstPredicted; k < kSchema.size(); ++k)
      if (name == kSchema[k].name) return true;
  return false;
}

Result<FeatureMap> FeatureMap::For(const std::vector<std::string>& names) {
  FeatureMap map;
  for (const std::string& name : names) {
    auto it = std::find_if(kSchema.begin(), kSchema.end(), [&](const FeatureSpec& f) { return name == f.name; });
    if (it == kSchema.end())
      return Status::InvalidInput(fmt::format("feature '{}' is not in feature schema v{}", name, kSchemaVersion));
    if (std::find(map.names_.begin(), map.names_.end(), name) != map.names_.end())
      return Status::InvalidInput(fmt::format("feature '{}' is listed twice", name));
    map.columns_.push_back(static_cast<int>(it - kSchema.begin()));
    map.names_.push_back(name);
  }
  map.identity_ = map.columns_.size() == kSchema.size();
  for (std::size_t k = 0; map.identity_ && k < map.columns_.size(); ++k)
    map.identity_ = map.columns_[k] == static_cast<int>(k);
  return map;
}

FeatureMap FeatureMap::Canonical() { return *For(schema_names()); }

void FeatureMap::extract(const std::vector<PendingJob>& jobs, const ScoringContext& context, float* out) const {
  const std::size_t width = columns_.size();
  if (identity_) {
    for (std::size_t i = 0; i < jobs.size(); ++i) extract_all(jobs[i], context, out + i * width);
    return;
  }
  float all[kFeatureCount];
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    extract_all(jobs[i], context, all);
    for (std::size_t k = 0; k < width; ++k) out[i * width + k] = all[columns_[k]];
  }
}

}  // namespace rlsched::features
