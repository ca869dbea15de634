// The engine behind the C ABI (rlsched.h): plugin config, policy with hot reload and fallback, placement, counters.
// C++ only; the extern "C" layer (rlsched_c.cpp) catches everything this throws.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "capi/c_snapshot.h"
#include "capi/health.h"
#include "capi/job_classes.h"
#include "rlsched/cluster.h"
#include "rlsched/job_view.h"
#include "rlsched/placement.h"
#include "rlsched/plugin_config.h"
#include "rlsched/policy/reloading_scorer.h"
#include "rlsched/predicted_run_times.h"
#include "rlsched/preemption.h"
#include "rlsched/rlsched.h"
#include "rlsched/scorer.h"
#include "rlsched/status.h"

namespace rlsched::capi {

struct EngineOptions {
  std::string config_path;
  /// (RLSCHED_LOG_* level, line); empty: stderr.
  std::function<void(int, const std::string&)> log;
  bool no_policy = false;
  bool no_reload_thread = false;
  bool trust_any_file = false;
  PriorityWeights weights = PriorityWeights::Typical();
  std::string plugin_type;  ///< names the health record; empty: none
  /// Where what the engine learns is kept across restarts; empty: memory only.
  std::string state_dir;
  bool keep_preemptions = false;  ///< the preemption history (capi/preemption_history.h), in state_dir
  bool keep_run_times = false;    ///< what ended jobs taught the predicted run times (capi/run_time_history.h)
  /// Reads what is kept in state_dir but never writes it, nor sets a damaged file aside: rlsched explain and
  /// estimate, beside the slurmctld whose plugin owns the files.
  bool state_read_only = false;
};

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> Create(EngineOptions options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Status reconfigure();
  Status check_model();

  Status score_batch(Seconds now, const rlsched_cluster& cluster, const rlsched_job* jobs, std::size_t n,
                     double* scores, std::uint32_t* site_factors);
  Status score_one(Seconds now, const rlsched_cluster& cluster, const rlsched_job& job, double* score,
                   std::uint32_t* site_factor);
  /// The ended jobs Slurm still keeps (rlsched_jobs_ended): those not in the last call feed the predicted run times.
  Status jobs_ended(const rlsched_ended_job* jobs, std::size_t n, std::size_t& fresh);
  /// Each pending[i] as the policy in service is shown it (jobs[i] names its user): under run_time: predicted, with
  /// its predicted run time for its limit, as score_batch and score_one show it; unchanged otherwise. For `rlsched
  /// explain`, which scores with policy() itself.
  void show_run_times(const rlsched_job* jobs, std::vector<PendingJob>& pending);
  /// The run time the ended jobs heard (and the kept history) predict for a job of `user_id` under `time_limit`:
  /// at least 1 s and at most the limit; the limit while the user has none (-1 without a limit). What rlsched
  /// estimate runs jobs for, whatever run_time says. `ended_jobs`, when given, is set to how many of the user's
  /// ended jobs the prediction averages (0: none, the limit serves).
  Seconds predicted_run_time(std::uint32_t user_id, Seconds time_limit, std::size_t* ended_jobs = nullptr);
  Status submit_map(Seconds now, const rlsched_cluster& cluster, const rlsched_job* queue, std::size_t n_queue,
                    const rlsched_submit& job, rlsched_submit_result& out);

  /// preempt/rlsched (capi/preempt.cpp): the shared decision of rlsched/preemption.h under the config's policy.
  Status preempt_allowed(Seconds now, const rlsched_preempt_job& job, bool& allowed, const char*& why);
  Status checkpoint_grace(const rlsched_checkpoint& checkpoint, std::uint32_t& grace);
  Status preempt_order(Seconds now, const rlsched_preempt_job& job, std::uint32_t& order);
  Status preempt_begin(Seconds now, const rlsched_preempt_job& job, std::uint32_t& grace, Seconds& lost);
  void info(rlsched_engine_info& out);
  rlsched_counters counters() const;
  void count_error() { errors_.fetch_add(1, std::memory_order_relaxed); }
  HealthRecorder& health() { return health_; }

  void log(int level, const std::string& line) const;

  /// The policy in service (the model, or its fallback while none is loaded) and the config it was built from: what
  /// `rlsched explain` scores with. policy() is null with no_policy. Both valid until the next reconfigure.
  const Scorer* policy() const;
  const config::PluginConfig& config() const;

 private:
  /// What scores: the policy runtime, the one fallback layer (its heuristic serves until a trusted model file has
  /// loaded, and whenever the model fails). The model is loaded only once its file passed the trust check.
  struct Policy {
    std::string model_path;
    std::unique_ptr<policy::ReloadingScorer> scorer;  // set by build(), never replaced
    std::mutex mutex;                                 // guards trusted_seen and untrusted
    bool trusted_seen = false;  // a trusted model file was seen (and given to the scorer) at least once
    std::string untrusted;      // the last trust refusal logged, to log each one once
  };
  struct Settings {
    config::PluginConfig config;
    std::shared_ptr<Policy> policy;  // null with no_policy
    std::string model_name;          // "model:<path>", for info()
    std::string fallback_name;

    /// Whether scoring needs the run times each user's ended jobs predict: under run_time: predicted, or for a
    /// model that reads them (schema v2) under either setting.
    bool reads_ended_jobs() const {
      return config.run_time == RunTimeView::kPredicted || (policy && policy->scorer->reads_predicted_run_time());
    }
  };

  /// energy.mode enforce: scores[i] of each deferrable jobs[i] becomes energy::ranked_score of its energy::rank_now.
  void rank_deferrable(const Settings& s, Seconds now, const rlsched_cluster& cluster, const rlsched_job* jobs,
                       const std::vector<std::string>& classes, std::vector<double>& scores);
  explicit Engine(EngineOptions options);
  Result<std::shared_ptr<Settings>> build(config::PluginConfig config, const Settings* previous);
  std::shared_ptr<Settings> settings() const;
  Status check_model(Policy& policy);
  /// Logs a failed model check and counts it in errors; the engine keeps serving what it served (its fallback when
  /// no model was ever loaded).
  void report_model_check(const Status& status);
  /// The health record now (HealthWriter's render).
  std::string health_record();
  /// Scores `jobs` with the policy (its fallback counts the calls it serves).
  void score(const Settings& s, const ScoringContext& context, const std::vector<PendingJob>& jobs,
             std::vector<double>& scores);
  /// run_time: predicted: each pending[i] as its user's ended jobs predict (jobs[i] names the user); under limit,
  /// with a model that reads predicted run times (schema v2), each pending[i].predicted_run_time.
  void predict_run_times(const Settings& s, const rlsched_job* jobs, std::vector<PendingJob>& pending);
  void reload_loop();
  void retire(const Settings& old);
  /// Loads <state_dir>/rlsched_preemptions.json into history_ and starts its writer (capi/preempt.cpp).
  void keep_preemption_history(Seconds now);
  /// Loads <state_dir>/rlsched_run_times.json into run_times_ and starts its writer (capi/state_files.cpp).
  void keep_run_time_history();
  /// Reads <state_dir>/<name>.json through `restore`, which takes the text and the path and returns the line to log
  /// (or why the file is not a record). A file that cannot be read or restored is logged and counted, with
  /// `otherwise` (what starts empty), and moved aside to <name>.json.damaged so the next write does not replace
  /// what an admin may recover. No file: a first start, nothing logged.
  void load_state(const std::string& name,
                  const std::function<Result<std::string>(std::string_view text, const std::string& path)>& restore,
                  const std::string& otherwise);
  /// The writer of <state_dir>/<name>.json every `interval` seconds (and at shutdown); none when state_read_only.
  std::unique_ptr<HealthWriter> state_writer(const std::string& name, Seconds interval,
                                             std::function<std::string()> render);

  const EngineOptions options_;

  mutable std::mutex settings_mutex_;
  std::shared_ptr<Settings> settings_;

  std::mutex classes_mutex_;  // guards classes_ (submits are serialised by slurmctld's job lock; tests are not)
  ClassCache classes_;

  std::mutex history_mutex_;  // guards history_ (preemptions per job, for the cap)
  preemption::History history_;
  std::mutex ended_mutex_;  // guards ended_known_ and run_times_
  std::unordered_map<std::uint32_t, Seconds> ended_known_;  // the last call's ended jobs: id -> end time
  PredictedRunTimes run_times_;                             // fed by jobs_ended whatever run_time says
  std::atomic<std::uint64_t> ended_version_{0};             // bumped under ended_mutex_ whenever the two above change
  std::mutex batch_mutex_;  // guards sorted_ (the last batch, ranked against by score_one)
  std::vector<double> sorted_;

  std::mutex thread_mutex_;
  std::condition_variable thread_cv_;
  bool stop_ = false;
  std::thread reload_thread_;

  // Counters of policies replaced by a reconfigure, so that the totals stay monotonic.
  mutable std::mutex retired_mutex_;
  policy::PolicyCounters retired_;

  std::atomic<std::uint64_t> score_calls_{0};
  std::atomic<std::uint64_t> jobs_scored_{0};
  std::atomic<std::uint64_t> model_untrusted_{0};
  std::atomic<std::uint64_t> placements_{0};
  std::atomic<std::uint64_t> rejections_{0};
  std::atomic<std::uint64_t> deferrals_{0};
  std::atomic<std::uint64_t> deferrals_shadow_{0};
  std::atomic<std::uint64_t> sunk_jobs_{0};
  std::atomic<std::uint64_t> boosted_jobs_{0};
  std::atomic<std::uint64_t> ended_jobs_{0};
  std::atomic<std::uint64_t> errors_{0};

  HealthRecorder health_;
  std::unique_ptr<Scorer> slurm_order_;           // multifactor at slurm.conf's weights, with a health record only
  std::unique_ptr<HealthWriter> history_writer_;  // writes history_ to state_dir; stopped before the rest goes
  std::unique_ptr<HealthWriter> run_times_writer_;  // writes run_times_ to state_dir; the same
  std::unique_ptr<HealthWriter> health_writer_;   // last member: its thread stops before the rest is destroyed
};

}  // namespace rlsched::capi
