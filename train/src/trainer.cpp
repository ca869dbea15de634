#include "rlsched/train/trainer.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "export.h"
#include "initial_policy.h"
#include "networks.h"
#include "ppo.h"
#include "rlsched/io/workload_readers.h"
#include "rlsched/sim/evaluation.h"
#include "rollout.h"
#include "slurm_rollout.h"
#include "teacher.h"
#include "trace_split.h"

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

namespace {

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
double raw_spread(const std::vector<Episode>& episodes, std::size_t k) {
  float lo = std::numeric_limits<float>::max(), hi = std::numeric_limits<float>::lowest();
  for (const Episode& e : episodes)
    for (std::size_t r = 0; r < e.features.size() / features::kFeatureCount; ++r) {
      const float v = e.features[r * features::kFeatureCount + k];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  return hi >= lo ? static_cast<double>(hi - lo) : 0.0;
}

/// Deterministic per-(seed, epoch, index) random streams: an episode's randomness does not depend on which thread
/// ran it or on how many threads there are.
std::mt19937_64 stream(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index) {
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(epoch), static_cast<std::uint32_t>(index)};
  return std::mt19937_64(seq);
}

class Trainer {
 public:
  /// `validation_jobs`: with select_on_slurm, each trace's validation jobs at each selection load (validation_loads).
  Trainer(const TrainConfig& config, std::vector<TraceSplit> traces, std::vector<ValidationSite> sites,
          std::vector<std::vector<Workload>> validation_jobs, std::unique_ptr<Scorer> reference,
          std::optional<InitialPolicy> initial)
      : config_(config),
        initial_(std::move(initial)),
        traces_(std::move(traces)),
        sites_(std::move(sites)),
        reference_(std::move(reference)),
        cost_(config),
        backfill_(config.backfill == sim::Backfill::kEasy),
        slurm_(config.rollouts == Rollouts::kSlurm),
        threads_(config.threads > 0 ? config.threads
                                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
        nets_(network_inputs(config.predicted_run_times, initial_), config.hidden),
        optimizer_(nets_->parameters(), torch::optim::AdamOptions(config.learning_rate)),
        value_optimizer_(nets_->value->parameters(), torch::optim::AdamOptions(config.learning_rate)) {
    for (std::size_t t = 0; t < traces_.size(); ++t) {
      for (int w = 0; w < traces_[t].weight; ++w) draws_.push_back(t);
      in_slurm_.push_back(slurm_ || (config.rollouts == Rollouts::kMixed && has_accelerator_jobs(traces_[t])) ? 1 : 0);
    }
    for (const TraceSplit& t : traces_)
      for (std::size_t start : t.validation_starts) {
        validation_.push_back(Sequence{&t.prepared, start, config.sequence_length});
        validation_weight_.push_back(t.weight);
      }
    validation_reference_.resize(validation_.size());
    parallel_for(validation_.size(), threads_, [&](std::size_t i) {
      validation_reference_[i] = reference_cost(validation_[i], *reference_, backfill_, cost_);
    });
    slurm_sim_.backfill = config.backfill;
    if (std::find(in_slurm_.begin(), in_slurm_.end(), 1) != in_slurm_.end()) {
      training_reference_.assign(traces_.size(), -1.0);
      weigh_windows_by_contention();  // sets training_reference_ where its run is the search's (the whole part)
      parallel_for(traces_.size(), threads_, [&](std::size_t t) {
        if (training_reference_[t] >= 0 || !in_slurm_[t]) return;
        training_reference_[t] =
            std::max(slurm_reference_cost(search_stretch(t), *reference_, slurm_sim_, cost_), 1e-9);
      });
    }
    validation_jobs_ = std::move(validation_jobs);
    validation_slurm_reference_.resize(validation_jobs_.size());
    parallel_for(validation_jobs_.size(), threads_, [&](std::size_t i) {
      for (const Workload& jobs : validation_jobs_[i])
        validation_slurm_reference_[i].push_back(slurm_metric(jobs, traces_[i].cluster.get(), *reference_));
    });
    site_reference_.resize(sites_.size());
    parallel_for(sites_.size(), threads_, [&](std::size_t i) {
      site_reference_[i] = slurm_metric(sites_[i].workload, sites_[i].cluster.get(), *reference_);
    });
  }

  Result<TrainResult> run(const std::function<void(const TrainProgress&)>& progress) {
    const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - config_.started).count(); };
    const double budget = config_.time_budget_seconds;
    TrainResult result;
    int first_epoch = 0;
    if (!config_.resume.empty()) {
      Status s = load_checkpoint(config_.resume, first_epoch);
      if (!s.ok()) return s;
      if (slurm_) {  // the kept model's figure on the training part, measured again
        const State current = snapshot();
        restore(best_state_);
        best_training_ = training_part_ratio();
        restore(current);
      }
    } else {
      if (initial_) {
        apply_initial_policy(nets_, *initial_);
        teacher_ = fmt::format("none: PPO went on from the model {} (weights sha256 {})", initial_->path,
                               initial_->weights_sha256);
      } else if (Status s = warm_start(); !s.ok()) {
        return s;
      }
      best_ = validate();
      best_state_ = snapshot();
      initial_cost_ = best_;
      if (slurm_) initial_training_ = best_training_ = training_part_ratio();
    }
    result.initial_validation_cost_ratio = initial_cost_;
    result.teacher_validation_cost_ratio = teacher_validation_;
    result.teacher = config_.imitation_epochs > 0 || initial_ ? teacher_ : "none";

    TrainProgress p;
    p.epochs = config_.epochs;
    p.best_validation = best_;
    p.validation_cost_ratio = best_;
    int epoch = first_epoch;
    double slowest_epoch = 0;  // the next epoch is not started when one as slow would end past the budget
    bool out_of_time = budget > 0 && elapsed() >= budget;  // the warm start took it all: the model stays as it left it
    for (; epoch < config_.epochs && !out_of_time; ++epoch) {
      const double epoch_start = elapsed();
      set_learning_rate(config_.learning_rate * learning_rate_decay(epoch));
      const UpdateStats stats = slurm_                                 ? slurm_epoch(epoch, p.train_cost_ratio)
                                : config_.rollouts == Rollouts::kMixed ? mixed_epoch(epoch, p.train_cost_ratio)
                                                                       : compat_epoch(epoch, p.train_cost_ratio);
      p.entropy = stats.entropy;
      p.approx_kl = stats.approx_kl;
      p.value_loss = stats.value_loss;

      const bool last = epoch + 1 == config_.epochs;
      if ((epoch + 1) % std::max(config_.eval_every, 1) == 0 || last) {
        p.validation_cost_ratio = validate();
        if (p.validation_cost_ratio < best_ * (1.0 - config_.min_improvement) && holds_on_training_part()) {
          best_ = p.validation_cost_ratio;
          best_state_ = snapshot();
          stale_ = 0;
        } else {
          ++stale_;
        }
        p.best_validation = best_;
        if (!config_.checkpoint.empty()) {
          Status s = save_checkpoint(config_.checkpoint, epoch + 1);
          if (!s.ok()) return s;
        }
      }
      p.epoch = epoch + 1;
      p.elapsed_seconds = elapsed();
      slowest_epoch = std::max(slowest_epoch, p.elapsed_seconds - epoch_start);
      result.curve.push_back(p);
      if (progress) progress(p);
      // "Stopped early" is what the card and the command say: only when epochs were left to run.
      if (config_.patience > 0 && stale_ >= config_.patience) {
        result.stopped_early = !last;
        ++epoch;
        break;
      }
      const bool chunk_done = config_.stop_after > 0 && epoch + 1 - first_epoch >= config_.stop_after;
      out_of_time = budget > 0 && p.elapsed_seconds + slowest_epoch > budget;
      if (chunk_done || out_of_time) {
        if (!config_.checkpoint.empty()) {  // so that --resume goes on exactly from here
          Status s = save_checkpoint(config_.checkpoint, epoch + 1);
          if (!s.ok()) return s;
        }
        result.stopped_early = !last;
        ++epoch;
        break;
      }
    }
    if (epoch == first_epoch && out_of_time) {
      result.stopped_early = true;
      if (!config_.checkpoint.empty())
        if (Status s = save_checkpoint(config_.checkpoint, epoch); !s.ok()) return s;
    }
    restore(best_state_);
    result.epochs_run = epoch;
    result.best_validation_cost_ratio = best_;
    if (slurm_) {
      result.initial_training_cost_ratio = initial_training_;
      result.training_cost_ratio = best_training_;
    }
    result.seconds = elapsed();
    result.model_path = config_.output;
    if (!config_.output.empty()) {
      ExportInfo info{config_, traces_, sites_, result, validation_table()};
      Status s = export_model(nets_, info);
      if (!s.ok()) return s;
      result.curve_csv = curve_csv_path(config_);
    }
    return result;
  }

 private:
  /// The teachers, one per trace (config.teacher: one spec for all traces, or a comma-separated spec per trace):
  /// a built-in heuristic, "search-each", the best rule of the area family on that trace's training part, or
  /// "search": the same on one trace, and on several in the Slurm model one rule for all (joint_teacher).
  Result<std::vector<Teacher>> teachers() {
    if (slurm_ && config_.teacher == "search" && traces_.size() > 1) return joint_teacher();
    std::vector<std::string> specs;
    for (std::size_t from = 0;;) {
      const std::size_t comma = config_.teacher.find(',', from);
      specs.push_back(config_.teacher.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
    if (specs.size() != 1 && specs.size() != traces_.size())
      return Status::InvalidInput(fmt::format("--teacher '{}': give one teacher, or one per trace ({} traces)",
                                              config_.teacher, traces_.size()));
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
          !in_slurm            ? fmt::format("{} training sequences", kSearchSequences)
          : best.on_validation ? fmt::format("the {} validation jobs{}", validation_jobs_[t][0].jobs.size(),
                                                     selection_loads(config_))
                               : fmt::format("the {}{} training jobs", search_stretch(t).first > 0 ? "last " : "",
                                             search_stretch(t).length);
      teacher_ += fmt::format("{}{}: {} (cost ratio {:.3f} to {} on {}{}{})", t ? "; " : "", trace,
                              best.teacher.description, best.teacher.cost_ratio, config_.reference, ranked_on,
                              in_slurm ? " in the Slurm model" : "", best.note);
      out.push_back(std::move(best.teacher));
    }
    return out;
  }

  /// One rule for every trace: the cluster-relative member of the family (or heuristic) with the lowest geometric mean
  /// of its training-part ratios over the traces (or of its validation ratios: config.teacher_ranking). With one
  /// teacher per trace the network imitates several rules at once, which no one weighted sum computes, so it cannot
  /// start as any of them. In leave one out, same options, one rule won 5 cells of 8 on four workloads and per-trace
  /// teachers 3, at about the same geometric mean with EASY backfill (policy_models/README.md). Each candidate runs on
  /// every trace: over 13 traces bound the stretch with config.search_jobs.
  std::vector<Teacher> joint_teacher() {
    const auto over_traces = [&](double (Trainer::*ratio)(std::size_t, const Scorer&) const) {
      return [this, ratio](const Scorer& scorer) {
        std::vector<double> log_ratio(traces_.size());
        for (std::size_t t = 0; t < traces_.size(); ++t) log_ratio[t] = std::log((this->*ratio)(t, scorer));
        return std::exp(pool_mean(log_ratio));
      };
    };
    const bool any_accelerators = std::any_of(traces_.begin(), traces_.end(), requests_accelerators);
    RankedTeacher best = ranked_search(over_traces(&Trainer::training_part_ratio),
                                       over_traces(&Trainer::validation_ratio), /*cluster_relative=*/true,
                                       any_accelerators);
    teacher_ = fmt::format(
        "{} for all {} traces (geometric mean of its cost ratios to {} on their {} in the Slurm model: {:.3f}{})",
        best.teacher.description, traces_.size(), config_.reference,
        best.on_validation ? "validation jobs" : "training parts", best.teacher.cost_ratio, best.note);
    std::vector<Teacher> out;
    for (std::size_t t = 0; t < traces_.size(); ++t) out.push_back(same_teacher(best.teacher));
    return out;
  }

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
                              bool with_accelerators) {
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
      return {std::move(recent), true,
              fmt::format("; the training part's rule, {}, stood at {:.3f} there", history.description,
                          history_recently)};
    const std::string note =
        fmt::format("; on the validation jobs it stood at {:.3f} and their best rule, {}, at {:.3f}",
                    history_recently, recent.description, recent.cost_ratio);
    return {std::move(history), false, note};
  }

  /// The rules the teacher search tries, as the configuration asks, for traces with accelerator jobs or without.
  TeacherFamily teacher_family(bool cluster_relative, bool with_accelerators) const {
    return {cluster_relative, config_.predicted_run_times, config_.share_term_teachers,
            smith_width_for(config_.smith_width_teachers, with_accelerators)};
  }

  /// The reference and the margin a rule must beat it by to teach (TrainConfig::teacher_margin), where asked for.
  std::optional<ReferenceMargin> reference_margin() const {
    if (!config_.teacher_margin) return std::nullopt;
    return ReferenceMargin{config_.reference, *config_.teacher_margin};
  }

  static constexpr std::size_t kSearchSequences = 24;
  static constexpr double kUniformWindows = 0.25;  ///< share of Slurm-model windows drawn uniformly

  Teacher search_compat_teacher(std::size_t t) {
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

  /// Whether trace t's teacher is searched in the Slurm model: where its episodes run (in_slurm_), or, with compat
  /// rollouts and config.slurm_teacher_for_accelerators, where it has accelerator jobs and the cluster they ran on.
  bool searches_in_slurm(std::size_t t) const {
    return in_slurm_[t] || (config_.slurm_teacher_for_accelerators && has_accelerator_jobs(traces_[t]));
  }

  /// A trace with accelerator jobs and the cluster they ran on: what mixed rollouts run in the Slurm model.
  static bool has_accelerator_jobs(const TraceSplit& trace) { return trace.cluster && requests_accelerators(trace); }

  /// A trace with a job that asks for accelerators, whatever cluster it is given.
  static bool requests_accelerators(const TraceSplit& trace) {
    return std::any_of(trace.workload.jobs.begin(), trace.workload.jobs.end(),
                       [](const Job& j) { return j.accel.count > 0; });
  }

  /// The search in the Slurm model: every rule runs the trace's whole training part once, and its cost there over
  /// the reference's decides. Eight sampled windows used to decide: the rules' differences there were mostly which
  /// windows were drawn, and the rule they chose did not hold on the next months (on Lublin-1's held-back 20% the
  /// area rule the whole training part prefers has 0.67 times F1's slowdown; policy_models/README.md). One run of
  /// RICC's 287,000 training jobs takes about 2.5 s with a heuristic, so the family's 52 members cost a minute or two
  /// on 2 cores (RICC's whole warm start took 147-181 s).
  RankedTeacher search_slurm_teacher(std::size_t t) {
    // Slurm rollouts measured every trace's reference in the constructor; compat ones only search some here.
    if (training_reference_.size() != traces_.size()) training_reference_.assign(traces_.size(), -1.0);
    if (training_reference_[t] < 0)
      training_reference_[t] = std::max(slurm_reference_cost(search_stretch(t), *reference_, slurm_sim_, cost_), 1e-9);
    return ranked_search([&](const Scorer& scorer) { return training_part_ratio(t, scorer); },
                         [&](const Scorer& scorer) { return validation_ratio(t, scorer); },
                         /*cluster_relative=*/false, requests_accelerators(traces_[t]));
  }

  /// `scorer`'s metric over the reference's on trace t's validation jobs in the Slurm model (select_on_slurm): the
  /// geometric mean over the selection loads (TrainConfig::selection_load_factors), where there are several.
  double validation_ratio(std::size_t t, const Scorer& scorer) const {
    const std::vector<Workload>& loads = validation_jobs_[t];
    const auto ratio = [&](std::size_t k) {
      return slurm_metric(loads[k], traces_[t].cluster.get(), scorer) / validation_slurm_reference_[t][k];
    };
    if (loads.size() == 1) return ratio(0);
    double log_sum = 0;
    for (std::size_t k = 0; k < loads.size(); ++k) log_sum += std::log(ratio(k));
    return std::exp(log_sum / static_cast<double>(loads.size()));
  }

  /// Where the teacher search and the training-part check run on trace t: its training part, or its last
  /// config.search_jobs jobs.
  SlurmSequence search_stretch(std::size_t t) const {
    const std::size_t end = traces_[t].train_end;
    const std::size_t length = config_.search_jobs > 0 ? std::min(config_.search_jobs, end) : end;
    return SlurmSequence{&traces_[t], end - length, length};
  }

  /// `scorer`'s cost over the reference's on trace t's training part (search_stretch), run once in the Slurm model.
  double training_part_ratio(std::size_t t, const Scorer& scorer) const {
    const SlurmSequence all = search_stretch(t);
    return slurm_reference_cost(all, scorer, slurm_sim_, cost_) / training_reference_[t];
  }

  /// The greedy policy's training_part_ratio, averaged over the traces (pool_mean).
  double training_part_ratio() {
    const PlainMlp plain = nets_->to_plain();
    std::vector<double> ratio(traces_.size());
    parallel_for(traces_.size(), threads_, [&](std::size_t t) {
      const PlainMlpScorer learned(plain);  // one per call: its scratch buffers are its own
      ratio[t] = training_part_ratio(t, learned);
    });
    return pool_mean(ratio);
  }

  /// The mean of one figure per trace, each counted its weight times (TrainWorkload::weight); 1 without traces.
  /// With every weight 1 it is the plain mean, to the last bit.
  double pool_mean(const std::vector<double>& by_trace) const {
    double sum = 0, count = 0;
    for (std::size_t t = 0; t < by_trace.size(); ++t) {
      sum += traces_[t].weight * by_trace[t];
      count += traces_[t].weight;
    }
    return count > 0 ? sum / count : 1.0;
  }

  /// A trace drawn at random, each as often as its weight says.
  std::size_t draw_trace(std::mt19937_64& rng) const {
    return draws_[std::uniform_int_distribution<std::size_t>(0, draws_.size() - 1)(rng)];
  }

  /// Called when a checkpoint beats the kept model on the validation jobs: it is kept only if it is no worse on
  /// the training part (search_stretch: all of it by default). The validation jobs are one stretch of time, and a gain
  /// there can be that month's alone: on Lublin-1 at training seed 2, PPO moved from the area rule the training part
  /// prefers (1.14 times F1 on the validation jobs, 0.67 on the held-back 20%) to a checkpoint at 0.66 on the
  /// validation jobs and 1.22 on the held-back 20% (policy_models/README.md). The training part is four times as long,
  /// and where the teacher search chose the rule the network starts as. In compat rollouts every checkpoint counts.
  bool holds_on_training_part() {
    if (!slurm_) return true;
    const double ratio = training_part_ratio();
    if (ratio > best_training_) return false;
    best_training_ = ratio;
    return true;
  }

  /// Behaviour cloning of the teachers: the policy starts where the best rule of thumb of each trace is.
  Status warm_start() {
    auto teachers_or = teachers();
    if (!teachers_or.ok()) return teachers_or.status();
    const std::vector<Teacher>& teachers = *teachers_or;
    // Where the imitated network starts is only worth as much as the rule it copies (on the traces it was searched
    // for: the validation sites have no teacher of their own).
    if (config_.select_on_slurm && !validation_jobs_.empty() && sites_.empty())
      teacher_validation_ =
          slurm_validation_ratio([&](std::size_t i) { return validation_ratio(i, *teachers[i].scorer); });
    const std::size_t n = config_.demonstrations_per_trace > 0
                              ? config_.demonstrations_per_trace * draws_.size()
                              : std::max<std::size_t>(config_.episodes_per_epoch, 8);
    std::vector<Episode> demos(n);
    // where_trained: each trace where its episodes run (in_slurm_); otherwise every one in the compat simulator.
    auto demonstrate = [&](bool where_trained) {
      parallel_for(n, threads_, [&](std::size_t i) {
        std::mt19937_64 rng = stream(config_.seed, ~0ull, i);
        const std::size_t t = draws_[i % draws_.size()];
        demos[i] = where_trained && in_slurm_[t]
                       ? run_slurm_imitation(slurm_start_in(traces_[t], rng), *teachers[t].scorer, slurm_sim_,
                                             config_.visible_queue, rng, config_.predicted_run_times)
                       : run_imitation(sample_in(traces_[t], rng), *teachers[t].scorer, backfill_,
                                       config_.visible_queue, config_.predicted_run_times);
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
    if (config_.imitation_restarts <= 1) {
      imitate(teachers, demos, 0);
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
      imitate(teachers, demos, restart);
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
    teacher_ = fmt::format("{}; the best of {} imitations from different initial weights on the validation figure "
                           "(imitation {}: {:.4f}; the others {})",
                           kept_teacher, figures.size(), best + 1, figures[best], others);
    return Status::Ok();
  }

  /// One imitation: config.imitation_epochs passes of behaviour cloning over `demos`, then, where asked, the network
  /// set to compute the teacher's rule. Restart 0 shuffles as a run without restarts does.
  void imitate(const std::vector<Teacher>& teachers, const std::vector<Episode>& demos, int restart) {
    std::mt19937_64 rng = stream(config_.seed, ~0ull - static_cast<std::uint64_t>(restart), ~0ull);
    for (int pass = 0; pass < config_.imitation_epochs; ++pass)
      imitation_pass(nets_, optimizer_, demos, config_.minibatch, rng);
    if (config_.imitation_epochs > 0 && config_.exact_teacher) start_as_the_rule(teachers, demos);
  }

  /// New initial weights for the policy (torch's default initialisation, seeded by the run's seed and the restart),
  /// its unused features masked again and Adam's moments cleared; the normalisation and the value head stay.
  void redraw_policy(int restart) {
    torch::NoGradGuard no_grad;
    torch::manual_seed(config_.seed * 1000003ull + static_cast<std::uint64_t>(restart));
    for (const auto& child : nets_->policy->children())
      if (auto* linear = child->as<torch::nn::LinearImpl>()) linear->reset_parameters();
    nets_->mask_unused();
    optimizer_.state().clear();
  }

  /// Imitation learns the teacher's choices from one tick to the next and does not reproduce the rule: on Lublin-1
  /// the imitated network of an area rule started at 2.21 times the best heuristic's slowdown on the validation
  /// jobs, where the rule itself stood at 1.69 (policy_models/README.md). Where one rule teaches every trace and
  /// a weighted sum of the features ranks as it does (linear_form), the network is set to compute that sum, its
  /// scores as far apart within each decision as the imitated network's, so that exploration noise and the
  /// learning rate mean what they meant after imitation.
  void start_as_the_rule(const std::vector<Teacher>& teachers, const std::vector<Episode>& demos) {
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

  int total_cpus(const TraceSplit& t) const {
    return in_slurm_[static_cast<std::size_t>(&t - traces_.data())] ? t.cluster->total_cpus()
                                                                    : t.prepared.nodes * t.prepared.procs_per_node;
  }

  /// A sequence from a trace drawn at random (draw_trace).
  Sequence sample(std::mt19937_64& rng) const { return start_in(traces_[draw_trace(rng)], rng); }

  /// A sequence from trace t. It draws (and ignores) a trace first, as sample() does: a single-trace run then
  /// sees the same random streams whether its sequences come from here or from sample().
  Sequence sample_in(const TraceSplit& t, std::mt19937_64& rng) const {
    draw_trace(rng);
    return start_in(t, rng);
  }

  Sequence start_in(const TraceSplit& t, std::mt19937_64& rng) const {
    const std::size_t last_start = t.train_end - config_.sequence_length;
    return Sequence{&t.prepared, std::uniform_int_distribution<std::size_t>(0, last_start)(rng),
                    config_.sequence_length};
  }

  /// A window of trace t's training jobs for the Slurm model. One draw in kUniformWindows is start_in's (where a
  /// compat sequence would start); the others start where scheduling matters (weigh_windows_by_contention).
  SlurmSequence slurm_start_in(const TraceSplit& t, std::mt19937_64& rng) const {
    draw_trace(rng);
    const Sequence s = start_in(t, rng);
    const std::vector<double>& cdf = contention_cdf_[static_cast<std::size_t>(&t - traces_.data())];
    std::size_t first = s.first;
    if (!cdf.empty() && std::uniform_real_distribution<double>(0, 1)(rng) >= kUniformWindows) {
      const double at = std::uniform_real_distribution<double>(0, cdf.back())(rng);
      first = std::min(static_cast<std::size_t>(std::upper_bound(cdf.begin(), cdf.end(), at) - cdf.begin()),
                       cdf.size() - 1);
    }
    const std::vector<std::uint32_t>& warmup = window_warmup_[static_cast<std::size_t>(&t - traces_.data())];
    return SlurmSequence{&t, first, s.length, first < warmup.size() ? warmup[first] : 0};
  }

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
  void weigh_windows_by_contention() {
    contention_cdf_.assign(traces_.size(), {});
    window_warmup_.assign(traces_.size(), {});
    parallel_for(traces_.size(), threads_, [&](std::size_t i) {
      const TraceSplit& t = traces_[i];
      if (!in_slurm_[i] || t.train_end < config_.sequence_length) return;
      const SlurmSequence all{&t, 0, t.train_end};
      auto run = sim::simulate(*t.cluster, sequence_jobs(all), *reference_, slurm_sim_);
      if (!run.ok()) return;  // uniform windows, as before
      // The search's reference over the whole training part is this very run (slurm_reference_cost): not twice.
      if (search_stretch(i).first == 0) training_reference_[i] = std::max(slurm_cost(run->outcomes, cost_), 1e-9);
      std::vector<double> waited(run->outcomes.size() + 1, 0.0);  // prefix sums of "this job waited"
      for (std::size_t j = 0; j < run->outcomes.size(); ++j) {
        const sim::JobOutcome& o = run->outcomes[j];
        waited[j + 1] = waited[j] + (o.ran() && o.start > o.submit ? 1.0 : 0.0);
      }
      const std::size_t starts = t.train_end - config_.sequence_length + 1;
      std::vector<double>& cdf = contention_cdf_[i];
      cdf.resize(starts);
      double total = 0;
      for (std::size_t s = 0; s < starts; ++s) {
        const std::size_t end = std::min(s + config_.sequence_length, run->outcomes.size());
        total += 1.0 + waited[end] - waited[std::min(s, end)];
        cdf[s] = total;
      }
      std::vector<std::uint32_t>& warmup = window_warmup_[i];
      warmup.resize(starts);
      std::size_t present = 0;  // the earliest job that had not ended when job s arrived
      for (std::size_t s = 0; s < starts && s < run->outcomes.size(); ++s) {
        const Seconds arrival = run->outcomes[s].submit;
        while (present < s && run->outcomes[present].end >= 0 && run->outcomes[present].end <= arrival) ++present;
        warmup[s] = static_cast<std::uint32_t>(std::min(s - present, config_.sequence_length));
      }
    });
  }

  /// One epoch in the Slurm model: episodes_per_epoch / k sequences, k episodes on each (antithetic pairs of
  /// per-job offsets), each episode's advantage its return minus the sequence's mean return; then the update.
  UpdateStats slurm_epoch(int epoch, double& train_cost_ratio) {
    const std::size_t k = std::max<std::size_t>(config_.rollouts_per_sequence, 2);
    const std::size_t count = std::max<std::size_t>(config_.episodes_per_epoch / k, 1);
    std::vector<SlurmSequence> sequences(count);
    for (std::size_t s = 0; s < count; ++s) {
      std::mt19937_64 rng = stream(config_.seed, static_cast<std::uint64_t>(epoch), s);
      sequences[s] = slurm_start_in(traces_[draw_trace(rng)], rng);
    }
    return slurm_update(epoch, sequences, train_cost_ratio, ~0ull, config_);
  }

  /// The learning rate decays linearly to a tenth over the run: large steps early, fine ones at the end.
  double learning_rate_decay(int epoch) const {
    return 1.0 - 0.9 * static_cast<double>(epoch) / std::max(config_.epochs, 1);
  }

  void set_learning_rate(double rate) {
    for (torch::optim::Adam* o : {&optimizer_, &value_optimizer_})
      for (auto& group : o->param_groups()) static_cast<torch::optim::AdamOptions&>(group.options()).lr(rate);
  }

  /// Mixed rollouts: each of the epoch's episodes_per_epoch draws is a trace; those of compat traces run one compat
  /// episode each (as compat_epoch runs them), and every rollouts_per_sequence-th draw of a Slurm-model trace a
  /// sequence of that many Slurm-model episodes (as slurm_epoch does). Then one update on each kind's episodes, the
  /// compat ones first: their losses are not on one scale (choices among the queue, offsets of each job's score).
  UpdateStats mixed_epoch(int epoch, double& train_cost_ratio) {
    const std::size_t k = std::max<std::size_t>(config_.rollouts_per_sequence, 2);
    std::vector<CompatDraw> compat;
    std::vector<SlurmSequence> slurm;
    std::size_t slurm_draws = 0;
    for (std::size_t i = 0; i < config_.episodes_per_epoch; ++i) {
      std::mt19937_64 rng = stream(config_.seed, static_cast<std::uint64_t>(epoch), i);
      std::mt19937_64 copy = rng;
      const std::size_t t = draw_trace(copy);
      if (!in_slurm_[t]) {
        const Sequence s = sample(rng);
        compat.push_back({s, rng});
      } else if (slurm_draws++ % k == 0) {
        slurm.push_back(slurm_start_in(traces_[t], rng));
      }
    }
    std::vector<UpdateStats> stats;
    double cost_sum = 0, episodes = 0;
    if (!compat.empty()) {
      const auto count = static_cast<double>(compat.size());
      double ratio = 0;
      stats.push_back(compat_update(epoch, std::move(compat), ratio));
      cost_sum += ratio * count;
      episodes += count;
    }
    if (!slurm.empty()) {
      // The Slurm model's update at its own step size, decayed as the compat one is this epoch.
      TrainConfig slurm_config = config_;
      slurm_config.minibatch = kSlurmMinibatch;
      set_learning_rate(kSlurmLearningRate * learning_rate_decay(epoch));
      double ratio = 0;
      stats.push_back(slurm_update(epoch, slurm, ratio, ~1ull, slurm_config));
      set_learning_rate(config_.learning_rate * learning_rate_decay(epoch));
      cost_sum += ratio * static_cast<double>(slurm.size() * k);
      episodes += static_cast<double>(slurm.size() * k);
    }
    train_cost_ratio = episodes > 0 ? cost_sum / episodes : 1.0;
    UpdateStats mean;
    for (const UpdateStats& u : stats) {
      mean.entropy += u.entropy / static_cast<double>(stats.size());
      mean.approx_kl += u.approx_kl / static_cast<double>(stats.size());
      mean.value_loss += u.value_loss / static_cast<double>(stats.size());
    }
    return mean;
  }

  /// rollouts_per_sequence Slurm-model episodes on each sequence (antithetic pairs of per-job offsets), each
  /// episode's advantage its return minus the sequence's mean return; then the update (its random stream `update`,
  /// its minibatch and clipping `update_config`'s).
  UpdateStats slurm_update(int epoch, const std::vector<SlurmSequence>& sequences, double& train_cost_ratio,
                           std::uint64_t update, const TrainConfig& update_config) {
    const PlainMlp plain = nets_->to_plain();
    const std::size_t k = std::max<std::size_t>(config_.rollouts_per_sequence, 2);
    const std::size_t count = sequences.size();
    std::vector<double> references(count);
    parallel_for(count, threads_, [&](std::size_t s) {
      references[s] = slurm_reference_cost(sequences[s], *reference_, slurm_sim_, cost_);
    });
    std::vector<ScoreEpisode> episodes(count * k);
    parallel_for(episodes.size(), threads_, [&](std::size_t i) {
      const std::size_t s = i / k, r = i % k;
      std::mt19937_64 rng = stream(config_.seed, static_cast<std::uint64_t>(epoch), (1ull << 32) + i);
      Exploration x;
      x.sigma = config_.score_noise;
      x.key = stream(config_.seed, static_cast<std::uint64_t>(epoch), (2ull << 32) + s * k + r / 2)();
      x.sign = r % 2 == 0 ? 1.0 : -1.0;
      x.record = x.sigma > 0;
      episodes[i] = run_slurm_policy(sequences[s], plain, x, slurm_sim_, cost_, references[s], rng);
    });
    double sum = 0;
    for (std::size_t s = 0; s < count; ++s) {
      double mean = 0;
      for (std::size_t r = 0; r < k; ++r) mean += episodes[s * k + r].cost_ratio();
      mean /= static_cast<double>(k);
      for (std::size_t r = 0; r < k; ++r) episodes[s * k + r].advantage = -(episodes[s * k + r].cost_ratio() - mean);
      sum += mean;
    }
    train_cost_ratio = sum / static_cast<double>(count);
    std::mt19937_64 rng = stream(config_.seed, static_cast<std::uint64_t>(epoch), update);
    return ppo_update_scores(nets_, optimizer_, episodes, config_.score_noise, update_config, rng);
  }

  UpdateStats compat_epoch(int epoch, double& train_cost_ratio) {
    std::vector<CompatDraw> draws;
    for (std::size_t i = 0; i < config_.episodes_per_epoch; ++i) {
      std::mt19937_64 rng = stream(config_.seed, static_cast<std::uint64_t>(epoch), i);
      const Sequence s = sample(rng);
      draws.push_back({s, rng});
    }
    return compat_update(epoch, std::move(draws), train_cost_ratio);
  }

  /// A compat episode's sequence, and the random stream its exploration goes on with.
  struct CompatDraw {
    Sequence sequence;
    std::mt19937_64 rng;
  };

  /// One compat episode on each draw, then the update.
  UpdateStats compat_update(int epoch, std::vector<CompatDraw> draws, double& train_cost_ratio) {
    const std::vector<Episode> episodes = rollouts(std::move(draws));
    double ratio = 0;
    for (const Episode& e : episodes) ratio += e.cost_ratio();
    train_cost_ratio = ratio / static_cast<double>(std::max<std::size_t>(episodes.size(), 1));
    std::mt19937_64 rng = stream(config_.seed, static_cast<std::uint64_t>(epoch), ~0ull);
    if (epoch < config_.critic_warmup)
      return ppo_update(nets_, value_optimizer_, episodes, config_, rng, Fit::kValueOnly);
    return ppo_update(nets_, optimizer_, episodes, config_, rng);
  }

  std::vector<Episode> rollouts(std::vector<CompatDraw> draws) {
    const PlainMlp plain = nets_->to_plain();
    std::vector<Episode> episodes(draws.size());
    parallel_for(episodes.size(), threads_, [&](std::size_t i) {
      const Sequence& s = draws[i].sequence;
      std::mt19937_64& rng = draws[i].rng;
      const double reference = reference_cost(s, *reference_, backfill_, cost_);
      episodes[i] = run_policy(s, plain, backfill_, config_.temperature, config_.visible_queue, cost_, reference, rng);
    });
    return episodes;
  }

  /// The objective's metric for `scorer` over `workload` in the Slurm model (lower is better).
  double slurm_metric(const Workload& workload, const Cluster* cluster, const Scorer& scorer) const {
    sim::EvaluationOptions options;
    options.sim.backfill = config_.backfill;
    auto r = sim::evaluate_policy(workload, cluster, scorer, options);
    if (!r.ok()) return 1.0;  // too few jobs to evaluate: a neutral ratio
    switch (config_.objective) {
      case Objective::kWait:
        return std::max(r->metrics.avg_wait, 1e-9);
      case Objective::kUtilization:
        return 1.0 / std::max(r->metrics.utilization, 1e-9);
      default:
        return std::max(r->metrics.avg_bsld, 1e-9);
    }
  }

  /// Mean over the traces (pool_mean) of ratio_of(trace) (a validation_ratio, called from several threads at once).
  double slurm_validation_ratio(const std::function<double(std::size_t)>& ratio_of) {
    std::vector<double> ratio(validation_jobs_.size());
    parallel_for(validation_jobs_.size(), threads_, [&](std::size_t i) { ratio[i] = ratio_of(i); });
    return pool_mean(ratio);
  }

  /// The greedy policy's metric over the reference's: in the Slurm model over the validation sites' jobs or each
  /// trace's validation jobs, or the mean over the training simulator's validation sequences.
  double validate() {
    if (!sites_.empty()) {
      const PlainMlp plain = nets_->to_plain();
      std::vector<double> ratio(sites_.size());
      parallel_for(sites_.size(), threads_, [&](std::size_t i) {
        const PlainMlpScorer learned(plain);
        ratio[i] = slurm_metric(sites_[i].workload, sites_[i].cluster.get(), learned) / site_reference_[i];
      });
      double sum = 0, count = 0;
      for (std::size_t i = 0; i < ratio.size(); ++i) {
        sum += sites_[i].weight * ratio[i];
        count += sites_[i].weight;
      }
      return sum / count;
    }
    if (config_.select_on_slurm) {
      const PlainMlp plain = nets_->to_plain();
      return slurm_validation_ratio([&](std::size_t i) {
        const PlainMlpScorer learned(plain);  // one per call: its scratch buffers are its own
        return validation_ratio(i, learned);
      });
    }
    const PlainMlp plain = nets_->to_plain();
    std::vector<double> ratio(validation_.size());
    parallel_for(validation_.size(), threads_, [&](std::size_t i) {
      std::mt19937_64 unused(0);
      const Episode e =
          run_policy(validation_[i], plain, backfill_, /*temperature=*/0, 0, cost_, validation_reference_[i], unused);
      ratio[i] = e.cost_ratio();
    });
    double sum = 0, count = 0;  // each sequence counted its trace's weight times, as pool_mean does
    for (std::size_t i = 0; i < ratio.size(); ++i) {
      sum += validation_weight_[i] * ratio[i];
      count += validation_weight_[i];
    }
    return count > 0 ? sum / count : 1.0;
  }

  /// Every heuristic and the policy on the validation sequences: the model card's table.
  std::vector<ValidationRow> validation_table() {
    std::vector<ValidationRow> rows;
    const PlainMlp plain = nets_->to_plain();
    auto measure = [&](const std::string& name,
                       const std::function<std::vector<sim::JobOutcome>(const Sequence&)>& run) {
      ValidationRow row;
      row.policy = name;
      std::vector<double> waits;
      for (const Sequence& s : validation_) {
        const auto outcomes = run(s);
        double bsld = 0;
        for (const sim::JobOutcome& o : outcomes) {
          bsld += sim::bounded_slowdown(o.wait(), o.run());
          row.avg_wait += static_cast<double>(o.wait());
          waits.push_back(static_cast<double>(o.wait()));
        }
        row.avg_bsld += bsld / static_cast<double>(std::max<std::size_t>(outcomes.size(), 1));
        row.cost += cost_.sequence_cost(outcomes);
      }
      const double n = static_cast<double>(std::max<std::size_t>(validation_.size(), 1));
      row.avg_bsld /= n;
      row.cost /= n;
      row.avg_wait /= static_cast<double>(std::max<std::size_t>(waits.size(), 1));
      row.p99_wait = sim::percentile(waits, 99);
      rows.push_back(row);
    };
    for (const std::string& name : scorer_names()) {
      auto scorer = make_scorer(name);
      measure(name, [&](const Sequence& s) {
        return sim::run_compat_sequence(*s.workload, s.first, s.length, **scorer, backfill_);
      });
    }
    measure("learned", [&](const Sequence& s) {
      GreedyPolicy agent(plain);
      return sim::run_compat_sequence(*s.workload, s.first, s.length, agent, backfill_);
    });
    return rows;
  }

  using State = std::vector<torch::Tensor>;

  State snapshot() {
    State s;
    for (const torch::Tensor& t : nets_->parameters()) s.push_back(t.detach().clone());
    for (const torch::Tensor& t : nets_->buffers()) s.push_back(t.detach().clone());
    return s;
  }

  void restore(const State& s) {
    torch::NoGradGuard no_grad;
    std::size_t i = 0;
    for (torch::Tensor& t : nets_->parameters()) t.copy_(s[i++]);
    for (torch::Tensor& t : nets_->buffers()) t.copy_(s[i++]);
  }

  Status save_checkpoint(const std::string& path, int epoch) {
    try {
      torch::serialize::OutputArchive archive;
      nets_->save(archive);
      torch::serialize::OutputArchive optimizer;
      optimizer_.save(optimizer);
      archive.write("optimizer", optimizer);
      torch::serialize::OutputArchive best;
      for (std::size_t i = 0; i < best_state_.size(); ++i) best.write(std::to_string(i), best_state_[i]);
      archive.write("best_state", best);
      // The features warm_start left out: without them a resumed run would train (and export) all features.
      const std::vector<char>& used = nets_->used_features();
      archive.write("used_features", torch::tensor(std::vector<int64_t>(used.begin(), used.end()), torch::kInt64));
      archive.write("epoch", torch::tensor(static_cast<int64_t>(epoch)));
      archive.write("best", torch::tensor(best_, torch::kFloat64));
      archive.write("initial", torch::tensor(initial_cost_, torch::kFloat64));
      archive.write("initial_training", torch::tensor(initial_training_, torch::kFloat64));
      archive.write("stale", torch::tensor(static_cast<int64_t>(stale_)));
      const std::string temp = path + ".tmp";
      archive.save_to(temp);
      std::filesystem::rename(temp, path);
      return Status::Ok();
    } catch (const std::exception& e) {
      return Status::IoError(fmt::format("{}: cannot write checkpoint: {}", path, e.what()));
    }
  }

  Status load_checkpoint(const std::string& path, int& epoch) {
    try {
      torch::serialize::InputArchive archive;
      archive.load_from(path);
      nets_->load(archive);
      torch::serialize::InputArchive optimizer;
      archive.read("optimizer", optimizer);
      optimizer_.load(optimizer);
      torch::serialize::InputArchive best;
      archive.read("best_state", best);
      best_state_ = snapshot();
      for (std::size_t i = 0; i < best_state_.size(); ++i) best.read(std::to_string(i), best_state_[i]);
      // One tensor per entry: reading into a tensor that holds another entry keeps its dtype, so "best" (a double)
      // read into the tensor that held "epoch" (an integer) came back as a wrong figure.
      auto entry = [&](const char* key) {
        torch::Tensor t;
        archive.read(key, t);
        return t;
      };
      const torch::Tensor used_features = entry("used_features");
      if (used_features.numel() != static_cast<int64_t>(features::kFeatureCount))
        return Status::InvalidInput(fmt::format("{}: the checkpoint lists {} features, this trainer has {}", path,
                                                used_features.numel(), features::kFeatureCount));
      std::vector<char> used(features::kFeatureCount);
      for (std::size_t k = 0; k < used.size(); ++k)
        used[k] = used_features[static_cast<int64_t>(k)].item<int64_t>() != 0 ? 1 : 0;
      nets_->set_used_features(used);
      epoch = static_cast<int>(entry("epoch").item<int64_t>());
      best_ = entry("best").item<double>();
      initial_cost_ = entry("initial").item<double>();
      try {  // written since the training-part check; a checkpoint from before goes on without the start's figure
        initial_training_ = entry("initial_training").item<double>();
      } catch (const std::exception&) {
        initial_training_ = -1;
      }
      stale_ = static_cast<int>(entry("stale").item<int64_t>());
      return Status::Ok();
    } catch (const std::exception& e) {
      return Status::InvalidInput(
          fmt::format("{}: not a checkpoint of this trainer configuration: {}", path, e.what()));
    }
  }

  const TrainConfig& config_;
  const std::optional<InitialPolicy> initial_;  ///< warm start from a model file, instead of imitation
  std::vector<TraceSplit> traces_;
  std::vector<ValidationSite> sites_;  ///< TrainConfig::validation_workloads: the model is selected there
  std::vector<std::size_t> draws_;  ///< each trace's index, weight times: draw_trace's urn
  std::vector<char> in_slurm_;      ///< per trace: its episodes run in the Slurm model (kSlurm, or kMixed's choice)
  std::vector<std::vector<double>> contention_cdf_;  ///< Slurm mode: per trace, cumulative window weights
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
  int stale_ = 0;                   ///< validations since the best one (early stopping)
  double teacher_validation_ = -1;  ///< TrainResult::teacher_validation_cost_ratio
  State best_state_;
  std::string teacher_;
};

}  // namespace

Result<TrainResult> train_policy(const TrainConfig& config, const std::function<void(const TrainProgress&)>& progress) {
  if (config.traces.empty() && config.workloads.empty()) return Status::InvalidInput("no training traces given");
  if (config.sequence_length < 2) return Status::InvalidInput("sequence length must be at least 2 jobs");
  if (config.episodes_per_epoch == 0) return Status::InvalidInput("episodes per epoch must be at least 1");
  if (config.hidden.empty()) return Status::InvalidInput("the policy needs at least one hidden layer");
  if (!(config.min_improvement >= 0 && config.min_improvement < 1))
    return Status::InvalidInput(fmt::format("min improvement {} is not a share in [0, 1)", config.min_improvement));
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
