#include "text/duration.h"

#include <fmt/format.h>
#include <vector>

#include "text/text.h"

namespace rlsched::text {
namespace {

// Nine digits keep every product below in int64 range (days * 86400 + ...).
constexpr std::size_t kMaxDigits = 9;

bool number(std::string_view text, long long& value) {
  if (!all_digits(text) || text.size() > kMaxDigits) return false;
  value = 0;
  for (char c : text) value = value * 10 + (c - '0');
  return true;
}

Result<Seconds> clock(std::string_view t) {
  long long days = 0;
  const std::size_t dash = t.find('-');
  const bool has_days = dash != std::string_view::npos;
  if (has_days) {
    if (!number(t.substr(0, dash), days)) return Status::InvalidInput("days are not a whole number");
    t.remove_prefix(dash + 1);
  }
  const std::vector<std::string_view> parts = split(t, ':');
  if (parts.size() > 3) return Status::InvalidInput("too many ':' fields");
  long long value[3] = {0, 0, 0};
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (!number(parts[i], value[i])) return Status::InvalidInput("fields must be whole numbers");
  if (has_days) return Seconds{days * 86400 + value[0] * 3600 + value[1] * 60 + value[2]};  // D-HH[:MM[:SS]]
  if (parts.size() == 2) return Seconds{value[0] * 60 + value[1]};                          // MM:SS
  return Seconds{value[0] * 3600 + value[1] * 60 + value[2]};                               // HH:MM:SS
}

Seconds unit_of(char c) {
  switch (c) {
    case 's':
      return 1;
    case 'm':
      return 60;
    case 'h':
      return 3600;
    case 'd':
      return 86400;
    default:
      return 0;
  }
}

}  // namespace

Result<Seconds> parse_duration(std::string_view text, const DurationSyntax& syntax) {
  std::string_view t = trim(text);
  if (t.empty()) return Status::InvalidInput("empty");
  if (iequals(t, "INFINITE") || iequals(t, "UNLIMITED")) {
    if (syntax.infinite) return Seconds{0};
    return Status::InvalidInput("a limit is required here");
  }
  if (t.front() == '-') return Status::InvalidInput("negative");
  if (t.find_first_of(":-") != std::string_view::npos) return clock(t);
  long long value = 0;
  if (const Seconds unit = unit_of(t.back()); unit != 0) {
    if (!number(t.substr(0, t.size() - 1), value)) return Status::InvalidInput("fields must be whole numbers");
    return Seconds{value * unit};
  }
  if (!number(t, value)) return Status::InvalidInput("fields must be whole numbers");
  if (syntax.bare_unit == 0) return Status::InvalidInput("give a unit: s, m, h or d");
  return Seconds{value * syntax.bare_unit};
}

std::string format_duration(Seconds seconds) {
  if (seconds < 0) return "-" + format_duration(-seconds);
  if (seconds < 60) return fmt::format("{}s", seconds);
  if (seconds < 3600) return fmt::format("{}m", seconds / 60);
  if (seconds < 86400) return fmt::format("{}h{:02}m", seconds / 3600, seconds % 3600 / 60);
  return fmt::format("{}d{:02}h", seconds / 86400, seconds % 86400 / 3600);
}

}  // namespace rlsched::text
