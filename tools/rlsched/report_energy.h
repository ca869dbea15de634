// What --energy adds to the reports: the energy, cost and carbon of each run, and of its deferrable jobs against
// the others, as text (simulate, evaluate) and as JSON (--json, report.json).
#pragma once

#include <cstdio>
#include <vector>

#include <nlohmann/json.hpp>

#include "inputs.h"
#include "rlsched/sim/energy.h"
#include "rlsched/sim/evaluation.h"
#include "run_options.h"

namespace rlsched::cli {

/// `simulate`'s energy lines: cluster kWh, cost, carbon and average price; busy, idle and suspended energy; per
/// accelerator type; deferrable jobs against the others (cost, kWh, average wait).
void print_energy(std::FILE* out, const sim::EnergyReport& report);

/// `evaluate`'s energy table: one row per run that metered energy (none printed when no run did).
void print_energy_comparison(std::FILE* out, const std::vector<sim::PolicyResult>& results);

/// A result's "energy" object: totals, busy/idle/suspended, per type, deferrable/other and the time series.
nlohmann::ordered_json energy_json(const sim::EnergyReport& report);

/// The document's "energy" object: the settings the runs used (config, currency, deferrable QOS, --deferrable).
nlohmann::ordered_json energy_settings_json(const Inputs& inputs, const RunOptions& options);

}  // namespace rlsched::cli
