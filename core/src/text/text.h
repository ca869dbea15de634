// Small text helpers every reader and parser in core uses: one definition each.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rlsched::text {

/// `text` without leading and trailing blanks (space, tab, CR, LF, VT, FF).
std::string_view trim(std::string_view text);

/// Splits on `delimiter`, keeping empty fields: "a,,b" -> {"a", "", "b"}; "" -> {""}. Fields are not trimmed.
std::vector<std::string_view> split(std::string_view text, char delimiter);

/// split() into `out` (cleared first), for readers that reuse one vector per line.
void split_into(std::string_view text, char delimiter, std::vector<std::string_view>& out);

/// The names of a list ("a100, h200,"): split on `delimiter`, each trimmed, empty ones dropped.
std::vector<std::string> split_names(std::string_view text, char delimiter = ',');

/// \return true if `text` is non-empty and only ASCII digits 0-9 (no sign, no blank).
bool all_digits(std::string_view text);

/// ASCII case-insensitive equality.
bool iequals(std::string_view a, std::string_view b);

/// Epoch seconds as ISO 8601 in UTC without a zone suffix: "2026-12-02T18:00:00".
std::string utc_iso8601(long long epoch_seconds);

}  // namespace rlsched::text
