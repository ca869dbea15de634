// rlsched.yaml for the Slurm plugins. Every value is checked with the line of its key; unknown keys are refused.
#include "rlsched/plugin_config.h"

#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "config/energy_config.h"
#include "config/yaml_checks.h"
#include "rlsched/scorer.h"
#include "speed_schema.h"

namespace rlsched::config {

const char* mode_name(Mode mode) {
  return mode == Mode::kEnforce ? "enforce" : "shadow";
}

const char* record_field_name(RecordField field) {
  switch (field) {
    case RecordField::kNone:
      return "none";
    case RecordField::kAdminComment:
      return "admin_comment";
    case RecordField::kComment:
      return "comment";
  }
  return "none";
}

const AcceleratorType* PluginConfig::find_type(std::string_view type, std::string_view gres) const {
  for (const AcceleratorType& t : accelerator_types)
    if (t.name == type && (gres.empty() || t.gres == gres)) return &t;
  return nullptr;
}

std::string PluginConfig::classify(std::string_view job_name, std::string_view account, std::string_view user) const {
  auto matches = [](const std::string& pattern, std::string_view value) {
    return pattern.empty() || fnmatch(pattern.c_str(), std::string(value).c_str(), 0) == 0;
  };
  for (const JobClass& c : job_classes)
    if (matches(c.job_name, job_name) && matches(c.account, account) && matches(c.user, user)) return c.name;
  return {};
}

placement::Options placement_options(const PluginConfig& config) {
  placement::Options o;
  o.types = config.accelerator_types;
  o.gres_equivalence = config.gres_equivalence;
  for (const JobClass& c : config.job_classes)
    if (c.gres_portable) o.gres_portable_classes.push_back(c.name);
  o.default_time_limit = config.placement.default_time_limit;
  o.slack = config.placement.slack;
  return o;
}

namespace {

const Keys kTopKeys = {"mode",
                       "model",
                       "fallback",
                       "score_scale",
                       "run_time",
                       "debug",
                       "reload_check_interval",
                       "health_dir",
                       "accelerator_types",
                       "gres_equivalence",
                       "job_classes",
                       "placement",
                       "preemption",
                       "energy"};
const Keys kTypeKeys = {"name", "gres", "speed", "count_scale"};
const Keys kClassKeys = {"name", "match", "speeds", "gres_portable"};
const Keys kMatchKeys = {"job_name", "account", "user"};
const Keys kPreemptionKeys = {"min_run_time", "max_preemptions", "window", "preemptable_qos", "grace_margin"};
const Keys kPlacementKeys = {"enabled",    "map_typeless", "map_any_of",         "retype_typed", "reject_impossible",
                             "partitions", "record",       "default_time_limit", "slack"};

class Parser : public YamlChecks {
 public:
  using YamlChecks::YamlChecks;

  void check(const std::optional<SpeedProblem>& problem) const {
    if (problem) fail(problem->at, fmt::format("{}: {}", problem->key, problem->what));
  }

  PluginConfig parse(const YAML::Node& root) {
    PluginConfig c;
    if (!root || root.IsNull()) return c;  // an empty file: every default
    check_keys(root, kTopKeys, "");
    if (const YAML::Node n = root["mode"]) {
      const std::string mode = scalar(n, "mode");
      if (mode == "enforce")
        c.mode = Mode::kEnforce;
      else if (mode == "shadow")
        c.mode = Mode::kShadow;
      else
        fail(n, fmt::format("mode must be enforce or shadow (got '{}')", mode));
    }
    if (const YAML::Node n = root["model"]) {
      c.model = n.IsNull() ? std::string() : scalar(n, "model");
      if (!c.model.empty() && c.model.front() != '/')
        fail(n, fmt::format("model must be an absolute path (got '{}'): slurmctld does not run in your folder; "
                            "write the full path, e.g. model: {}",
                            c.model, absolute_suggestion(c.model)));
    }
    if (const YAML::Node n = root["fallback"]) {
      c.fallback = scalar(n, "fallback");
      const std::vector<std::string> known = scorer_names();
      if (std::find(known.begin(), known.end(), c.fallback) == known.end()) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        fail(n, fmt::format("fallback '{}' is not a scorer (known: {})", c.fallback, list));
      }
    }
    if (const YAML::Node n = root["score_scale"])
      // Slurm adds the site factor to a 32-bit priority: keep room for the other factors.
      c.score_scale = static_cast<std::uint32_t>(integer(n, "score_scale", 1, 1000000000));
    if (const YAML::Node n = root["run_time"]) {
      const std::string view = scalar(n, "run_time");
      if (view == "limit")
        c.run_time = RunTimeView::kLimit;
      else if (view == "predicted")
        c.run_time = RunTimeView::kPredicted;
      else
        fail(n, fmt::format("run_time must be limit or predicted (got '{}')", view));
    }
    if (const YAML::Node n = root["debug"]) c.debug = boolean(n, "debug");
    if (const YAML::Node n = root["reload_check_interval"])
      c.reload_check_interval = duration(n, "reload_check_interval");
    if (const YAML::Node n = root["health_dir"]) {
      c.health_dir = n.IsNull() ? std::string() : scalar(n, "health_dir");
      if (!c.health_dir.empty() && c.health_dir.front() != '/')
        fail(n, fmt::format("health_dir must be an absolute path (got '{}')", c.health_dir));
    }
    if (const YAML::Node n = root["accelerator_types"]) parse_types(n, c);
    if (const YAML::Node n = root["gres_equivalence"]) parse_equivalence(n, c);
    if (const YAML::Node n = root["job_classes"]) parse_classes(n, c);
    if (const YAML::Node n = root["placement"]) parse_placement(n, c.placement);
    if (const YAML::Node n = root["preemption"]) parse_preemption(n, c.preemption);
    c.energy_mode = c.mode;
    if (const YAML::Node n = root["energy"]) parse_energy(*this, n, c);
    return c;
  }

 private:
  void parse_types(const YAML::Node& list, PluginConfig& c) const {
    if (!list.IsSequence()) fail(list, "accelerator_types must be a list of {name, gres, speed} entries");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const YAML::Node entry = list[i];
      const std::string where = fmt::format("accelerator_types[{}]", i);
      check_keys(entry, kTypeKeys, where);
      if (!entry["name"]) fail(entry, fmt::format("{}.name is missing", where));
      if (!entry["gres"]) fail(entry, fmt::format("{}.gres is missing (the GRES name of the type, e.g. gpu)", where));
      AcceleratorType t;
      t.name = scalar(entry["name"], where + ".name");
      t.gres = scalar(entry["gres"], where + ".gres");
      if (t.name.empty() || t.gres.empty()) fail(entry, fmt::format("{}: name and gres must not be empty", where));
      for (const std::string& s : {t.name, t.gres})
        if (s.find_first_of(":,|= \t") != std::string::npos)
          fail(entry,
               fmt::format("{}: '{}' may not contain ':', ',', '|', '=' or blanks (Slurm GRES syntax)", where, s));
      if (const YAML::Node s = entry["speed"]) check(read_speed(s, where + ".speed", t.speed));
      if (const YAML::Node s = entry["count_scale"]) {
        t.count_scale = number(s, where + ".count_scale");
        if (!(t.count_scale > 0) || t.count_scale > 1024)
          fail(s, fmt::format("{}.count_scale must be > 0 and <= 1024 (got {})", where, s.Scalar()));
      }
      if (c.find_type(t.name, t.gres))
        fail(entry, fmt::format("{}: type {}:{} is listed twice", where, t.gres, t.name));
      c.accelerator_types.push_back(std::move(t));
    }
  }

  // job_classes: [{name, match: {job_name, account, user}, speeds: {type: speed}}]. Speeds of types not listed in
  // accelerator_types are errors (a typo would silently leave the default); types a class omits keep their
  // default speed, with a warning.
  void parse_classes(const YAML::Node& list, PluginConfig& c) const {
    if (!list.IsSequence())
      fail(list, "job_classes must be a list of {name, match: {job_name, account, user}, speeds: {TYPE: SPEED}}");
    if (c.accelerator_types.empty())
      fail(list, "job_classes needs accelerator_types: speeds are given for the types listed there");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const YAML::Node entry = list[i];
      const std::string where = fmt::format("job_classes[{}]", i);
      check_keys(entry, kClassKeys, where);
      if (!entry["name"]) fail(entry, fmt::format("{}.name is missing", where));
      JobClass jc;
      jc.name = scalar(entry["name"], where + ".name");
      if (jc.name.empty()) fail(entry["name"], fmt::format("{}.name must not be empty", where));
      for (const JobClass& earlier : c.job_classes)
        if (earlier.name == jc.name) fail(entry["name"], fmt::format("{}: job class '{}' is listed twice", where, jc.name));
      const YAML::Node match = entry["match"];
      if (!match) fail(entry, fmt::format("{}.match is missing (job_name, account and/or user patterns)", where));
      check_keys(match, kMatchKeys, where + ".match");
      if (const YAML::Node n = match["job_name"]) jc.job_name = scalar(n, where + ".match.job_name");
      if (const YAML::Node n = match["account"]) jc.account = scalar(n, where + ".match.account");
      if (const YAML::Node n = match["user"]) jc.user = scalar(n, where + ".match.user");
      if (jc.job_name.empty() && jc.account.empty() && jc.user.empty())
        fail(match, fmt::format("{}.match needs a non-empty job_name, account or user pattern", where));
      const YAML::Node speeds = entry["speeds"];
      if (!speeds) fail(entry, fmt::format("{}.speeds is missing (a mapping of type names to speeds)", where));
      std::map<std::string, double> given;
      check(read_speed_map(speeds, where + ".speeds", given));
      for (const auto& kv : speeds) {
        const std::string type = kv.first.Scalar();
        bool known = false;
        for (AcceleratorType& t : c.accelerator_types)
          if (t.name == type) {
            known = true;
            t.class_speed[jc.name] = given.at(type);
          }
        if (!known) {
          std::string names;
          for (const AcceleratorType& t : c.accelerator_types) names += (names.empty() ? "" : ", ") + t.name;
          fail(kv.first, fmt::format("{}: unknown accelerator type '{}' (accelerator_types lists {})", where, type,
                                     names));
        }
      }
      for (const AcceleratorType& t : c.accelerator_types)
        if (!given.count(t.name))
          c.warnings.push_back(fmt::format("{}:{}: job class '{}' gives no speed for {}: the type's speed {} is used",
                                           name_, speeds.Mark().line + 1, jc.name, t.name, t.speed));
      if (const YAML::Node n = entry["gres_portable"]) {
        jc.gres_portable = boolean(n, where + ".gres_portable");
        if (jc.gres_portable && c.gres_equivalence.empty())
          fail(n, fmt::format("{}.gres_portable: true needs gres_equivalence (the GRES names the class may move "
                              "between, e.g. [[gpu, npu]]) above job_classes",
                              where));
      }
      c.job_classes.push_back(std::move(jc));
    }
  }

  void parse_equivalence(const YAML::Node& list, PluginConfig& c) const {
    if (!list.IsSequence()) fail(list, "gres_equivalence must be a list of groups of GRES names, e.g. [[gpu, npu]]");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string where = fmt::format("gres_equivalence[{}]", i);
      std::vector<std::string> group = names(list[i], where);
      if (group.size() < 2) fail(list[i], fmt::format("{} must name at least two GRES names", where));
      for (const std::string& g : group)
        for (const auto& earlier : c.gres_equivalence)
          if (std::find(earlier.begin(), earlier.end(), g) != earlier.end())
            fail(list[i], fmt::format("{}: GRES '{}' is already in an earlier group (merge the groups)", where, g));
      c.gres_equivalence.push_back(std::move(group));
    }
  }

  void parse_preemption(const YAML::Node& map, preemption::Policy& p) const {
    check_keys(map, kPreemptionKeys, "preemption");
    if (const YAML::Node n = map["min_run_time"]) p.min_run_time = duration(n, "preemption.min_run_time");
    if (const YAML::Node n = map["max_preemptions"])
      p.max_preemptions = static_cast<int>(integer(n, "preemption.max_preemptions", 0, 1000));
    if (const YAML::Node n = map["window"]) {
      p.window = duration(n, "preemption.window");
      if (p.window <= 0) fail(n, "preemption.window must be > 0");
    }
    if (const YAML::Node n = map["preemptable_qos"]) p.preemptable_qos = names(n, "preemption.preemptable_qos");
    if (const YAML::Node n = map["grace_margin"]) p.grace_margin = duration(n, "preemption.grace_margin");
  }

  void parse_placement(const YAML::Node& map, PlacementConfig& p) const {
    check_keys(map, kPlacementKeys, "placement");
    if (const YAML::Node n = map["enabled"]) p.enabled = boolean(n, "placement.enabled");
    if (const YAML::Node n = map["map_typeless"]) p.map_typeless = boolean(n, "placement.map_typeless");
    if (const YAML::Node n = map["map_any_of"]) p.map_any_of = boolean(n, "placement.map_any_of");
    if (const YAML::Node n = map["retype_typed"]) p.retype_typed = boolean(n, "placement.retype_typed");
    if (const YAML::Node n = map["reject_impossible"]) p.reject_impossible = boolean(n, "placement.reject_impossible");
    if (const YAML::Node n = map["partitions"]) p.partitions = names(n, "placement.partitions");
    if (const YAML::Node n = map["record"]) {
      const std::string r = scalar(n, "placement.record");
      if (r == "admin_comment")
        p.record = RecordField::kAdminComment;
      else if (r == "comment")
        p.record = RecordField::kComment;
      else if (r == "none")
        p.record = RecordField::kNone;
      else
        fail(n, fmt::format("placement.record must be admin_comment, comment or none (got '{}')", r));
    }
    if (const YAML::Node n = map["default_time_limit"]) {
      p.default_time_limit = duration(n, "placement.default_time_limit");
      if (p.default_time_limit <= 0) fail(n, "placement.default_time_limit must be > 0");
    }
    if (const YAML::Node n = map["slack"]) {
      p.slack = number(n, "placement.slack");
      if (!(p.slack >= 1) || p.slack > 10)
        fail(n, fmt::format("placement.slack must be >= 1 and <= 10 (got {}): 1 keeps the best predicted completion "
                            "and the types at least as fast, 1.3 also those finishing at most 30% later",
                            n.Scalar()));
    }
  }

  // Where a relative model path most likely points: beside the config file when its path is absolute.
  std::string absolute_suggestion(const std::string& relative) const {
    const std::string::size_type slash = name_.find_last_of('/');
    const std::string dir = (!name_.empty() && name_.front() == '/' && slash != std::string::npos)
                                ? name_.substr(0, slash)
                                : std::string("/etc/slurm");
    return fmt::format("{}/{}", dir == "/" ? std::string() : dir, relative);
  }
};

}  // namespace

Result<PluginConfig> parse_plugin_config(std::string_view text, const std::string& name) {
  return parse_yaml<PluginConfig>(text, name, [&](const YAML::Node& root) { return Parser(name).parse(root); });
}

Status check_trusted_file(const std::string& path, const char* what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound(fmt::format("{}: cannot stat {}: {}", path, what, std::strerror(err)));
    return Status::IoError(fmt::format("{}: cannot stat {}: {}", path, what, std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) return Status::InvalidInput(fmt::format("{}: {} is not a regular file", path, what));
  const uid_t self = ::geteuid();
  if (st.st_uid != 0 && st.st_uid != self)
    return Status::InvalidInput(
        fmt::format("{}: refusing {} owned by uid {} (must be owned by root{}); run chown "
                    "root {}",
                    path, what, st.st_uid, self == 0 ? std::string() : fmt::format(" or uid {}", self), path));
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return Status::InvalidInput(
        fmt::format("{}: refusing {} writable by group or others (mode {:04o}); run chmod "
                    "go-w {}",
                    path, what, st.st_mode & 07777, path));
  const std::string::size_type slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  struct stat ds {};
  if (::stat(dir.c_str(), &ds) != 0)
    return Status::IoError(fmt::format("{}: cannot stat the folder of {}: {}", dir, what, std::strerror(errno)));
  if (ds.st_mode & (S_IWGRP | S_IWOTH))
    return Status::InvalidInput(
        fmt::format("{}: refusing {} in a folder writable by group or others ({}, mode "
                    "{:04o}): anyone could replace it; keep it in a folder only root can "
                    "write, e.g. /etc/slurm",
                    path, what, dir, ds.st_mode & 07777));
  if (ds.st_uid != 0 && ds.st_uid != self)
    return Status::InvalidInput(
        fmt::format("{}: refusing {} in a folder owned by uid {} ({}); keep it in a folder "
                    "owned by root",
                    path, what, ds.st_uid, dir));
  return Status::Ok();
}

Result<PluginConfig> load_plugin_config(const std::string& path, const LoadConfigOptions& options) {
  if (path.empty()) return Status::InvalidInput("no config file given (set PrioritySiteFactorParameters)");
  if (options.require_private) {
    Status trusted = check_trusted_file(path, "config file");
    if (!trusted.ok()) return trusted;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(fmt::format("{}: cannot open config file: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IoError(fmt::format("{}: cannot read config file", path));
  Result<PluginConfig> config = parse_plugin_config(text.str(), path);
  if (!config.ok()) return config;
  config->path = path;
  if (options.require_private)
    for (const std::string& file : config->schedule_files)
      if (Status trusted = check_trusted_file(file, "energy schedule"); !trusted.ok()) return trusted;
  return config;
}

}  // namespace rlsched::config
