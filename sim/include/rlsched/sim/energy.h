// What a simulated run drew from the grid, what it cost and what it emitted: the EnergyMeter follows the
// simulator's events and integrates the cluster's draw (energy::PowerModel) exactly between them.
//
// The model, node by node (docs/energy.md):
//  - a powered node draws its host's idle power and every accelerator's idle power: the *idle* energy;
//  - each job running on it adds energy::PowerModel::job_watts of what it holds there (its accelerators at busy
//    minus idle power, its CPUs' share of the host's busy minus idle power): the *busy* energy, and the job's own;
//  - a node without a job for the cluster's SuspendTime (Cluster::suspend_time; -1: never) is suspended by
//    Slurm's power saving and draws PowerModel::suspended_w in all until a job starts on it. No resume delay is
//    modelled: the job starts at once, as if the node had been up;
//  - a job's accelerators and CPUs are split evenly over its nodes (the first nodes take the remainder);
//  - a job draws from its start (kStart, kBackfillStart) to its kEnd or kRequeue: a preemption victim draws through
//    its grace, and every run of a requeued job counts, since that energy was spent;
//  - failed nodes are not modelled apart: a node down draws as an idle one.
// Busy + idle + suspended is the cluster's whole draw over [start, end of the run): start is start_at's time (the
// first submit, under evaluate_policy) or else the first event. Cost and carbon are the
// draw times the price and carbon schedules (energy::cost_of), integrated exactly, not sampled.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/energy.h"
#include "rlsched/job.h"
#include "rlsched/sim/outcome.h"
#include "rlsched/sim/simulator.h"
#include "rlsched/status.h"

namespace rlsched::sim {

/// Energy, its cost (in EnergyConfig::currency) and its emissions.
struct EnergyFigures {
  double kwh = 0;
  double cost = 0;
  double co2_g = 0;  ///< grams of CO2 (0 without a carbon schedule)

  /// Average price paid per kWh (0 when no energy).
  double price_per_kwh() const { return kwh > 0 ? cost / kwh : 0; }
  EnergyFigures& operator+=(const EnergyFigures& other);
};

/// One accelerator type's devices over the run.
struct AcceleratorEnergy {
  EnergyFigures busy;  ///< what jobs added on devices of this type (busy minus idle power)
  EnergyFigures idle;  ///< every powered device of this type at its idle power
};

/// One step of the time series for plots: averages over [start, start + EnergyReport::series_step) clipped to the
/// run.
struct EnergySample {
  Seconds start = 0;
  double price = 0;       ///< currency per kWh
  double carbon = 0;      ///< gCO2 per kWh
  double watts = 0;       ///< the cluster's draw
  double busy_share = 0;  ///< share of the cluster's accelerators held by jobs (0..1)
};

/// A group of jobs (deferrable or not): their own energy and how long they waited.
struct EnergyGroup {
  std::size_t jobs = 0;
  EnergyFigures energy;
  double average_wait = 0;  ///< seconds from submit to the final start, over the jobs that started
};

struct EnergyReport {
  Seconds begin = 0;  ///< where metering started (EnergyMeter::start_at, else the first event)
  Seconds end = 0;    ///< where the run was closed
  std::string currency;
  std::vector<EnergyFigures> jobs;  ///< per simulated job (same order), over all its runs
  /// By type name: the cluster's typed GRES that the power model lists (the others draw nothing).
  std::map<std::string, AcceleratorEnergy> accelerators;
  EnergyFigures busy;       ///< what jobs drew (the sum of `jobs`)
  EnergyFigures idle;       ///< powered nodes' hosts and accelerators at idle power
  EnergyFigures suspended;  ///< suspended nodes
  Seconds series_step = 3600;
  std::vector<EnergySample> series;
  /// The rule that deferred jobs in this run (SimConfig::energy's; kNone without), filled by evaluate_policy.
  energy::Rule deferral = energy::Rule::kNone;
  /// Filled by split_by_deferral: jobs energy::EnergyConfig::deferrable lets wait, and all others.
  EnergyGroup deferrable;
  EnergyGroup other;

  EnergyFigures total() const;
};

/// Follows the simulator's events (pass observe as SimConfig::observer) and meters the cluster. `cluster`, `jobs`
/// and `config` must outlive it; `jobs` is the simulated job list the events' indices refer to.
class EnergyMeter {
 public:
  EnergyMeter(const Cluster& cluster, const std::vector<Job>& jobs, const energy::EnergyConfig& config,
              Seconds series_step = 3600);

  /// Starts metering at `t` (before the first event; later calls and calls after an event are ignored): the idle
  /// cluster counts from there, so that runs whose first start differs (deferral) are metered alike.
  void start_at(Seconds t);
  void observe(const ScheduleEvent& event);
  /// Closes the run at `end` (or at the last event, whichever is later): jobs still running stop drawing there.
  EnergyReport finish(Seconds end);

 private:
  struct Device {  // one GRES entry of a node
    std::string type;
    int count = 0;
    const energy::DevicePower* power = nullptr;
    int busy = 0;
    double busy_w = 0;  // what jobs add on these devices
  };
  struct NodeState {
    Seconds since = 0;       // metered up to here
    Seconds idle_since = 0;  // when its last job left (jobs == 0)
    int jobs = 0;
    double host_w = 0;  // what jobs add on the host
    std::vector<Device> devices;
  };
  struct Share {  // what one run holds on one node
    int node = 0;
    int device = -1;  // index into NodeState::devices
    int count = 0;
    double host_w = 0;
    double device_w = 0;
  };
  struct Run {
    bool active = false;
    Seconds start = 0;
    double watts = 0;
    std::vector<Share> shares;
  };
  /// Adds `watts` over [from, to) to the series (power and busy device-seconds) in O(1).
  class Spread {
   public:
    void add(Seconds origin, Seconds step, Seconds from, Seconds to, double rate);
    std::vector<double> totals(Seconds step) const;

   private:
    std::vector<double> partial_, rate_change_;
  };

  void start(const ScheduleEvent& event);
  void stop(int job, Seconds t);
  void settle(int node, Seconds t);
  void meter(EnergyFigures& figures, double watts, Seconds from, Seconds to) const;
  void powered(NodeState& node, Seconds from, Seconds to);

  const Cluster& cluster_;
  const std::vector<Job>& jobs_;
  const energy::EnergyConfig& config_;
  Seconds step_;
  bool started_ = false;
  Seconds origin_ = 0;  // the series' first step
  Seconds last_ = 0;
  std::vector<NodeState> nodes_;
  std::vector<Run> runs_;
  EnergyReport report_;
  Spread watts_, busy_devices_;
  int devices_ = 0;  // accelerators in the cluster
};

/// Fills report.deferrable and report.other: each job's energy and wait goes to the deferrable group when
/// config.max_deferral_for(qos, class) names one for it, else to the other. `outcomes` are the simulation's, one per
/// job.
void split_by_deferral(EnergyReport& report, const std::vector<Job>& jobs, const std::vector<JobOutcome>& outcomes,
                       const energy::EnergyConfig& config);

/// "none", "cheapest-window", "least-cost" (energy::to_string's words).
Result<energy::Rule> parse_energy_rule(const std::string& text);

/// Deferrable work for a study: each job not of QOS `skip_qos` (and, when max_limit > 0, whose time limit is at
/// most max_limit: exploratory runs are the short ones) gets QOS `qos` with probability `share`, drawn with `seed`
/// (one draw per job in list order, so a job's fate does not depend on the others). \return how many.
std::size_t mark_deferrable(std::vector<Job>& jobs, double share, std::uint64_t seed, const std::string& qos,
                            const std::string& skip_qos, Seconds max_limit = 0);

}  // namespace rlsched::sim
