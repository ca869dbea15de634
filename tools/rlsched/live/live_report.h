// The short text form of `rlsched explain` and `rlsched estimate`, rendered from their JSON (docs/estimates.md), so
// that both forms say the same things.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rlsched/sim/forecast.h"
#include "rlsched/status.h"

namespace rlsched::cli::live {

/// "2026-12-02 14:05:00" in the local time zone (as Slurm's tools print times); "unknown" for <= 0.
std::string local_time(Seconds epoch);

/// One job's estimate as JSON: {"available": true, "start", "earliest", "latest", "partition", "accelerator_type"}
/// (start -1: not within the horizon), or {"available": false, "why": ...}.
nlohmann::json estimate_json(const Result<std::vector<sim::StartEstimate>>& estimates, JobId job);

void print_explanation(const nlohmann::json& explanation);
void print_estimate(const nlohmann::json& estimate);

}  // namespace rlsched::cli::live
