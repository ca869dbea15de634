#include "live/live_report.h"

#include <algorithm>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

#include "text/duration.h"

namespace rlsched::cli::live {

using nlohmann::json;

std::string local_time(Seconds epoch) {
  if (epoch <= 0) return "unknown";
  const std::time_t t = static_cast<std::time_t>(epoch);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

json estimate_json(const Result<std::vector<sim::StartEstimate>>& estimates, JobId job) {
  if (!estimates.ok()) return {{"available", false}, {"why", estimates.status().message()}};
  for (const sim::StartEstimate& e : *estimates)
    if (e.id == job)
      return {{"available", true},       {"start", e.start},         {"earliest", e.earliest},
              {"latest", e.latest},      {"partition", e.partition}, {"accelerator_type", e.accelerator_type}};
  return {{"available", false}, {"why", "the forward simulation returned no estimate for this job"}};
}

namespace {

constexpr std::size_t kAheadShown = 10;  // jobs ahead listed in the text form

// "2026-12-02 14:05:00 (in 2h05m; 1h40m-3h00m), on h200 in partition h200"
std::string when(const json& e, Seconds now, bool name_type = true) {
  if (!e.value("available", false)) return "not available (" + e.value("why", std::string()) + ")";
  const Seconds start = e["start"];
  if (start < 0) return "not within the simulated horizon (30 days)";
  std::string out = fmt::format("{} (in {}", local_time(start), text::format_duration(std::max<Seconds>(start - now, 0)));
  const Seconds earliest = e["earliest"], latest = e["latest"];
  if (earliest >= 0 && latest >= 0 && (earliest != start || latest != start))
    out += fmt::format("; between {} and {}", text::format_duration(std::max<Seconds>(earliest - now, 0)),
                       latest < 0 ? "never" : text::format_duration(std::max<Seconds>(latest - now, 0)));
  out += ")";
  const std::string type = e.value("accelerator_type", std::string());
  if (!type.empty() && name_type) out += " on " + type;
  const std::string partition = e.value("partition", std::string());
  if (!partition.empty()) out += " in partition " + partition;
  return out;
}

std::string signed_number(double v) {
  return std::abs(v) >= 1e4 || (v != 0 && std::abs(v) < 1e-2) ? fmt::format("{:+.3g}", v) : fmt::format("{:+.2f}", v);
}

void print_run_time(const json& r) {
  if (r["limit"].is_null()) {
    fmt::print("  run time: unknown (no time limit)\n");
  } else if (r["ended_jobs"].get<std::size_t>() == 0) {
    fmt::print("  run time: its {} limit (no ended job of its user known yet)\n",
               text::format_duration(r["limit"].get<Seconds>()));
  } else {
    const std::size_t n = r["ended_jobs"].get<std::size_t>();
    const Seconds predicted = r["predicted"].get<Seconds>(), limit = r["limit"].get<Seconds>();
    fmt::print("  run time: about {} of its {} limit ({:.2g}%: the share its user's last {} ended job{} used)\n",
               text::format_duration(predicted), text::format_duration(limit),
               100.0 * static_cast<double>(predicted) / static_cast<double>(limit), n, n == 1 ? "" : "s");
  }
}

}  // namespace

void print_explanation(const json& x) {
  const Seconds now = x["now"];
  fmt::print("job {} ({}, {}): {}, reason {}\n", x["job_id"].get<long long>(), x["user"].get<std::string>(),
             x["name"].get<std::string>(), x["state"].get<std::string>(), x["reason"]["code"].get<std::string>());
  fmt::print("  why: {}\n", x["reason"]["text"].get<std::string>());
  if (!x["reason"]["advice"].get<std::string>().empty())
    fmt::print("  what you can do: {}\n", x["reason"]["advice"].get<std::string>());
  fmt::print("  asks for: {} (QOS {}, account {})\n", x["request"].get<std::string>(), x["qos"].get<std::string>(),
             x["account"].get<std::string>());
  print_run_time(x["run_time"]);
  for (const json& a : x["accelerators"])
    fmt::print("  {}:{} in {}: {} of {} idle{}\n", a["gres"].get<std::string>(), a["type"].get<std::string>(),
               a["partition"].get<std::string>(), a["idle"].get<int>(), a["total"].get<int>(),
               a["allowed"].get<bool>() ? (a["fits"].get<bool>() ? " (its request allows it)" : " (its request allows it; busy)")
                                        : (a["fits"].get<bool>() ? " (free now, but its request does not allow it)" : ""));
  if (x["reason"]["code"] == "Resources") {
    // The blocker in one line: the types it may use, all busy, and the ones free now.
    std::string busy, free;
    for (const json& a : x["accelerators"]) {
      const std::string name = a["gres"].get<std::string>() + ":" + a["type"].get<std::string>();
      std::string& list = a["allowed"].get<bool>() ? busy : free;
      if (a["allowed"].get<bool>() == a["fits"].get<bool>() || list.find(name) != std::string::npos) continue;
      list += fmt::format("{}{} in {} ({} idle)", list.empty() ? "" : ", ", name, a["partition"].get<std::string>(),
                          a["idle"].get<int>());
    }
    if (!busy.empty()) fmt::print("  blocked by: {} busy\n", busy);
    if (!free.empty()) fmt::print("  free now: {}; ask for it if your job can run there\n", free);
  }
  for (const json& r : x["ranks"]) {
    fmt::print("  rank in {}: {} of {} pending\n", r["partition"].get<std::string>(), r["rank"].get<int>(),
               r["pending"].get<int>());
    const std::size_t shown = std::min<std::size_t>(r["ahead"].size(), kAheadShown);
    for (std::size_t i = 0; i < shown; ++i) {
      const json& a = r["ahead"][i];
      fmt::print("    ahead: job {} ({}), {}, priority {}\n", a["job_id"].get<long long>(), a["user"].get<std::string>(),
                 a["request"].get<std::string>(), a["priority"].get<long long>());
    }
    if (r["ahead"].size() > shown) fmt::print("    and {} more ahead (--json lists them all)\n", r["ahead"].size() - shown);
  }
  const json& p = x["priority"];
  if (p["factors"].is_null()) {
    fmt::print("  priority {} (no factors: priority/multifactor is not in use)\n", p["total"].get<long long>());
  } else {
    const json& f = p["factors"];
    fmt::print("  priority {}: age {:.0f}, fair-share {:.0f}, job size {:.0f}, partition {:.0f}, QOS {:.0f}, site {}\n",
               p["total"].get<long long>(), f["age"].get<double>(), f["fairshare"].get<double>(),
               f["job_size"].get<double>(), f["partition"].get<double>(), f["qos"].get<double>(),
               f["site"].get<long long>());
  }
  const json& s = x["site"];
  std::string up, down;
  for (const json& e : s["inputs"]) {
    const double d = e["delta"];
    if (d == 0) continue;
    std::string& list = d > 0 ? up : down;
    if (std::count(list.begin(), list.end(), ',') >= 2) continue;  // the three largest each way
    list += fmt::format("{}{} {:g} vs median {:g} ({})", list.empty() ? "" : ", ", e["input"].get<std::string>(),
                        e["value"].get<double>(), e["median"].get<double>(), signed_number(d));
  }
  fmt::print("  site factor, policy {}: score {:.4g} (queue median {:.4g})\n", s["policy"].get<std::string>(),
             s["score"].get<double>(), s["median_score"].get<double>());
  fmt::print("    pushed up by: {}\n", up.empty() ? "nothing" : up);
  fmt::print("    pushed down by: {}\n", down.empty() ? "nothing" : down);
  for (const json& entry : x["placement"]) fmt::print("  placement: {}\n", entry.get<std::string>());
  if (x["placement"].empty()) fmt::print("  placement: none recorded by job_submit/rlsched\n");
  fmt::print("  start, Slurm's estimate: {}\n",
             x["slurm_estimate"].is_null() ? std::string("none yet (the backfill plan has not reached it)")
                                           : local_time(x["slurm_estimate"].get<Seconds>()));
  fmt::print("  start, rlsched's estimate: {}\n", when(x["rlsched_estimate"], now));
}

void print_estimate(const json& x) {
  const Seconds now = x["now"];
  fmt::print("{} now:\n", x["request"].get<std::string>());
  for (const json& e : x["estimates"])
    fmt::print("  {}: {}\n", e["accelerator_type"].get<std::string>().empty() ? std::string("start")
                                                                              : "on " + e["accelerator_type"].get<std::string>(),
               when(e["estimate"], now, /*name_type=*/false));
}

}  // namespace rlsched::cli::live
