// `rlsched train`: PPO training of a ranking policy in the simulator; writes a TorchScript model and its card.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "evaluation_report.h"
#include "inputs.h"
#include "progress.h"
#include "rlsched/sim/evaluation.h"
#include "rlsched/train/trainer.h"

namespace rlsched::cli {
namespace {

struct TrainOptions {
  train::TrainConfig config;
  std::string plugin_config;  ///< --config: the rlsched.yaml the model will serve under
  std::string backfill = "easy";
  std::string objective = "bsld";
  std::string rollouts = "slurm";
  std::string teacher_ranking = "training";
  std::string smith_width = "none";
  /// --cluster: none (each trace's implied cluster), one for every trace, or one per trace in --trace order
  /// ("implied" for a trace whose own header says its machine).
  std::vector<std::string> clusters;
  /// --trace-weight: none (every trace counts once) or one per trace in --trace order.
  std::vector<int> weights;
  std::vector<std::string> validation_traces;    ///< --validation-trace: sites the model is selected on only
  std::vector<std::string> validation_clusters;  ///< --validation-cluster, as --cluster for them
  /// The promise for a site's retraining with default options: at most 10 minutes on 2 cores.
  double time_budget_minutes = 10;
  std::string command_line;
};

/// Training runs for minutes: a model file that cannot be written is refused before it starts, not after.
Status check_output_folder(const std::string& output) {
  const std::filesystem::path parent = std::filesystem::path(output).parent_path();
  const std::string folder = parent.empty() ? "." : parent.string();
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    return Status::InvalidInput(fmt::format("--output {}: folder {} does not exist; create it first", output, folder));
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    return Status::InvalidInput(
        fmt::format("--output {}: cannot write in folder {}: {}", output, folder, std::strerror(errno)));
  return Status::Ok();
}

/// The option names a list of workloads is given with, for the errors.
struct WorkloadOptions {
  const char* trace;
  const char* cluster;
  const char* weight;
};

/// Reads `paths` as `rlsched evaluate` does (SWF, sacct, Alibaba, Gavel folders; the cluster given or implied; the
/// plugin configuration applied), so that the trainer trains on what evaluate judges and parses nothing itself.
/// `clusters`: none (each trace's implied cluster), one for all, or one per path in the same order ("implied" for a
/// trace whose header says its machine); `weights`: none (each counts once) or one per path.
Result<std::vector<train::TrainWorkload>> read_workloads(const std::vector<std::string>& paths,
                                                         const std::vector<std::string>& clusters,
                                                         const std::vector<int>& weights,
                                                         const std::string& plugin_config, WorkloadOptions names) {
  if (clusters.size() > 1 && clusters.size() != paths.size())
    return Status::InvalidInput(fmt::format(
        "{} is given {} times for {} traces: give one for all, or one per {} in the same order "
        "('implied' for a trace whose header says its machine)",
        names.cluster, clusters.size(), paths.size(), names.trace));
  if (!weights.empty() && weights.size() != paths.size())
    return Status::InvalidInput(
        fmt::format("{} is given {} times for {} traces: give none, or one per {} in the same order", names.weight,
                    weights.size(), paths.size(), names.trace));
  for (std::size_t i = 0; i < weights.size(); ++i)
    if (weights[i] < 1)
      return Status::InvalidInput(
          fmt::format("{} {} for {}: a trace counts at least once", names.weight, weights[i], paths[i]));
  for (const std::string& c : clusters)
    if (c != "implied" && !std::filesystem::is_regular_file(c))
      return Status::InvalidInput(fmt::format("{} {}: no such file", names.cluster, c));
  std::vector<train::TrainWorkload> out;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    RunOptions run;
    run.trace = paths[i];
    const std::string& c = clusters.size() == 1 ? clusters.front() : clusters.size() > 1 ? clusters[i] : "";
    run.cluster = c == "implied" ? "" : c;
    run.config = plugin_config;
    auto inputs = load_inputs(run);
    if (!inputs.ok()) return inputs.status();
    out.push_back(train::TrainWorkload{paths[i], std::move(inputs->workload), std::move(inputs->cluster),
                                       weights.empty() ? 1 : weights[i]});
  }
  return out;
}

int run_train(TrainOptions& options) {
  train::TrainConfig& config = options.config;
  if (Status out = check_output_folder(config.output); !out.ok()) return fail(out);
  config.started = std::chrono::steady_clock::now();  // --time-budget counts reading the traces too
  auto backfill = sim::parse_backfill(options.backfill);
  if (!backfill.ok()) return fail(backfill.status());
  config.backfill = *backfill;
  auto objective = train::parse_objective(options.objective);
  if (!objective.ok()) return fail(objective.status());
  config.objective = *objective;
  config.time_budget_seconds = options.time_budget_minutes * 60.0;
  config.command_line = options.command_line;
  std::string config_label;
  auto plugin = read_plugin_config(options.plugin_config, config_label);
  if (!plugin.ok()) return fail(plugin.status());
  config.score_scale = plugin->score_scale;
  auto rollouts = train::parse_rollouts(options.rollouts);
  if (!rollouts.ok()) return fail(rollouts.status());
  config.rollouts = *rollouts;
  auto ranking = train::parse_teacher_ranking(options.teacher_ranking);
  if (!ranking.ok()) return fail(ranking.status());
  config.teacher_ranking = *ranking;
  auto smith_width = train::parse_smith_width(options.smith_width);
  if (!smith_width.ok()) return fail(smith_width.status());
  config.smith_width_teachers = *smith_width;
  auto training = read_workloads(config.traces, options.clusters, options.weights, options.plugin_config,
                                 {"--trace", "--cluster", "--trace-weight"});
  if (!training.ok()) return fail(training.status());
  config.workloads = std::move(*training);
  const std::vector<std::string>& clusters = options.clusters;
  if (clusters.size() == 1) config.cluster = clusters.front() == "implied" ? "" : clusters.front();
  if (clusters.size() > 1) {
    config.cluster.clear();
    for (std::size_t i = 0; i < clusters.size(); ++i)
      config.cluster += fmt::format("{}{} for {}", i ? "; " : "", clusters[i], config.traces[i]);
  }
  config.traces.clear();
  auto validation = read_workloads(options.validation_traces, options.validation_clusters, {},
                                   options.plugin_config, {"--validation-trace", "--validation-cluster", ""});
  if (!validation.ok()) return fail(validation.status());
  config.validation_workloads = std::move(*validation);

  ProgressBar bar("training");
  auto result = train::train_policy(config, [&](const train::TrainProgress& p) {
    const std::string detail = fmt::format("train {:.4f}  validation {:.4f}  best {:.4f}", p.train_cost_ratio,
                                           p.validation_cost_ratio, p.best_validation);
    bar.set_detail(detail);
    bar.update(static_cast<double>(p.epoch) / std::max(p.epochs, 1));
    if (p.epoch % std::max(config.eval_every, 1) == 0 || p.epoch == p.epochs)
      fmt::print(stderr, "\repoch {}/{}  {:.0f} s  {}  entropy {:.3f}  kl {:.4f}  value loss {:.2e}\n", p.epoch,
                 p.epochs, p.elapsed_seconds, detail, p.entropy, p.approx_kl, p.value_loss);
  });
  if (!result.ok()) return fail(result.status());
  fmt::print("trained {} epochs in {:.0f} s{}\n", result->epochs_run, result->seconds,
             result->stopped_early ? " (stopped early)" : "");
  fmt::print("validation cost ratio to {} (lower is better): {:.4f} at the start of PPO, {:.4f} best\n",
             config.reference, result->initial_validation_cost_ratio, result->best_validation_cost_ratio);
  if (result->training_cost_ratio >= 0)
    fmt::print("on the whole training part: {:.4f} at the start of PPO, {:.4f} for the model kept\n",
               result->initial_training_cost_ratio, result->training_cost_ratio);
  fmt::print("teacher: {}\n", result->teacher);
  if (result->teacher_validation_cost_ratio >= 0)
    fmt::print("the teacher itself on the validation jobs: {:.4f} (the imitated network started at {:.4f})\n",
               result->teacher_validation_cost_ratio, result->initial_validation_cost_ratio);
  fmt::print("model: {}\n", result->model_path);
  if (!result->curve_csv.empty()) {
    // The card shows the curve as a PNG beside it; the model and the card stand without it (the CSV has it all).
    const std::string png = result->curve_csv.substr(0, result->curve_csv.size() - 4) + ".png";
    if (Status drawn = draw_learning_curve(result->curve_csv, png); drawn.ok())
      fmt::print("learning curve: {}\n", png);
    else
      fmt::print(stderr, "rlsched: warning: the learning curve was not drawn: {} (its figures: {})\n",
                 drawn.message(), result->curve_csv);
  }
  return kExitOk;
}

}  // namespace

CommandRunner setup_train(CLI::App& app) {
  auto options = std::make_shared<TrainOptions>();
  train::TrainConfig& c = options->config;
  auto* trace =
      app.add_option("--trace", c.traces,
                     "Training trace (repeat for several): SWF, sacct dump, Alibaba CSV or Gavel folder, read "
                     "as evaluate reads it; its last jobs are held back unread (--held-back), the ones before validate")
          ->type_name("FILE")
          ->check(CLI::ExistingPath);
  auto* sacct = app.add_option("--sacct", c.traces,
                               "A sacct --parsable2 dump of your cluster to train on (docs/sacct.md); same as --trace")
                    ->type_name("DUMP")
                    ->check(CLI::ExistingFile);
  app.add_option("--slurm-conf,--cluster", options->clusters,
                 "The cluster the traces ran on: slurm.conf (gres.conf beside it is read too) or cluster YAML; "
                 "needed for dumps with accelerator jobs. Once for every trace, or once per --trace in the same "
                 "order ('implied': the machine the trace's own header gives)")
      ->type_name("FILE");
  app.add_option("--trace-weight", options->weights,
                 "How many traces a trace counts as: its episodes are drawn and its validation figure counts that "
                 "many times as often (a few real traces beside many generated sites). None, or once per --trace "
                 "in the same order")
      ->type_name("N");
  app.add_option("--validation-trace", options->validation_traces,
                 "A workload to select the model on and never train on (repeat for several; read as --trace is): "
                 "checkpoints, imitation restarts and early stopping then read all its jobs in the Slurm model "
                 "instead of the training traces' validation jobs. Needs --rollouts slurm or --select-on-slurm")
      ->type_name("FILE")
      ->check(CLI::ExistingPath);
  app.add_option("--validation-cluster", options->validation_clusters,
                 "The cluster of the validation traces, as --cluster is for --trace: once for all, or once per "
                 "--validation-trace in the same order ('implied')")
      ->type_name("FILE");
  app.add_option("--config", options->plugin_config,
                 "The rlsched.yaml the model will serve under, applied as evaluate applies it: its score_scale "
                 "weighs the learned rank beside the cluster's multifactor weights in the Slurm-model rollouts and "
                 "validation, its types' speeds and job classes apply. Default: the shipped "
                 "slurm_conf_examples/rlsched.yaml")
      ->type_name("rlsched.yaml")
      ->check(CLI::ExistingFile);
  app.callback([trace, sacct] {
    if (trace->count() == 0 && sacct->count() == 0) throw CLI::RequiredError("--trace or --sacct");
  });
  app.add_option("--output", c.output, "Model file to write (TorchScript; a model card .md is written beside it)")
      ->type_name("MODEL")
      ->required();
  app.add_option("--model-card", c.model_card, "Where to write the model card instead")->type_name("MD");
  app.add_option("--backfill", options->backfill, "Backfill of the training simulator: easy or none")
      ->capture_default_str();
  app.add_option("--objective", options->objective, "bsld (average bounded slowdown), wait or utilization")
      ->capture_default_str();
  app.add_option("--starvation-penalty", c.starvation_penalty,
                 "Extra cost per job: penalty * (wait - threshold) / threshold when it waited longer")
      ->capture_default_str();
  app.add_option("--starvation-threshold", c.starvation_threshold, "Seconds of wait before the penalty starts")
      ->capture_default_str();
  app.add_option("--reference", c.reference, "Heuristic whose cost normalises rewards and validation figures")
      ->capture_default_str();
  app.add_option("--rollouts", options->rollouts,
                 "Where PPO's episodes run: slurm (the Slurm model on each trace's cluster, the score as site factor "
                 "at --config's score_scale; validation on the validation jobs there) or compat (RLScheduler's "
                 "simulator semantics, the paper protocol) or mixed (the traces with accelerator jobs in the Slurm "
                 "model, the others in compat)")
      ->check(CLI::IsMember({"slurm", "compat", "mixed"}))
      ->capture_default_str();
  app.add_option("--score-noise", c.score_noise,
                 "slurm and mixed rollouts: standard deviation of each job's exploration offset (score units)")
      ->capture_default_str();
  app.add_option(
         "--rollouts-per-sequence", c.rollouts_per_sequence,
         "slurm and mixed rollouts: episodes per sampled Slurm-model sequence (antithetic pairs; the baseline is "
         "their mean)")
      ->capture_default_str();
  app.add_flag("--select-on-slurm", c.select_on_slurm,
               "Validate (select the model, stop early) in the Slurm model over each trace's validation jobs "
               "instead of the training simulator's validation sequences");
  app.add_option("--select-load-factors", c.selection_load_factors,
                 "With --select-on-slurm: run each trace's validation jobs at these multiples of their offered load "
                 "(comma-separated, e.g. 0.97,1,1.03; the submit gaps scaled) and select on the geometric mean of the "
                 "ratios (not given: the one load they came at)")
      ->delimiter(',')
      ->type_name("LIST");
  app.add_option("--teacher", c.teacher,
                 "Imitated before PPO: 'search' (best smallest-area-first rule on the training part; with several "
                 "traces in the Slurm model one rule for all), 'search-each' (each trace's best rule) or a "
                 "heuristic; one for all traces or one per trace, comma-separated (search,search,sjf)")
      ->capture_default_str();
  app.add_option("--imitation-epochs", c.imitation_epochs, "Behaviour-cloning passes before PPO (0: random start)")
      ->capture_default_str();
  app.add_option("--demonstrations-per-trace", c.demonstrations_per_trace,
                 "Sequences each trace demonstrates for behaviour cloning, --trace-weight times (0: max(--episodes, 8) "
                 "in all, the traces in turn, so that with more traces than that the last teach nothing)")
      ->type_name("N")
      ->capture_default_str();
  app.add_option("--imitation-restarts", c.imitation_restarts,
                 "Imitate this many times from different initial weights and start PPO from the imitation that "
                 "validates best (on the figure the model is selected on)")
      ->capture_default_str();
  app.add_option("--search-jobs", c.search_jobs,
                 "Slurm model: the teacher search and the check of a better validation run the last N jobs of each "
                 "trace's training part (0: all of it)")
      ->capture_default_str();
  app.add_option("--teacher-on", options->teacher_ranking,
                 "Slurm model: what the teacher search ranks the rules on: 'training' (each trace's training part), "
                 "'validation' (its validation jobs, the most recent it reads) or 'validation-if-better' (the "
                 "validation jobs' best rule where it beats the training part's there by more than "
                 "--min-improvement); the last two need --rollouts slurm or --select-on-slurm")
      ->check(CLI::IsMember({"training", "validation", "validation-if-better"}))
      ->capture_default_str();
  app.add_flag("--slurm-teacher-for-accelerators", c.slurm_teacher_for_accelerators,
               "compat rollouts: search the teacher (search, search-each) of each trace with accelerator jobs in the "
               "Slurm model on its cluster, which the compat simulator, one pool of CPUs, cannot see (--search-jobs "
               "bounds it)");
  app.add_flag("--exact-teacher,!--imitated-teacher", c.exact_teacher,
               "After imitation, set the network to compute the teacher's rule exactly where the features allow it "
               "(SJF, FCFS, the area rules; one rule for every trace), its scores as far apart as imitation made "
               "them; "
               "--imitated-teacher keeps the imitated network")
      ->capture_default_str();
  app.add_flag("--predicted-run-times", c.predicted_run_times,
               "Show the policy, beside each job's time limit, the run time its user's ended jobs predict (feature "
               "schema v2; the teacher family gains each area rule on predicted run times); the model then reads "
               "ended jobs in slurmctld");
  app.add_flag("--share-term-teachers", c.share_term_teachers,
               "The teacher family gains each area rule with a job's share of the cluster weighed in (c = 3 and 10: "
               "area:A/B/G/C), three times the rules to search");
  app.add_flag("--smith-width-teachers{all}", options->smith_width,
               "The teacher family keeps only the area rules whose width weight is at most half their run-time "
               "weight (area:A/B/... with B <= A/2, Smith's ratio for bounded slowdown), so that no teacher holds a "
               "short wide job back for its width alone; about half the rules. =accelerators: only for the traces "
               "with accelerator jobs")
      ->check(CLI::IsMember({"none", "all", "accelerators"}));
  app.add_option("--teacher-margin", c.teacher_margin,
                 "A trace's teacher is --reference unless a searched rule costs less than (1 - SHARE) times it on "
                 "that trace (not given: the cheapest, a tie going to FCFS, as the shipped models were trained)")
      ->check(CLI::Range(0.0, 0.5))
      ->type_name("SHARE");
  app.add_option("--teacher-per-window", c.teacher_per_window,
                 "Imitation: each demonstration window is taught by the rule of its trace's teacher family that "
                 "costs least on it, where that costs less than (1 - SHARE) times the trace's own teacher there (a "
                 "congested stretch and a quiet one can want different orders); the network then starts as an "
                 "imitation, not as one rule exactly")
      ->check(CLI::Range(0.0, 0.9))
      ->type_name("SHARE");
  auto* init_model =
      app.add_option(
             "--init-model", c.init_model,
             "Warm start: go on from this model (e.g. the cluster's current one) instead of imitating a teacher; "
             "its layer widths replace --hidden")
          ->type_name("MODEL")
          ->check(CLI::ExistingFile);
  app.add_option("--epochs", c.epochs, "PPO epochs at most")->capture_default_str();
  app.add_option("--episodes", c.episodes_per_epoch, "Episodes (job sequences) per epoch")->capture_default_str();
  app.add_option("--sequence-length", c.sequence_length, "Jobs per episode")->capture_default_str();
  app.add_option("--held-back", c.held_back,
                 "Share of each trace's last jobs (by submit time) never read: what `evaluate --candidate` judges on "
                 "by default; 0 when the model will be judged on other workloads")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  app.add_option("--validation-share", c.validation_share,
                 "Share of the jobs before the held-back ones that validates (model selection, early stopping)")
      ->capture_default_str();
  app.add_option("--validation-sequences", c.validation_sequences, "Validation sequences per trace")
      ->capture_default_str();
  app.add_option("--hidden", c.hidden, "Hidden layer widths, e.g. --hidden 32 32")->capture_default_str();
  auto* learning_rate =
      app.add_option("--learning-rate", c.learning_rate,
                     "Adam learning rate (default: 3e-3 compat, 3e-4 slurm; mixed: compat's, its Slurm-model "
                     "update 3e-4)");
  app.add_option("--clip", c.clip, "PPO clipping range")->capture_default_str();
  app.add_option("--gamma", c.gamma, "Discount of future job costs")->capture_default_str();
  app.add_option("--gae-lambda", c.gae_lambda, "GAE lambda")->capture_default_str();
  app.add_option("--target-kl", c.target_kl, "Stop an update early past this KL divergence (0: never)")
      ->capture_default_str();
  app.add_option("--ppo-iterations", c.ppo_iterations, "Passes over each epoch's decisions")->capture_default_str();
  auto* minibatch = app.add_option("--minibatch", c.minibatch,
                                   "Decisions (compat) or samples (slurm) per gradient step (default: 256 compat, "
                                   "2048 slurm)");
  app.add_option("--entropy", c.entropy_coef, "Entropy bonus")->capture_default_str();
  app.add_option("--critic-warmup", c.critic_warmup,
                 "Compat and mixed rollouts: PPO's first N epochs fit only the value head, the imitated policy "
                 "acting unchanged")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--temperature", c.temperature,
                 "Compat and mixed rollouts: PPO samples each decision from softmax(score / T); below 1 the sampled "
                 "policy is nearer the greedy one that is validated and served")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--visible-queue", c.visible_queue, "Oldest waiting jobs a training decision chooses among")
      ->capture_default_str();
  app.add_option("--seed", c.seed, "Random seed (results are reproducible for a seed)")->capture_default_str();
  app.add_option("--threads", c.threads, "Rollout threads (0: all cores)")->capture_default_str();
  app.add_option("--eval-every", c.eval_every, "Epochs between validations")->capture_default_str();
  app.add_option("--patience", c.patience, "Validations without improvement before stopping (0: never)")
      ->capture_default_str();
  app.add_option("--min-improvement", c.min_improvement,
                 "Share by which a validation must beat the best one to replace it (smaller gains are noise)")
      ->check(CLI::Range(0.0, 0.5))
      ->type_name("SHARE")
      ->capture_default_str();
  app.add_option("--time-budget", options->time_budget_minutes,
                 "Wall-clock minutes for the whole command, reading the traces included: no epoch starts that "
                 "would end past them, judged by the slowest epoch so far (0: no limit)")
      ->type_name("MINUTES")
      ->capture_default_str();
  app.add_option("--stop-after", c.stop_after, "Run only this many epochs now (go on later with --resume)");
  app.add_option("--checkpoint", c.checkpoint, "Checkpoint file, rewritten at every validation")->type_name("FILE");
  app.add_option("--resume", c.resume, "Continue from a checkpoint")
      ->type_name("FILE")
      ->check(CLI::ExistingFile)
      ->excludes(init_model);
  return [options, learning_rate, minibatch] {
    // Slurm-model episodes update with smaller steps (train::kSlurmLearningRate says why).
    if (options->rollouts == "slurm") {
      if (learning_rate->count() == 0) options->config.learning_rate = train::kSlurmLearningRate;
      if (minibatch->count() == 0) options->config.minibatch = train::kSlurmMinibatch;
    }
    options->command_line = invocation();
    return run_train(*options);
  };
}

}  // namespace rlsched::cli
