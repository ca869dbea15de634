// rlsched.yaml's energy section (docs/energy.md): power draws, price and carbon schedules, deferrable jobs.
#pragma once

#include <string>

#include "config/yaml_checks.h"
#include "rlsched/energy.h"
#include "rlsched/plugin_config.h"

namespace rlsched::config {

/// Reads the energy section into config.energy, config.energy_mode and config.schedule_files. The types and job
/// classes it refers to, and `mode`, must be parsed already. Errors through checks.fail (file:line).
void parse_energy(const YamlChecks& checks, const YAML::Node& node, PluginConfig& config);

/// A schedule from a CSV file of "timestamp,value" rows at a regular step (docs/energy.md, "Schedules"):
/// timestamps in epoch seconds or ISO 8601 (UTC unless they carry an offset), values >= 0. Errors say "path:line:".
Result<energy::Schedule> read_schedule_csv(const std::string& path);

}  // namespace rlsched::config
