// The training run behind rlsched::train::train_policy: one Trainer per `rlsched train`, its members defined by what
// they do (the files named in each section below). Private to rlsched_train.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <torch/torch.h>

#include "export.h"
#include "initial_policy.h"
#include "networks.h"
#include "ppo.h"
#include "rlsched/train/trainer.h"
#include "rollout.h"
#include "slurm_rollout.h"
#include "teacher.h"
#include "trace_split.h"

namespace rlsched::train {

using Clock = std::chrono::steady_clock;

/// Runs f(i) for i in [0, n) on `threads` threads; each index runs exactly once, results land by index, so the
/// outcome does not depend on scheduling.
template <typename F>
void parallel_for(std::size_t n, int threads, F f) {
  const auto workers = static_cast<std::size_t>(std::max(1, threads));
  if (workers == 1 || n <= 1) {
    for (std::size_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::vector<std::thread> pool;
  for (std::size_t w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      for (std::size_t i = w; i < n; i += workers) f(i);
    });
  for (std::thread& t : pool) t.join();
}

/// Largest minus smallest value of feature k over all recorded rows.
double raw_spread(const std::vector<Episode>& episodes, std::size_t k);

/// Deterministic per-(seed, epoch, index) random streams: an episode's randomness does not depend on which thread
/// ran it or on how many threads there are.
std::mt19937_64 stream(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index);

class Trainer {
 public:
  /// `validation_jobs`: with select_on_slurm, each trace's validation jobs at each selection load (validation_loads).
  Trainer(const TrainConfig& config, std::vector<TraceSplit> traces, std::vector<ValidationSite> sites,
          std::vector<std::vector<Workload>> validation_jobs, std::unique_ptr<Scorer> reference,
          std::optional<InitialPolicy> initial);

  Result<TrainResult> run(const std::function<void(const TrainProgress&)>& progress);

 private:
  static constexpr std::size_t kSearchSequences = 24;
  static constexpr double kUniformWindows = 0.25;  ///< share of Slurm-model windows drawn uniformly

  // ---- The run: construction, the epoch loop, snapshots and checkpoints (training_run.cpp).

  using State = std::vector<torch::Tensor>;

  State snapshot();

  void restore(const State& s);

  Status save_checkpoint(const std::string& path, int epoch);

  Status load_checkpoint(const std::string& path, int& epoch);

  // ---- The warm start: the teachers searched and imitated (warm_start.cpp).

  /// The teachers, one per trace (config.teacher: one spec for all traces, or a comma-separated spec per trace):
  /// a built-in heuristic, "search-each", the best rule of the area family on that trace's training part, or
  /// "search": the same on one trace, and on several in the Slurm model one rule for all (joint_teacher).
  Result<std::vector<Teacher>> teachers();

  /// One rule for every trace: the cluster-relative member of the family (or heuristic) with the lowest geometric mean
  /// of its training-part ratios over the traces (or of its validation ratios: config.teacher_ranking). With one
  /// teacher per trace the network imitates several rules at once, which no one weighted sum computes, so it cannot
  /// start as any of them. In leave one out, same options, one rule won 5 cells of 8 on four workloads and per-trace
  /// teachers 3, at about the same geometric mean with EASY backfill (policy_models/README.md). Each candidate runs on
  /// every trace: over 13 traces bound the stretch with config.search_jobs.
  std::vector<Teacher> joint_teacher();

  /// A searched teacher, and what its cost ratio was measured on.
  struct RankedTeacher {
    Teacher teacher;
    bool on_validation = false;  ///< the validation jobs (else the training part, or compat's sequences)
    std::string note;            ///< why it, where the ranking compared the two
  };

  /// The search in the Slurm model, the rules ranked as config.teacher_ranking says: `on_training` and
  /// `on_validation` give a rule's cost ratio on the training part and on the validation jobs.
  RankedTeacher ranked_search(const std::function<double(const Scorer&)>& on_training,
                              const std::function<double(const Scorer&)>& on_validation, bool cluster_relative,
                              bool with_accelerators);

  /// The rules the teacher search tries, as the configuration asks, for traces with accelerator jobs or without.
  TeacherFamily teacher_family(bool cluster_relative, bool with_accelerators) const;

  /// The reference and the margin a rule must beat it by to teach (TrainConfig::teacher_margin), where asked for.
  std::optional<ReferenceMargin> reference_margin() const;

  Teacher search_compat_teacher(std::size_t t);

  /// Whether trace t's teacher is searched in the Slurm model: where its episodes run (in_slurm_), or, with compat
  /// rollouts and config.slurm_teacher_for_accelerators, where it has accelerator jobs and the cluster they ran on.
  bool searches_in_slurm(std::size_t t) const;

  /// A trace with accelerator jobs and the cluster they ran on: what mixed rollouts run in the Slurm model.
  static bool has_accelerator_jobs(const TraceSplit& trace) { return trace.cluster && requests_accelerators(trace); }

  /// A trace with a job that asks for accelerators, whatever cluster it is given.
  static bool requests_accelerators(const TraceSplit& trace);

  /// The search in the Slurm model: every rule runs the trace's whole training part once, and its cost there over
  /// the reference's decides. Eight sampled windows used to decide: the rules' differences there were mostly which
  /// windows were drawn, and the rule they chose did not hold on the next months (on Lublin-1's held-back 20% the
  /// area rule the whole training part prefers has 0.67 times F1's slowdown; policy_models/README.md). One run of
  /// RICC's 287,000 training jobs takes about 2.5 s with a heuristic, so the family's 52 members cost a minute or two
  /// on 2 cores (RICC's whole warm start took 147-181 s).
  RankedTeacher search_slurm_teacher(std::size_t t);

  /// Behaviour cloning of the teachers: the policy starts where the best rule of thumb of each trace is.
  Status warm_start();

  /// With teacher_per_window, the rule of trace t's family (its heuristics included) that costs least on a window,
  /// `cost` giving a scorer's cost there, where it beats `trace_teacher` there by more than that share; none where
  /// the trace's teacher teaches the window (and without teacher_per_window).
  std::optional<Teacher> window_teacher(std::size_t t, const Teacher& trace_teacher,
                                       const std::function<double(const Scorer&)>& cost) const;

  /// The teacher line's account of the windows taught otherwise: how many, and the rules that taught most of them.
  std::string window_teachers_note(const std::vector<std::string>& rules) const;

  /// One imitation: config.imitation_epochs passes of behaviour cloning over `demos`, then, where asked and `one_rule`
  /// (every demonstration shows its trace's teacher), the network set to compute the teacher's rule. Restart 0
  /// shuffles as a run without restarts does.
  void imitate(const std::vector<Teacher>& teachers, const std::vector<Episode>& demos, int restart, bool one_rule);

  /// New initial weights for the policy (torch's default initialisation, seeded by the run's seed and the restart),
  /// its unused features masked again and Adam's moments cleared; the normalisation and the value head stay.
  void redraw_policy(int restart);

  /// Imitation learns the teacher's choices from one tick to the next and does not reproduce the rule: on Lublin-1
  /// the imitated network of an area rule started at 2.21 times the best heuristic's slowdown on the validation
  /// jobs, where the rule itself stood at 1.69 (policy_models/README.md). Where one rule teaches every trace and
  /// a weighted sum of the features ranks as it does (linear_form), the network is set to compute that sum, its
  /// scores as far apart within each decision as the imitated network's, so that exploration noise and the
  /// learning rate mean what they meant after imitation.
  void start_as_the_rule(const std::vector<Teacher>& teachers, const std::vector<Episode>& demos);

  int total_cpus(const TraceSplit& t) const;

  // ---- PPO's epochs: the sequences drawn, the rollouts and the updates (ppo_epochs.cpp).

  /// A trace drawn at random, each as often as its weight says.
  std::size_t draw_trace(std::mt19937_64& rng) const;

  /// A sequence from a trace drawn at random (draw_trace).
  Sequence sample(std::mt19937_64& rng) const { return start_in(traces_[draw_trace(rng)], rng); }

  /// A sequence from trace t. It draws (and ignores) a trace first, as sample() does: a single-trace run then
  /// sees the same random streams whether its sequences come from here or from sample().
  Sequence sample_in(const TraceSplit& t, std::mt19937_64& rng) const;

  Sequence start_in(const TraceSplit& t, std::mt19937_64& rng) const;

  /// A window of trace t's training jobs for the Slurm model. One draw in kUniformWindows is start_in's (where a
  /// compat sequence would start); the others start where scheduling matters (weigh_windows_by_contention).
  SlurmSequence slurm_start_in(const TraceSplit& t, std::mt19937_64& rng) const;

  /// Windows of an empty cluster at a quiet time teach nothing: every order of the queue gives the same schedule,
  /// so the episodes' costs are all the reference's and PPO sees no signal (on COARE, a cluster about 37% busy, the
  /// teacher search's 8 uniform windows gave every rule the reference's cost: it returned FCFS at ratio 1.000). The
  /// reference heuristic runs once over each trace's training part in the Slurm model; a window's weight is the
  /// number of its jobs that waited there (plus one, so that every start stays possible). Kept per trace as the
  /// cumulative weight of each window start.
  /// The same run gives each window its warm-up: the jobs still queued or running when its first job arrives (at
  /// most a window's length), run ahead of it and not charged. A window of an empty cluster misses the backlog that
  /// made its jobs wait: on RICC the teacher search's 8 windows gave every rule of the family the reference's cost
  /// at two training seeds of three; with the warm-up, at one (policy_models/README.md).
  void weigh_windows_by_contention();

  /// One epoch in the Slurm model: episodes_per_epoch / k sequences, k episodes on each (antithetic pairs of
  /// per-job offsets), each episode's advantage its return minus the sequence's mean return; then the update.
  UpdateStats slurm_epoch(int epoch, double& train_cost_ratio);

  /// The learning rate decays linearly to a tenth over the run: large steps early, fine ones at the end.
  double learning_rate_decay(int epoch) const;

  void set_learning_rate(double rate);

  /// Mixed rollouts: each of the epoch's episodes_per_epoch draws is a trace; those of compat traces run one compat
  /// episode each (as compat_epoch runs them), and every rollouts_per_sequence-th draw of a Slurm-model trace a
  /// sequence of that many Slurm-model episodes (as slurm_epoch does). Then one update on each kind's episodes, the
  /// compat ones first: their losses are not on one scale (choices among the queue, offsets of each job's score).
  UpdateStats mixed_epoch(int epoch, double& train_cost_ratio);

  /// rollouts_per_sequence Slurm-model episodes on each sequence (antithetic pairs of per-job offsets), each
  /// episode's advantage its return minus the sequence's mean return; then the update (its random stream `update`,
  /// its minibatch and clipping `update_config`'s).
  UpdateStats slurm_update(int epoch, const std::vector<SlurmSequence>& sequences, double& train_cost_ratio,
                           std::uint64_t update, const TrainConfig& update_config);

  UpdateStats compat_epoch(int epoch, double& train_cost_ratio);

  /// A compat episode's sequence, and the random stream its exploration goes on with.
  struct CompatDraw {
    Sequence sequence;
    std::mt19937_64 rng;
  };

  /// One compat episode on each draw, then the update.
  UpdateStats compat_update(int epoch, std::vector<CompatDraw> draws, double& train_cost_ratio);

  std::vector<Episode> rollouts(std::vector<CompatDraw> draws);

  // ---- Model selection: the figures a model is kept or stopped on (model_selection.cpp).

  /// `scorer`'s metric over the reference's on trace t's validation jobs in the Slurm model (select_on_slurm): the
  /// geometric mean over the selection loads (TrainConfig::selection_load_factors), where there are several.
  double validation_ratio(std::size_t t, const Scorer& scorer) const;

  /// Where the teacher search and the training-part check run on trace t: its training part, or its last
  /// config.search_jobs jobs.
  SlurmSequence search_stretch(std::size_t t) const;

  /// `scorer`'s cost over the reference's on trace t's training part (search_stretch), run once in the Slurm model.
  double training_part_ratio(std::size_t t, const Scorer& scorer) const;

  /// The greedy policy's training_part_ratio, averaged over the traces (pool_mean).
  double training_part_ratio();

  /// The mean of one figure per trace, each counted its weight times (TrainWorkload::weight); 1 without traces.
  /// With every weight 1 it is the plain mean, to the last bit.
  double pool_mean(const std::vector<double>& by_trace) const;

  /// Called when a checkpoint beats the kept model on the validation jobs: it is kept only if it is no worse on
  /// the training part (search_stretch: all of it by default). The validation jobs are one stretch of time, and a gain
  /// there can be that month's alone: on Lublin-1 at training seed 2, PPO moved from the area rule the training part
  /// prefers (1.14 times F1 on the validation jobs, 0.67 on the held-back 20%) to a checkpoint at 0.66 on the
  /// validation jobs and 1.22 on the held-back 20% (policy_models/README.md). The training part is four times as long,
  /// and where the teacher search chose the rule the network starts as. In compat rollouts every checkpoint counts.
  bool holds_on_training_part();

  /// The objective's metric for `scorer` over `workload` in the Slurm model (lower is better).
  double slurm_metric(const Workload& workload, const Cluster* cluster, const Scorer& scorer) const;

  /// Mean over the traces (pool_mean) of ratio_of(trace) (a validation_ratio, called from several threads at once).
  double slurm_validation_ratio(const std::function<double(std::size_t)>& ratio_of);

  /// The greedy policy's metric over the reference's: in the Slurm model over the validation sites' jobs or each
  /// trace's validation jobs, or the mean over the training simulator's validation sequences.
  double validate();

  /// Every heuristic and the policy on the validation sequences: the model card's table.
  std::vector<ValidationRow> validation_table();

  // ---- State.

  const TrainConfig& config_;
  const std::optional<InitialPolicy> initial_;  ///< warm start from a model file, instead of imitation
  std::vector<TraceSplit> traces_;
  std::vector<ValidationSite> sites_;  ///< TrainConfig::validation_workloads: the model is selected there
  std::vector<std::size_t> draws_;     ///< each trace's index, weight times: draw_trace's urn
  std::vector<char> in_slurm_;         ///< per trace: its episodes run in the Slurm model (kSlurm, or kMixed's choice)
  std::vector<std::vector<double>> contention_cdf_;        ///< Slurm mode: per trace, cumulative window weights
  std::vector<std::vector<std::uint32_t>> window_warmup_;  ///< Slurm mode: per trace and window start, its warm-up
  std::unique_ptr<Scorer> reference_;
  const CostModel cost_;
  const bool backfill_;
  const bool slurm_;          ///< episodes run in the Slurm model (Rollouts::kSlurm)
  sim::SimConfig slurm_sim_;  ///< how: the configured backfill, on each trace's cluster
  const int threads_;
  PolicyNets nets_;
  torch::optim::Adam optimizer_;
  /// The value head's alone, for the critic's warm-up epochs (config.critic_warmup). Not checkpointed: a run resumed
  /// inside the warm-up starts its moments again.
  torch::optim::Adam value_optimizer_;
  std::vector<Sequence> validation_;
  std::vector<int> validation_weight_;  ///< the weight of each validation sequence's trace
  std::vector<double> validation_reference_;
  /// With select_on_slurm: each trace's validation jobs, at each selection load (TrainConfig::selection_load_factors)
  std::vector<std::vector<Workload>> validation_jobs_;
  std::vector<std::vector<double>> validation_slurm_reference_;  ///< and the reference's metric on each
  std::vector<double> site_reference_;                           ///< the reference's metric on each validation site
  double best_ = 1.0, initial_cost_ = 1.0;
  /// The reference's cost on each trace's training part (search_stretch): Slurm mode, and the Slurm-model teacher
  /// searches of compat mode (-1 until measured)
  std::vector<double> training_reference_;
  double best_training_ = 1.0, initial_training_ = -1;  ///< training_part_ratio() of the kept and starting model
  int stale_ = 0;                                       ///< validations since the best one (early stopping)
  double teacher_validation_ = -1;                      ///< TrainResult::teacher_validation_cost_ratio
  State best_state_;
  std::string teacher_;
};

}  // namespace rlsched::train
