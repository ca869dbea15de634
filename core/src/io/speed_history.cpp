#include "rlsched/io/speed_history.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace rlsched::io {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double upper = v[mid];
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

// Runs of one class: type -> accelerator count -> run times.
using ClassRuns = std::map<std::string, std::map<int, std::vector<double>>>;

/// Speed of `type` relative to `anchor` for one class: geometric mean over the counts both ran with (each with
/// min_runs runs), weighted by the smaller number of runs. 0 when they share no such count.
double ratio(const ClassRuns& runs, const std::string& anchor, const std::string& type, std::size_t min_runs) {
  double log_sum = 0, weight = 0;
  for (const auto& [count, anchor_runs] : runs.at(anchor)) {
    auto it = runs.at(type).find(count);
    if (it == runs.at(type).end() || anchor_runs.size() < min_runs || it->second.size() < min_runs) continue;
    const double w = static_cast<double>(std::min(anchor_runs.size(), it->second.size()));
    log_sum += w * std::log(median(anchor_runs) / median(it->second));
    weight += w;
  }
  return weight > 0 ? std::exp(log_sum / weight) : 0;
}

std::string escape_glob(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string yaml_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

Result<SpeedHistory> learn_speeds(const std::vector<Job>& jobs, const std::vector<AcceleratorType>& defaults,
                                  std::size_t min_runs) {
  SpeedHistory h;
  std::map<std::string, ClassRuns> by_class;
  std::map<std::string, std::size_t> type_runs;
  std::map<std::string, std::string> type_gres;
  for (const Job& j : jobs) {
    if (j.accel.count <= 0) continue;
    if (j.job_class.empty() || j.ran_on_type.empty() || j.run_time <= 0) {
      ++h.jobs_ignored;
      continue;
    }
    by_class[j.job_class][j.ran_on_type][j.accel.count].push_back(static_cast<double>(j.run_time));
    ++type_runs[j.ran_on_type];
    type_gres[j.ran_on_type] = j.accel.name;
    ++h.jobs_used;
  }
  if (h.jobs_used == 0)
    return Status::InvalidInput(
        "no accelerator job with a job name, an allocated accelerator type (AllocTRES gres/gpu:TYPE=N) and a run "
        "time: nothing to learn speeds from");
  min_runs = std::max<std::size_t>(min_runs, 1);

  // Anchor of each class, and its ratios to the other types.
  struct Learned {
    std::string anchor;
    std::map<std::string, double> ratio;  // type -> speed relative to the anchor (anchor itself: 1)
  };
  std::map<std::string, Learned> learned;
  for (const auto& [cls, runs] : by_class) {
    Learned l;
    std::size_t most = 0;
    for (const auto& [type, counts] : runs) {
      std::size_t n = 0;
      for (const auto& [count, times] : counts) n += times.size();
      if (n > most) {
        most = n;
        l.anchor = type;
      }
    }
    l.ratio[l.anchor] = 1.0;
    for (const auto& [type, counts] : runs)
      if (type != l.anchor)
        if (const double r = ratio(runs, l.anchor, type, min_runs); r > 0) l.ratio[type] = r;
    if (l.ratio.size() < 2) {
      h.left_out.push_back(runs.size() < 2 ? fmt::format("{}: ran on {} only", cls, l.anchor)
                                           : fmt::format("{}: no accelerator count with {} runs on two types", cls,
                                                         min_runs));
      continue;
    }
    learned[cls] = std::move(l);
  }

  // Default speeds: given, or learned relative to the most used type.
  h.types = defaults;
  if (h.types.empty()) {
    std::string reference;
    std::size_t most = 0;
    for (const auto& [type, n] : type_runs)
      if (n > most) {
        most = n;
        reference = type;
      }
    for (const auto& [type, n] : type_runs) {
      AcceleratorType t;
      t.name = type;
      t.gres = type_gres[type];
      double log_sum = 0;
      int count = 0;
      for (const auto& [cls, l] : learned) {
        auto a = l.ratio.find(type), b = l.ratio.find(reference);
        if (a != l.ratio.end() && b != l.ratio.end()) {
          log_sum += std::log(a->second / b->second);
          ++count;
        }
      }
      t.speed = type == reference || count == 0 ? 1.0 : std::exp(log_sum / count);
      h.types.push_back(std::move(t));
    }
  }
  auto default_speed = [&h](const std::string& type) {
    for (const AcceleratorType& t : h.types)
      if (t.name == type) return t.speed;
    return 0.0;
  };

  for (auto& [cls, l] : learned) {
    const double base = default_speed(l.anchor);
    if (base <= 0) {
      h.left_out.push_back(fmt::format("{}: ran mostly on {}, a type the config does not list", cls, l.anchor));
      continue;
    }
    ClassSpeeds c;
    c.job_class = cls;
    c.anchor = l.anchor;
    for (const auto& [type, r] : l.ratio)
      if (default_speed(type) > 0) c.speed[type] = base * r;
    for (const auto& [type, counts] : by_class.at(cls)) {
      std::vector<double> all;
      for (const auto& [count, times] : counts) all.insert(all.end(), times.begin(), times.end());
      c.runs[type] = TypeRuns{all.size(), median(all)};
    }
    h.classes.push_back(std::move(c));
  }
  return h;
}

std::string speeds_yaml(const SpeedHistory& h, const std::string& source) {
  std::string out = fmt::format(
      "# Accelerator speeds learned by `rlsched speeds` from {}: {} accelerator jobs used, {} without a job name,\n"
      "# allocated type or run time. Each class's speed on a type compares its median run times at equal\n"
      "# accelerator counts with the type it ran on most (its anchor), whose speed is the type's default.\n",
      source, h.jobs_used, h.jobs_ignored);
  out += "accelerator_types:\n";
  for (const AcceleratorType& t : h.types)
    out += fmt::format("  - {{name: {}, gres: {}, speed: {:.3g}}}\n", t.name, t.gres, t.speed);
  if (h.classes.empty()) {
    out += "# No job class ran on two types with enough runs: no job_classes.\n";
  } else {
    out += "job_classes:\n";
    for (const ClassSpeeds& c : h.classes) {
      std::string runs;
      for (const auto& [type, r] : c.runs)
        runs += fmt::format("{}{} {} runs, median {:.0f} s", runs.empty() ? "" : "; ", type, r.runs, r.median_seconds);
      out += fmt::format("  - name: {}  # {}\n", yaml_quote(c.job_class), runs);
      out += fmt::format("    match: {{job_name: {}}}\n", yaml_quote(escape_glob(c.job_class)));
      std::string speeds;
      for (const auto& [type, s] : c.speed) speeds += fmt::format("{}{}: {:.3g}", speeds.empty() ? "" : ", ", type, s);
      out += fmt::format("    speeds: {{{}}}\n", speeds);
    }
  }
  for (const std::string& why : h.left_out) out += fmt::format("# left out: {}\n", why);
  return out;
}

}  // namespace rlsched::io
