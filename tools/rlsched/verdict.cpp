#include "verdict.h"

#include <fmt/format.h>

namespace rlsched::cli {

namespace {

std::string change(double now, double before) {
  return before > 0 ? fmt::format("{:+.1f}%", 100.0 * (now - before) / before) : "n/a";
}

bool is_model(const std::string& policy) { return policy.rfind("model:", 0) == 0; }

Comparison compare(const sim::PolicyResult& candidate, const sim::PolicyResult& yardstick, std::string role,
                   const VerdictRule& rule) {
  Comparison c;
  c.role = std::move(role);
  c.policy = yardstick.policy;
  c.bsld = yardstick.metrics.avg_bsld;
  c.p99 = yardstick.metrics.p99_wait;
  c.lower_bsld = candidate.metrics.avg_bsld < c.bsld * (1.0 - rule.min_gain);
  c.tail_ok = candidate.metrics.p99_wait <= c.p99 * (1.0 + rule.max_p99_loss) || candidate.metrics.p99_wait <= 0;
  return c;
}

std::string figures(const Verdict& v, const Comparison& c) {
  return fmt::format("average bounded slowdown {:.3f} against {:.3f} ({}), p99 wait {:.0f} s against {:.0f} s ({})",
                     v.candidate_bsld, c.bsld, change(v.candidate_bsld, c.bsld), v.candidate_p99, c.p99,
                     change(v.candidate_p99, c.p99));
}

std::string judged(const Verdict& v, const Comparison& c, const VerdictRule& rule) {
  const char* how = c.beaten()        ? "it beats"
                    : !c.lower_bsld   ? "the candidate does not beat"
                                      : "the candidate has a worse tail than";
  return fmt::format("{} {} ({}): {}{}", how, c.role, c.policy, figures(v, c),
                     c.lower_bsld && !c.tail_ok ? fmt::format(" (more than {:.0f}% worse)", rule.max_p99_loss * 100)
                                                : "");
}

}  // namespace

Verdict decide(const std::vector<sim::PolicyResult>& results, const std::string& candidate, const std::string& current,
               const VerdictRule& rule) {
  Verdict v;
  v.candidate = candidate;
  const sim::PolicyResult* cand = nullptr;
  const sim::PolicyResult* serving = nullptr;
  const sim::PolicyResult* best_heuristic = nullptr;
  for (const sim::PolicyResult& r : results) {
    if (r.policy == candidate)
      cand = &r;
    else if (!current.empty() && r.policy == current)
      serving = &r;
    else if (!is_model(r.policy) && (best_heuristic == nullptr || r.metrics.avg_bsld < best_heuristic->metrics.avg_bsld))
      best_heuristic = &r;
  }
  if (cand == nullptr || (serving == nullptr && best_heuristic == nullptr)) {
    v.text = "verdict: none (the candidate or what it is compared with did not run)";
    return v;
  }
  v.candidate_bsld = cand->metrics.avg_bsld;
  v.candidate_p99 = cand->metrics.p99_wait;
  if (serving != nullptr) v.against.push_back(compare(*cand, *serving, "the current model", rule));
  if (best_heuristic != nullptr) v.against.push_back(compare(*cand, *best_heuristic, "the best heuristic", rule));

  v.promote = true;
  for (const Comparison& c : v.against) v.promote = v.promote && c.beaten();
  std::string reasons;
  for (const Comparison& c : v.against)
    if (v.promote || !c.beaten()) reasons += (reasons.empty() ? "" : "; and ") + judged(v, c, rule);
  if (v.promote) {
    v.text = fmt::format("verdict: PROMOTE {}: {}", candidate, reasons);
    return v;
  }
  v.text = fmt::format("verdict: KEEP {}: {}", current.empty() ? "what serves now" : current, reasons);
  if (best_heuristic == nullptr) return v;
  if (serving == nullptr) {
    v.fallback = best_heuristic->policy;
    v.text += fmt::format("\nfallback: the best heuristic here is {} (`fallback: {}` in rlsched.yaml)",
                          best_heuristic->policy, best_heuristic->policy);
    return v;
  }
  const Comparison heuristic_vs_model = compare(*best_heuristic, *serving, "the current model", rule);
  if (heuristic_vs_model.beaten()) {
    v.fallback = best_heuristic->policy;
    v.text += fmt::format(
        "\nfallback: {} also beats the current model here (average bounded slowdown {:.3f} against {:.3f}): "
        "`fallback: {}` with no `model:` in rlsched.yaml would serve these jobs better",
        best_heuristic->policy, best_heuristic->metrics.avg_bsld, serving->metrics.avg_bsld, best_heuristic->policy);
  }
  return v;
}

nlohmann::ordered_json verdict_json(const Verdict& v) {
  nlohmann::ordered_json against = nlohmann::ordered_json::array();
  for (const Comparison& c : v.against)
    against.push_back({{"role", c.role},
                       {"policy", c.policy},
                       {"avg_bsld", c.bsld},
                       {"p99_wait", c.p99},
                       {"beaten", c.beaten()}});
  nlohmann::ordered_json doc = {{"promote", v.promote},
                                {"candidate", v.candidate},
                                {"avg_bsld", v.candidate_bsld},
                                {"p99_wait", v.candidate_p99},
                                {"against", against}};
  doc["fallback"] = v.fallback ? nlohmann::ordered_json(*v.fallback) : nlohmann::ordered_json(nullptr);
  doc["text"] = v.text;
  return doc;
}

}  // namespace rlsched::cli
