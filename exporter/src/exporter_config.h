// rlsched-exporter.yaml: where the exporter listens, how often it polls slurmctld, and the plugins' health file.
// Every key is documented in slurm_conf_examples/monitoring/rlsched-exporter.yaml. Errors name the file and line of
// the offending key ("rlsched-exporter.yaml:3: poll_interval must be >= 1s (got 0)"); unknown keys are refused.
#pragma once

#include <string>
#include <string_view>

#include "rlsched/job.h"
#include "rlsched/status.h"

namespace rlsched::exporter {

struct ExporterConfig {
  /// host:port of /metrics. Loopback unless configured otherwise: the metrics name partitions, QOS and queue sizes.
  std::string listen = "127.0.0.1:9817";
  /// Seconds between two polls of slurmctld; a scrape never polls, it reads the last poll's values.
  Seconds poll_interval = 30;
  /// slurm.conf for libslurm; empty: SLURM_CONF or Slurm's default.
  std::string slurm_conf;
  /// The plugins' health_dir (rlsched.yaml): each plugin's record <plugin>.json there becomes rlsched_* metrics
  /// with a plugin label; empty: none.
  std::string health_dir;
};

/// \return the config, or InvalidInput with "name:line: what was wrong".
Result<ExporterConfig> parse_exporter_config(std::string_view text, const std::string& name);
/// Reads and parses a file; errors name it by `path`.
Result<ExporterConfig> load_exporter_config(const std::string& path);

}  // namespace rlsched::exporter
