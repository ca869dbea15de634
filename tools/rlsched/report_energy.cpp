#include "report_energy.h"

#include <string>

#include <fmt/format.h>

#include "report_table.h"

namespace rlsched::cli {

namespace {

using nlohmann::ordered_json;  // not `json`: a unity batch may hold a file with nlohmann::json as `json`

// Energy and money from a few watt-hours to a cluster-year: 4 significant digits below 1, 2 decimals up to 1,000,
// whole numbers above.
std::string amount(double value) {
  const double size = value < 0 ? -value : value;
  if (size >= 1000) return fixed(value, 0);
  if (size >= 1 || size == 0) return fixed(value, 2);
  return fmt::format("{:.4g}", value);
}

ordered_json figures_json(const sim::EnergyFigures& f) {
  return {{"kwh", f.kwh}, {"cost", f.cost}, {"co2_kg", f.co2_g / 1000.0}, {"price_per_kwh", f.price_per_kwh()}};
}

ordered_json group_json(const sim::EnergyGroup& g) {
  ordered_json j = figures_json(g.energy);
  j["jobs"] = g.jobs;
  j["avg_wait"] = g.average_wait;
  return j;
}

/// "POLICY", with " / PLACEMENT" and " / PREEMPTION" when the runs differ in them (the rule has its own column).
std::string label(const sim::PolicyResult& r, const std::vector<sim::PolicyResult>& results) {
  bool placements = false, preemptions = false;
  for (const sim::PolicyResult& other : results) {
    placements = placements || other.placement != r.placement;
    preemptions = preemptions || other.preemption != r.preemption;
  }
  std::string text = r.policy;
  if (placements) text += fmt::format(" / {}", sim::to_string(r.placement));
  if (preemptions) text += fmt::format(" / {}", sim::to_string(r.preemption));
  return text;
}

}  // namespace

void print_energy(std::FILE* out, const sim::EnergyReport& report) {
  const sim::EnergyFigures total = report.total();
  const std::string& cur = report.currency;
  Table table;
  table.add_column("energy", Table::Align::kLeft);
  table.add_column("value");
  auto row = [&table](std::string name, std::string value) { table.add_row({std::move(name), std::move(value)}); };
  row("deferral rule", energy::to_string(report.deferral));
  row("cluster energy (kWh)", amount(total.kwh));
  row(fmt::format("cluster cost ({})", cur), amount(total.cost));
  row("cluster carbon (kg CO2)", amount(total.co2_g / 1000.0));
  row(fmt::format("avg price ({}/kWh)", cur), fixed(total.price_per_kwh(), 4));
  row("jobs' energy (kWh)", amount(report.busy.kwh));
  row("idle energy (kWh)", amount(report.idle.kwh));
  row("suspended energy (kWh)", amount(report.suspended.kwh));
  for (const auto& [type, e] : report.accelerators) {
    row(fmt::format("{} busy (kWh)", type), amount(e.busy.kwh));
    row(fmt::format("{} idle (kWh)", type), amount(e.idle.kwh));
  }
  for (const auto& [name, group] :
       {std::pair<const char*, const sim::EnergyGroup&>{"deferrable", report.deferrable}, {"other", report.other}}) {
    row(fmt::format("{} jobs", name), std::to_string(group.jobs));
    row(fmt::format("{} jobs' cost ({})", name, cur), amount(group.energy.cost));
    row(fmt::format("{} jobs' energy (kWh)", name), amount(group.energy.kwh));
    row(fmt::format("{} jobs' avg wait (s)", name), fixed(group.average_wait, 1));
  }
  fmt::print(out, "\n{}", table.render());
  fmt::print(out,
             "\njobs' energy = what jobs add to idle nodes; idle = powered nodes' hosts and accelerators at idle "
             "power; suspended = nodes Slurm's power saving suspended (SuspendTime)\n");
}

void print_energy_comparison(std::FILE* out, const std::vector<sim::PolicyResult>& results) {
  Table table;
  table.add_column("policy", Table::Align::kLeft);
  table.add_column("rule", Table::Align::kLeft);
  for (const char* name : {"kwh", "cost", "co2_kg", "price_kwh", "defer_jobs", "defer_kwh", "defer_cost",
                           "defer_wait_h", "other_kwh", "other_cost", "other_wait_h"})
    table.add_column(name);
  std::string currency;
  for (const sim::PolicyResult& r : results) {
    if (!r.energy) continue;
    const sim::EnergyReport& e = *r.energy;
    currency = e.currency;
    const sim::EnergyFigures total = e.total();
    table.add_row({label(r, results), energy::to_string(e.deferral), amount(total.kwh), amount(total.cost),
                   amount(total.co2_g / 1000.0), fixed(total.price_per_kwh(), 4), std::to_string(e.deferrable.jobs),
                   amount(e.deferrable.energy.kwh), amount(e.deferrable.energy.cost), hours(e.deferrable.average_wait),
                   amount(e.other.energy.kwh), amount(e.other.energy.cost), hours(e.other.average_wait)});
  }
  if (currency.empty()) return;
  fmt::print(out, "\n{}", table.render());
  fmt::print(out,
             "\nenergy of the whole cluster (jobs, idle and suspended nodes) in kWh, cost in {}, carbon in kg CO2, "
             "price_kwh = average price paid per kWh; defer_* = the jobs the config lets wait for cheaper power, "
             "other_* = all others (their own energy; waits in hours)\n",
             currency);
}

ordered_json energy_json(const sim::EnergyReport& report) {
  ordered_json j = figures_json(report.total());
  j["currency"] = report.currency;
  j["rule"] = energy::to_string(report.deferral);
  j["begin"] = report.begin;
  j["end"] = report.end;
  j["busy"] = figures_json(report.busy);
  j["idle"] = figures_json(report.idle);
  j["suspended"] = figures_json(report.suspended);
  ordered_json types = ordered_json::object();
  for (const auto& [type, e] : report.accelerators)
    types[type] = {{"busy", figures_json(e.busy)}, {"idle", figures_json(e.idle)}};
  j["accelerators"] = std::move(types);
  j["deferrable"] = group_json(report.deferrable);
  j["other"] = group_json(report.other);
  // Columns rather than one object per step: a year of hours stays a small part of the document.
  ordered_json start = ordered_json::array(), price = ordered_json::array(), carbon = ordered_json::array(),
               watts = ordered_json::array(), busy = ordered_json::array();
  for (const sim::EnergySample& s : report.series) {
    start.push_back(s.start);
    price.push_back(s.price);
    carbon.push_back(s.carbon);
    watts.push_back(s.watts);
    busy.push_back(s.busy_share);
  }
  j["series"] = {{"step", report.series_step},  {"start", std::move(start)}, {"price", std::move(price)},
                 {"carbon", std::move(carbon)}, {"watts", std::move(watts)}, {"busy_share", std::move(busy)}};
  return j;
}

ordered_json energy_settings_json(const Inputs& inputs, const RunOptions& options) {
  const energy::EnergyConfig& e = *inputs.energy;
  ordered_json j = {{"config", inputs.config_label},
                    {"currency", e.currency},
                    {"rule", energy::to_string(e.rule)},
                    {"follow_carbon", e.follow_carbon},
                    {"suspend_time", inputs.cluster.suspend_time}};
  ordered_json groups = ordered_json::array();
  for (const energy::DeferrableGroup& g : e.deferrable)
    groups.push_back({{"qos", g.qos}, {"job_classes", g.job_classes}, {"max_deferral", g.max_deferral}});
  j["deferrable"] = std::move(groups);
  if (!options.deferrable.empty()) {
    const auto [share, seed] = options.parsed_deferrable();
    j["deferrable_qos"] = inputs.deferrable_qos;
    j["deferrable_share"] = share;
    j["deferrable_seed"] = seed;
    j["deferrable_jobs"] = inputs.deferrable_jobs;
  }
  return j;
}

}  // namespace rlsched::cli
