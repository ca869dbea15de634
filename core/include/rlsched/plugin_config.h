// The Slurm plugins' configuration file (rlsched.yaml, named by PrioritySiteFactorParameters in slurm.conf): which
// policy scores pending jobs, how scores become Slurm site factors, and how job_submit/rlsched maps accelerator
// requests. Every key is documented in docs/plugins.md; slurm_conf_examples/rlsched.yaml is a commented example.
//
// Errors are one line with the file and line of the offending key: "rlsched.yaml:14: placement.map_any_of must be
// true or false (got 'maybe')". Unknown keys are errors (a misspelt key would otherwise be silently ignored).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/energy.h"
#include "rlsched/job.h"
#include "rlsched/placement.h"
#include "rlsched/predicted_run_times.h"
#include "rlsched/preemption.h"
#include "rlsched/status.h"

namespace rlsched::config {

/// enforce: site factors are written to the jobs; shadow: computed and logged, jobs untouched (the first step of a
/// roll-out: compare what the policy would do with what Slurm does).
enum class Mode { kShadow, kEnforce };
const char* mode_name(Mode mode);

/// Where job_submit/rlsched records its decision on the job (visible in scontrol show job / squeue -O).
enum class RecordField { kNone, kAdminComment, kComment };
const char* record_field_name(RecordField field);

struct PlacementConfig {
  bool enabled = true;
  bool map_typeless = true;       ///< --gres=gpu:4, --gpus=4: choose the type (and partition)
  bool map_any_of = true;         ///< --gres=gpu:h200|a100:4: choose among the listed types
  bool retype_typed = false;      ///< --gres=gpu:h200:4: also re-map explicitly typed requests (off: left alone)
  bool reject_impossible = true;  ///< reject, with a message sbatch shows, requests no partition can ever hold
  /// Partitions considered for a job that names none (empty: every partition that accepts jobs).
  std::vector<std::string> partitions;
  RecordField record = RecordField::kAdminComment;
  /// Run time assumed for a job that gives no time limit when its partition has none either.
  Seconds default_time_limit = 3600;
  /// Every partition whose late-binding completion is within slack x the best's predicted completion stays in the
  /// job's request, so Slurm binds late among them (placement::Options::slack).
  double slack = placement::Options::kDefaultSlack;
};

/// A class of jobs with its own accelerator speeds (job_classes in rlsched.yaml). A job belongs to the first class
/// whose patterns all match (shell globs on the job name, account and user; an absent pattern matches anything).
/// The speeds themselves live in the types' AcceleratorType::class_speed under the class name.
struct JobClass {
  std::string name;
  std::string job_name, account, user;  ///< fnmatch(3) patterns; empty = any
  /// The class's software runs under every GRES name of its gres_equivalence group (a framework built for CUDA and
  /// CANN): only then may job_submit/rlsched move its jobs from gpu to npu. Default false.
  bool gres_portable = false;
};

struct PluginConfig {
  std::string path;  ///< the file read ("" when parsed from text)

  Mode mode = Mode::kShadow;
  /// TorchScript model file (docs/model-file.md); empty: no model, the fallback scorer serves.
  std::string model;
  /// make_scorer name serving while no valid model is loaded (fcfs, sjf, wfp3, unicep, f1, multifactor).
  std::string fallback = "multifactor";
  /// Site factors range over [0, score_scale]: a job's site factor is score_scale times the share of the last
  /// scored batch that scored strictly lower (its rank share; the simulator's weights.site does the same).
  std::uint32_t score_scale = kDefaultScoreScale;
  /// What the policy (model or fallback) takes a waiting job's run time to be: its time limit, or the run time its
  /// user's ended jobs predict (rlsched/predicted_run_times.h; site_factor/rlsched hears of ended jobs while Slurm
  /// keeps them, MinJobAge).
  RunTimeView run_time = RunTimeView::kLimit;
  /// Log per-job detail at info level (as DebugFlags=Priority does at verbose level).
  bool debug = false;
  /// Seconds between checks of the model file for changes (hot reload); 0: only at scontrol reconfigure.
  Seconds reload_check_interval = 30;
  /// Folder where each plugin writes its health record, <plugin>.json (rlsched-exporter reads them); empty: none.
  std::string health_dir;

  /// Speeds of the accelerator types (relative throughput, higher is faster). A type Slurm knows but this list
  /// lacks has speed 1.
  std::vector<AcceleratorType> accelerator_types;
  /// Groups of GRES names whose accelerators a job may use interchangeably, e.g. {{"gpu", "npu"}}: a typeless
  /// gpu request may then be placed on npu:910b. Empty: never change a job's GRES name.
  std::vector<std::vector<std::string>> gres_equivalence;
  /// Job classes with their own speeds (the speeds are in accelerator_types[].class_speed).
  std::vector<JobClass> job_classes;
  PlacementConfig placement;
  /// preempt/rlsched's victims and grace times, job_submit/rlsched's checkpoint declarations (docs/preemption.md).
  preemption::Policy preemption;
  /// Power draws, price and carbon schedules, and which jobs may wait for cheaper power (docs/energy.md).
  energy::EnergyConfig energy;
  /// Whether job_submit/rlsched sets the begin time of the jobs it defers (enforce) or only logs them (shadow);
  /// rlsched.yaml energy.mode, by default `mode`.
  Mode energy_mode = Mode::kShadow;
  /// The CSV schedules the energy section read (checked like the config file itself by load_plugin_config).
  std::vector<std::string> schedule_files;
  /// Accepted but worth a look, one line each with file and line ("rlsched.yaml:31: job class 'bert' gives no
  /// speed for 910b: the type's speed 0.8 is used"); the plugins log them once at load.
  std::vector<std::string> warnings;

  /// \return the type of that name (and GRES name when given), or nullptr.
  const AcceleratorType* find_type(std::string_view type, std::string_view gres = {}) const;
  /// \return the name of the first job class matching the job, or "" (the types' default speeds apply).
  std::string classify(std::string_view job_name, std::string_view account, std::string_view user) const;
};

/// The placement rules a config gives (job_submit/rlsched's and the simulator's): type speeds and count scales,
/// GRES equivalence and the classes that may use it, default time limit, slack.
placement::Options placement_options(const PluginConfig& config);

/// Parses the YAML text of a plugin config; `name` prefixes error messages ("rlsched.yaml").
Result<PluginConfig> parse_plugin_config(std::string_view text, const std::string& name);

struct LoadConfigOptions {
  /// Refuse a config file (and its folder) writable by group or others, or owned by anyone but root or the
  /// calling process's user: slurmctld must not run settings any local user could have written.
  bool require_private = true;
};

/// Reads and parses the file; with require_private also checks who could have written it (the file and the
/// folder it is in). Errors start with the path.
Result<PluginConfig> load_plugin_config(const std::string& path, const LoadConfigOptions& options = {});

/// The ownership half of require_private, for the config and the model file: the file is owned by root or by the
/// calling process's user, and neither it nor its folder is writable by group or others (a folder with the sticky
/// bit, like /tmp, still lets others replace files they own: refused too). `what` names the file's role.
Status check_trusted_file(const std::string& path, const char* what);

}  // namespace rlsched::config
