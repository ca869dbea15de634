// Accelerator type sets as users and traces write them: "a100|h200" means any one of these types.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rlsched::text {

/// The types of `text` in order, each trimmed; empty items and repeats dropped ("a| b|a|" -> {a, b}).
std::vector<std::string> parse_type_set(std::string_view text);

/// The inverse of parse_type_set: {a, b} -> "a|b"; {} -> "".
std::string format_type_set(const std::vector<std::string>& types);

/// \return true if `type` is one of the set `text`; an empty set allows every type.
bool type_set_allows(std::string_view text, std::string_view type);

}  // namespace rlsched::text
