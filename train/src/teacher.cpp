#include "teacher.h"

#include <cmath>
#include <thread>

#include <fmt/format.h>

namespace rlsched::train {
namespace {

class AreaScorer final : public Scorer {
 public:
  explicit AreaScorer(const AreaRule& rule) : rule_(rule), name_("teacher " + rule.describe()) {}
  std::string_view name() const override { return name_; }
  bool is_static() const override { return rule_.g == 0; }
  void score(const ScoringContext&, const std::vector<PendingJob>& jobs, std::vector<double>& out) const override {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const double r = std::max<double>(static_cast<double>(jobs[i].time_limit), 10.0);
      const double n = std::max(jobs[i].cpus, 1);
      out[i] = -(rule_.a * std::log(r) + rule_.b * std::log(n)) +
               rule_.g * std::log1p(static_cast<double>(std::max<Seconds>(jobs[i].wait, 0)) / r);
    }
  }

 private:
  AreaRule rule_;
  std::string name_;
};

}  // namespace

std::string AreaRule::describe() const {
  return fmt::format("-({} ln max(r,10) + {} ln n) + {} ln(1 + w/max(r,10))", a, b, g);
}

std::unique_ptr<Scorer> make_area_scorer(const AreaRule& rule) {
  return std::make_unique<AreaScorer>(rule);
}

Teacher search_teacher(const std::vector<Sequence>& sequences, const std::vector<double>& reference_costs,
                       bool backfill, const CostModel& cost, int threads) {
  return search_teacher(
      [&](const Scorer& scorer) {
        double sum = 0;
        for (std::size_t s = 0; s < sequences.size(); ++s)
          sum += reference_cost(sequences[s], scorer, backfill, cost) / std::max(reference_costs[s], 1e-9);
        return sum / static_cast<double>(std::max<std::size_t>(sequences.size(), 1));
      },
      threads);
}

Teacher search_teacher(const std::function<double(const Scorer&)>& cost_ratio, int threads) {
  std::vector<Teacher> candidates;
  for (const std::string& name : scorer_names()) {
    // The compat simulator does not produce Slurm's factors; in the Slurm model multifactor is already the base
    // priority, and ranking it again as the site factor counts it twice.
    if (name == "multifactor") continue;
    // F1 ranks by log10 of the absolute submit time, which no feature carries (they have the wait, not the clock):
    // a network cannot copy it. Imitating it on Lublin-1 started the network at 3-4x F1's slowdown on the
    // validation jobs, worse than the area rules below (policy_models/README.md).
    if (name == "f1") continue;
    candidates.push_back(Teacher{std::move(make_scorer(name)).value(), name, 0});
  }
  for (double a : {0.5, 1.0, 2.0})
    for (double b : {0.0, 0.5, 1.0, 1.5})
      for (double g : {0.0, 0.25, 0.5, 1.0}) {
        const AreaRule rule{a, b, g};
        candidates.push_back(Teacher{make_area_scorer(rule), rule.describe(), 0});
      }
  const auto workers = static_cast<std::size_t>(std::max(1, threads));
  std::vector<std::thread> pool;
  for (std::size_t w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      for (std::size_t i = w; i < candidates.size(); i += workers)
        candidates[i].cost_ratio = cost_ratio(*candidates[i].scorer);
    });
  for (std::thread& t : pool) t.join();
  std::size_t best = 0;
  for (std::size_t i = 1; i < candidates.size(); ++i)
    if (candidates[i].cost_ratio < candidates[best].cost_ratio) best = i;
  return std::move(candidates[best]);
}

}  // namespace rlsched::train
