// `rlsched train`: proximal policy optimisation (clipped objective) of a job-ranking policy, with rollouts over job
// sequences sampled from one or more workloads, in one of two simulators (TrainConfig::rollouts):
//
//  - kSlurm (default): the Slurm model (sim::simulate) on each workload's own cluster, where the deployed policy
//    acts: its score becomes the site factor at score_scale beside multifactor, recomputed every decay tick and at
//    submit, with partitions, typed accelerators, QOS and backfill. Exploration perturbs the scores; see
//    slurm_rollout.h for the design (per-job Gaussian noise held for the episode, antithetic pairs, an episode-level
//    advantage against the other episodes of the same sequence).
//  - kCompat: RLScheduler's simulator semantics (the paper protocol): one pool of CPUs, the policy picks each queue
//    head from the softmax of its scores while training and the highest-scoring one when deployed; rewards are
//    dense (each decision is charged the cost of the jobs that start under it), with GAE and a value head.
//
// Either way an episode's return is -(policy cost / reference heuristic's cost on the same sequence), whatever the
// trace.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rlsched/sim/simulator.h"
#include "rlsched/status.h"

namespace rlsched::train {

enum class Objective {
  kBoundedSlowdown,  ///< average bounded slowdown (tau 10 s)
  kWait,             ///< average wait
  kUtilization,      ///< busy CPU share over the sequence's makespan (charged at the end)
};

Result<Objective> parse_objective(const std::string& text);
const char* to_string(Objective objective);

/// The update's defaults for Slurm-model episodes where they differ from compat's (TrainConfig's), for `rlsched train
/// --rollouts slurm` and the Slurm-model half of kMixed: a job's Gaussian score moves its log-density by
/// (shift / sd)^2 / 2, so steps of compat's size overshoot the target KL at the first minibatch, and an epoch holds
/// about ten times as many samples as compat has decisions. Measured on Lublin-1 + COARE, 150 epochs: learning rate
/// 1e-3 never got below the imitation start, 3e-4 did within 40 epochs.
inline constexpr double kSlurmLearningRate = 3e-4;
inline constexpr std::size_t kSlurmMinibatch = 2048;

/// Where PPO's episodes run.
enum class Rollouts {
  kSlurm,   ///< the Slurm model on each workload's cluster, the policy's score as site factor (slurm_rollout.h)
  kCompat,  ///< RLScheduler's simulator semantics, the policy picks the queue head (the paper protocol)
  /// Each workload where its jobs can be seen: one with accelerator jobs and a cluster in the Slurm model (the
  /// compat simulator sees such jobs as CPUs on one pool, and no accelerator feature ever varies there), the others
  /// in compat. Teacher search, imitation and PPO alike; an epoch updates once on each kind's episodes, the Slurm
  /// model's at kSlurmLearningRate (decaying as learning_rate does) and kSlurmMinibatch.
  kMixed,
};

/// What the teacher search ranks the rules on in the Slurm model: a site's whole history, or its recent past.
enum class TeacherRanking {
  kTrainingPart,  ///< each rule's cost on the trace's training part
  kValidation,    ///< on its validation jobs, the most recent the trainer reads (policy_models/README.md, rule P14)
  /// The validation jobs' best rule where it beats the training part's rule there by more than min_improvement,
  /// else the training part's rule: the recent past overrides the history only where it tells the rules apart (a
  /// quiet month, where every rule ties, keeps the history's; rule P15).
  kValidationIfBetter,
};

/// Which traces' teacher search keeps only the rules that weigh width no more than Smith's ratio rule
/// (TeacherFamily::smith_width; policy_models/README.md, rules P20 and P21).
enum class SmithWidth {
  kNone,          ///< the whole family for every trace
  kAll,           ///< for every trace
  kAccelerators,  ///< for the traces with accelerator jobs only; CPU traces search the whole family
};

Result<Rollouts> parse_rollouts(const std::string& text);
const char* to_string(Rollouts rollouts);
/// "training", "validation" or "validation-if-better" (rlsched train --teacher-on).
Result<TeacherRanking> parse_teacher_ranking(const std::string& text);
/// "none", "all" or "accelerators" (rlsched train --smith-width-teachers).
Result<SmithWidth> parse_smith_width(const std::string& text);
/// Whether the teacher search of a trace, with accelerator jobs or without, keeps only the Smith-width rules.
bool smith_width_for(SmithWidth where, bool with_accelerators);

/// A workload already read and prepared by the caller (the CLI loads it as `rlsched evaluate` does: SWF, sacct,
/// Alibaba, Gavel folders, with the plugin configuration applied), and the cluster it runs on.
struct TrainWorkload {
  std::string label;  ///< where it came from (a path), for the card
  Workload workload;
  Cluster cluster;  ///< its priority.site is replaced by TrainConfig::score_scale
  /// How many workloads it counts as: its sequences are drawn, its imitation episodes run and its validation figure
  /// counts this many times as often as a weight-1 workload's (a few real traces beside many generated sites).
  int weight = 1;
};

struct TrainConfig {
  std::vector<std::string> traces;  ///< SWF / sacct / Alibaba files; each split into training, validation, held back
  /// Workloads prepared by the caller, trained on after `traces` (which are read here with `cluster`).
  std::vector<TrainWorkload> workloads;
  /// Workloads that only validate (rlsched train --validation-trace): never trained on, imitated or searched. When
  /// given, the model is chosen on all of their jobs in the Slurm model, each counted its weight times (checkpoints,
  /// imitation restarts, early stopping), instead of on the training traces' own validation jobs: on sites it never
  /// saw rather than on the next jobs of those it did (policy_models/README.md, rule P18). Needs select_on_slurm
  /// (implied by Rollouts::kSlurm).
  std::vector<TrainWorkload> validation_workloads;
  Rollouts rollouts = Rollouts::kSlurm;
  /// kSlurm, kMixed: standard deviation of the Gaussian noise added to each job's score while exploring (in the score's
  /// units; the policy's scores after imitation spread over a few units). Deployment adds none.
  double score_noise = 0.5;
  /// kSlurm, kMixed: episodes run on each sampled sequence (even: antithetic pairs, see slurm_rollout.h); the epoch
  /// runs episodes_per_epoch / this many sequences.
  std::size_t rollouts_per_sequence = 4;
  /// slurm.conf (gres.conf beside it) or cluster YAML the traces ran on: its CPUs size the training simulator and the
  /// Slurm-model validation runs on it. Empty: the cluster each trace implies (SWF header; not for accelerator jobs).
  std::string cluster;
  /// The site factor's weight in the Slurm-model validation runs: score_scale of the rlsched.yaml the model will
  /// serve under (site_factor/rlsched writes the rank share times it).
  std::uint32_t score_scale = kDefaultScoreScale;
  sim::Backfill backfill = sim::Backfill::kEasy;
  std::size_t sequence_length = 256;  ///< jobs per training episode
  std::size_t episodes_per_epoch = 32;
  int epochs = 100;
  /// The last share of each trace's jobs by submit time, never read: the jobs that come next, which `rlsched evaluate
  /// --candidate` judges the model on (take_recent). Selecting the model on them would judge it in sample.
  double held_back = 0.2;
  /// Of the jobs before the held-back ones, the last share validates (model selection, early stopping) and is never
  /// trained on.
  double validation_share = 0.2;
  std::size_t validation_sequences = 6;  ///< per trace, of sequence_length jobs each, spread over the validation part
  Objective objective = Objective::kBoundedSlowdown;
  /// Starvation penalty: each job's cost grows by penalty * max(0, wait - threshold) / threshold.
  double starvation_penalty = 0;
  Seconds starvation_threshold = 86400;
  std::string reference = "f1";  ///< heuristic whose cost normalises rewards
  /// Where validation (model selection, early stopping) runs: false = the training simulator on the held-back
  /// sequences; true = the Slurm model over each trace's held-back jobs, on the objective's metric (average bounded
  /// slowdown or wait) relative to the reference's. Always true with Rollouts::kSlurm.
  bool select_on_slurm = false;
  /// With select_on_slurm: each trace's validation jobs also run at these multiples of their offered load (the
  /// submit gaps scaled, sim::scale_to_load), and a checkpoint's or rule's ratio on a trace is the geometric mean of
  /// its ratios over them. One run of a loaded workload is one trajectory of a chaotic system (on Gavel, SJF's
  /// slowdown goes from 12.4 to 47.1 with 1.5% more load; policy_models/README.md, rule L1), so a model chosen on one
  /// run is partly chosen on the trajectory. Empty: the one load the jobs came at.
  std::vector<double> selection_load_factors;
  /// Whom the policy imitates before PPO: "search" (the best smallest-area-first-with-ageing rule on the training
  /// part, see teacher.h; with several traces in the Slurm model one cluster-relative rule for all of them),
  /// "search-each" (the best rule of each trace) or a built-in heuristic's name; one for all traces, or one per
  /// trace, comma-separated.
  std::string teacher = "search";
  int imitation_epochs = 30;  ///< behaviour-cloning passes before PPO; 0 = start at random
  /// Sequences each trace demonstrates for behaviour cloning, weight times (0: max(episodes_per_epoch, 8) sequences
  /// in all, the traces in turn, as the shipped models were trained: with 37 traces and 32 episodes one sequence of
  /// most traces and none of the last five). The first sequences are the same either way.
  std::size_t demonstrations_per_trace = 0;
  /// Imitation runs this many times from different initial weights (the first from the weights a run with 1 starts
  /// from) and PPO starts from the one that validates best, on the figure the model is selected on. The demonstrations
  /// and the teacher search are shared, so each restart costs its imitation passes and one validation.
  int imitation_restarts = 1;
  /// In the Slurm model the teacher search runs every candidate rule once, and the check of a better validation
  /// (Trainer::holds_on_training_part) runs the policy once, over the last `search_jobs` jobs of each trace's
  /// training part (0: all of it). One run of an overloaded workload can take seconds: Gavel's 9,800 training jobs
  /// take about 10 s, so the search's 52 candidates take minutes there.
  std::size_t search_jobs = 0;
  /// What the search ranks the rules on where it runs in the Slurm model (TeacherRanking). Other than the training
  /// part it needs select_on_slurm (implied by Rollouts::kSlurm), whose validation jobs it reads.
  TeacherRanking teacher_ranking = TeacherRanking::kTrainingPart;
  /// Compat rollouts: search the teacher of each trace with accelerator jobs (and a cluster) in the Slurm model, as
  /// Slurm rollouts do. The compat simulator schedules such jobs as their CPUs on one pool, no partitions or types,
  /// and its search can choose a rule the trace's own cluster makes 2.5 times worse than SJF (policy_models/
  /// README.md, stop 54). PPO and imitation stay where the rollouts run.
  bool slurm_teacher_for_accelerators = false;
  /// After imitation, set the network to compute the teacher's rule exactly where a weighted sum of the features
  /// ranks as the rule does (SJF, FCFS, the area family; one rule for every trace), its scores as far apart
  /// as imitation made them.
  bool exact_teacher = true;
  /// Show the policy the run time each job's user's ended jobs predict, beside its limit (feature schema v2's
  /// predicted_log and wait_over_predicted; the teacher family gains each area rule on predicted run times). The
  /// model then needs ended jobs in slurmctld, which site_factor/rlsched passes it (docs/plugins.md). Off: the
  /// network leaves those features out and the model is one of schema v1.
  bool predicted_run_times = false;
  /// The teacher family gains each area rule with the share term (c = 3 and 10, train/src/teacher.h): a job's size
  /// counted as its share of the cluster. The search then tries three times the rules.
  bool share_term_teachers = false;
  /// Where the teacher family keeps only the area rules that weigh width no more than Smith's ratio rule (b <= a /
  /// 2, TeacherFamily::smith_width): about half the rules.
  SmithWidth smith_width_teachers = SmithWidth::kNone;
  /// Where set, a trace's teacher is the reference unless a searched rule costs less than (1 - teacher_margin)
  /// times it there (train/src/teacher.h ReferenceMargin); the reference must be one the search tries. Unset: the
  /// cheapest candidate, a tie going to FCFS, as the shipped models were trained.
  std::optional<double> teacher_margin;
  /// Where set, imitation: each demonstration window is taught by the rule of its trace's teacher family (the
  /// heuristics it tries included) that costs least on that window, in the simulator the window runs in, where that
  /// rule costs less than (1 - teacher_per_window) times the trace's own teacher there; elsewhere by the trace's
  /// teacher. The best rule of a congested stretch and of a moderate one differ (on Gavel's training part WFP3 and
  /// SJF; policy_models/README.md, rule P26), and one rule per trace shows the network the order of whichever stretch
  /// dominates the trace's cost. The network then starts as an imitation, not as one rule exactly.
  std::optional<double> teacher_per_window;
  /// Warm start: a model file (the cluster's current policy) to start PPO from instead of imitating a teacher; its
  /// hidden widths replace `hidden`, its features and input normalisation are kept.
  std::string init_model;
  std::vector<int> hidden{32, 32};
  /// At the start; decays linearly to a tenth by the last epoch. `rlsched train --rollouts slurm` defaults to 3e-4
  /// (and minibatch 2048): a Gaussian score's log-density is far more sensitive to a step than the softmax's.
  double learning_rate = 3e-3;
  double clip = 0.2;
  double gamma = 1.0;
  double gae_lambda = 0.95;
  double target_kl = 0.02;  ///< stop an update's passes once the policy moved this far (0: never)
  int ppo_iterations = 4;
  std::size_t minibatch = 256;  ///< decisions (kCompat) or samples (kSlurm) per gradient step
  double entropy_coef = 0.001;
  /// Compat (and mixed rollouts' compat) episodes: PPO's first this many epochs fit the value head alone, the
  /// policy acting as imitation left it. The value head starts random, and advantages measured against it moved the
  /// imitated network away from its best at the first validation (policy_models/README.md, "PPO after imitation").
  int critic_warmup = 0;
  /// Compat (and mixed rollouts' compat) episodes sample each decision from softmax(score / temperature), and PPO's
  /// update reads its log-probabilities the same way; validation and deployment take the highest score whatever it
  /// is. At 1 the imitated network's sampled policy is near uniform over the visible queue (entropy about 2.3 nats)
  /// and PPO never moved the default's recipe's greedy validation at seed 1; at 0.02 it did at every seed, which did
  /// not carry to fresh sites (policy_models/README.md, rule P16).
  double temperature = 1.0;
  double value_coef = 0.5;
  double max_grad_norm = 0.5;
  std::size_t visible_queue = 256;  ///< jobs (oldest first) a training decision chooses among
  std::uint64_t seed = 1;
  int threads = 0;                 ///< rollout threads; 0 = all cores
  int eval_every = 2;              ///< epochs between validations
  /// Validations without improvement before stopping early. 40, not 10: with 10 the time split on Lublin stopped
  /// after 12-30 s and lost to F1 at two of three seeds; with 40 it won at all three, COARE was unchanged and
  /// RICC (not used for the choice) gained or stayed (policy_models/README.md, "One seed is one draw").
  int patience = 40;
  /// A validation replaces the best model only when its figure is lower by more than this share of the best one.
  /// Smaller gains are the validation jobs' noise, not a better policy: on COARE's quiet validation month a PPO
  /// checkpoint 0.06% better than the starting rule replaced it, and on the held-back 20% had 1.47 times the rule's
  /// slowdown (policy_models/README.md).
  double min_improvement = 0.01;
  /// The wall-clock budget (0 = no limit), counted from `started`. No epoch starts that the slowest epoch so far
  /// says would end past it: the last one, with a validation and the training-part check, ran the time split on
  /// Gavel to 10.6 minutes in a budget of 10. Reading the traces and the teacher search run whole.
  double time_budget_seconds = 0;
  /// When the budget started: the command's start, so that reading the traces counts. Default: train_policy's call.
  std::chrono::steady_clock::time_point started{};
  int stop_after = 0;              ///< run at most this many epochs in this invocation (0 = to the end); with
                                   ///< a checkpoint, training can go on later with resume
  std::string checkpoint;          ///< path written every eval; empty = none
  std::string resume;              ///< checkpoint to continue from
  std::string output;              ///< model file (TorchScript)
  std::string model_card;          ///< Markdown card; empty = output with .md
  std::string command_line;        ///< how this run was started, for the card's "reproduce" section
};

/// Progress of a run, reported after every epoch.
struct TrainProgress {
  int epoch = 0;
  int epochs = 0;
  double elapsed_seconds = 0;
  double train_cost_ratio = 0;        ///< this epoch's episodes: policy cost / reference cost (lower is better)
  double validation_cost_ratio = -1;  ///< latest validation (greedy), -1 before the first
  double best_validation = -1;
  double entropy = 0;    ///< mean policy entropy over the epoch's decisions (nats)
  double approx_kl = 0;  ///< how far the update moved the policy
  double value_loss = 0;
};

struct TrainResult {
  int epochs_run = 0;
  bool stopped_early = false;
  double seconds = 0;
  /// Greedy policy cost / reference cost where the model is selected: the validation sequences, the Slurm model's
  /// validation jobs (select_on_slurm) or the validation sites (TrainConfig::validation_workloads).
  double best_validation_cost_ratio = 0;
  double initial_validation_cost_ratio = 0;
  /// The teacher rule itself on the validation jobs in the Slurm model, over the reference (-1: not measured, with
  /// compat selection, validation sites or a warm start from a model). Far below initial_validation_cost_ratio:
  /// imitation missed it.
  double teacher_validation_cost_ratio = -1;
  /// In the Slurm model: the greedy policy's cost over the reference's on the whole training part, at the start of
  /// PPO and for the model kept (-1: not measured, compat rollouts). A checkpoint better on the validation jobs
  /// but worse here is not kept (TrainConfig::min_improvement, Trainer::holds_on_training_part).
  double initial_training_cost_ratio = -1;
  double training_cost_ratio = -1;
  std::string teacher;  ///< what was imitated, and its cost ratio on the training part
  std::string model_path;
  /// Every epoch's progress in this invocation (the learning curve): the model card's `<card>.curve.csv`.
  std::vector<TrainProgress> curve;
  std::string curve_csv;  ///< where that CSV was written ("" without an output)
};

Result<TrainResult> train_policy(const TrainConfig& config,
                                 const std::function<void(const TrainProgress&)>& progress = {});

}  // namespace rlsched::train
