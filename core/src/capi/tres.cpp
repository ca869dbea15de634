#include "capi/tres.h"

#include <cctype>

#include "text/text.h"

namespace rlsched::capi {
namespace {

using text::split;
using text::trim;

// A count std::stoll cannot overflow on: at most 12 digits.
bool count_digits(std::string_view s) {
  return s.size() <= 12 && text::all_digits(s);
}

}  // namespace

std::vector<TresEntry> parse_tres(std::string_view text) {
  std::vector<TresEntry> entries;
  if (trim(text).empty()) return entries;
  for (std::string_view raw : split(text, ',')) {
    TresEntry e;
    e.text = std::string(raw);
    std::string_view s = trim(raw);
    if (s.substr(0, 5) == "gres:" || s.substr(0, 5) == "gres/") {
      e.prefix = std::string(s.substr(0, 5));
      s.remove_prefix(5);
    }
    const std::vector<std::string_view> fields = split(s, ':');
    // Other TRES kinds ("license:...", "bb:...") have no place in tres_per_*, but keep them intact if present.
    if (fields.empty() || fields.size() > 3 || fields[0].empty() || fields[0] == "license" || fields[0] == "bb" ||
        fields[0].find_first_of("=/ ") != std::string_view::npos) {
      e.gres = false;
      entries.push_back(std::move(e));
      continue;
    }
    e.name = std::string(fields[0]);
    if (fields.size() == 1) {
      e.count = 1;
    } else if (fields.size() == 2) {
      if (count_digits(fields[1]))
        e.count = std::stoll(std::string(fields[1]));
      else if (!fields[1].empty() && std::isdigit(static_cast<unsigned char>(fields[1][0])))
        e.gres = false;  // "gpu:4k": a suffixed count; leave it to Slurm
      else
        e.type = std::string(fields[1]);
    } else {
      e.type = std::string(fields[1]);
      if (count_digits(fields[2]))
        e.count = std::stoll(std::string(fields[2]));
      else
        e.gres = false;
    }
    if (e.gres && (e.count <= 0 || (fields.size() == 3 && e.type.empty()))) e.gres = false;
    entries.push_back(std::move(e));
  }
  return entries;
}

std::string format_entry(const TresEntry& e) {
  if (!e.gres) return e.text;
  std::string out = e.prefix;
  out += e.name;
  if (!e.type.empty()) out += ":" + e.type;
  out += ":" + std::to_string(e.count);
  return out;
}

std::string join_entries(const std::vector<TresEntry>& entries) {
  std::string out;
  for (const TresEntry& e : entries) out += (out.empty() ? "" : ",") + format_entry(e);
  return out;
}

bool mentions_gres(std::string_view text, std::string_view name) {
  if (text.empty() || name.empty()) return false;
  for (std::size_t at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1)) {
    const bool start_ok =
        at == 0 || text[at - 1] == ':' || text[at - 1] == '/' || text[at - 1] == ',' || text[at - 1] == ';';
    const std::size_t end = at + name.size();
    const bool end_ok =
        end == text.size() || text[end] == ':' || text[end] == '=' || text[end] == ',' || text[end] == ';';
    if (start_ok && end_ok) return true;
  }
  return false;
}

}  // namespace rlsched::capi
