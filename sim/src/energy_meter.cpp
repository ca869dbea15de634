// The EnergyMeter: each node's draw is constant between the events that touch it, so it is integrated lazily, node
// by node, whenever one of its jobs starts or stops (and at the end).
#include <algorithm>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "rlsched/sim/energy.h"

namespace rlsched::sim {

EnergyFigures& EnergyFigures::operator+=(const EnergyFigures& other) {
  kwh += other.kwh;
  cost += other.cost;
  co2_g += other.co2_g;
  return *this;
}

EnergyFigures EnergyReport::total() const {
  EnergyFigures sum = busy;
  sum += idle;
  sum += suspended;
  return sum;
}

void EnergyMeter::Spread::add(Seconds origin, Seconds step, Seconds from, Seconds to, double rate) {
  if (to <= from || rate == 0) return;
  const auto first = static_cast<std::size_t>((from - origin) / step);
  const auto last = static_cast<std::size_t>((to - origin) / step);  // holds `to`, maybe at its very start
  if (partial_.size() < last + 2) {
    partial_.resize(last + 2, 0.0);
    rate_change_.resize(last + 2, 0.0);
  }
  if (first == last) {
    partial_[first] += rate * static_cast<double>(to - from);
    return;
  }
  partial_[first] += rate * static_cast<double>(origin + static_cast<Seconds>(first + 1) * step - from);
  partial_[last] += rate * static_cast<double>(to - (origin + static_cast<Seconds>(last) * step));
  rate_change_[first + 1] += rate;  // the whole steps between
  rate_change_[last] -= rate;
}

std::vector<double> EnergyMeter::Spread::totals(Seconds step) const {
  std::vector<double> out(partial_.size());
  double rate = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    rate += rate_change_[i];
    out[i] = partial_[i] + rate * static_cast<double>(step);
  }
  return out;
}

EnergyMeter::EnergyMeter(const Cluster& cluster, const std::vector<Job>& jobs, const energy::EnergyConfig& config,
                         Seconds series_step)
    : cluster_(cluster), jobs_(jobs), config_(config), step_(std::max<Seconds>(series_step, 1)) {
  nodes_.resize(cluster.nodes.size());
  for (std::size_t n = 0; n < cluster.nodes.size(); ++n)
    for (const GresCount& g : cluster.nodes[n].gres) {
      nodes_[n].devices.push_back(Device{g.type, g.count, config.power.find_accelerator(g.type)});
      devices_ += g.count;
      if (!g.type.empty() && config.power.find_accelerator(g.type)) report_.accelerators[g.type];
    }
  runs_.resize(jobs.size());
  report_.jobs.resize(jobs.size());
  report_.currency = config.currency;
  report_.series_step = step_;
}

void EnergyMeter::meter(EnergyFigures& figures, double watts, Seconds from, Seconds to) const {
  if (to <= from || watts == 0) return;
  figures.kwh += watts / 1000.0 * static_cast<double>(to - from) / 3600.0;
  figures.cost += energy::cost_of(config_.price, watts, from, to);
  figures.co2_g += energy::cost_of(config_.carbon, watts, from, to);
}

void EnergyMeter::powered(NodeState& node, Seconds from, Seconds to) {
  double watts = config_.power.node.idle_w + node.host_w;
  meter(report_.idle, config_.power.node.idle_w, from, to);
  meter(report_.busy, node.host_w, from, to);
  int busy = 0;
  for (const Device& d : node.devices) {
    busy += d.busy;
    if (d.power == nullptr) continue;
    const double idle_w = d.count * d.power->idle_w;
    watts += idle_w + d.busy_w;
    meter(report_.idle, idle_w, from, to);
    meter(report_.busy, d.busy_w, from, to);
    if (d.type.empty()) continue;
    AcceleratorEnergy& type = report_.accelerators[d.type];
    meter(type.idle, idle_w, from, to);
    meter(type.busy, d.busy_w, from, to);
  }
  watts_.add(origin_, step_, from, to, watts);
  busy_devices_.add(origin_, step_, from, to, busy);
}

void EnergyMeter::settle(int n, Seconds t) {
  NodeState& node = nodes_[static_cast<std::size_t>(n)];
  if (t <= node.since) return;
  Seconds suspend = std::numeric_limits<Seconds>::max();
  if (node.jobs == 0 && cluster_.suspend_time >= 0) suspend = node.idle_since + cluster_.suspend_time;
  const Seconds up_to = std::min(t, std::max(suspend, node.since));
  powered(node, node.since, up_to);
  if (up_to < t) {
    meter(report_.suspended, config_.power.suspended_w, up_to, t);
    watts_.add(origin_, step_, up_to, t, config_.power.suspended_w);
  }
  node.since = t;
}

void EnergyMeter::start_at(Seconds t) {
  if (started_) return;
  started_ = true;
  report_.begin = last_ = t;
  origin_ = t - ((t % step_) + step_) % step_;
  for (NodeState& node : nodes_) node.since = node.idle_since = t;
}

void EnergyMeter::observe(const ScheduleEvent& event) {
  start_at(event.time);
  const Seconds t = std::max(event.time, last_);
  last_ = t;
  if (event.job < 0 || static_cast<std::size_t>(event.job) >= jobs_.size()) return;
  switch (event.kind) {
    case ScheduleEvent::Kind::kStart:
    case ScheduleEvent::Kind::kBackfillStart:
      stop(event.job, t);  // a start without an end before it (never from the simulator): close that run
      start(event);
      break;
    case ScheduleEvent::Kind::kEnd:
    case ScheduleEvent::Kind::kRequeue:
      stop(event.job, t);
      break;
    default:
      break;
  }
}

void EnergyMeter::start(const ScheduleEvent& event) {
  const Job& job = jobs_[static_cast<std::size_t>(event.job)];
  Run& run = runs_[static_cast<std::size_t>(event.job)];
  const Seconds t = last_;
  run = Run{true, t, 0, {}};
  const auto& types = cluster_.accelerator_types;
  const AcceleratorType* type =
      event.accelerator_type >= 0 && static_cast<std::size_t>(event.accelerator_type) < types.size()
          ? &types[static_cast<std::size_t>(event.accelerator_type)]
          : nullptr;
  const int nodes = static_cast<int>(event.nodes.size());
  for (int i = 0; i < nodes; ++i) {
    const int n = event.nodes[static_cast<std::size_t>(i)];
    if (n < 0 || static_cast<std::size_t>(n) >= nodes_.size()) continue;
    settle(n, t);
    NodeState& node = nodes_[static_cast<std::size_t>(n)];
    const int node_cpus = cluster_.nodes[static_cast<std::size_t>(n)].cpus;
    Share share;
    share.node = n;
    share.count = job.accel.count / nodes + (i < job.accel.count % nodes ? 1 : 0);
    const int cpus = job.cpus / nodes + (i < job.cpus % nodes ? 1 : 0);
    share.host_w = config_.power.job_watts("", 0, cpus, node_cpus);
    if (share.count > 0) {
      for (std::size_t d = 0; d < node.devices.size() && share.device < 0; ++d) {
        const std::string& name = cluster_.nodes[static_cast<std::size_t>(n)].gres[d].name;
        const bool same_name = job.accel.name.empty() || name == job.accel.name;
        const bool same_type = type == nullptr || node.devices[d].type == type->name;
        if (same_name && same_type) share.device = static_cast<int>(d);
      }
      if (share.device >= 0) {
        Device& device = node.devices[static_cast<std::size_t>(share.device)];
        share.device_w = config_.power.job_watts(device.type, share.count, 0, node_cpus);
        device.busy += share.count;
        device.busy_w += share.device_w;
      }
    }
    node.host_w += share.host_w;
    ++node.jobs;
    run.watts += share.host_w + share.device_w;
    run.shares.push_back(share);
  }
}

void EnergyMeter::stop(int job, Seconds t) {
  Run& run = runs_[static_cast<std::size_t>(job)];
  if (!run.active) return;
  meter(report_.jobs[static_cast<std::size_t>(job)], run.watts, run.start, t);
  for (const Share& share : run.shares) {
    settle(share.node, t);
    NodeState& node = nodes_[static_cast<std::size_t>(share.node)];
    node.host_w -= share.host_w;
    if (share.device >= 0) {
      Device& device = node.devices[static_cast<std::size_t>(share.device)];
      device.busy -= share.count;
      device.busy_w -= share.device_w;
    }
    if (--node.jobs == 0) {
      node.idle_since = t;
      node.host_w = 0;  // no drift from the sums
      for (Device& d : node.devices) d.busy_w = 0;
    }
  }
  run.active = false;
}

EnergyReport EnergyMeter::finish(Seconds end) {
  if (!started_) return report_;
  end = std::max(end, last_);
  for (std::size_t j = 0; j < runs_.size(); ++j) stop(static_cast<int>(j), end);
  for (std::size_t n = 0; n < nodes_.size(); ++n) settle(static_cast<int>(n), end);
  report_.end = end;
  const std::vector<double> energy = watts_.totals(step_);
  const std::vector<double> busy = busy_devices_.totals(step_);
  for (Seconds s = origin_; s < end; s += step_) {
    const auto i = static_cast<std::size_t>((s - origin_) / step_);
    const Seconds from = std::max(s, report_.begin), to = std::min(s + step_, end);
    const auto span = static_cast<double>(std::max<Seconds>(to - from, 1));
    EnergySample sample;
    sample.start = s;
    sample.price = config_.price.integral(from, to) / span;
    sample.carbon = config_.carbon.integral(from, to) / span;
    sample.watts = i < energy.size() ? energy[i] / span : 0;
    sample.busy_share = devices_ > 0 && i < busy.size() ? busy[i] / (span * devices_) : 0;
    report_.series.push_back(sample);
  }
  return report_;
}

void split_by_deferral(EnergyReport& report, const std::vector<Job>& jobs, const std::vector<JobOutcome>& outcomes,
                       const energy::EnergyConfig& config) {
  report.deferrable = EnergyGroup{};
  report.other = EnergyGroup{};
  double waited[2] = {0, 0};
  std::size_t started[2] = {0, 0};
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const bool deferrable = config.max_deferral_for(jobs[j].qos, jobs[j].job_class).has_value();
    EnergyGroup& group = deferrable ? report.deferrable : report.other;
    ++group.jobs;
    if (j < report.jobs.size()) group.energy += report.jobs[j];
    if (j < outcomes.size() && outcomes[j].start >= 0) {
      waited[deferrable] += static_cast<double>(outcomes[j].wait());
      ++started[deferrable];
    }
  }
  report.deferrable.average_wait = started[1] > 0 ? waited[1] / static_cast<double>(started[1]) : 0;
  report.other.average_wait = started[0] > 0 ? waited[0] / static_cast<double>(started[0]) : 0;
}

Result<energy::Rule> parse_energy_rule(const std::string& text) {
  for (const energy::Rule rule : {energy::Rule::kNone, energy::Rule::kCheapestWindow, energy::Rule::kLeastCost})
    if (text == energy::to_string(rule)) return rule;
  return Status::InvalidInput(fmt::format("unknown energy rule '{}' (known: none, cheapest-window, least-cost)", text));
}

std::size_t mark_deferrable(std::vector<Job>& jobs, double share, std::uint64_t seed, const std::string& qos,
                            const std::string& skip_qos, Seconds max_limit) {
  std::mt19937_64 rng(seed ^ 0x5851f42d4c957f2dULL);  // independent of --urgent's draw with the same seed
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::size_t marked = 0;
  for (Job& job : jobs) {
    const double draw = unit(rng);
    if (draw >= share || (!skip_qos.empty() && job.qos == skip_qos)) continue;
    if (max_limit > 0 && job.time_limit > max_limit) continue;
    job.qos = qos;
    ++marked;
  }
  return marked;
}

}  // namespace rlsched::sim
