// Human-readable reports on stdout: what was read, the comparison table of `evaluate`, the details of `simulate`.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "inputs.h"
#include "rlsched/sim/evaluation.h"
#include "run_options.h"

namespace rlsched::cli {

/// `value` with `precision` decimals.
std::string fixed(double value, int precision);
/// A duration in seconds as hours with two decimals.
std::string hours(double seconds);

/// A text table with aligned columns: text left-aligned, numbers right-aligned.
class Table {
 public:
  enum class Align { kLeft, kRight };

  void add_column(std::string header, Align align = Align::kRight);
  void add_row(std::vector<std::string> cells);  ///< one cell per column
  std::string render(const std::string& indent = {}) const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

/// What a reader skipped, and used despite a warning: the first few of each ("  skipped: file:line: why",
/// "  warning: file:line: what"), then how many more; each line ends in a newline. Empty when there is neither.
std::string read_notes(const ReadReport& report);

/// The lines above every report: trace and its reader report, cluster, protocol (and failures when any).
void print_inputs(std::FILE* out, const Inputs& inputs, const RunOptions& options,
                  const sim::EvaluationOptions& evaluation);

/// `evaluate`'s table: one row per policy.
void print_comparison(std::FILE* out, const std::vector<sim::PolicyResult>& results);

/// For accelerator workloads: job completion time, utilization per type and fragmentation per policy and placement,
/// with each row's average completion time over that of the predictive placement of the same policy.
void print_placement_comparison(std::FILE* out, const std::vector<sim::PolicyResult>& results);

/// For a workload with urgent jobs (--urgent): their waits against the others', preemptions, requeues, lost
/// accelerator-hours (CPU-hours without accelerators) and goodput per policy and preemption mode.
void print_preemption_comparison(std::FILE* out, const std::vector<sim::PolicyResult>& results);

/// `simulate`'s report: every metric, per-accelerator-type metrics, simulator counters.
void print_details(std::FILE* out, const sim::PolicyResult& result);

}  // namespace rlsched::cli
