// `rlsched evaluate --candidate`: should the candidate model replace the one in service? One decision rule, stated
// where the verdict is printed: the candidate must lower the average bounded slowdown (by at least `min_gain`) and
// must not raise the p99 wait by more than `max_p99_loss`, against the current model, or against the best
// heuristic when no current model is given.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rlsched/sim/evaluation.h"

namespace rlsched::cli {

struct VerdictRule {
  double min_gain = 0.0;       ///< share the average bounded slowdown must fall by (0: any improvement)
  double max_p99_loss = 0.10;  ///< share the p99 wait may rise by
};

struct Verdict {
  bool promote = false;
  std::string candidate, against;  ///< policy names as in the results
  double candidate_bsld = 0, against_bsld = 0, candidate_p99 = 0, against_p99 = 0;
  std::string text;  ///< "verdict: promote model:new.pt: ..." / "verdict: keep ..."
};

/// `results` holds the candidate (name `candidate`), optionally the current model (name `current`, "" when none)
/// and heuristics; all under one placement.
Verdict decide(const std::vector<sim::PolicyResult>& results, const std::string& candidate, const std::string& current,
               const VerdictRule& rule = {});

nlohmann::ordered_json verdict_json(const Verdict& v);

}  // namespace rlsched::cli
