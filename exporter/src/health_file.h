// The plugins' health records, as the exporter reads them: <health_dir>/<plugin>.json, small JSON records each
// plugin rewrites by atomic rename from a thread of its own (core/src/capi/health.h; the fields are listed in
// slurm_conf_examples/monitoring/README.md). Read on the poll thread; their values become rlsched_* metrics with a
// plugin label (site_factor, job_submit, preempt).
#pragma once

#include <functional>
#include <string>

#include "metric_families.h"

namespace rlsched::exporter {

class HealthRecords {
 public:
  /// dir: empty for none (then no rlsched_* metrics are served).
  explicit HealthRecords(std::string dir) : dir_(std::move(dir)) {}

  /// Reads every *.json record in the folder and appends their metrics, and rlsched_health_file_ok{plugin} (0 for
  /// a record that cannot be read or parsed: `log` is told why, once per distinct reason).
  void append_to(Families& out, const std::function<void(const std::string&)>& log);

 private:
  std::string dir_;
  std::string last_error_;
};

/// The metrics of one health record (its JSON text); `source` names it in errors. Throws std::runtime_error when
/// the record does not have the documented shape.
void append_health_families(const std::string& json_text, const std::string& source, Seconds now, Families& out);

/// Adds label `name`=`value` to every series of `families` and appends them to `out`, merging families of the same
/// name (one HELP/TYPE per name, as the text format requires).
void merge_labelled(Families families, const std::string& name, const std::string& value, Families& out);

}  // namespace rlsched::exporter
