// Readers for cluster descriptions: rlsched's own YAML, and an admin's slurm.conf + gres.conf.
// Errors name the file and line: "cluster.yaml:14: partitions[1].nodes: unknown node 'h300-1'".
#pragma once

#include <string>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/status.h"

namespace rlsched::io {

/// rlsched cluster YAML (format documented in docs/cluster-yaml.md; example in slurm_conf_examples/).
Result<Cluster> read_cluster_yaml(const std::string& path);

/// slurm.conf (NodeName, PartitionName, GresTypes, PriorityWeight*, PriorityMaxAge, PriorityDecayHalfLife,
/// PriorityCalcPeriod, PriorityFavorSmall lines; others ignored) and optionally gres.conf (Name/Type/Count/File per
/// NodeName) to fill GRES types slurm.conf leaves out. Accelerator types get speed 1.0 unless `speeds_yaml` (an
/// rlsched YAML with an accelerator_types section) is given.
Result<Cluster> read_slurm_conf(const std::string& slurm_conf, const std::string& gres_conf = {},
                                const std::string& speeds_yaml = {});

/// Picks by name: *.yaml/*.yml -> read_cluster_yaml, else read_slurm_conf (gres.conf beside it if present).
Result<Cluster> read_cluster(const std::string& path);

/// Expands a Slurm hostlist: "h200-[1-3,7],a100-[01-02],login" -> {h200-1,h200-2,h200-3,h200-7,a100-01,a100-02,login}.
/// Zero padding of the range start is kept. \return InvalidInput on unbalanced brackets or bad ranges.
Result<std::vector<std::string>> expand_hostlist(const std::string& hostlist);

/// Parses a Slurm time string: "MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS"; "INFINITE"/"UNLIMITED"
/// give 0 (no limit). \return seconds, or InvalidInput.
Result<Seconds> parse_slurm_duration(const std::string& text);

}  // namespace rlsched::io
