// The plugins' health state file, as the exporter reads it: a small JSON record the plugins rewrite (atomic
// rename) outside slurmctld's hot path (core/include/rlsched/health.h writes it; docs/health-file.md). Read on the
// poll thread; its values become rlsched_* metrics.
#pragma once

#include <functional>
#include <string>

#include "metric_families.h"

namespace rlsched::exporter {

class HealthFile {
 public:
  /// path: empty for none (then no rlsched_* metrics are served).
  explicit HealthFile(std::string path) : path_(std::move(path)) {}

  /// Reads the file and appends its metrics, and rlsched_health_file_ok (0 when it cannot be read or parsed: `log`
  /// is told why, once per distinct reason).
  void append_to(Families& out, const std::function<void(const std::string&)>& log);

 private:
  std::string path_;
  std::string last_error_;
};

/// The metrics of one health record (its JSON text); `source` names it in errors. Throws std::runtime_error when
/// the record does not have the documented shape.
void append_health_families(const std::string& json_text, const std::string& source, Seconds now, Families& out);

}  // namespace rlsched::exporter
