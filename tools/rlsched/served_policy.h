// A policy of the command line as the plugins would serve it under the run's rlsched.yaml: with `run_time:
// predicted` a model ranks on predicted run times (rlsched::PredictedRunTimes), as site_factor/rlsched serves it;
// `predicted:RULE` does so under any config. Rules of thumb stay what they are, the baselines a model is judged by.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "inputs.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/evaluation.h"
#include "rlsched/sim/simulator.h"
#include "rlsched/status.h"

namespace rlsched::cli {

struct ServedPolicy {
  std::unique_ptr<Scorer> scorer;
  /// Set when the scorer must hear of the run's starts and ends (SimConfig::observer); empty otherwise.
  std::function<void(const sim::ScheduleEvent&)> hears;
};

/// `name` (a heuristic, an area rule, model:PATH or predicted:RULE) for the run of `inputs`, which must outlive it.
/// A policy that must hear the run's job ends runs under the full protocol only (InvalidInput otherwise).
Result<ServedPolicy> make_served_policy(const std::string& name, const Inputs& inputs, sim::Protocol protocol);

/// `observer` and then `hears` (when set) on every event: what SimConfig::observer becomes for a served policy.
std::function<void(const sim::ScheduleEvent&)> also_hears(std::function<void(const sim::ScheduleEvent&)> hears,
                                                          std::function<void(const sim::ScheduleEvent&)> observer);

}  // namespace rlsched::cli
