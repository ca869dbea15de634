// The warm start's teacher: the best of the built-in heuristics and a small family of priority rules, found by
// search on the training part.
//
// The family is smallest-area-first with ageing (rlsched/area_rule.h): score = -(a ln max(r, 10) + b ln n) +
// g ln(1 + w / max(r, 10)), r the requested time, n the CPUs, w the wait so far (and, with TeacherFamily::share_term,
// the size term also as c times the job's share of the cluster). On Lublin-1 its members range from far worse than
// F1 to clearly better. The network starts
// as the best member (imitated, then set to compute it exactly where the features allow) and PPO goes on from
// there; the rule itself never ships, the network does.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rlsched/area_rule.h"
#include "rlsched/scorer.h"
#include "rlsched/status.h"
#include "rollout.h"

namespace rlsched::train {

struct Teacher {
  std::unique_ptr<Scorer> scorer;
  std::string description;
  double cost_ratio = 0;         ///< cost ratio to the reference where the search ran
  std::optional<AreaRule> rule;  ///< set when the teacher is a rule of the area family
  std::string heuristic;         ///< the built-in heuristic's name when it is one
};

/// A teacher that is a built-in heuristic (make_scorer's names). \return InvalidInput for an unknown name.
Result<Teacher> heuristic_teacher(const std::string& name);

/// Weights over the raw feature schema (features::extract_all's columns) whose weighted sum ranks jobs as the
/// teacher does on a cluster of `total_cpus` CPUs, so that the network can start as the rule itself instead of an
/// imitation of it; empty when no weighted sum does (WFP3's and UNICEP's products of features).
/// - SJF: -limit_log, monotone in the requested time.
/// - FCFS: +wait_log; at one instant, longer waits are earlier submits.
/// - The area family: limit_log, cpus_log and wait_over_limit scaled back to natural logs (predicted_log and
///   wait_over_predicted for a rule on predicted run times), and cpus_share and accel_share as they are for the
///   share term. Exact but for requests
///   under 10 s, which the rule counts as 10 s, and for log1p(r) where the rule takes ln r. The cpus_log weight of
///   a plain rule depends on the cluster's size; that of a cluster-relative rule does not.
std::vector<double> linear_form(const Teacher& teacher, int total_cpus);

/// The rows of every decision of `demos`, decision after decision, scored as weights . row (features with
/// used[k] == 0 left out, as the network leaves them out).
std::vector<double> linear_scores(const std::vector<Episode>& demos, const std::vector<double>& weights,
                                  const std::vector<char>& used);

/// How far apart a scorer puts the jobs of each decision: the pooled standard deviation of `scores` (one per row of
/// the demos' decisions, in order) around each decision's mean. Exploration noise is measured against it.
double within_decision_spread(const std::vector<Episode>& demos, const std::vector<double>& scores);

/// A second teacher that ranks as `teacher` does (its own scorer).
Teacher same_teacher(const Teacher& teacher);

/// Which rules of the family search_teacher tries.
struct TeacherFamily {
  bool cluster_relative = false;  ///< its cluster-relative members instead of the plain ones
  bool predicted = false;         ///< each member also on predicted run times (AreaRule::predicted)
  /// Each member also with the share term at c = 3 and c = 10 (AreaRule::c): a job's size weighs by its share of
  /// the cluster, so that a rule can put short jobs first where every job is a small part of the cluster (Gavel's
  /// 1-32 of 288 GPUs) and still hold wide ones back where they are not. Those were the rules of the ceiling study
  /// that came nearest to winning everywhere (policy_models/README.md, stop 36). Three times the members.
  bool share_term = false;
  /// Only the members whose width weight is at most half their run-time weight (b <= a / 2): no heavier than
  /// Smith's ratio rule for bounded slowdown, where a job's wait costs 1 / r a second and it holds n r of the
  /// cluster (score -(2 ln r + ln n)). Heavier width weights hold a seconds-long wide job back for its width alone;
  /// the share term (c) still weighs a job that is a large part of the cluster. About half the members.
  bool smith_width = false;
};

/// Where a rule must beat the reference to teach (`rlsched train --teacher-margin`): a trace on which no candidate
/// costs less than (1 - margin) times the reference imitates the reference. Without it the cheapest candidate
/// teaches and a tie goes to the first tried, FCFS: Gavel's jobs never wait in the compat simulator, every order
/// costs the same there, and FCFS was its teacher (with no decision there to imitate; policy_models/README.md, P22).
struct ReferenceMargin {
  std::string reference;  ///< a heuristic the search tries: fcfs, sjf, wfp3 or unicep
  double margin = 0;      ///< a share of the reference's cost, [0, 1)
};

/// Evaluates every rule of the family (`family` says which) and every built-in heuristic
/// but multifactor and F1 with `cost_ratio` (a candidate's cost ratio to the reference: in the Slurm model over the
/// whole training part, or the geometric mean of those over several traces; in the compat simulator the mean over
/// its search sequences; called from `threads` threads at once) and returns the lowest. A cost of 0 or less marks a
/// failed run, which is never chosen while another succeeded. With `keep`, the reference where no candidate is
/// more than keep->margin cheaper than it (ReferenceMargin).
Teacher search_teacher(const std::function<double(const Scorer&)>& cost_ratio, int threads, TeacherFamily family = {},
                       const std::optional<ReferenceMargin>& keep = std::nullopt);

/// The rule of `family` (its heuristics included) that costs least where `cost` measures, when it costs less than
/// (1 - margin) times `own`, the cost there of the teacher it would replace; none otherwise (a stretch whose rules
/// differ by less teaches as its trace does). Its cost_ratio is its cost over `own`. (TrainConfig::teacher_per_window)
std::optional<Teacher> better_teacher(const std::function<double(const Scorer&)>& cost, double own, double margin,
                                      TeacherFamily family = {}, int threads = 1);

/// search_teacher on compat sequences with the reference's costs on them (same order).
Teacher search_teacher(const std::vector<Sequence>& sequences, const std::vector<double>& reference_costs,
                       bool backfill, const CostModel& cost, int threads, TeacherFamily family = {},
                       const std::optional<ReferenceMargin>& keep = std::nullopt);

/// Whether search_teacher tries the heuristic `name` as a candidate (every built-in but multifactor and F1), so that
/// it can be ReferenceMargin::reference.
bool is_teacher_heuristic(const std::string& name);

}  // namespace rlsched::train
