#include "rlsched/train/trainer.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "training_run.h"

namespace rlsched::train {

Result<Objective> parse_objective(const std::string& text) {
  if (text == "bsld") return Objective::kBoundedSlowdown;
  if (text == "wait") return Objective::kWait;
  if (text == "utilization") return Objective::kUtilization;
  return Status::InvalidInput(fmt::format("unknown objective '{}' (known: bsld, wait, utilization)", text));
}

Result<Rollouts> parse_rollouts(const std::string& text) {
  if (text == "slurm") return Rollouts::kSlurm;
  if (text == "compat") return Rollouts::kCompat;
  if (text == "mixed") return Rollouts::kMixed;
  return Status::InvalidInput(fmt::format("unknown rollouts '{}' (known: slurm, compat, mixed)", text));
}

Result<TeacherRanking> parse_teacher_ranking(const std::string& text) {
  if (text == "training") return TeacherRanking::kTrainingPart;
  if (text == "validation") return TeacherRanking::kValidation;
  if (text == "validation-if-better") return TeacherRanking::kValidationIfBetter;
  return Status::InvalidInput(
      fmt::format("unknown teacher ranking '{}' (known: training, validation, validation-if-better)", text));
}

Result<SmithWidth> parse_smith_width(const std::string& text) {
  if (text == "none") return SmithWidth::kNone;
  if (text == "all") return SmithWidth::kAll;
  if (text == "accelerators") return SmithWidth::kAccelerators;
  return Status::InvalidInput(
      fmt::format("unknown choice '{}' for the Smith-width teachers (known: none, all, accelerators)", text));
}

bool smith_width_for(SmithWidth where, bool with_accelerators) {
  return where == SmithWidth::kAll || (where == SmithWidth::kAccelerators && with_accelerators);
}

const char* to_string(Rollouts rollouts) {
  switch (rollouts) {
    case Rollouts::kSlurm:
      return "slurm";
    case Rollouts::kCompat:
      return "compat";
    case Rollouts::kMixed:
      return "mixed";
  }
  return "?";
}

const char* to_string(Objective objective) {
  switch (objective) {
    case Objective::kBoundedSlowdown:
      return "bsld";
    case Objective::kWait:
      return "wait";
    case Objective::kUtilization:
      return "utilization";
  }
  return "?";
}

Result<TrainResult> train_policy(const TrainConfig& config, const std::function<void(const TrainProgress&)>& progress) {
  if (config.traces.empty() && config.workloads.empty()) return Status::InvalidInput("no training traces given");
  if (config.sequence_length < 2) return Status::InvalidInput("sequence length must be at least 2 jobs");
  if (config.episodes_per_epoch == 0) return Status::InvalidInput("episodes per epoch must be at least 1");
  if (config.hidden.empty()) return Status::InvalidInput("the policy needs at least one hidden layer");
  if (!(config.min_improvement >= 0 && config.min_improvement < 1))
    return Status::InvalidInput(fmt::format("min improvement {} is not a share in [0, 1)", config.min_improvement));
  if (config.teacher_per_window && !(*config.teacher_per_window >= 0 && *config.teacher_per_window < 1))
    return Status::InvalidInput(
        fmt::format("--teacher-per-window {}: must be a share in [0, 1)", *config.teacher_per_window));
  if (config.teacher_per_window && !config.init_model.empty())
    return Status::InvalidInput(
        "--teacher-per-window chooses what imitation shows, and --init-model goes on from a model without imitating: "
        "give one or the other");
  std::optional<InitialPolicy> initial;
  TrainConfig run_config = config;
  if (run_config.started == Clock::time_point{}) run_config.started = Clock::now();
  if (!config.init_model.empty()) {
    auto read = read_initial_policy(config.init_model);
    if (!read.ok()) return read.status();
    run_config.hidden = read->hidden;  // the network continues the model's
    initial = std::move(*read);
  }
  auto reference = make_scorer(config.reference);
  if (!reference.ok()) return reference.status();
  if (config.teacher_margin) {
    if (!(*config.teacher_margin >= 0 && *config.teacher_margin < 1))
      return Status::InvalidInput(
          fmt::format("--teacher-margin {}: must be a share in [0, 1)", *config.teacher_margin));
    if (!is_teacher_heuristic(config.reference))
      return Status::InvalidInput(fmt::format(
          "--teacher-margin keeps the reference as the teacher, and the teacher search cannot imitate --reference "
          "{}: use fcfs, sjf, wfp3 or unicep",
          config.reference));
  }
  if (config.rollouts != Rollouts::kCompat) {
    if (config.rollouts_per_sequence < 2)
      return Status::InvalidInput("Slurm-model rollouts need at least 2 episodes per sequence (the baseline)");
    if (!(config.score_noise > 0)) return Status::InvalidInput("Slurm-model rollouts need a score noise > 0");
  }
  if (config.imitation_restarts < 1)
    return Status::InvalidInput(
        fmt::format("--imitation-restarts {}: imitation runs at least once", config.imitation_restarts));
  if (!(config.temperature > 0))
    return Status::InvalidInput(fmt::format("--temperature {}: must be above 0", config.temperature));
  if (config.temperature != 1.0 && config.rollouts == Rollouts::kSlurm)
    return Status::InvalidInput(
        "--temperature shapes the compat simulator's softmax; Slurm-model rollouts explore with --score-noise");
  // The model is judged where it trains: the Slurm model's validation jobs.
  if (config.rollouts == Rollouts::kSlurm) run_config.select_on_slurm = true;
  if (!config.validation_workloads.empty() && !run_config.select_on_slurm)
    return Status::InvalidInput(
        "--validation-trace selects the model in the Slurm model: train with --rollouts slurm or --select-on-slurm");
  for (double factor : config.selection_load_factors)
    if (!(factor > 0 && std::isfinite(factor)))
      return Status::InvalidInput(fmt::format("--select-load-factors: {} is not a load factor above 0", factor));
  if (!config.selection_load_factors.empty() && !run_config.select_on_slurm)
    return Status::InvalidInput(
        "--select-load-factors runs the Slurm model's validation jobs at several loads: train with --rollouts slurm or "
        "--select-on-slurm");
  if (!config.selection_load_factors.empty() && !config.validation_workloads.empty())
    return Status::InvalidInput(
        "--select-load-factors runs the training traces' validation jobs at several loads, and --validation-trace "
        "selects on other sites instead: give one or the other");
  std::vector<ValidationSite> sites;
  for (const TrainWorkload& workload : config.validation_workloads) {
    auto site = validation_site(workload, config);
    if (!site.ok()) return site.status();
    sites.push_back(std::move(*site));
  }
  if (config.teacher_ranking != TeacherRanking::kTrainingPart && !run_config.select_on_slurm)
    return Status::InvalidInput(
        "--teacher-on validation and validation-if-better rank the rules on the Slurm model's validation jobs: train "
        "with --rollouts slurm or --select-on-slurm");
  std::vector<TraceSplit> traces;
  for (const std::string& path : config.traces) {
    auto split = split_trace(path, config);
    if (!split.ok()) return split.status();
    traces.push_back(std::move(*split));
  }
  for (const TrainWorkload& workload : config.workloads) {
    if (workload.weight < 1)
      return Status::InvalidInput(
          fmt::format("{}: weight {}: a training workload counts at least once", workload.label, workload.weight));
    auto split = split_workload(workload, config);
    if (!split.ok()) return split.status();
    traces.push_back(std::move(*split));
  }
  std::vector<std::vector<Workload>> validation_jobs;
  if (run_config.select_on_slurm)
    for (const TraceSplit& t : traces) {
      auto loads = validation_loads(t, config.selection_load_factors);
      if (!loads.ok()) return loads.status();
      validation_jobs.push_back(std::move(*loads));
    }
  torch::manual_seed(config.seed);
  at::set_num_threads(1);  // the update is small; one thread keeps it deterministic, rollouts use the cores
  try {
    Trainer trainer(run_config, std::move(traces), std::move(sites), std::move(validation_jobs), std::move(*reference),
                    std::move(initial));
    return trainer.run(progress);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("training failed: ") + e.what());
  }
}

}  // namespace rlsched::train
