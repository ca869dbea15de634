#include "export.h"

#include <dlfcn.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "rlsched/features.h"
#include "rlsched/policy/model_builder.h"
#include "rlsched/policy/torchscript_scorer.h"
#include "rlsched/sim/evaluation.h"

namespace rlsched::train {
namespace {

/// The BLAS kernels libtorch's matrix products ran on, which the weights depend on: OpenBLAS picks its kernels by
/// CPU when it loads, and the same command and seed start PPO from a different network on another CPU (the
/// default's recipe at 0.6548 with SkylakeX kernels, 0.6305 with Haswell's, 0.5843 with Cooperlake's;
/// policy_models/README.md). OPENBLAS_CORETYPE=NAME picks NAME's kernels on any CPU that has their instructions.
std::string blas_kernels() {
  using CoreName = char* (*)();
  const auto core = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  return core != nullptr ? fmt::format("OpenBLAS {} kernels", core()) : std::string("not OpenBLAS");
}

/// The network as a model file describes it: only the features it uses (the others have zero weights).
policy::MlpSpec spec_of(PolicyNets& nets) {
  std::vector<int64_t> used;
  policy::MlpSpec spec;
  const std::vector<std::string> names = features::schema_names();
  for (std::size_t k = 0; k < names.size(); ++k)
    if (nets->used_features()[k]) {
      used.push_back(static_cast<int64_t>(k));
      spec.features.push_back(names[k]);
    }
  const torch::Tensor columns = torch::tensor(used, torch::kInt64);
  spec.input_mean = nets->mean.detach().index_select(0, columns).clone();
  spec.input_std = nets->std.detach().index_select(0, columns).clone();
  bool first = true;
  for (const auto& child : nets->policy->children()) {
    if (auto* linear = child->as<torch::nn::LinearImpl>()) {
      torch::Tensor weight = linear->weight.detach();
      if (first) weight = weight.index_select(1, columns);
      spec.layers.push_back(policy::MlpLayer{weight.clone(), linear->bias.detach().clone()});
      first = false;
    }
  }
  return spec;
}

nlohmann::json training_record(const ExportInfo& info) {
  const TrainConfig& c = info.config;
  nlohmann::json data = nlohmann::json::array();
  for (const TraceSplit& t : info.traces)
    data.push_back({{"trace", t.path},
                    {"weight", t.weight},
                    {"jobs", t.prepared.jobs.size()},
                    {"train_jobs", t.train_end},
                    {"validation_jobs", t.prepared.jobs.size() - t.train_end},
                    {"held_back_jobs", t.held_back_jobs},
                    {"machine", fmt::format("{} nodes x {} CPUs", t.prepared.nodes, t.prepared.procs_per_node)},
                    {"cluster", c.cluster.empty() ? std::string("implied by the trace") : c.cluster}});
  nlohmann::json sites = nlohmann::json::array();
  for (const ValidationSite& v : info.sites)
    sites.push_back({{"trace", v.path}, {"weight", v.weight}, {"jobs", v.workload.jobs.size()}});
  nlohmann::json table = nlohmann::json::array();
  for (const ValidationRow& r : info.table)
    table.push_back({{"policy", r.policy},
                     {"avg_bsld", r.avg_bsld},
                     {"avg_wait", r.avg_wait},
                     {"p99_wait", r.p99_wait},
                     {"objective_cost", r.cost}});
  return {{"data", data},
          {"validation_sites", sites},
          {"protocol",
           {{"simulator", c.rollouts == Rollouts::kSlurm
                              ? "slurm model (each trace's cluster, multifactor + the score as site factor)"
                          : c.rollouts == Rollouts::kMixed
                              ? "slurm model for the traces with accelerator jobs, rlscheduler compat for the others"
                              : "rlscheduler compat (one CPU per node, commit to the queue head)"},
            {"rollouts", to_string(c.rollouts)},
            {"score_noise", c.rollouts != Rollouts::kCompat ? c.score_noise : 0.0},
            {"rollouts_per_sequence", c.rollouts != Rollouts::kCompat ? c.rollouts_per_sequence : 1},
            {"backfill", sim::to_string(c.backfill)},
            {"sequence_length", c.sequence_length},
            {"visible_queue", c.visible_queue}}},
          {"algorithm",
           {{"name", "PPO"},
            {"clip", c.clip},
            {"gae_lambda", c.gae_lambda},
            {"learning_rate", c.learning_rate},
            {"episodes_per_epoch", c.episodes_per_epoch},
            {"ppo_iterations", c.ppo_iterations},
            {"minibatch", c.minibatch},
            {"entropy_coef", c.entropy_coef},
            {"critic_warmup_epochs", c.rollouts != Rollouts::kSlurm ? c.critic_warmup : 0},
            {"temperature", c.rollouts != Rollouts::kSlurm ? c.temperature : 1.0},
            {"imitation_epochs", c.imitation_epochs},
            {"imitation_restarts", c.imitation_restarts},
            {"teacher", info.result.teacher},
            {"reference", c.reference},
            {"selected_on", !info.sites.empty() ? "slurm model, validation sites"
                            : c.select_on_slurm ? "slurm model, validation jobs"
                                                : "training simulator, validation sequences"},
            {"selection_load_factors", c.selection_load_factors}}},
          {"objective", to_string(c.objective)},
          {"starvation_penalty", c.starvation_penalty},
          {"seed", c.seed},
          {"time_budget_seconds", c.time_budget_seconds},
          {"epochs_run", info.result.epochs_run},
          {"stopped_early", info.result.stopped_early},
          {"seconds", info.result.seconds},
          {"validation",
           {{"initial_cost_ratio", info.result.initial_validation_cost_ratio},
            {"teacher_cost_ratio", info.result.teacher_validation_cost_ratio},
            {"best_cost_ratio", info.result.best_validation_cost_ratio},
            {"table", table}}},
          {"command", c.command_line},
          {"blas", blas_kernels()}};
}

std::string card_path(const TrainConfig& c) {
  if (!c.model_card.empty()) return c.model_card;
  const std::string& out = c.output;
  const auto dot = out.rfind('.');
  return (dot == std::string::npos || out.find('/', dot) != std::string::npos ? out : out.substr(0, dot)) + ".md";
}

std::string card_stem(const TrainConfig& c) {
  const std::string path = card_path(c);
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".md") == 0 ? path.substr(0, path.size() - 3) : path;
}

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

/// epoch, seconds, training episodes' cost ratio, validation cost ratio (the latest, -1 before the first), best.
Status write_curve(const std::string& path, const std::vector<TrainProgress>& curve) {
  std::ofstream out(path);
  out << "epoch,seconds,train_cost_ratio,validation_cost_ratio,best_validation_cost_ratio\n";
  for (const TrainProgress& p : curve)
    out << fmt::format("{},{:.2f},{:.6f},{:.6f},{:.6f}\n", p.epoch, p.elapsed_seconds, p.train_cost_ratio,
                       p.validation_cost_ratio, p.best_validation);
  if (!out) return Status::IoError(fmt::format("{}: cannot write the learning curve", path));
  return Status::Ok();
}

/// The card's learning-curve section: the figure, and the curve at about ten epochs so the card reads without it.
std::string curve_section(const TrainConfig& c, const std::vector<TrainProgress>& curve) {
  if (curve.empty()) return "";
  std::string md = fmt::format(
      "\n## Learning curve\n\n![learning curve]({})\n\nPolicy cost over the reference's ({}): the training "
      "episodes' (exploring) and the greedy policy's on the validation jobs, per epoch; every epoch in `{}`.\n\n"
      "| epoch | seconds | training episodes | validation | best |\n|---|---|---|---|---|\n",
      file_name(curve_png_path(c)), c.reference, file_name(curve_csv_path(c)));
  const std::size_t step = std::max<std::size_t>(1, curve.size() / 10);
  for (std::size_t i = 0; i < curve.size(); ++i) {
    if (i % step != 0 && i + 1 != curve.size()) continue;
    const TrainProgress& p = curve[i];
    md += fmt::format("| {} | {:.0f} | {:.3f} | {:.3f} | {:.3f} |\n", p.epoch, p.elapsed_seconds, p.train_cost_ratio,
                      p.validation_cost_ratio, p.best_validation);
  }
  return md;
}

std::string card(const ExportInfo& info, const policy::ModelMetadata& metadata, const std::string& evaluations) {
  const TrainConfig& c = info.config;
  std::string md = fmt::format("# rlsched policy `{}`\n\n", c.output);
  md += fmt::format("Created {} · feature schema v{} · {} · weights sha256 `{}`\n\n", metadata.created,
                    metadata.schema_version, metadata.architecture, metadata.weights_sha256);
  md +=
      "## Data\n\nBy submit time: the first jobs are trained on, the next validate (model selection, early stopping), "
      "the last are held back unread, for `rlsched evaluate --candidate`.\n\n"
      "| trace | jobs read | trained on | validation | held back, unread | machine |\n|---|---|---|---|---|---|\n";
  for (const TraceSplit& t : info.traces)
    md += fmt::format("| {}{} | {} | first {} | next {} | last {} | {} nodes x {} CPUs |\n", t.path,
                      t.weight == 1 ? std::string() : fmt::format(" (counts {} times)", t.weight),
                      t.prepared.jobs.size(), t.train_end, t.prepared.jobs.size() - t.train_end, t.held_back_jobs,
                      t.prepared.nodes, t.prepared.procs_per_node);
  if (!info.sites.empty()) {
    md += "\nValidation sites: the model was selected on all their jobs, none of which it trained on.\n\n"
          "| workload | jobs | machine |\n|---|---|---|\n";
    for (const ValidationSite& v : info.sites)
      md += fmt::format("| {}{} | {} | {} CPUs |\n", v.path,
                        v.weight == 1 ? std::string() : fmt::format(" (counts {} times)", v.weight),
                        v.workload.jobs.size(), v.cluster->total_cpus());
  }
  md += c.cluster.empty() ? std::string("\nCluster: the one each trace implies.\n")
                          : fmt::format(
                                "\nCluster: `{}` (its CPUs size the machine above; the Slurm-model evaluations "
                                "run on it).\n",
                                c.cluster);
  md += fmt::format(
      "Priority in the Slurm-model evaluations: the cluster's multifactor weights plus the learned rank "
      "as site factor, 0..{} (score_scale).\n",
      c.score_scale);
  // What each job of an episode costs, in either simulator.
  const std::string job_cost = fmt::format(
      "{}{}", c.objective == Objective::kBoundedSlowdown ? "bounded slowdown (tau 10 s)" : to_string(c.objective),
      c.starvation_penalty > 0 ? fmt::format(" plus a starvation penalty {} x (wait - {} s) / {} s",
                                             c.starvation_penalty, c.starvation_threshold, c.starvation_threshold)
                               : "");
  if (c.rollouts == Rollouts::kSlurm)
    md += fmt::format(
        "\n## Protocol\n\nEpisodes of {} consecutive jobs drawn from the training part of the traces, simulated in "
        "the Slurm model on each trace's cluster with the jobs' own submit times (shifted to start at 0 on an empty "
        "cluster), backfill `{}`: the policy's score is the site factor (its rank share, 0..{}) beside the cluster's "
        "multifactor priority, recomputed every PriorityCalcPeriod and at submit, as site_factor/rlsched does. While "
        "exploring each job's score carries a Gaussian offset (sd {}) held for the episode, {} episodes per sequence "
        "(antithetic pairs); an episode's advantage is its return minus the mean of its sequence's episodes. Each job "
        "costs its {}; an episode's cost is divided by the cost of the reference heuristic `{}` on the same "
        "sequence.\n\n",
        c.sequence_length, sim::to_string(c.backfill), c.score_scale, c.score_noise, c.rollouts_per_sequence, job_cost,
        c.reference);
  else
    md += fmt::format(
        "\n## Protocol\n\nEpisodes of {} consecutive jobs drawn from the training part of the traces, simulated with "
        "RLScheduler's semantics (the machine as one pool of CPUs, each a node of one CPU, as in the table above; the "
        "chosen job is the queue head), backfill `{}`. At each decision the "
        "policy samples a job among the {} oldest waiting ones from the softmax of its scores. Each job costs its "
        "{}; "
        "rewards are costs divided by the cost of the reference heuristic `{}` on the same sequence.\n\n",
        c.sequence_length, sim::to_string(c.backfill), c.visible_queue, job_cost, c.reference);
  if (c.rollouts == Rollouts::kMixed)
    md += fmt::format(
        "Mixed rollouts: the traces with accelerator jobs ran in the Slurm model on their clusters instead (the "
        "policy's score as site factor, a Gaussian offset of sd {} per job while exploring, {} episodes per "
        "sequence), their teachers searched and imitated there; each epoch updated once on each kind's "
        "episodes, the Slurm model's at learning rate {} (decaying as the compat one does) in minibatches of {} "
        "samples.\n\n",
        c.score_noise, c.rollouts_per_sequence, kSlurmLearningRate, kSlurmMinibatch);
  const std::string algorithm =
      c.rollouts == Rollouts::kSlurm
          ? fmt::format(
                "PPO with a clipped objective (clip {}) over the recorded (job, scoring call) samples, the "
                "episode's advantage against its sequence's mean, no value head, Adam (learning rate {}), {} "
                "episodes per epoch, {} passes of {}-sample minibatches",
                c.clip, c.learning_rate, c.episodes_per_epoch, c.ppo_iterations, c.minibatch)
          : fmt::format(
                "PPO with a clipped objective (clip {}), GAE (lambda {}), a value head over pooled queue "
                "features, Adam (learning rate {}), {} episodes per epoch, {} passes of {}-decision "
                "minibatches, entropy bonus {}{}{}",
                c.clip, c.gae_lambda, c.learning_rate, c.episodes_per_epoch, c.ppo_iterations, c.minibatch,
                c.entropy_coef,
                c.temperature != 1.0 ? fmt::format("; decisions sampled from softmax(score / {})", c.temperature)
                                     : std::string(),
                c.critic_warmup > 0
                    ? fmt::format("; the first {} epochs fit the value head alone", c.critic_warmup)
                    : std::string());
  md += fmt::format(
      "## Training\n\n{}; warm start: {}. Seed {}. Ran {} epochs in {:.0f} s{}, {}.\n\n", algorithm,
      c.init_model.empty()
          ? fmt::format("{} passes of behaviour cloning of the teacher `{}`", c.imitation_epochs, info.result.teacher)
          : fmt::format("the policy of `{}`, no imitation ({})", c.init_model, info.result.teacher),
      c.seed, info.result.epochs_run, info.result.seconds,
      info.result.stopped_early ? " (stopped early: no validation gain or time budget)" : "",
      c.time_budget_seconds > 0 ? fmt::format("within a time budget of {:g} min", c.time_budget_seconds / 60)
                                : std::string("no time budget"));
  md += fmt::format(
      "## Evaluation on the validation sequences\n\n{} sequences of {} jobs per trace from the validation part, in "
      "RLScheduler's simulator semantics with the same backfill, as in the table below. ",
      c.validation_sequences, c.sequence_length);
  md += !info.sites.empty()
            ? fmt::format(
                  "The model was selected in the Slurm model over the {} validation sites' jobs "
                  "(`--validation-trace`): its {} relative to `{}`'s there, averaged over the sites, was {:.4f} at "
                  "the start of PPO and {:.4f} for this model.\n\n",
                  info.sites.size(),
                  c.objective == Objective::kBoundedSlowdown ? "average bounded slowdown" : to_string(c.objective),
                  c.reference, info.result.initial_validation_cost_ratio, info.result.best_validation_cost_ratio)
        : c.select_on_slurm
            ? fmt::format(
                  "The model was selected in the Slurm model over each trace's validation jobs{} "
                  "(`--select-on-slurm`): its {} relative to `{}`'s there, averaged over the traces, was "
                  "{:.4f} at the start of PPO and {:.4f} for this model (the tables of the full Slurm model "
                  "below).\n\n",
                  selection_loads(c),
                  c.objective == Objective::kBoundedSlowdown ? "average bounded slowdown" : to_string(c.objective),
                  c.reference, info.result.initial_validation_cost_ratio, info.result.best_validation_cost_ratio)
            : fmt::format("Cost ratio to `{}`: {:.4f} at the start of PPO, {:.4f} for this model.\n\n", c.reference,
                          info.result.initial_validation_cost_ratio, info.result.best_validation_cost_ratio);
  if (info.result.training_cost_ratio >= 0)
    md += fmt::format(
        "On the whole training part, run once in the Slurm model, the same ratio was {:.4f} at the start of PPO and "
        "{:.4f} for this model: a checkpoint better on the validation jobs but worse there is not kept.\n\n",
        info.result.initial_training_cost_ratio, info.result.training_cost_ratio);
  if (const double teacher = info.result.teacher_validation_cost_ratio; teacher >= 0) {
    const double start = info.result.initial_validation_cost_ratio;
    const char* where = start > 1.05 * teacher ? "well behind" : start < 0.95 * teacher ? "ahead of" : "close to";
    md += fmt::format("The teacher rule itself scored {:.4f} there: the imitated network started {} it.\n\n", teacher,
                      where);
  }
  md += "| policy | avg bounded slowdown | avg wait (s) | p99 wait (s) |\n|---|---|---|---|\n";
  for (const ValidationRow& r : info.table)
    md += fmt::format("| {} | {:.2f} | {:.0f} | {:.0f} |\n", r.policy, r.avg_bsld, r.avg_wait, r.p99_wait);
  md += evaluations;
  md += curve_section(c, info.result.curve);
  md += fmt::format("\n## Reproduce\n\n```\n{}\n```\n", c.command_line.empty() ? "rlsched train ..." : c.command_line);
  md += fmt::format(
      "\nTrained with {}. The same command and seed write the same weights with the same kernels; other kernels round "
      "matrix products differently and train another network (`OPENBLAS_CORETYPE` chooses OpenBLAS's).\n",
      blas_kernels());
  return md;
}

/// The saved model beside every heuristic on each training trace: RLScheduler's protocol when the trace is long
/// enough for it (both backfill modes), and the full Slurm model over the validation jobs.
std::string protocol_evaluations(const ExportInfo& info) {
  auto model = policy::make_policy_scorer("model:" + info.config.output);
  if (!model.ok()) return fmt::format("\n(evaluation skipped: {})\n", model.status().message());
  std::vector<std::unique_ptr<Scorer>> policies;
  for (const std::string& name : scorer_names()) policies.push_back(std::move(make_scorer(name)).value());
  policies.push_back(std::move(*model));

  std::string md;
  auto table = [&](const std::string& title, const Workload& workload, const Cluster* cluster,
                   sim::EvaluationOptions options) {
    std::string rows;
    for (const auto& p : policies) {
      auto r = sim::evaluate_policy(workload, cluster, *p, options);
      if (!r.ok()) return;  // e.g. too short for the protocol: no table
      const bool learned = p.get() == policies.back().get();
      rows += fmt::format("| {} | {:.2f} | {:.0f} | {:.0f} | {:.3f} |\n", learned ? "**this model**" : p->name(),
                          r->metrics.avg_bsld, r->metrics.avg_wait, r->metrics.p99_wait, r->metrics.utilization);
    }
    md += fmt::format(
        "\n### {}\n\n| policy | avg bounded slowdown | avg wait (s) | p99 wait (s) | utilization |\n"
        "|---|---|---|---|---|\n{}",
        title, rows);
  };
  for (const TraceSplit& t : info.traces) {
    for (sim::Backfill b : {sim::Backfill::kEasy, sim::Backfill::kNone}) {
      sim::EvaluationOptions o;
      o.protocol = sim::Protocol::kRlScheduler;
      o.sim.backfill = b;
      table(fmt::format("{}: RLScheduler's protocol (10 x 1,024 jobs), backfill {}", t.path, sim::to_string(b)),
            t.workload, nullptr, o);
    }
    const Workload validation = validation_workload(t);
    sim::EvaluationOptions o;
    o.sim.backfill = info.config.backfill;
    table(fmt::format("{}: full Slurm model over the {} validation jobs ({}), backfill {}", t.path,
                      validation.jobs.size(),
                      info.sites.empty() ? "selected on: in sample" : "not selected on: the validation sites were",
                      sim::to_string(info.config.backfill)),
          validation, t.cluster.get(), o);
  }
  return md.empty() ? md : "\n## Evaluation against the heuristics\n" + md;
}

}  // namespace

std::string curve_csv_path(const TrainConfig& config) { return card_stem(config) + ".curve.csv"; }
std::string curve_png_path(const TrainConfig& config) { return card_stem(config) + ".curve.png"; }

Status export_model(PolicyNets& nets, const ExportInfo& info) {
  const policy::MlpSpec spec = spec_of(nets);
  auto module = policy::build_mlp_module(spec);
  if (!module.ok()) return module.status();
  policy::ModelMetadata metadata = policy::ModelMetadata::ForFeatures(spec.features, spec.architecture());
  metadata.training = training_record(info);
  if (Status s = policy::save_model(info.config.output, *module, metadata); !s.ok()) return s;
  metadata.weights_sha256 = policy::weights_sha256(*module);
  if (metadata.created.empty()) metadata.created = policy::utc_now_iso8601();
  if (!info.result.curve.empty())
    if (Status s = write_curve(curve_csv_path(info.config), info.result.curve); !s.ok()) return s;
  const std::string path = card_path(info.config);
  std::ofstream out(path);
  out << card(info, metadata, protocol_evaluations(info));
  if (!out) return Status::IoError(fmt::format("{}: cannot write the model card", path));
  return Status::Ok();
}

}  // namespace rlsched::train
