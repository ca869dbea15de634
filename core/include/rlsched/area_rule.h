// The smallest-area-first family with ageing: score = -(a ln max(r, 10) + b ln n + c (n / N + k / K)) +
// g ln(1 + w / max(r, 10)) + f F, r the requested time, n the CPUs, w the wait so far, n / N and k / K the job's
// share of the cluster's CPUs and accelerators, F Slurm's fair-share factor in [0, 1] (higher runs first). It holds
// SJF-like (b = c = 0) and area-like (a = b) rules and their aged versions; the share term weighs a job's size where
// it is a large part of the cluster and hardly where it is not; the fair-share term lets a user who has used little
// go first, as multifactor's order mostly does. The trainer searches it for the rule the network starts as (the
// teacher, train/src/teacher.h); as a policy spec (`area:A/B/G[/C[/F]][/relative]`) it can be evaluated and served like
// any built-in heuristic, so the rule a model card names can be judged on its own.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "rlsched/scorer.h"
#include "rlsched/status.h"

namespace rlsched {

/// How an area rule's policy spec starts.
inline constexpr std::string_view kAreaRulePrefix = "area:";
/// The spec's grammar, for messages and help texts.
inline constexpr std::string_view kAreaRuleGrammar = "area:A/B/G[/C[/F]][/relative][/predicted]";

struct AreaRule {
  double a = 1, b = 1, g = 0;
  /// The CPU term in shares of the cluster, as the cpus_log feature counts them: b ln n ln 1024 / ln max(2, N)
  /// on a cluster of N CPUs (the plain term on 1,024 CPUs). One such rule is one weighted sum of the features on
  /// every cluster, so a network trained on several clusters can start as it exactly.
  bool cluster_relative = false;
  /// Weight of the job's share of the cluster, n / N + k / K (k / K = 0 without accelerators): the cpus_share and
  /// accel_share features, so a rule with it is still one weighted sum of the features.
  double c = 0;
  /// Weight of Slurm's fair-share factor (the fairshare_factor feature, so still one weighted sum of the features).
  double f = 0;
  /// r is the run time the job's user's ended jobs predict (PendingJob::predicted_run_time, the predicted_log and
  /// wait_over_predicted features), its time limit where none is predicted. Such a rule changes as jobs end, so it
  /// is never static.
  bool predicted = false;
  /// The weight of ln n on a cluster of `total_cpus` CPUs: b, or b ln 1024 / ln max(2, N) when cluster_relative.
  double cpus_weight(int total_cpus) const;
  /// The formula, e.g. "-(1 ln max(r,10) + 1.5 ln n + 10 (n/N + k/K)) + 0.5 ln(1 + w/max(r,10))".
  std::string describe() const;
  /// The policy spec that parse_area_rule reads back, e.g. "area:1/1.5/0.5", "area:1/1.5/0.5/10/relative",
  /// "area:1/1.5/0/0/3", "area:1/0/0.5/predicted" (C is written when C or F is not 0, F when it is not 0).
  std::string spec() const;
};

/// Reads `area:A/B/G[/C[/F]][/relative][/predicted]` (A, B, G, C, F finite and >= 0; C and F 0 when left out; not
/// A = B = C = 0).
/// \return InvalidInput naming the spec and the part that is wrong.
Result<AreaRule> parse_area_rule(std::string_view spec);

/// True when `spec` starts with kAreaRulePrefix (whether or not the rest is valid).
bool is_area_rule_spec(std::string_view spec);

/// The rule as a Scorer, named by its spec (dynamic when g != 0).
std::unique_ptr<Scorer> make_area_scorer(const AreaRule& rule);

}  // namespace rlsched
