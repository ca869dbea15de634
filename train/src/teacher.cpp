#include "teacher.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "rlsched/features.h"

namespace rlsched::train {
Result<Teacher> heuristic_teacher(const std::string& name) {
  auto scorer = make_scorer(name);
  if (!scorer.ok()) return scorer.status();
  Teacher t;
  t.scorer = std::move(scorer).value();
  t.description = name;
  t.heuristic = name;
  return t;
}

std::vector<double> linear_form(const Teacher& teacher, int total_cpus) {
  const std::vector<std::string> names = features::schema_names();
  std::vector<double> weights(names.size(), 0.0);
  auto weight = [&](std::string_view feature) -> double& {
    return weights[static_cast<std::size_t>(std::find(names.begin(), names.end(), feature) - names.begin())];
  };
  if (teacher.heuristic == "sjf") {
    weight("limit_log") = -1;
  } else if (teacher.heuristic == "fcfs") {
    weight("wait_log") = 1;
  } else if (teacher.rule) {
    // The features' own scales (core/src/features.cpp): limit_log = log1p(r) / log1p(7 d), cpus_log = log2(n) /
    // log2(max(2, cluster CPUs)), wait_over_limit = log1p(w / r) / ln 101.
    const bool predicted = teacher.rule->predicted;
    weight(predicted ? "predicted_log" : "limit_log") = -teacher.rule->a * std::log1p(7 * 86400.0);
    // cpus_log * ln max(2, N) = ln n, whose weight is the rule's for this cluster.
    weight("cpus_log") =
        -teacher.rule->cpus_weight(total_cpus) * std::log(std::max(2.0, static_cast<double>(total_cpus)));
    weight(predicted ? "wait_over_predicted" : "wait_over_limit") = teacher.rule->g * std::log(101.0);
    // cpus_share = n / N and accel_share = k / K, the share term as the rule counts it.
    weight("cpus_share") = -teacher.rule->c;
    weight("accel_share") = -teacher.rule->c;
    weight("fairshare_factor") = teacher.rule->f;  // the factor itself, [0, 1]
  } else {
    weights.clear();
  }
  return weights;
}

std::vector<double> linear_scores(const std::vector<Episode>& demos, const std::vector<double>& weights,
                                  const std::vector<char>& used) {
  std::vector<double> out;
  for (const Episode& e : demos)
    for (const Decision& d : e.decisions)
      for (std::uint32_t r = 0; r < d.rows; ++r) {
        const float* row = e.features.data() + static_cast<std::size_t>(d.first_row + r) * features::kFeatureCount;
        double z = 0;
        for (std::size_t k = 0; k < weights.size(); ++k)
          if (used[k]) z += weights[k] * row[k];
        out.push_back(z);
      }
  return out;
}

double within_decision_spread(const std::vector<Episode>& demos, const std::vector<double>& scores) {
  double squares = 0;
  std::size_t at = 0, rows = 0;
  for (const Episode& e : demos)
    for (const Decision& d : e.decisions) {
      double mean = 0;
      for (std::uint32_t r = 0; r < d.rows; ++r) mean += scores[at + r];
      mean /= d.rows;
      for (std::uint32_t r = 0; r < d.rows; ++r) squares += (scores[at + r] - mean) * (scores[at + r] - mean);
      at += d.rows;
      rows += d.rows;
    }
  return rows > 0 ? std::sqrt(squares / static_cast<double>(rows)) : 0.0;
}

std::optional<Teacher> better_teacher(const std::function<double(const Scorer&)>& cost, double own, double margin,
                                      TeacherFamily family, int threads) {
  if (!(own > 0)) return std::nullopt;
  Teacher best = search_teacher([&](const Scorer& scorer) { return cost(scorer) / own; }, threads, family);
  if (!(best.cost_ratio > 0 && best.cost_ratio < 1.0 - margin)) return std::nullopt;
  return best;
}

Teacher search_teacher(const std::vector<Sequence>& sequences, const std::vector<double>& reference_costs,
                       bool backfill, const CostModel& cost, int threads, TeacherFamily family,
                       const std::optional<ReferenceMargin>& keep) {
  return search_teacher(
      [&](const Scorer& scorer) {
        double sum = 0;
        for (std::size_t s = 0; s < sequences.size(); ++s)
          sum += reference_cost(sequences[s], scorer, backfill, cost) / std::max(reference_costs[s], 1e-9);
        return sum / static_cast<double>(std::max<std::size_t>(sequences.size(), 1));
      },
      threads, family, keep);
}

Teacher same_teacher(const Teacher& teacher) {
  if (teacher.rule)
    return Teacher{make_area_scorer(*teacher.rule), teacher.description, teacher.cost_ratio, teacher.rule, {}};
  Teacher out = std::move(heuristic_teacher(teacher.heuristic)).value();
  out.description = teacher.description;
  out.cost_ratio = teacher.cost_ratio;
  return out;
}

bool is_teacher_heuristic(const std::string& name) {
  // The compat simulator does not produce Slurm's factors; in the Slurm model multifactor is already the base
  // priority, and ranking it again as the site factor counts it twice.
  if (name == "multifactor") return false;
  // F1 ranks by log10 of the absolute submit time, which no feature carries (they have the wait, not the clock):
  // a network cannot copy it. Imitating it on Lublin-1 started the network at 3-4x F1's slowdown on the
  // validation jobs, worse than the area rules below (policy_models/README.md).
  if (name == "f1") return false;
  const std::vector<std::string> names = scorer_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

Teacher search_teacher(const std::function<double(const Scorer&)>& cost_ratio, int threads, TeacherFamily family,
                       const std::optional<ReferenceMargin>& keep) {
  std::vector<Teacher> candidates;
  for (const std::string& name : scorer_names())
    if (is_teacher_heuristic(name)) candidates.push_back(std::move(heuristic_teacher(name)).value());
  std::vector<double> share_weights{0.0};
  if (family.share_term) share_weights.insert(share_weights.end(), {3.0, 10.0});
  for (const bool predicted : {false, true}) {
    if (predicted && !family.predicted) break;
    for (double c : share_weights)
      for (double a : {0.5, 1.0, 2.0})
        for (double b : {0.0, 0.5, 1.0, 1.5})
          for (double g : {0.0, 0.25, 0.5, 1.0}) {
            if (family.smith_width && b > a / 2) continue;
            AreaRule rule{a, b, g, family.cluster_relative};
            rule.c = c;
            rule.predicted = predicted;
            // The spec beside the formula: `evaluate --policies SPEC` judges the rule itself.
            candidates.push_back(
                Teacher{make_area_scorer(rule), rule.describe() + " (" + rule.spec() + ")", 0, rule, {}});
          }
  }
  const auto workers = static_cast<std::size_t>(std::max(1, threads));
  std::vector<std::thread> pool;
  for (std::size_t w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      for (std::size_t i = w; i < candidates.size(); i += workers)
        candidates[i].cost_ratio = cost_ratio(*candidates[i].scorer);
    });
  for (std::thread& t : pool) t.join();
  // A candidate whose run failed has no cost (0): never the best, unless every run failed.
  std::size_t best = 0;
  for (std::size_t i = 1; i < candidates.size(); ++i)
    if (candidates[i].cost_ratio > 0 &&
        (candidates[best].cost_ratio <= 0 || candidates[i].cost_ratio < candidates[best].cost_ratio))
      best = i;
  if (keep) {
    auto reference = std::find_if(candidates.begin(), candidates.end(),
                                  [&](const Teacher& t) { return !t.rule && t.heuristic == keep->reference; });
    if (reference != candidates.end() && reference != candidates.begin() + static_cast<std::ptrdiff_t>(best) &&
        reference->cost_ratio > 0 && !(candidates[best].cost_ratio < reference->cost_ratio * (1.0 - keep->margin))) {
      reference->description = fmt::format(
          "{} (the reference: nothing tried was {:g}% cheaper; the best, {}, at {:.3f})", reference->description,
          100 * keep->margin, candidates[best].description, candidates[best].cost_ratio);
      return std::move(*reference);
    }
  }
  return std::move(candidates[best]);
}

}  // namespace rlsched::train
