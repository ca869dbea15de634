// Slurm's TRES request strings as job_desc_msg_t carries them: tres_per_job / _node / _socket / _task are
// comma-separated entries "gres:gpu:h200:2", "gres:gpu:2", "gres:gpu" (22.05), "gres/gpu:h200:2" (23.02 and later),
// older or API-made "gpu:2", "gpu:h200".
// The last field is the count when it is all digits (as Slurm reads it), else the count is 1 and it is the type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rlsched::capi {

struct TresEntry {
  std::string text;       ///< as written
  std::string prefix;     ///< "gres:", "gres/" or "": written back as it came (Slurm 23.02+ refuses "gres:")
  std::string name;       ///< "gpu" (for a non-gres TRES such as "license:x", the whole text and gres = false)
  std::string type;       ///< "h200", "h200|a100", "" for none
  std::int64_t count = 1;
  bool gres = true;  ///< a GRES entry we understand
};

/// Splits and parses a tres_per_* string. Entries that are not GRES, or whose count has a suffix (k, m...) keep
/// gres = false and are passed through untouched on rewrite.
std::vector<TresEntry> parse_tres(std::string_view text);

/// "gres:gpu:h200:2" (with the entry's own prefix: "gres/gpu:h200:2", or none).
std::string format_entry(const TresEntry& entry);
std::string join_entries(const std::vector<TresEntry>& entries);

/// True when `text` (cpus_per_tres, mem_per_tres, tres_bind, tres_freq) names GRES `name` ("gres:gpu:...",
/// "gres/gpu", "gpu:...", "gpu=").
bool mentions_gres(std::string_view text, std::string_view name);

}  // namespace rlsched::capi
