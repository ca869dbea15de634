// `rlsched evaluate --report DIR`: the evaluation's JSON (report.json), each run's per-job outcomes
// (outcomes-<n>.csv, n as in report.json's results) and, drawn from them by tools/report/plot_report.py with
// matplotlib, PNG figures and an index.html that shows them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rlsched/cluster.h"
#include "rlsched/job.h"
#include "rlsched/sim/evaluation.h"
#include "rlsched/status.h"

namespace rlsched::cli {

/// Writes the report folder (created if missing). \return IoError naming the file that could not be written, or
/// the plot script's failure with its output.
Status write_evaluation_report(const std::string& dir, const nlohmann::ordered_json& doc, const std::vector<Job>& jobs,
                               const std::vector<sim::PolicyResult>& results, const Cluster& cluster);

/// Draws `rlsched train`'s learning curve (the CSV beside the model card) as `png` with the same script.
Status draw_learning_curve(const std::string& csv, const std::string& png);

/// The plot script: RLSCHED_REPORT_SCRIPT from the environment, else the installed one, else the source tree's.
std::string report_script();

}  // namespace rlsched::cli
