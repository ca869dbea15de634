#include "io/cluster_common.h"

#include <cctype>

#include <fmt/format.h>

#include "io/line_source.h"

namespace rlsched::io {

using text::all_digits;

std::vector<std::string_view> split_gres_list(std::string_view list) {
  std::vector<std::string_view> items;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || (list[i] == ',' && depth == 0)) {
      items.push_back(trim(list.substr(start, i - start)));
      start = i + 1;
    } else if (list[i] == '(') {
      ++depth;
    } else if (list[i] == ')' && depth > 0) {
      --depth;
    }
  }
  return items;
}

bool parse_gres_spec(std::string_view spec, GresCount& out, std::string& error, int min_count) {
  std::string_view body = trim(spec);
  const std::size_t paren = body.find('(');
  if (paren != std::string_view::npos) {
    if (body.back() != ')') {
      error = fmt::format("GRES '{}': unbalanced '(' (expected a trailing socket binding like '(S:0-1)')", spec);
      return false;
    }
    body = body.substr(0, paren);
  }
  std::vector<std::string_view> parts;
  split_into(body, ':', parts);
  const auto bad = [&](std::string_view why) {
    error = fmt::format("GRES '{}': {} (expected name:type:count or name:count, e.g. gpu:h200:8)", spec, why);
    return false;
  };
  if (parts.size() > 3) return bad("too many ':' fields");
  for (auto part : parts)
    if (part.empty()) return bad("empty field");
  out = GresCount{std::string(parts[0]), "", 1};
  std::string_view count_text;
  if (parts.size() == 3) {
    out.type = std::string(parts[1]);
    count_text = parts[2];
  } else if (parts.size() == 2) {
    // Slurm reads "gpu:8" as a count and "gpu:h200" as a type with count 1.
    if (all_digits(parts[1]))
      count_text = parts[1];
    else
      out.type = std::string(parts[1]);
  }
  if (!count_text.empty()) {
    long long count = 0;
    if (!all_digits(count_text) || !parse_int(count_text, count)) return bad("count is not a whole number");
    if (count < min_count || count > 1'000'000)
      return bad(fmt::format("count must be between {} and 1000000", min_count));
    out.count = static_cast<int>(count);
  }
  return true;
}

void add_implicit_types(Cluster& cluster) {
  for (const auto& node : cluster.nodes) {
    for (const auto& g : node.gres) {
      if (g.type.empty() || cluster.find_type(g.type, g.name) != nullptr) continue;
      AcceleratorType type;
      type.name = g.type;
      type.gres = g.name;
      cluster.accelerator_types.push_back(std::move(type));
    }
  }
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool parse_bool(std::string_view text, bool& value) {
  const std::string t = to_lower(trim(text));
  if (t == "yes" || t == "true" || t == "1" || t == "on") {
    value = true;
    return true;
  }
  if (t == "no" || t == "false" || t == "0" || t == "off") {
    value = false;
    return true;
  }
  return false;
}

}  // namespace rlsched::io
