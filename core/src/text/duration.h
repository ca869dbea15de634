// The one duration grammar of every surface a person writes durations in: rlsched.yaml, rlsched-exporter.yaml, the
// cluster YAML, slurm.conf as rlsched reads it, and the checkpoint declaration (`--comment checkpoint:...`).
//
//   duration := N unit                 unit: s, m, h or d            ("90s", "30m", "2h", "1d")
//             | N                      in the surface's bare unit    (seconds in YAML files, minutes in slurm.conf)
//             | Slurm time             MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS  ("1:30:00", "2-00:00:00")
//             | INFINITE | UNLIMITED   where the surface allows no limit (its value is 0)
//
// N is a whole number of at most nine digits; no sign, no fraction. Blanks around the text are ignored.
#pragma once

#include <string>
#include <string_view>

#include "rlsched/job.h"
#include "rlsched/status.h"

namespace rlsched::text {

struct DurationSyntax {
  /// Seconds in a bare number ("90"): 1 for seconds, 60 for minutes; 0 refuses a bare number.
  Seconds bare_unit = 1;
  /// Whether INFINITE / UNLIMITED is accepted (as 0).
  bool infinite = false;
};

/// \return the duration in seconds, or InvalidInput whose message says what is wrong (without the text itself, so
/// each surface can name the file, line and key around it).
Result<Seconds> parse_duration(std::string_view text, const DurationSyntax& syntax);

/// `seconds` the way a person reads a wait: "45s", "12m", "2h05m", "3d04h" (two units at most; negative: "-" first).
std::string format_duration(Seconds seconds);

}  // namespace rlsched::text
