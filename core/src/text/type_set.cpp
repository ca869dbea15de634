#include "text/type_set.h"

#include <algorithm>

#include "text/text.h"

namespace rlsched::text {

std::vector<std::string> parse_type_set(std::string_view text) {
  std::vector<std::string> types;
  for (std::string_view item : split(text, '|')) {
    item = trim(item);
    if (!item.empty() && std::find(types.begin(), types.end(), item) == types.end()) types.emplace_back(item);
  }
  return types;
}

std::string format_type_set(const std::vector<std::string>& types) {
  std::string out;
  for (const std::string& t : types) {
    if (!out.empty()) out += '|';
    out += t;
  }
  return out;
}

bool type_set_allows(std::string_view text, std::string_view type) {
  if (trim(text).empty()) return true;
  for (;;) {
    const std::size_t bar = text.find('|');
    if (trim(text.substr(0, bar)) == type) return true;
    if (bar == std::string_view::npos) return false;
    text.remove_prefix(bar + 1);
  }
}

}  // namespace rlsched::text
