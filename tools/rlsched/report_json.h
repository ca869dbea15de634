// Machine-readable results (--json). Scripts compare policies by these keys; docs/cli.md is the schema.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inputs.h"
#include "rlsched/sim/evaluation.h"
#include "rlsched/status.h"
#include "run_options.h"

namespace rlsched::cli {

/// One entry of "results": policy, backfill, protocol, every Metrics field, sim_seconds, and per protocol
/// sequence_bsld (rlscheduler) or counters (full).
nlohmann::ordered_json result_json(const sim::PolicyResult& result);

/// The whole document: {"rlsched_version", "trace", "report", "cluster", "protocol", "failures", "results": [...]}.
nlohmann::ordered_json document_json(const Inputs& inputs, const RunOptions& options,
                                     const sim::EvaluationOptions& evaluation,
                                     const std::vector<sim::PolicyResult>& results);

/// Writes `doc` to `path` ("-": stdout). \return IoError naming the file when it cannot be written.
Status write_json(const nlohmann::ordered_json& doc, const std::string& path);

}  // namespace rlsched::cli
