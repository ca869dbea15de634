// rlsched.yaml's energy section. A weekly table must cover every second of the week exactly once; a CSV series must
// step regularly; values are never negative; power is given for known accelerator types only.
#include "config/energy_config.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "io/time_parse.h"
#include "text/text.h"

namespace rlsched::config {
namespace {

const Keys kEnergyKeys = {"mode", "currency", "power", "price", "carbon", "deferrable", "follow", "rule", "min_saving"};
const Keys kPowerKeys = {"accelerators", "node", "suspended_w"};
const Keys kDeviceKeys = {"busy_w", "idle_w"};
const Keys kScheduleKeys = {"weekly", "utc_offset", "csv"};
const Keys kWeeklyKeys = {"days", "hours", "value"};
const Keys kDeferrableKeys = {"qos", "job_classes", "max_deferral"};

constexpr const char* kDayNames[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
constexpr double kMaxWatts = 100000;  // 100 kW: a whole rack, far above any one device or node

std::string week_time(Seconds t) {
  if (t == energy::kWeek) return "Mon 00:00 (the week's end)";
  const Seconds day = t / 86400, in_day = t % 86400;
  std::string name = kDayNames[day];
  name[0] = static_cast<char>(name[0] - 'a' + 'A');
  return fmt::format("{} {:02}:{:02}", name, in_day / 3600, in_day % 3600 / 60);
}

int day_index(const std::string& name) {
  for (int d = 0; d < 7; ++d)
    if (name == kDayNames[d]) return d;
  return -1;
}

/// An entry of a weekly table on one day: [start, end) in seconds of the week, and the entry's index (not its node:
/// YAML::Node assigns through, so a sorted copy would rewrite the document).
struct Span {
  Seconds start = 0, end = 0;
  double value = 0;
  std::size_t entry = 0;
};

class EnergyParser {
 public:
  EnergyParser(const YamlChecks& checks, PluginConfig& config) : c_(checks), config_(config) {}

  void parse(const YAML::Node& map) {
    c_.check_keys(map, kEnergyKeys, "energy");
    energy::EnergyConfig& e = config_.energy;
    config_.energy_mode = config_.mode;
    if (const YAML::Node n = map["mode"]) {
      const std::string mode = c_.scalar(n, "energy.mode");
      if (mode == "enforce")
        config_.energy_mode = Mode::kEnforce;
      else if (mode == "shadow")
        config_.energy_mode = Mode::kShadow;
      else
        c_.fail(n, fmt::format("energy.mode must be enforce or shadow (got '{}')", mode));
    }
    if (const YAML::Node n = map["currency"]) {
      e.currency = c_.scalar(n, "energy.currency");
      if (e.currency.empty() || e.currency.size() > 8)
        c_.fail(n, "energy.currency must be a short name, e.g. EUR or USD");
    }
    if (const YAML::Node n = map["power"]) parse_power(n, e.power);
    if (const YAML::Node n = map["price"]) e.price = parse_schedule(n, "energy.price");
    if (const YAML::Node n = map["carbon"]) e.carbon = parse_schedule(n, "energy.carbon");
    if (const YAML::Node n = map["rule"]) {
      const std::string rule = c_.scalar(n, "energy.rule");
      if (rule == "least-cost")
        e.rule = energy::Rule::kLeastCost;
      else if (rule == "cheapest-window")
        e.rule = energy::Rule::kCheapestWindow;
      else if (rule == "none")
        e.rule = energy::Rule::kNone;
      else
        c_.fail(n, fmt::format("energy.rule must be least-cost, cheapest-window or none (got '{}')", rule));
    }
    if (const YAML::Node n = map["min_saving"]) {
      e.min_saving = c_.number(n, "energy.min_saving");
      if (!(e.min_saving >= 0 && e.min_saving < 1))
        c_.fail(n, fmt::format("energy.min_saving must be in [0, 1): a share of the run's cost (got {})", n.Scalar()));
    }
    if (const YAML::Node n = map["follow"]) {
      const std::string follow = c_.scalar(n, "energy.follow");
      if (follow != "price" && follow != "carbon")
        c_.fail(n, fmt::format("energy.follow must be price or carbon (got '{}')", follow));
      e.follow_carbon = follow == "carbon";
    }
    if (const YAML::Node n = map["deferrable"]) parse_deferrable(n, e);
  }

 private:
  double watts(const YAML::Node& n, const std::string& key) const {
    const double w = c_.number(n, key);
    if (!(w >= 0) || w > kMaxWatts)
      c_.fail(n, fmt::format("{} must be in [0, {}] watts (got {})", key, kMaxWatts, n.Scalar()));
    return w;
  }

  energy::DevicePower device(const YAML::Node& map, const std::string& where) const {
    c_.check_keys(map, kDeviceKeys, where);
    energy::DevicePower d;
    if (!map["busy_w"]) c_.fail(map, fmt::format("{}.busy_w is missing (watts drawn when in use)", where));
    d.busy_w = watts(map["busy_w"], where + ".busy_w");
    if (const YAML::Node n = map["idle_w"]) d.idle_w = watts(n, where + ".idle_w");
    if (d.idle_w > d.busy_w)
      c_.fail(map, fmt::format("{}: idle_w ({}) is above busy_w ({})", where, d.idle_w, d.busy_w));
    return d;
  }

  void parse_power(const YAML::Node& map, energy::PowerModel& p) const {
    c_.check_keys(map, kPowerKeys, "energy.power");
    if (const YAML::Node types = map["accelerators"]) {
      if (!types.IsMap())
        c_.fail(types, "energy.power.accelerators must map type names to {busy_w, idle_w}, e.g. h200: {busy_w: 700}");
      for (const auto& kv : types) {
        const std::string type = kv.first.Scalar();
        if (!config_.find_type(type)) {
          std::string known;
          for (const AcceleratorType& t : config_.accelerator_types) known += (known.empty() ? "" : ", ") + t.name;
          c_.fail(kv.first,
                  fmt::format("energy.power.accelerators: unknown accelerator type '{}' ({})", type,
                              known.empty() ? "accelerator_types lists none" : "accelerator_types lists " + known));
        }
        p.accelerators[type] = device(kv.second, "energy.power.accelerators." + type);
      }
    }
    if (const YAML::Node n = map["node"]) p.node = device(n, "energy.power.node");
    if (const YAML::Node n = map["suspended_w"]) p.suspended_w = watts(n, "energy.power.suspended_w");
  }

  double schedule_value(const YAML::Node& n, const std::string& key) const {
    const double v = c_.number(n, key);
    if (v < 0) c_.fail(n, fmt::format("{} must not be negative (got {})", key, n.Scalar()));
    return v;
  }

  // "07:00" -> seconds into the day; "24:00" only as an end.
  Seconds clock(const YAML::Node& n, const std::string& text, const std::string& key, bool end) const {
    int h = -1, m = -1;
    char tail = 0;
    if (std::sscanf(text.c_str(), "%2d:%2d%c", &h, &m, &tail) != 2 || text.size() != 5 || m < 0 || m > 59 || h < 0 ||
        h > 24 || (h == 24 && (m != 0 || !end)))
      c_.fail(n, fmt::format("{}: '{}' is not a time of day HH:MM (00:00 to 24:00)", key, text));
    return h * 3600 + m * 60;
  }

  std::vector<int> days(const YAML::Node& n, const std::string& key) const {
    std::vector<int> out;
    for (const std::string& part : text::split_names(c_.scalar(n, key))) {
      if (part == "daily" || part == "all") {
        for (int d = 0; d < 7; ++d) out.push_back(d);
        continue;
      }
      const auto dash = part.find('-');
      const int from = day_index(part.substr(0, dash));
      const int to = dash == std::string::npos ? from : day_index(part.substr(dash + 1));
      if (from < 0 || to < 0 || to < from)
        c_.fail(n, fmt::format("{}: '{}' is not a day or a day range (mon, tue, ..., sun; mon-fri; daily)", key, part));
      for (int d = from; d <= to; ++d) out.push_back(d);
    }
    return out;
  }

  energy::Schedule parse_schedule(const YAML::Node& map, const std::string& where) {
    c_.check_keys(map, kScheduleKeys, where);
    const YAML::Node weekly = map["weekly"], csv = map["csv"];
    if (!weekly == !csv)
      c_.fail(map, fmt::format("{} needs either weekly (a table of days, hours and values) or csv (a file)", where));
    if (csv) {
      if (map["utc_offset"]) c_.fail(map["utc_offset"], fmt::format("{}.utc_offset applies to weekly only", where));
      const std::string path = c_.scalar(csv, where + ".csv");
      if (path.empty() || path.front() != '/')
        c_.fail(csv, fmt::format("{}.csv must be an absolute path (got '{}')", where, path));
      Result<energy::Schedule> s = read_schedule_csv(path);
      if (!s.ok()) c_.fail(csv, fmt::format("{}.csv: {}", where, s.status().message()));
      config_.schedule_files.push_back(path);
      return *s;
    }
    Seconds offset = 0;
    if (const YAML::Node n = map["utc_offset"]) offset = utc_offset(n, where + ".utc_offset");
    if (!weekly.IsSequence() || weekly.size() == 0)
      c_.fail(weekly, fmt::format("{}.weekly must be a list of {{days, hours, value}} entries", where));
    std::vector<Span> spans;
    for (std::size_t i = 0; i < weekly.size(); ++i) {
      const YAML::Node entry = weekly[i];
      const std::string at = fmt::format("{}.weekly[{}]", where, i);
      c_.check_keys(entry, kWeeklyKeys, at);
      for (const char* key : {"days", "hours", "value"})
        if (!entry[key]) c_.fail(entry, fmt::format("{}.{} is missing", at, key));
      const std::string hours = c_.scalar(entry["hours"], at + ".hours");
      const auto dash = hours.find('-');
      if (dash == std::string::npos)
        c_.fail(entry["hours"], fmt::format("{}.hours must be a range HH:MM-HH:MM (got '{}')", at, hours));
      const Seconds from = clock(entry["hours"], hours.substr(0, dash), at + ".hours", false);
      const Seconds to = clock(entry["hours"], hours.substr(dash + 1), at + ".hours", true);
      if (to <= from)
        c_.fail(entry["hours"], fmt::format("{}.hours '{}' is empty or crosses midnight: write it as two entries "
                                            "(e.g. 22:00-24:00 and 00:00-07:00)",
                                            at, hours));
      const double value = schedule_value(entry["value"], at + ".value");
      for (int d : days(entry["days"], at + ".days")) spans.push_back({d * 86400 + from, d * 86400 + to, value, i});
    }
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
    std::vector<energy::Schedule::Step> steps;
    Seconds covered = 0;
    for (const Span& s : spans) {
      if (s.start < covered)
        c_.fail(weekly[s.entry],
                fmt::format("{}.weekly: this entry overlaps another at {} (each moment of the week has one "
                            "value)",
                            where, week_time(s.start)));
      if (s.start > covered)
        c_.fail(weekly[s.entry], fmt::format("{}.weekly leaves {} to {} without a value (a gap before this entry)",
                                             where, week_time(covered), week_time(s.start)));
      if (steps.empty() || steps.back().value != s.value) steps.push_back({s.start, s.value});
      covered = s.end;
    }
    if (covered < energy::kWeek)
      c_.fail(weekly, fmt::format("{}.weekly leaves {} to the week's end without a value", where, week_time(covered)));
    return energy::Schedule::weekly(std::move(steps), offset);
  }

  Seconds utc_offset(const YAML::Node& n, const std::string& key) const {
    const std::string text = c_.scalar(n, key);
    int h = 0, m = 0;
    char tail = 0;
    if (text == "0" || text == "Z" || text == "UTC") return 0;
    if (text.size() != 6 || (text[0] != '+' && text[0] != '-') ||
        std::sscanf(text.c_str() + 1, "%2d:%2d%c", &h, &m, &tail) != 2 || h > 14 || m > 59)
      c_.fail(n, fmt::format("{} must be +HH:MM or -HH:MM, e.g. +01:00 (got '{}')", key, text));
    return (text[0] == '-' ? -1 : 1) * (h * 3600 + m * 60);
  }

  // One group (a mapping) or a list of groups, each {qos, job_classes, max_deferral}.
  void parse_deferrable(const YAML::Node& node, energy::EnergyConfig& e) const {
    if (node.IsMap()) {
      e.deferrable.push_back(parse_group(node, "energy.deferrable"));
    } else if (node.IsSequence() && node.size() > 0) {
      for (std::size_t i = 0; i < node.size(); ++i)
        e.deferrable.push_back(parse_group(node[i], fmt::format("energy.deferrable[{}]", i)));
    } else {
      c_.fail(node, "energy.deferrable must be {qos, job_classes, max_deferral} or a list of them");
    }
    if (e.signal().empty())
      c_.fail(node, e.follow_carbon ? "energy.deferrable with follow: carbon needs energy.carbon"
                                    : "energy.deferrable needs energy.price (deferral follows the price)");
    if (e.power.accelerators.empty() && e.power.node.busy_w <= e.power.node.idle_w)
      c_.fail(node, "energy.deferrable needs energy.power (a job's cost is its draw times the price)");
  }

  energy::DeferrableGroup parse_group(const YAML::Node& map, const std::string& where) const {
    c_.check_keys(map, kDeferrableKeys, where);
    energy::DeferrableGroup g;
    if (const YAML::Node n = map["qos"]) g.qos = c_.names(n, where + ".qos");
    if (const YAML::Node n = map["job_classes"]) {
      g.job_classes = c_.names(n, where + ".job_classes");
      for (std::size_t i = 0; i < g.job_classes.size(); ++i) {
        const std::string& name = g.job_classes[i];
        const bool known = std::any_of(config_.job_classes.begin(), config_.job_classes.end(),
                                       [&](const JobClass& jc) { return jc.name == name; });
        if (!known) c_.fail(n[i], fmt::format("{}.job_classes: '{}' is not a class of job_classes", where, name));
      }
    }
    if (!map["max_deferral"])
      c_.fail(map, fmt::format("{}.max_deferral is missing (how long its jobs may wait for cheaper power)", where));
    g.max_deferral = c_.duration(map["max_deferral"], where + ".max_deferral");
    if (g.max_deferral <= 0 || g.max_deferral > 30 * 86400)
      c_.fail(map["max_deferral"], fmt::format("{}.max_deferral must be > 0 and at most 30d", where));
    if (g.qos.empty() && g.job_classes.empty())
      c_.fail(map, fmt::format("{} names no qos and no job_classes: no job could be deferred", where));
    return g;
  }

  const YamlChecks& c_;
  PluginConfig& config_;
};

// "2026-12-02T18:00:00Z", "2026-12-02 18:00", "...+01:00", or epoch seconds.
bool parse_timestamp(std::string text, Seconds& out) {
  text = std::string(text::trim(text));
  if (!text.empty() && std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
    if (text.size() > 12) return false;
    out = std::stoll(text);
    return true;
  }
  Seconds offset = 0;
  if (!text.empty() && text.back() == 'Z') {
    text.pop_back();
  } else if (text.size() > 6 && (text[text.size() - 6] == '+' || text[text.size() - 6] == '-') &&
             text[text.size() - 3] == ':') {
    int h = 0, m = 0;
    char tail = 0;
    if (std::sscanf(text.c_str() + text.size() - 5, "%2d:%2d%c", &h, &m, &tail) != 2 || h > 14 || m > 59) return false;
    offset = (text[text.size() - 6] == '-' ? -1 : 1) * (h * 3600 + m * 60);
    text.resize(text.size() - 6);
  }
  if (text.size() == 16) text += ":00";
  if (text.size() == 19 && text[10] == ' ') text[10] = 'T';
  Seconds t = 0;
  if (io::parse_slurm_time(text, t) != io::TimeField::kValue) return false;
  out = t - offset;
  return true;
}

std::string duration_text(Seconds s) {
  if (s % 3600 == 0) return fmt::format("{} h", s / 3600);
  if (s % 60 == 0) return fmt::format("{} min", s / 60);
  return fmt::format("{} s", s);
}

}  // namespace

void parse_energy(const YamlChecks& checks, const YAML::Node& node, PluginConfig& config) {
  EnergyParser(checks, config).parse(node);
}

Result<energy::Schedule> read_schedule_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::IoError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::vector<energy::Schedule::Step> steps;
  Seconds step = 0;
  std::string line;
  std::size_t number = 0, last_line = 0;
  constexpr std::size_t kMaxRows = 2000000;
  while (std::getline(in, line)) {
    ++number;
    const std::string_view text = text::trim(line);
    if (text.empty() || text.front() == '#') continue;
    const auto comma = text.find(',');
    if (comma == std::string_view::npos)
      return Status::InvalidInput(fmt::format("{}:{}: expected 'timestamp,value' (got '{}')", path, number, text));
    const std::string stamp(text.substr(0, comma)), value_text(text::trim(text.substr(comma + 1)));
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(value_text.c_str(), &end);
    const bool numeric =
        !value_text.empty() && end == value_text.c_str() + value_text.size() && errno == 0 && std::isfinite(value);
    Seconds t = 0;
    if (!parse_timestamp(stamp, t)) {
      if (steps.empty() && !numeric) continue;  // a header line
      return Status::InvalidInput(
          fmt::format("{}:{}: '{}' is not a timestamp (epoch seconds, or YYYY-MM-DDTHH:MM[:SS] with Z or +HH:MM)", path,
                      number, stamp));
    }
    if (!numeric)
      return Status::InvalidInput(fmt::format("{}:{}: value '{}' is not a number", path, number, value_text));
    if (value < 0)
      return Status::InvalidInput(
          fmt::format("{}:{}: negative value {} (prices and intensities must be >= 0)", path, number, value_text));
    if (!steps.empty()) {
      const Seconds gap = t - steps.back().start;
      if (gap <= 0)
        return Status::InvalidInput(
            fmt::format("{}:{}: {} is not after line {}'s timestamp (rows overlap or are out "
                        "of order)",
                        path, number, stamp, last_line));
      if (step == 0) step = gap;
      if (gap != step)
        return Status::InvalidInput(fmt::format("{}:{}: {} after line {}, but the series steps every {}{}", path,
                                                number, duration_text(gap), last_line, duration_text(step),
                                                gap > step ? " (a gap: rows are missing)" : ""));
    }
    if (steps.size() >= kMaxRows)
      return Status::InvalidInput(fmt::format("{}:{}: more than {} rows", path, number, kMaxRows));
    steps.push_back({t, value});
    last_line = number;
  }
  if (in.bad()) return Status::IoError(fmt::format("{}: read error", path));
  if (steps.empty()) return Status::InvalidInput(fmt::format("{}: no rows (expected 'timestamp,value' lines)", path));
  return energy::Schedule::series(std::move(steps));
}

}  // namespace rlsched::config
