// A policy whose order depends on the site: it ranks as one of several candidate policies and, every so many jobs,
// switches to the one that would have served the site's own past best. It replays that past through the Slurm model
// under every candidate and keeps the one with the lowest average bounded slowdown: the time split's choice (choose
// on the site's own history, judge on what comes next), made while the site runs. The past it replays is only what
// is known when it chooses (known_jobs): a run judged with it never sees a job's run time before the job ends.
//
// It needs the Slurm model and the run's own jobs, so it lives here beside the simulator and `rlsched evaluate`
// builds it; the plugins cannot serve it yet (policy_models/README.md says how far it got).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/job.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/simulator.h"
#include "rlsched/status.h"

namespace rlsched::sim {

/// How a self-tuning policy is named on the command line: `self-tuning`, or `self-tuning:P1+P2+...` with its own
/// candidates (built-in names and area rule specs; the first serves until the first choice).
inline constexpr std::string_view kSelfTuningName = "self-tuning";

struct SelfTuningSettings {
  /// Policy specs (make_scorer's). The first ranks until the first choice.
  std::vector<std::string> candidates;
  std::size_t window = 20000;  ///< the most jobs replayed for a choice (known_jobs)
  std::size_t every = 1000;    ///< jobs newly known between two choices
  std::size_t warm_up = 1000;  ///< jobs known before the first choice
  /// Another candidate replaces the one in service only when its average bounded slowdown on the replay is lower
  /// by more than this share.
  double margin = 0.05;
};

/// The built-in candidates: the six heuristics and six area rules (rlsched/area_rule.h) of the ceiling study
/// (policy_models/README.md), the first of them the rule that beat every best heuristic there on average slowdown.
std::vector<std::string> default_self_tuning_candidates();

/// True for `self-tuning` and `self-tuning:...` (valid or not).
bool is_self_tuning_spec(std::string_view spec);

/// Reads `self-tuning[:P1+P2+...]` into settings (defaults but for the candidates).
/// \return InvalidInput naming the candidate that make_scorer refuses, or an empty list.
Result<SelfTuningSettings> parse_self_tuning(std::string_view spec, const ScorerSettings& scorers = {});

class SelfTuningScorer final : public Scorer {
 public:
  /// One choice: from `at` on, candidates[candidate] ranked; `replayed` jobs were replayed to choose it.
  struct Choice {
    Seconds at = 0;
    std::size_t candidate = 0;
    std::size_t replayed = 0;
  };

  /// `jobs` is the list the run simulates (ScheduleEvent::job indexes it), `config` its configuration (copied: the
  /// replays run with it, without its callbacks). `cluster` and `jobs` must outlive the scorer.
  static Result<std::unique_ptr<SelfTuningScorer>> Make(const Cluster& cluster, const std::vector<Job>& jobs,
                                                        const SimConfig& config, SelfTuningSettings settings,
                                                        const ScorerSettings& scorers = {});

  std::string_view name() const override { return name_; }
  /// Chooses again first when `every` more jobs became known since the last choice, then scores as the candidate in
  /// service.
  void score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
             std::vector<double>& scores) const override;
  /// Whether any candidate reads it (the one in service may change at any call).
  bool reads_predicted_run_time() const override;

  /// For SimConfig::observer: records each job's start and end.
  void observe(const ScheduleEvent& event);

  /// The jobs a choice now replays: the last `window` of those submitted before the earliest job that has not
  /// started yet, so that no job a policy keeps waiting is left out of its own stretch of the past. A job that
  /// ended has the run time it really had; one still running, the time it has run so far.
  /// Valid during the run (observe() says what started and ended).
  std::vector<Job> known_jobs(Seconds now) const;

  /// The candidate in service from the start and each switch, in order.
  const std::vector<Choice>& choices() const { return choices_; }
  /// How many times it chose (replayed every candidate), switching or not.
  std::size_t replays() const { return replays_; }
  const std::vector<std::string>& candidates() const { return settings_.candidates; }

 private:
  SelfTuningScorer(const Cluster& cluster, const std::vector<Job>& jobs, const SimConfig& config,
                   SelfTuningSettings settings, std::vector<std::unique_ptr<Scorer>> scorers);
  void choose(Seconds now) const;
  /// Moves resolved_ past every job that is no longer waiting.
  void advance();

  const Cluster& cluster_;
  const std::vector<Job>& jobs_;
  SimConfig replay_config_;
  SelfTuningSettings settings_;
  std::vector<std::unique_ptr<Scorer>> scorers_;
  std::string name_;
  /// What the run has shown of a job so far; a job the cluster can never run counts as ended from the start.
  enum Known : char { kWaiting, kStarted, kEnded };
  std::vector<int> by_submit_;       ///< job indices by submit time
  std::vector<Known> known_;         ///< [job]
  std::vector<Seconds> started_at_;  ///< [job]: its last start
  std::size_t resolved_ = 0;         ///< by_submit_[0 .. resolved_) have all started (or can never run)
  mutable std::size_t in_service_ = 0;
  mutable std::size_t resolved_at_last_choice_ = 0;
  mutable std::vector<Choice> choices_;
  mutable std::size_t replays_ = 0;
};

}  // namespace rlsched::sim
