#include "verdict.h"

#include <fmt/format.h>

namespace rlsched::cli {

namespace {

std::string change(double now, double before) {
  return before > 0 ? fmt::format("{:+.1f}%", 100.0 * (now - before) / before) : "n/a";
}

}  // namespace

Verdict decide(const std::vector<sim::PolicyResult>& results, const std::string& candidate, const std::string& current,
               const VerdictRule& rule) {
  Verdict v;
  v.candidate = candidate;
  const sim::PolicyResult* cand = nullptr;
  const sim::PolicyResult* other = nullptr;
  for (const sim::PolicyResult& r : results) {
    if (r.policy == candidate) {
      cand = &r;
    } else if (!current.empty() ? r.policy == current
                                : r.policy.rfind("model:", 0) != 0 &&
                                      (other == nullptr || r.metrics.avg_bsld < other->metrics.avg_bsld)) {
      other = &r;
    }
  }
  if (cand == nullptr || other == nullptr) {
    v.text = "verdict: none (the candidate or what it is compared with did not run)";
    return v;
  }
  v.against = other->policy;
  v.candidate_bsld = cand->metrics.avg_bsld;
  v.against_bsld = other->metrics.avg_bsld;
  v.candidate_p99 = cand->metrics.p99_wait;
  v.against_p99 = other->metrics.p99_wait;
  const bool better = v.candidate_bsld < v.against_bsld * (1.0 - rule.min_gain);
  const bool tail_ok = v.candidate_p99 <= v.against_p99 * (1.0 + rule.max_p99_loss) || v.candidate_p99 <= 0;
  v.promote = better && tail_ok;
  const std::string what = current.empty() ? fmt::format("the best heuristic ({})", v.against)
                                           : fmt::format("the current model ({})", v.against);
  const std::string figures = fmt::format(
      "average bounded slowdown {:.3f} against {:.3f} ({}), p99 wait {:.0f} s against {:.0f} s ({})", v.candidate_bsld,
      v.against_bsld, change(v.candidate_bsld, v.against_bsld), v.candidate_p99, v.against_p99,
      change(v.candidate_p99, v.against_p99));
  if (v.promote)
    v.text = fmt::format("verdict: PROMOTE {}: it beats {}: {}", candidate, what, figures);
  else
    v.text = fmt::format("verdict: KEEP {}: the candidate {} it: {}{}", current.empty() ? "what serves now" : current,
                         better ? "has a worse tail than" : "does not beat", figures,
                         better ? fmt::format(" (more than {:.0f}% worse)", rule.max_p99_loss * 100) : "");
  return v;
}

nlohmann::ordered_json verdict_json(const Verdict& v) {
  return {{"promote", v.promote},
          {"candidate", v.candidate},
          {"against", v.against},
          {"avg_bsld", {v.candidate_bsld, v.against_bsld}},
          {"p99_wait", {v.candidate_p99, v.against_p99}},
          {"text", v.text}};
}

}  // namespace rlsched::cli
