#include "capi/preemption_history.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rlsched::capi {

std::string preemption_history_json(const preemption::History& history) {
  std::vector<std::pair<JobId, Seconds>> entries;
  for (const auto& [job, times] : history.times())
    for (Seconds t : times) entries.emplace_back(job, t);
  std::sort(entries.begin(), entries.end());
  std::string out = "{\"schema\": 1, \"preemptions\": [";
  for (std::size_t i = 0; i < entries.size(); ++i)
    out += fmt::format("{}[{}, {}]", i ? ", " : "", entries[i].first, entries[i].second);
  return out + "]}\n";
}

Result<preemption::History> parse_preemption_history(std::string_view text, const std::string& name) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // A syntax error, whose e.what() names the line and column ("parse error at line 2, column 5: ..."), or a number
    // out of range ("number overflow parsing '1e999'"), which parse_error does not cover.
    return Status::InvalidInput(fmt::format("{}: not JSON: {}", name, e.what()));
  }
  const auto bad = [&](const std::string& why) {
    return Status::InvalidInput(fmt::format("{}: not an rlsched preemption history: {}", name, why));
  };
  if (!root.is_object() || root.value("schema", nlohmann::json()) != 1) return bad("\"schema\" is not 1");
  const auto list = root.find("preemptions");
  if (list == root.end() || !list->is_array()) return bad("\"preemptions\" is not a list");
  preemption::History history;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const nlohmann::json& e = (*list)[i];
    if (!e.is_array() || e.size() != 2 || !e[0].is_number_unsigned() ||
        e[0].get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max() || !e[1].is_number_integer())
      return bad(fmt::format("preemptions[{}] is not [job_id, time]", i));  // Slurm's job ids are 32-bit
    history.record(e[0].get<JobId>(), e[1].get<Seconds>());
  }
  return history;
}

}  // namespace rlsched::capi
