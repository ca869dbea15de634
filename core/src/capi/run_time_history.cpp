#include "capi/run_time_history.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rlsched::capi {
namespace {

const char* basis_name(RunTimeBasis basis) {
  return basis == RunTimeBasis::kLimitShare ? "limit_share" : "run_time";
}

}  // namespace

RunTimeHistory run_time_history_of(const RunTimePredictor& predictor, const HeardJobs& heard) {
  return {predictor.options().basis, predictor.history(), heard};
}

std::string run_time_history_json(const RunTimeHistory& history) {
  const std::map<std::string, std::deque<double>> users(history.users.begin(), history.users.end());
  std::string out = fmt::format("{{\"schema\": 1, \"basis\": \"{}\", \"users\": {{", basis_name(history.basis));
  bool first = true;
  for (const auto& [user, values] : users) {
    if (values.empty()) continue;
    out += fmt::format("{}{}: [{}]", first ? "" : ", ", nlohmann::json(user).dump(), fmt::join(values, ", "));
    first = false;
  }
  const std::map<std::uint32_t, Seconds> ends(history.heard.begin(), history.heard.end());
  out += "}, \"heard\": [";
  first = true;
  for (const auto& [job, end] : ends) {
    out += fmt::format("{}[{}, {}]", first ? "" : ", ", job, end);
    first = false;
  }
  return out + "]}\n";
}

Result<std::size_t> restore_run_time_history(std::string_view text, const std::string& name, RunTimePredictor& into,
                                             HeardJobs& heard) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // a syntax error (its line and column), or a number out of range
    return Status::InvalidInput(fmt::format("{}: not JSON: {}", name, e.what()));
  }
  const auto bad = [&](const std::string& why) {
    return Status::InvalidInput(fmt::format("{}: not an rlsched run-time history: {}", name, why));
  };
  if (!root.is_object() || root.value("schema", nlohmann::json()) != 1) return bad("\"schema\" is not 1");
  const char* basis = basis_name(into.options().basis);
  if (root.value("basis", nlohmann::json()) != basis) return bad(fmt::format("\"basis\" is not \"{}\"", basis));
  const auto users = root.find("users");
  if (users == root.end() || !users->is_object()) return bad("\"users\" is not an object");
  const double most = into.options().basis == RunTimeBasis::kLimitShare ? 1.0 : 1e12;
  std::vector<std::pair<std::string, std::deque<double>>> read;
  for (const auto& [user, values] : users->items()) {
    if (!values.is_array()) return bad(fmt::format("users[\"{}\"] is not a list", user));
    std::deque<double> latest_first;
    for (std::size_t i = 0; i < values.size(); ++i) {
      const nlohmann::json& v = values[i];
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || v.get<double>() > most)
        return bad(fmt::format("users[\"{}\"][{}] is not a number in [0, {}]", user, i, most));
      latest_first.push_back(v.get<double>() + 0.0);  // -0 read as 0, as it is written back
    }
    read.emplace_back(user, std::move(latest_first));
  }
  const auto jobs = root.find("heard");
  if (jobs == root.end() || !jobs->is_array()) return bad("\"heard\" is not a list");
  HeardJobs ends;
  for (std::size_t i = 0; i < jobs->size(); ++i) {
    const nlohmann::json& e = (*jobs)[i];
    if (!e.is_array() || e.size() != 2 || !e[0].is_number_unsigned() ||
        e[0].get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max() || !e[1].is_number_integer())
      return bad(fmt::format("heard[{}] is not [job_id, end time]", i));
    ends[e[0].get<std::uint32_t>()] = e[1].get<Seconds>();
  }
  for (auto& [user, values] : read) into.restore(user, std::move(values));
  heard = std::move(ends);
  return read.size();
}

}  // namespace rlsched::capi
