// Slurm's time formats as sacct prints them. Private to the sacct reader; a header of its own so tests can reach it.
#pragma once

#include <cstdint>
#include <string_view>

#include "rlsched/job.h"

namespace rlsched::io {

/// Days from 1970-01-01 to a proleptic Gregorian date. Pure arithmetic (H. Hinnant's days_from_civil), so the result
/// does not depend on the process's time zone or locale as mktime/timegm would.
std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day);

enum class TimeField { kValue, kAbsent, kInvalid };

/// Parses sacct's "YYYY-MM-DDTHH:MM:SS". sacct prints local time without a zone; it is read as if it were UTC, which
/// keeps differences between times right except across a daylight-saving change.
/// \return kAbsent for "Unknown", "None" and an empty field (not started, not ended), kInvalid for anything else.
TimeField parse_slurm_time(std::string_view text, Seconds& value);

/// Parses an Elapsed field "[D-]HH:MM:SS" into seconds. \return false if it has another shape.
bool parse_elapsed(std::string_view text, Seconds& value);

}  // namespace rlsched::io
