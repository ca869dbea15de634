#include "text/text.h"

#include <ctime>

namespace rlsched::text {
namespace {

bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

std::string_view trim(std::string_view text) {
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

void split_into(std::string_view text, char delimiter, std::vector<std::string_view>& out) {
  out.clear();
  for (std::size_t start = 0;;) {
    const std::size_t at = text.find(delimiter, start);
    if (at == std::string_view::npos) {
      out.push_back(text.substr(start));
      return;
    }
    out.push_back(text.substr(start, at - start));
    start = at + 1;
  }
}

std::vector<std::string_view> split(std::string_view text, char delimiter) {
  std::vector<std::string_view> out;
  split_into(text, delimiter, out);
  return out;
}

std::vector<std::string> split_names(std::string_view text, char delimiter) {
  std::vector<std::string> names;
  for (std::string_view item : split(text, delimiter))
    if (item = trim(item); !item.empty()) names.emplace_back(item);
  return names;
}

bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  return true;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

std::string utc_iso8601(long long epoch_seconds) {
  const std::time_t time = static_cast<std::time_t>(epoch_seconds);
  std::tm tm{};
  gmtime_r(&time, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  return text;
}

}  // namespace rlsched::text
