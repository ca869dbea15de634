// Helpers shared by the two cluster readers (rlsched YAML and slurm.conf + gres.conf), so that both accept the same
// GRES syntax and derive accelerator types the same way.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/status.h"
#include "text/text.h"

namespace rlsched::io {

/// Parses one Slurm GRES spec: "gpu:h200:8", "npu:8", "gpu:h200" (count 1), "gpu" (count 1), as slurm.conf's Gres=
/// reads them; a trailing "(S:0-1)" socket binding is ignored. min_count 0 also reads the node's GRES in use as
/// libslurm reports it ("gpu:h200:0(IDX:N/A)", "gpu:h200:2(IDX:0-1)").
/// \return false with `error` set (without location; callers add file:line) when malformed.
bool parse_gres_spec(std::string_view spec, GresCount& out, std::string& error, int min_count = 1);

/// Splits a Gres= list on the commas outside parentheses ("gpu:h200:4(S:0,1),npu:8" has two items).
std::vector<std::string_view> split_gres_list(std::string_view list);

/// Adds an AcceleratorType with speed 1.0 for every typed GRES on a node that cluster.accelerator_types lacks, in
/// node order, so that every type a job can run on has a speed.
void add_implicit_types(Cluster& cluster);

/// Reads the accelerator_types section of an rlsched cluster YAML and applies its speeds to `cluster`'s types
/// (implemented beside the YAML reader). A type missing from `cluster` is an error: a speed for hardware the
/// cluster does not have is almost always a typo.
Status apply_speeds_yaml(const std::string& path, Cluster& cluster);

std::string to_lower(std::string_view text);
using text::iequals;
/// Slurm's boolean spellings: YES/NO, TRUE/FALSE, 1/0 (any case). \return false when `text` is none of them.
bool parse_bool(std::string_view text, bool& value);

}  // namespace rlsched::io
