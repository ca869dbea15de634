// `rlsched import-sacct`: check a sacct dump before training on it, and say what it holds: how many records became
// jobs, what was merged or skipped and why, the time span, users, partitions, accelerator types and requeues; with
// --cluster, which jobs that cluster could never run.
#include <algorithm>
#include <ctime>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "text/text.h"
#include "inputs.h"
#include "report_table.h"
#include "rlsched/io/cluster_readers.h"
#include "rlsched/io/workload_readers.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/simulator.h"

namespace rlsched::cli {

namespace {

struct ImportOptions {
  std::string sacct;
  std::string cluster;
  std::string config;
  bool strict = false;
};


template <typename Map>
std::string top(const Map& counts, std::size_t n) {
  std::vector<std::pair<std::string, std::size_t>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (std::size_t i = 0; i < v.size() && i < n; ++i)
    out += fmt::format("{}{} {}", i ? ", " : "", v[i].first.empty() ? "(none)" : v[i].first, v[i].second);
  if (v.size() > n) out += fmt::format(", ... ({} in all)", v.size());
  return out;
}

// What the plugins' configuration makes of the dump: which jobs its job classes match (their speeds then apply), and
// which accelerator requests name a GRES type it does not list (the default speed 1.0 applies to those).
void print_config_view(const config::PluginConfig& config, const std::string& label, const std::vector<Job>& jobs,
                       const std::vector<std::string>& job_names) {
  fmt::print("config:    {}\n", label);
  if (!config.job_classes.empty()) {
    std::map<std::string, std::size_t> classes;
    for (std::size_t i = 0; i < jobs.size(); ++i)
      ++classes[config.classify(job_names[i], jobs[i].account, jobs[i].user)];
    fmt::print("job classes: {}\n", top(classes, 8));
  }
  std::map<std::string, std::size_t> unknown;
  for (const Job& j : jobs) {
    if (j.accel.count <= 0) continue;
    std::vector<std::string> named = j.accel.types;
    if (!j.ran_on_type.empty()) named.push_back(j.ran_on_type);
    std::set<std::string> seen;
    for (const std::string& type : named)
      if (seen.insert(type).second && !config.find_type(type, j.accel.name)) ++unknown[j.accel.name + ":" + type];
  }
  if (!unknown.empty())
    fmt::print("not in the config's accelerator_types (speed 1.0): {}\n", top(unknown, 8));
}

int run_import(const ImportOptions& options) {
  Cluster cluster;
  if (!options.cluster.empty()) {
    auto c = io::read_cluster(options.cluster);
    if (!c.ok()) return fail(c.status());
    cluster = std::move(*c);
  }
  std::string config_label;
  auto config = read_plugin_config(options.config, config_label);
  if (!config.ok()) return fail(config.status());
  io::ReadOptions read;
  read.strict = options.strict;
  auto dump = io::read_sacct(options.sacct, read);
  if (!dump.ok()) return fail(dump.status());
  const ReadReport& r = dump->report;
  std::vector<Job>& jobs = dump->jobs;
  // The names sacct recorded, before the job classes replace them.
  std::vector<std::string> job_names;
  for (const Job& j : jobs) job_names.push_back(j.job_class);
  apply_plugin_config(*config, cluster, jobs);

  fmt::print("dump:      {}\n", options.sacct);
  fmt::print("records:   {} data lines: {} jobs, {} merged (job steps, earlier runs of requeued jobs), {} skipped\n",
             r.records, r.used, r.merged, r.skipped);
  for (const std::string& why : r.reasons) fmt::print("  skipped: {}\n", why);
  if (r.skipped > r.reasons.size()) fmt::print("  ... and {} more skipped\n", r.skipped - r.reasons.size());
  if (jobs.empty()) {
    fmt::print("no job ran to completion in the dump: nothing to train or evaluate on\n");
    return kExitError;
  }

  Seconds first = jobs.front().submit, last = first;
  std::map<std::string, std::size_t> users, partitions, types;
  std::size_t requeued = 0, restarts = 0, accelerator_jobs = 0, no_limit = 0;
  for (const Job& j : jobs) {
    first = std::min(first, j.submit);
    last = std::max(last, j.submit);
    ++users[j.user];
    std::string parts;
    for (const std::string& p : j.partitions) parts += (parts.empty() ? "" : ",") + p;
    ++partitions[parts];
    if (j.accel.count > 0) {
      ++accelerator_jobs;
      ++types[j.ran_on_type.empty() ? j.accel.name : j.accel.name + ":" + j.ran_on_type];
    }
    requeued += j.restarts > 0;
    restarts += static_cast<std::size_t>(j.restarts);
    no_limit += j.time_limit <= 0;
  }
  fmt::print("submitted: {} to {} UTC ({:.1f} days)\n", text::utc_iso8601(first), text::utc_iso8601(last), double(last - first) / 86400.0);
  fmt::print("users:     {}\n", top(users, 8));
  fmt::print("partitions: {}\n", top(partitions, 8));
  fmt::print("accelerators: {} jobs{}{}\n", accelerator_jobs, types.empty() ? "" : ": ", top(types, 8));
  fmt::print("requeued:  {} jobs, {} restarts in all\n", requeued, restarts);
  if (no_limit > 0) fmt::print("no time limit: {} jobs (their run time stands in)\n", no_limit);
  print_config_view(*config, config_label, jobs, job_names);

  if (!options.cluster.empty()) {
    auto fcfs = make_scorer("fcfs");
    if (!fcfs.ok()) return fail(fcfs.status());
    auto run = sim::simulate(cluster, jobs, **fcfs);
    if (!run.ok()) return fail(run.status());
    std::size_t rejected = 0;
    for (const auto& [why, n] : run->counters.rejections) rejected += n;
    fmt::print("cluster:   {} ({}): {} of {} jobs could run there{}\n", cluster.name, options.cluster,
               jobs.size() - rejected, jobs.size(), rejected ? "; never:" : "");
    for (const auto& [why, n] : run->counters.rejections) fmt::print("  {} jobs: {}\n", n, why);
  }
  return kExitOk;
}

}  // namespace

CommandRunner setup_import_sacct(CLI::App& app) {
  auto options = std::make_shared<ImportOptions>();
  app.add_option("dump", options->sacct, "sacct --parsable2 dump (docs/sacct.md gives the command)")
      ->type_name("DUMP")
      ->required();
  app.add_option("--cluster", options->cluster,
                 "slurm.conf (with gres.conf beside it) or cluster YAML: also count the jobs it could never run")
      ->type_name("FILE");
  app.add_option("--config", options->config,
                 "the plugins' rlsched.yaml: which jobs its job classes match and which types it lacks; with "
                 "--cluster, its speeds and classes apply (without it: the shipped example's)")
      ->type_name("FILE");
  app.add_flag("--strict", options->strict, "Fail on the first record that would be skipped");
  return [options] { return run_import(*options); };
}

}  // namespace rlsched::cli
