// `rlsched evaluate --candidate`: should the candidate model replace what serves now? One decision rule, stated where
// the verdict is printed: PROMOTE only when the candidate beats every yardstick of the same run on the held-back
// jobs: the current model (when given) and the best heuristic (lowest average bounded slowdown among the policies
// that are not models). Beating one yardstick means an average bounded slowdown lower by at least `min_gain` with a
// p99 wait at most `max_p99_loss` above it. Otherwise KEEP, naming the yardstick it failed and, when a heuristic
// beats the current model, that heuristic as the better fallback (rlsched.yaml `fallback:` with no model).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rlsched/sim/evaluation.h"

namespace rlsched::cli {

struct VerdictRule {
  double min_gain = 0.0;       ///< share the average bounded slowdown must fall by (0: any improvement)
  double max_p99_loss = 0.10;  ///< share the p99 wait may rise by
};

/// The candidate against one yardstick.
struct Comparison {
  std::string role;    ///< "the current model" or "the best heuristic"
  std::string policy;  ///< its name in the results
  double bsld = 0, p99 = 0;
  bool lower_bsld = false;  ///< the candidate's average bounded slowdown is lower (by min_gain)
  bool tail_ok = false;     ///< the candidate's p99 wait is at most max_p99_loss above
  bool beaten() const { return lower_bsld && tail_ok; }
};

struct Verdict {
  bool promote = false;
  std::string candidate;
  double candidate_bsld = 0, candidate_p99 = 0;
  std::vector<Comparison> against;  ///< the current model first (when given), then the best heuristic
  /// KEEP with a current model that the best heuristic beats: that heuristic's name (`fallback:` in rlsched.yaml).
  std::optional<std::string> fallback;
  std::string text;  ///< "verdict: PROMOTE model:new.pt: ..." / "verdict: KEEP ..."
};

/// `results` holds the candidate (name `candidate`), optionally the current model (name `current`, "" when none)
/// and the heuristics, all under one placement. No yardstick in the results gives no verdict (promote false).
Verdict decide(const std::vector<sim::PolicyResult>& results, const std::string& candidate, const std::string& current,
               const VerdictRule& rule = {});

nlohmann::ordered_json verdict_json(const Verdict& v);

}  // namespace rlsched::cli
