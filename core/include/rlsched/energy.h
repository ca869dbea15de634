// Energy, electricity price and grid carbon: what a job draws, what a kWh costs when, and the one rule that decides
// whether a deferrable job waits for a cheaper window. job_submit/rlsched (a begin time set at submit),
// site_factor/rlsched (a deferrable job pending ranks last in an expensive window, first in a cheap one) and the
// simulator
// call the functions below; docs/energy.md explains the model and the mechanism.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rlsched/job.h"

namespace rlsched::energy {

constexpr Seconds kWeek = 7 * 86400;

/// A value that changes in steps over time: a tariff (currency per kWh) or a grid's carbon intensity (gCO2/kWh).
/// Either a weekly table (the same week repeated, in local time at a fixed UTC offset) or a time series with a
/// regular step (a CSV export of a utility or grid operator); outside a series its first and last values hold.
/// An empty schedule is 0 everywhere.
class Schedule {
 public:
  /// One step: from `start` (seconds into the week from Monday 00:00 local, or epoch seconds for a series) on,
  /// the value is `value`, up to the next step's start.
  struct Step {
    Seconds start = 0;
    double value = 0;
  };

  Schedule() = default;
  /// `steps` ascending, the first at 0, every start < kWeek (the parser checks it).
  static Schedule weekly(std::vector<Step> steps, Seconds utc_offset);
  /// `steps` ascending in epoch seconds, at least one.
  static Schedule series(std::vector<Step> steps);

  bool empty() const { return steps_.empty(); }
  bool is_series() const { return series_; }
  /// The value at epoch second t.
  double at(Seconds t) const;
  /// The first epoch second after t at which the value may change (a step boundary); INT64_MAX when none.
  Seconds next_change(Seconds t) const;
  /// The integral of the value over [from, to) in value x seconds (0 when to <= from).
  double integral(Seconds from, Seconds to) const;
  const std::vector<Step>& steps() const { return steps_; }
  Seconds utc_offset() const { return utc_offset_; }

 private:
  /// The index of the step holding epoch second t, and (weekly) the epoch second its week starts.
  std::size_t locate(Seconds t, Seconds& week_start) const;

  std::vector<Step> steps_;
  bool series_ = false;
  Seconds utc_offset_ = 0;
};

/// Electrical power of one device busy and idle, in watts.
struct DevicePower {
  double busy_w = 0;
  double idle_w = 0;
};

/// What the cluster draws. A node draws node.idle_w, plus (busy_w - idle_w) times the share of its CPUs allocated,
/// plus each of its accelerators' busy or idle draw; a node Slurm's power saving suspended draws suspended_w in all.
struct PowerModel {
  std::map<std::string, DevicePower> accelerators;  ///< by type name ("h200"); a type not listed draws nothing
  DevicePower node;                                 ///< a node's host (CPUs, memory, fans, network), no accelerators
  double suspended_w = 0;

  /// The draw one job adds to idle nodes while it runs, and so what its energy is counted as: its accelerators at
  /// busy minus idle power, and its CPUs' share of the host's busy-minus-idle power (node_cpus: CPUs of one node).
  double job_watts(std::string_view type, int devices, int cpus, int node_cpus) const;
  /// The type's draw, or nullptr when it is not listed.
  const DevicePower* find_accelerator(std::string_view type) const;
};

/// How a deferrable job's start is chosen.
enum class Rule {
  kNone,            ///< no deferral (energy is only measured)
  kCheapestWindow,  ///< the simple rule: start at the beginning of the lowest-priced step within the budget
  /// the cheapest-window start, kept only when the job's run (its time limit) costs at least min_saving less
  /// there, and the ranks of rank_now while the job is pending (docs/energy.md)
  kLeastCost,
};
const char* to_string(Rule rule);

/// Jobs of these QOS or job classes (rlsched.yaml job_classes) may start up to max_deferral after their submit
/// (or their own --begin) because of the price.
struct DeferrableGroup {
  std::vector<std::string> qos;
  std::vector<std::string> job_classes;
  Seconds max_deferral = 0;
};

struct EnergyConfig {
  PowerModel power;
  Schedule price;   ///< currency per kWh; empty: no price (nothing is deferred)
  Schedule carbon;  ///< gCO2 per kWh; empty: not reported
  std::string currency = "EUR";
  Rule rule = Rule::kLeastCost;
  /// Which jobs may be deferred, and by how much: the first group naming a job's QOS or class applies.
  std::vector<DeferrableGroup> deferrable;
  /// Defer only when the run costs at least this share less from the planned start than from now (kLeastCost).
  double min_saving = 0.05;

  /// Which schedule deferral follows: the price (cost) or the carbon intensity (emissions).
  bool follow_carbon = false;

  const Schedule& signal() const { return follow_carbon ? carbon : price; }
  /// "CNY" or "gCO2": what plan_start's costs are in (per kWh for the schedule's values).
  std::string signal_unit() const { return follow_carbon ? "gCO2" : currency; }
  bool defers() const { return rule != Rule::kNone && !signal().empty() && !deferrable.empty(); }
  /// The max_deferral of the first group naming the QOS or the class; nullopt when the job is not deferrable.
  std::optional<Seconds> max_deferral_for(std::string_view qos, std::string_view job_class) const;
};

/// A job's start to plan: it may start from `now` on, must start by `deadline` (its eligible time plus
/// max_deferral), runs for about `run` seconds (its time limit) drawing `watts`.
struct StartRequest {
  Seconds now = 0;
  Seconds deadline = 0;
  Seconds run = 0;
  double watts = 0;
};

struct StartPlan {
  Seconds begin = 0;  ///< when to let it start (now when not deferred)
  bool deferred = false;
  double cost_now = 0;      ///< the electricity cost of its run started now (currency)
  double cost_planned = 0;  ///< ... started at `begin`
  std::string reason;       ///< one line for the user and the log
};

/// What the deferral rule needs of a job, as job_submit/rlsched, site_factor/rlsched and the simulator know it.
struct DeferrableJob {
  std::string_view qos;
  std::string_view job_class;      ///< its class in rlsched.yaml job_classes ("" for none)
  Seconds eligible = 0;            ///< its submit, or its own --begin when later: the budget counts from here
  Seconds time_limit = 0;          ///< its run is assumed to last this long
  std::vector<std::string> types;  ///< accelerator types it may run on; empty: any the power model lists
  int accelerators = 0;
  int cpus = 0;
  int node_cpus = 0;  ///< CPUs of one node (the cluster's average): the host share of its CPUs
};

/// The job's draw: its CPUs' host share plus its accelerators at the mean draw of its types (of every type the
/// model lists when it names none or none of them has figures). Only costs' ratios drive a decision, so a mean
/// over the types it may get is enough to decide; reports use the type it ran on.
double request_watts(const PowerModel& power, const DeferrableJob& job);

/// The request plan_start and rank_now take for a deferrable job at `now`: deadline eligible + max_deferral, run its
/// time limit; nullopt when the job is not deferrable or the config defers nothing.
std::optional<StartRequest> deferral_request(const EnergyConfig& config, const DeferrableJob& job, Seconds now);

/// The one deferral decision (rule of `config`). Not deferrable, no price, or no cheaper start within the budget:
/// begin = now.
StartPlan plan_start(const EnergyConfig& config, const StartRequest& request);

/// Where a pending deferrable job ranks at request.now, under the least-cost rule (the simple cheapest-window rule
/// only sets begin times):
///  - kLast while a start within its budget would cost at least min_saving less (an expensive window for it);
///  - kFirst while its run now costs at least min_saving less than at the schedule's average over the next day and
///    ends before the price rises (a cheap window it fits in: deferrable work runs before other work while it is
///    cheap);
///  - kPolicy otherwise.
/// site_factor/rlsched and the simulator replace the policy's score of a kLast job by -inf and of a kFirst job by
/// +inf before scores become site factors (ranked_score): site factor 0, or the batch's top one.
enum class Rank : signed char { kLast = -1, kPolicy = 0, kFirst = 1 };
Rank rank_now(const EnergyConfig& config, const StartRequest& request);
double ranked_score(Rank rank, double policy_score);

/// Energy (kWh) x price integrated over [from, to) at a constant draw: the cost, and (carbon schedule) the grams.
double cost_of(const Schedule& schedule, double watts, Seconds from, Seconds to);

}  // namespace rlsched::energy
