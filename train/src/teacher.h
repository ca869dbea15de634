// The warm start's teacher: the best of the built-in heuristics and a small family of priority rules, found by
// search on the training part.
//
// The family is smallest-area-first with ageing: score = -(a ln max(r, 10) + b ln n) + g ln(1 + w / max(r, 10)),
// r the requested time, n the CPUs, w the wait so far. It contains SJF-like (b = 0) and area-like (a = b) rules and
// their aged versions; on Lublin-1 its members range from far worse than F1 to clearly better. Imitating the best
// member gives PPO a strong starting point; the rule itself never ships, the network does.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rlsched/scorer.h"
#include "rollout.h"

namespace rlsched::train {

struct AreaRule {
  double a = 1, b = 1, g = 0;
  std::string describe() const;
};

/// The rule as a Scorer (dynamic when g != 0).
std::unique_ptr<Scorer> make_area_scorer(const AreaRule& rule);

struct Teacher {
  std::unique_ptr<Scorer> scorer;
  std::string description;
  double cost_ratio = 0;  ///< mean cost ratio to the reference on the search sequences
};

/// Evaluates every rule of the family and every built-in heuristic but multifactor and F1 with `cost_ratio` (a
/// candidate's mean cost ratio to the reference on the search sequences, in whichever simulator trains; called from
/// `threads` threads at once) and returns the lowest.
Teacher search_teacher(const std::function<double(const Scorer&)>& cost_ratio, int threads);

/// search_teacher on compat sequences with the reference's costs on them (same order).
Teacher search_teacher(const std::vector<Sequence>& sequences, const std::vector<double>& reference_costs,
                       bool backfill, const CostModel& cost, int threads);

}  // namespace rlsched::train
