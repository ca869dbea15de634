#include "training_run.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

namespace rlsched::train {

Result<std::vector<Teacher>> Trainer::teachers() {
  if (slurm_ && config_.teacher == "search" && traces_.size() > 1) return joint_teacher();
  std::vector<std::string> specs;
  for (std::size_t from = 0;;) {
    const std::size_t comma = config_.teacher.find(',', from);
    specs.push_back(config_.teacher.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  if (specs.size() != 1 && specs.size() != traces_.size())
    return Status::InvalidInput(
        fmt::format("--teacher '{}': give one teacher, or one per trace ({} traces)", config_.teacher, traces_.size()));
  std::vector<Teacher> out;
  teacher_.clear();
  for (std::size_t t = 0; t < traces_.size(); ++t) {
    const std::string& spec = specs.size() == 1 ? specs[0] : specs[t];
    const std::string trace = std::filesystem::path(traces_[t].path).filename().string();
    if (spec != "search" && spec != "search-each") {
      auto teacher = heuristic_teacher(spec);
      if (!teacher.ok()) return Status::InvalidInput(fmt::format("--teacher: {}", teacher.status().message()));
      teacher_ += fmt::format("{}{}: {}", t ? "; " : "", trace, spec);
      out.push_back(std::move(teacher).value());
      continue;
    }
    const bool in_slurm = searches_in_slurm(t);
    RankedTeacher best = in_slurm ? search_slurm_teacher(t) : RankedTeacher{search_compat_teacher(t), false, {}};
    const std::string ranked_on =
        !in_slurm ? fmt::format("{} training sequences", kSearchSequences)
        : best.on_validation
            ? fmt::format("the {} validation jobs{}", validation_jobs_[t][0].jobs.size(), selection_loads(config_))
            : fmt::format("the {}{} training jobs", search_stretch(t).first > 0 ? "last " : "",
                          search_stretch(t).length);
    teacher_ += fmt::format("{}{}: {} (cost ratio {:.3f} to {} on {}{}{})", t ? "; " : "", trace,
                            best.teacher.description, best.teacher.cost_ratio, config_.reference, ranked_on,
                            in_slurm ? " in the Slurm model" : "", best.note);
    out.push_back(std::move(best.teacher));
  }
  return out;
}

std::vector<Teacher> Trainer::joint_teacher() {
  const auto over_traces = [&](double (Trainer::*ratio)(std::size_t, const Scorer&) const) {
    return [this, ratio](const Scorer& scorer) {
      std::vector<double> log_ratio(traces_.size());
      for (std::size_t t = 0; t < traces_.size(); ++t) log_ratio[t] = std::log((this->*ratio)(t, scorer));
      return std::exp(pool_mean(log_ratio));
    };
  };
  const bool any_accelerators = std::any_of(traces_.begin(), traces_.end(), requests_accelerators);
  RankedTeacher best =
      ranked_search(over_traces(&Trainer::training_part_ratio), over_traces(&Trainer::validation_ratio),
                    /*cluster_relative=*/true, any_accelerators);
  teacher_ = fmt::format(
      "{} for all {} traces (geometric mean of its cost ratios to {} on their {} in the Slurm model: {:.3f}{})",
      best.teacher.description, traces_.size(), config_.reference,
      best.on_validation ? "validation jobs" : "training parts", best.teacher.cost_ratio, best.note);
  std::vector<Teacher> out;
  for (std::size_t t = 0; t < traces_.size(); ++t) out.push_back(same_teacher(best.teacher));
  return out;
}

Trainer::RankedTeacher Trainer::ranked_search(const std::function<double(const Scorer&)>& on_training,
                                              const std::function<double(const Scorer&)>& on_validation,
                                              bool cluster_relative, bool with_accelerators) {
  const TeacherFamily family = teacher_family(cluster_relative, with_accelerators);
  switch (config_.teacher_ranking) {
    case TeacherRanking::kTrainingPart:
      return {search_teacher(on_training, threads_, family, reference_margin()), false, {}};
    case TeacherRanking::kValidation:
      return {search_teacher(on_validation, threads_, family, reference_margin()), true, {}};
    case TeacherRanking::kValidationIfBetter:
      break;
  }
  Teacher history = search_teacher(on_training, threads_, family, reference_margin());
  Teacher recent = search_teacher(on_validation, threads_, family, reference_margin());
  const double history_recently = on_validation(*history.scorer);
  if (recent.cost_ratio < history_recently * (1.0 - config_.min_improvement))
    return {
        std::move(recent), true,
        fmt::format("; the training part's rule, {}, stood at {:.3f} there", history.description, history_recently)};
  const std::string note = fmt::format("; on the validation jobs it stood at {:.3f} and their best rule, {}, at {:.3f}",
                                       history_recently, recent.description, recent.cost_ratio);
  return {std::move(history), false, note};
}

TeacherFamily Trainer::teacher_family(bool cluster_relative, bool with_accelerators) const {
  return {cluster_relative, config_.predicted_run_times, config_.share_term_teachers,
          smith_width_for(config_.smith_width_teachers, with_accelerators)};
}

std::optional<ReferenceMargin> Trainer::reference_margin() const {
  if (!config_.teacher_margin) return std::nullopt;
  return ReferenceMargin{config_.reference, *config_.teacher_margin};
}

Teacher Trainer::search_compat_teacher(std::size_t t) {
  std::vector<Sequence> sequences;
  for (std::size_t i = 0; i < kSearchSequences; ++i) {
    std::mt19937_64 rng = stream(config_.seed, ~1ull - t, i);
    sequences.push_back(sample_in(traces_[t], rng));
  }
  std::vector<double> costs(sequences.size());
  parallel_for(sequences.size(), threads_,
               [&](std::size_t i) { costs[i] = reference_cost(sequences[i], *reference_, backfill_, cost_); });
  return search_teacher(sequences, costs, backfill_, cost_, threads_,
                        teacher_family(/*cluster_relative=*/false, requests_accelerators(traces_[t])),
                        reference_margin());
}

bool Trainer::searches_in_slurm(std::size_t t) const {
  return in_slurm_[t] || (config_.slurm_teacher_for_accelerators && has_accelerator_jobs(traces_[t]));
}

bool Trainer::requests_accelerators(const TraceSplit& trace) {
  return std::any_of(trace.workload.jobs.begin(), trace.workload.jobs.end(),
                     [](const Job& j) { return j.accel.count > 0; });
}

Trainer::RankedTeacher Trainer::search_slurm_teacher(std::size_t t) {
  // Slurm rollouts measured every trace's reference in the constructor; compat ones only search some here.
  if (training_reference_.size() != traces_.size()) training_reference_.assign(traces_.size(), -1.0);
  if (training_reference_[t] < 0)
    training_reference_[t] = std::max(slurm_reference_cost(search_stretch(t), *reference_, slurm_sim_, cost_), 1e-9);
  return ranked_search([&](const Scorer& scorer) { return training_part_ratio(t, scorer); },
                       [&](const Scorer& scorer) { return validation_ratio(t, scorer); },
                       /*cluster_relative=*/false, requests_accelerators(traces_[t]));
}

Status Trainer::warm_start() {
  auto teachers_or = teachers();
  if (!teachers_or.ok()) return teachers_or.status();
  const std::vector<Teacher>& teachers = *teachers_or;
  // Where the imitated network starts is only worth as much as the rule it copies (on the traces it was searched
  // for: the validation sites have no teacher of their own).
  if (config_.select_on_slurm && !validation_jobs_.empty() && sites_.empty())
    teacher_validation_ =
        slurm_validation_ratio([&](std::size_t i) { return validation_ratio(i, *teachers[i].scorer); });
  const std::size_t n = config_.demonstrations_per_trace > 0 ? config_.demonstrations_per_trace * draws_.size()
                                                             : std::max<std::size_t>(config_.episodes_per_epoch, 8);
  std::vector<Episode> demos(n);
  std::vector<std::string> window_rules(n);  // teacher_per_window: the rule that taught window i instead of its trace's
  // where_trained: each trace where its episodes run (in_slurm_); otherwise every one in the compat simulator.
  auto demonstrate = [&](bool where_trained) {
    parallel_for(n, threads_, [&](std::size_t i) {
      std::mt19937_64 rng = stream(config_.seed, ~0ull, i);
      const std::size_t t = draws_[i % draws_.size()];
      if (where_trained && in_slurm_[t]) {
        const SlurmSequence window = slurm_start_in(traces_[t], rng);
        const std::optional<Teacher> own = window_teacher(t, teachers[t], [&](const Scorer& scorer) {
          return slurm_reference_cost(window, scorer, slurm_sim_, cost_);
        });
        window_rules[i] = !own ? std::string() : own->rule ? own->rule->spec() : own->heuristic;
        demos[i] = run_slurm_imitation(window, own ? *own->scorer : *teachers[t].scorer, slurm_sim_,
                                       config_.visible_queue, rng, config_.predicted_run_times);
      } else {
        const Sequence window = sample_in(traces_[t], rng);
        const std::optional<Teacher> own = window_teacher(t, teachers[t], [&](const Scorer& scorer) {
          return reference_cost(window, scorer, backfill_, cost_);
        });
        window_rules[i] = !own ? std::string() : own->rule ? own->rule->spec() : own->heuristic;
        demos[i] = run_imitation(window, own ? *own->scorer : *teachers[t].scorer, backfill_, config_.visible_queue,
                                 config_.predicted_run_times);
      }
    });
  };
  demonstrate(/*where_trained=*/true);
  // A quiet workload (jobs that end between two decay ticks, e.g. a short sacct dump) gives the Slurm model no
  // tick with two pending jobs to imitate: the compat simulator, which decides at every start, still has choices.
  bool any_choice = false;
  for (const Episode& e : demos) any_choice = any_choice || !e.decisions.empty();
  if (slurm_ && !any_choice) {
    demonstrate(/*where_trained=*/false);
    teacher_ += " (imitated in the compat simulator: no decay tick of the Slurm model saw two pending jobs)";
  }
  const auto [mean, std] = feature_statistics(demos);
  nets_->set_normalisation(mean, std);
  // A feature the training data never varies (a Slurm factor the training simulator does not produce, the
  // accelerator features of CPU traces) teaches the network nothing and would meet unseen values in production:
  // leave it out of the model.
  std::vector<char> used(features::kFeatureCount, 0);
  const std::vector<features::FeatureSpec>& schema = features::schema();
  for (std::size_t k = 0; k < features::kFeatureCount; ++k)
    used[k] = raw_spread(demos, k) > 1e-6 &&
                      (config_.predicted_run_times || !features::reads_predicted_run_time({schema[k].name}))
                  ? 1
                  : 0;
  if (std::find(used.begin(), used.end(), 1) == used.end())
    return Status::InvalidInput(
        "no feature of the training jobs ever varies between the jobs a decision chooses among (they rarely wait "
        "for each other): nothing to learn from; train on a busier or longer trace");
  nets_->set_used_features(used);
  if (config_.teacher_per_window) teacher_ += window_teachers_note(window_rules);
  // A network shown several orders cannot start as any one rule exactly.
  const bool one_rule =
      std::all_of(window_rules.begin(), window_rules.end(), [](const std::string& r) { return r.empty(); });
  if (config_.imitation_restarts <= 1) {
    imitate(teachers, demos, 0, one_rule);
    return Status::Ok();
  }
  // Each restart imitates the same demonstrations from other initial weights; the one that validates best is kept.
  const std::string teacher = teacher_;
  std::vector<double> figures;
  State kept;
  std::string kept_teacher;
  std::size_t best = 0;
  for (int restart = 0; restart < config_.imitation_restarts; ++restart) {
    if (restart > 0) redraw_policy(restart);
    teacher_ = teacher;
    imitate(teachers, demos, restart, one_rule);
    figures.push_back(validate());
    if (restart == 0 || figures.back() < figures[best]) {
      best = figures.size() - 1;
      kept = snapshot();
      kept_teacher = teacher_;
    }
  }
  restore(kept);
  optimizer_.state().clear();
  std::string others;
  for (std::size_t k = 0; k < figures.size(); ++k)
    if (k != best) others += fmt::format("{}{:.4f}", others.empty() ? "" : ", ", figures[k]);
  teacher_ = fmt::format(
      "{}; the best of {} imitations from different initial weights on the validation figure "
      "(imitation {}: {:.4f}; the others {})",
      kept_teacher, figures.size(), best + 1, figures[best], others);
  return Status::Ok();
}

void Trainer::imitate(const std::vector<Teacher>& teachers, const std::vector<Episode>& demos, int restart,
                      bool one_rule) {
  std::mt19937_64 rng = stream(config_.seed, ~0ull - static_cast<std::uint64_t>(restart), ~0ull);
  for (int pass = 0; pass < config_.imitation_epochs; ++pass)
    imitation_pass(nets_, optimizer_, demos, config_.minibatch, rng);
  if (config_.imitation_epochs > 0 && config_.exact_teacher && one_rule) start_as_the_rule(teachers, demos);
}

void Trainer::redraw_policy(int restart) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(config_.seed * 1000003ull + static_cast<std::uint64_t>(restart));
  for (const auto& child : nets_->policy->children())
    if (auto* linear = child->as<torch::nn::LinearImpl>()) linear->reset_parameters();
  nets_->mask_unused();
  optimizer_.state().clear();
}

void Trainer::start_as_the_rule(const std::vector<Teacher>& teachers, const std::vector<Episode>& demos) {
  const std::vector<double> weights = linear_form(teachers[0], total_cpus(traces_[0]));
  if (weights.empty()) return;
  for (std::size_t t = 1; t < teachers.size(); ++t)
    if (linear_form(teachers[t], total_cpus(traces_[t])) != weights) return;
  const double imitated = within_decision_spread(demos, decision_row_scores(nets_, demos));
  const double rule = within_decision_spread(demos, linear_scores(demos, weights, nets_->used_features()));
  if (!(imitated > 0 && rule > 0)) return;
  if (!nets_->set_linear_policy(weights, imitated / rule)) return;
  optimizer_.state().clear();  // Adam's moments belong to the imitated weights
  teacher_ += fmt::format(
      "; the network set to compute the rule exactly, its scores as far apart as imitation made them ({:.3g} "
      "within a decision)",
      imitated);
}

std::optional<Teacher> Trainer::window_teacher(std::size_t t, const Teacher& trace_teacher,
                                               const std::function<double(const Scorer&)>& cost) const {
  if (!config_.teacher_per_window) return std::nullopt;
  return better_teacher(cost, cost(*trace_teacher.scorer), *config_.teacher_per_window,
                        teacher_family(/*cluster_relative=*/false, requests_accelerators(traces_[t])));
}

std::string Trainer::window_teachers_note(const std::vector<std::string>& rules) const {
  std::map<std::string, int> count;
  int other = 0;
  for (const std::string& rule : rules)
    if (!rule.empty()) ++count[rule], ++other;
  std::vector<std::pair<int, std::string>> most;  // (-windows, rule): the most frequent first, then by name
  for (const auto& [rule, k] : count) most.emplace_back(-k, rule);
  std::sort(most.begin(), most.end());
  std::string named;
  for (std::size_t i = 0; i < most.size() && i < 3; ++i)
    named += fmt::format("{}{} x{}", i ? ", " : "", most[i].second, -most[i].first);
  return fmt::format("; per window: {} of {} demonstration windows taught by a rule that beat their trace's teacher "
                     "there by more than {:g}%{}{}",
                     other, rules.size(), 100 * *config_.teacher_per_window, other ? ": " : "", named);
}

int Trainer::total_cpus(const TraceSplit& t) const {
  return in_slurm_[static_cast<std::size_t>(&t - traces_.data())] ? t.cluster->total_cpus()
                                                                  : t.prepared.nodes * t.prepared.procs_per_node;
}

}  // namespace rlsched::train
