// What a job draws, and the one rule that decides whether a deferrable job waits for cheaper electricity.
#include <algorithm>
#include <ctime>
#include <limits>

#include <fmt/format.h>

#include "rlsched/energy.h"
#include "text/text.h"

namespace rlsched::energy {
namespace {

std::string utc_text(Seconds t) {
  return text::utc_iso8601(t) + "Z";
}

// The start of the cheapest window within the budget: the earliest second in [now, deadline] at the lowest price.
Seconds cheapest_window_start(const Schedule& signal, const StartRequest& r) {
  Seconds begin = r.now;
  double lowest = signal.at(r.now);
  for (Seconds t = signal.next_change(r.now); t <= r.deadline; t = signal.next_change(t))
    if (signal.at(t) < lowest) {
      lowest = signal.at(t);
      begin = t;
    }
  return begin;
}

}  // namespace

const char* to_string(Rule rule) {
  switch (rule) {
    case Rule::kNone:
      return "none";
    case Rule::kCheapestWindow:
      return "cheapest-window";
    case Rule::kLeastCost:
      return "least-cost";
  }
  return "none";
}

double PowerModel::job_watts(std::string_view type, int devices, int cpus, int node_cpus) const {
  double w = 0;
  if (devices > 0) {
    const auto it = find_accelerator(type);
    if (it) w += devices * (it->busy_w - it->idle_w);
  }
  if (cpus > 0 && node_cpus > 0) w += (node.busy_w - node.idle_w) * static_cast<double>(cpus) / node_cpus;
  return std::max(w, 0.0);
}

const DevicePower* PowerModel::find_accelerator(std::string_view type) const {
  const auto it = accelerators.find(std::string(type));
  return it == accelerators.end() ? nullptr : &it->second;
}

std::optional<Seconds> EnergyConfig::max_deferral_for(std::string_view qos, std::string_view job_class) const {
  auto named = [](const std::vector<std::string>& names, std::string_view name) {
    return !name.empty() && std::find(names.begin(), names.end(), name) != names.end();
  };
  for (const DeferrableGroup& g : deferrable)
    if (named(g.qos, qos) || named(g.job_classes, job_class)) return g.max_deferral;
  return std::nullopt;
}

double request_watts(const PowerModel& power, const DeferrableJob& job) {
  double sum = 0;
  int listed = 0;
  for (const std::string& type : job.types)
    if (const DevicePower* d = power.find_accelerator(type)) {
      sum += d->busy_w - d->idle_w;
      ++listed;
    }
  if (listed == 0)
    for (const auto& [type, d] : power.accelerators) {
      sum += d.busy_w - d.idle_w;
      ++listed;
    }
  const double per_device = listed > 0 ? sum / listed : 0;
  return std::max(0.0, job.accelerators * per_device) + power.job_watts("", 0, job.cpus, job.node_cpus);
}

std::optional<StartRequest> deferral_request(const EnergyConfig& config, const DeferrableJob& job, Seconds now) {
  if (!config.defers()) return std::nullopt;
  const std::optional<Seconds> budget = config.max_deferral_for(job.qos, job.job_class);
  if (!budget) return std::nullopt;
  StartRequest r;
  r.now = now;
  r.deadline = job.eligible + *budget;
  r.run = job.time_limit;
  r.watts = request_watts(config.power, job);
  return r;
}

namespace {

// The rule's choice without the words: the start, and the run's cost now and there. plan_start adds the message;
// rank_now, which site_factor/rlsched calls for every pending deferrable job under the job lock, needs none.
struct Choice {
  Seconds begin = 0;
  double cost_now = 0, cost_planned = 0;
};

Choice choose_start(const EnergyConfig& config, const StartRequest& request) {
  const Schedule& signal = config.signal();
  StartRequest r = request;
  r.run = std::max<Seconds>(request.run, 1);
  Choice c;
  c.begin = r.now;
  c.cost_now = cost_of(signal, r.watts, r.now, r.now + r.run);
  c.cost_planned = c.cost_now;
  if (!config.defers() || r.watts <= 0 || r.deadline <= r.now) return c;
  c.begin = cheapest_window_start(signal, r);
  if (c.begin == r.now) return c;
  c.cost_planned = cost_of(signal, r.watts, c.begin, c.begin + r.run);
  // Least cost keeps that start only for a real saving over the run: a window cheaper where it opens may not be
  // cheaper over a run that goes on into the peak after it.
  if (config.rule == Rule::kLeastCost && !(c.cost_planned < c.cost_now * (1 - config.min_saving))) {
    c.begin = r.now;
    c.cost_planned = c.cost_now;
  }
  return c;
}

}  // namespace

StartPlan plan_start(const EnergyConfig& config, const StartRequest& request) {
  const Choice c = choose_start(config, request);
  StartPlan plan;
  plan.begin = c.begin;
  plan.cost_now = c.cost_now;
  plan.cost_planned = c.cost_planned;
  plan.deferred = c.begin != request.now;
  if (!plan.deferred) return plan;
  const Schedule& signal = config.signal();
  const std::string unit = config.signal_unit();
  plan.reason = fmt::format(
      "deferred to {} ({:.3g} {}/kWh there, {:.3g} now): its run costs about {:.3g} {} instead of {:.3g}; it may wait "
      "until {}",
      utc_text(c.begin), signal.at(c.begin), unit, signal.at(request.now), c.cost_planned, unit, c.cost_now,
      utc_text(request.deadline));
  return plan;
}

Rank rank_now(const EnergyConfig& config, const StartRequest& request) {
  if (config.rule != Rule::kLeastCost || !config.defers() || request.watts <= 0) return Rank::kPolicy;
  if (choose_start(config, request).begin != request.now) return Rank::kLast;
  const Schedule& signal = config.signal();
  const Seconds run = std::max<Seconds>(request.run, 1);
  const double run_mean = signal.integral(request.now, request.now + run) / static_cast<double>(run);
  const double day_mean = signal.integral(request.now, request.now + 86400) / 86400.0;
  if (run_mean > (1 - config.min_saving) * day_mean) return Rank::kPolicy;
  // First only for a run that ends inside the cheap window: longer ones would take the nodes into the expensive
  // hours after it, ahead of work that is not deferrable (chosen on the tuning workload, docs/energy.md).
  const double price = signal.at(request.now);
  Seconds window_end = signal.next_change(request.now);
  while (window_end < request.now + 86400 && signal.at(window_end) <= price)
    window_end = signal.next_change(window_end);
  return request.now + run <= window_end ? Rank::kFirst : Rank::kPolicy;
}

double ranked_score(Rank rank, double policy_score) {
  switch (rank) {
    case Rank::kLast:
      return -std::numeric_limits<double>::infinity();
    case Rank::kFirst:
      return std::numeric_limits<double>::infinity();
    case Rank::kPolicy:
      break;
  }
  return policy_score;
}

}  // namespace rlsched::energy
