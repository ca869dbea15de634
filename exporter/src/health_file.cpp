#include "health_file.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rlsched::exporter {

using nlohmann::json;
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

namespace {

MetricFamily counter(std::string name, std::string help) {
  MetricFamily f = gauge_family(std::move(name), std::move(help));
  f.type = MetricType::Counter;
  return f;
}

double number(const json& j, const char* key, const std::string& source) {
  const auto it = j.find(key);
  if (it == j.end()) return 0;
  if (!it->is_number()) throw std::runtime_error(fmt::format("{}: '{}' must be a number", source, key));
  return it->get<double>();
}

// {"kind": count, ...} -> one series per kind
void by_kind(const json& j, const char* key, const char* name, const char* help, const std::string& source,
             Families& out) {
  MetricFamily f = counter(name, help);
  if (const auto it = j.find(key); it != j.end()) {
    if (!it->is_object()) throw std::runtime_error(fmt::format("{}: '{}' must be an object of counts", source, key));
    for (const auto& [kind, n] : it->items()) {
      if (!n.is_number()) throw std::runtime_error(fmt::format("{}: '{}.{}' must be a number", source, key, kind));
      add_sample(f, {{"kind", kind}}, n.get<double>());
    }
  }
  out.push_back(std::move(f));
}

}  // namespace

void append_health_families(const std::string& json_text, const std::string& source, Seconds now, Families& out) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not JSON: {}", source, e.what()));
  }
  if (!j.is_object() || j.value("schema", 0) != 1)
    throw std::runtime_error(fmt::format("{}: not an rlsched health record of schema 1", source));

  MetricFamily age = gauge_family("rlsched_health_file_age_seconds", "Seconds since the plugins last wrote health");
  add_sample(age, {}, static_cast<double>(now) - number(j, "written_at", source));
  out.push_back(std::move(age));

  // Only a plugin that scores (site_factor) has a model to report.
  if (const auto it = j.find("model"); it != j.end()) {
    if (!it->is_object()) throw std::runtime_error(fmt::format("{}: 'model' must be an object", source));
    const json& model = *it;
    MetricFamily info = gauge_family("rlsched_model_info", "The model the site_factor plugin scores with (1)");
    add_sample(info, {{"sha256", model.value("sha256", "")}, {"path", model.value("path", "")}}, 1);
    out.push_back(std::move(info));
    MetricFamily loaded = gauge_family("rlsched_model_loaded_timestamp_seconds", "When that model was loaded");
    add_sample(loaded, {}, number(model, "loaded_at", source));
    out.push_back(std::move(loaded));
    MetricFamily fallback =
        gauge_family("rlsched_model_fallback_active", "1 while the fallback scorer serves instead of the model");
    add_sample(fallback, {}, model.value("fallback_active", false) ? 1 : 0);
    out.push_back(std::move(fallback));
  }

  if (const auto it = j.find("rank_disagreement"); it != j.end()) {
    if (!it->is_object()) throw std::runtime_error(fmt::format("{}: 'rank_disagreement' must be an object", source));
    const std::string mode = it->value("mode", "");
    MetricFamily share = gauge_family("rlsched_rank_disagreement_ratio",
                                      "Share of the last batch's job pairs that the learned rank orders against "
                                      "Slurm's own multifactor priority (in shadow mode: what enforce would change)");
    add_sample(share, {{"mode", mode}}, number(*it, "share", source));
    out.push_back(std::move(share));
    MetricFamily jobs = gauge_family("rlsched_rank_disagreement_jobs", "Jobs in the batch that share was measured on");
    add_sample(jobs, {{"mode", mode}}, number(*it, "jobs", source));
    out.push_back(std::move(jobs));
  }

  by_kind(j, "fallbacks", "rlsched_fallbacks_total", "Times the plugins fell back to the fallback scorer, by kind",
          source, out);
  by_kind(j, "faults", "rlsched_faults_total", "Faults the plugins caught and logged, by kind", source, out);

  by_kind(j, "energy", "rlsched_energy_decisions_total",
          "Energy decisions: deferrable jobs given a later begin time (deferred), that would have been in shadow mode "
          "(would_defer), deferrable jobs ranked last in an expensive window (sunk) or first in a cheap one (boosted)",
          source, out);
  MetricFamily preempt = counter("rlsched_preemptions_total", "Victims preempt/rlsched chose");
  add_sample(preempt, {}, number(j, "preemptions", source));
  out.push_back(std::move(preempt));
  MetricFamily grace = counter("rlsched_preemption_grace_seconds_total", "Grace time given to victims to checkpoint");
  add_sample(grace, {}, number(j, "grace_seconds", source));
  out.push_back(std::move(grace));
  MetricFamily lost = counter("rlsched_lost_accelerator_hours_total",
                              "Work victims lose without a checkpoint on the signal: accelerator-hours (CPU-hours for "
                              "CPU jobs) since their declared last checkpoint");
  add_sample(lost, {}, number(j, "lost_accelerator_hours", source));
  out.push_back(std::move(lost));

  MetricFamily placements =
      counter("rlsched_placements_total", "Placement decisions of job_submit/rlsched, by accelerator type and reason");
  for (const json& p : j.value("placements", json::array())) {
    if (!p.is_object()) throw std::runtime_error(fmt::format("{}: placements must be a list of objects", source));
    add_sample(placements, {{"accelerator_type", p.value("accelerator_type", "")}, {"reason", p.value("reason", "")}},
               number(p, "count", source));
  }
  out.push_back(std::move(placements));

  if (const auto it = j.find("site_factor_update_seconds"); it != j.end()) {
    const auto bounds = it->value("bounds", std::vector<double>{});
    const auto counts = it->value("counts", std::vector<std::uint64_t>{});
    if (counts.size() != bounds.size() + 1)
      throw std::runtime_error(
          fmt::format("{}: site_factor_update_seconds needs one count per bound and one more "
                      "for +Inf (got {} bounds, {} counts)",
                      source, bounds.size(), counts.size()));
    MetricFamily f;
    f.name = "rlsched_site_factor_update_duration_seconds";
    f.help = "Time site_factor_p_update spent under slurmctld's job write lock";
    f.type = MetricType::Histogram;
    ClientMetric m;
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < bounds.size(); ++i) {
      cumulative += counts[i];
      m.histogram.bucket.push_back({cumulative, bounds[i]});
    }
    cumulative += counts.back();
    m.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum = number(*it, "sum", source);
    f.metric.push_back(std::move(m));
    out.push_back(std::move(f));
  }
}

void merge_labelled(Families families, const std::string& name, const std::string& value, Families& out) {
  for (MetricFamily& f : families) {
    for (ClientMetric& m : f.metric) m.label.insert(m.label.begin(), {name, value});
    const auto same = std::find_if(out.begin(), out.end(), [&](const MetricFamily& o) { return o.name == f.name; });
    if (same == out.end()) {
      out.push_back(std::move(f));
    } else {
      for (ClientMetric& m : f.metric) same->metric.push_back(std::move(m));
    }
  }
}

void HealthRecords::append_to(Families& out, const std::function<void(const std::string&)>& log) {
  if (dir_.empty()) return;
  std::vector<std::string> errors;
  Families all;
  MetricFamily ok = gauge_family("rlsched_health_file_ok", "1 when a plugin's health record was read and understood");
  std::error_code ec;
  std::vector<std::filesystem::path> records;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec))
    if (entry.path().extension() == ".json" && entry.path().filename().string().front() != '.')
      records.push_back(entry.path());
  if (ec) errors.push_back(fmt::format("{}: cannot list the plugins' health records: {}", dir_, ec.message()));
  std::sort(records.begin(), records.end());
  for (const auto& path : records) {
    const std::string plugin = path.stem().string();
    Families read;
    std::string error;
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
      error = fmt::format("{}: cannot read the health record", path.string());
    } else {
      try {
        append_health_families(text.str(), path.string(), static_cast<Seconds>(std::time(nullptr)), read);
      } catch (const std::exception& e) {
        error = e.what();
        read.clear();
      }
    }
    add_sample(ok, {{"plugin", plugin}}, error.empty() ? 1 : 0);
    if (!error.empty()) errors.push_back(error);
    merge_labelled(std::move(read), "plugin", plugin, all);
  }
  std::string joined;
  for (const auto& e : errors) joined += (joined.empty() ? "" : "; ") + e;
  if (!joined.empty() && joined != last_error_) log(joined);
  last_error_ = joined;
  out.push_back(std::move(ok));
  for (auto& f : all) out.push_back(std::move(f));
}

}  // namespace rlsched::exporter
