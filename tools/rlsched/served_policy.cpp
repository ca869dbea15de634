#include "served_policy.h"

#include <utility>

#include <fmt/format.h>

#include "rlsched/policy/torchscript_scorer.h"
#include "rlsched/sim/predicted_run_time.h"

namespace rlsched::cli {

Result<ServedPolicy> make_served_policy(const std::string& name, const Inputs& inputs, sim::Protocol protocol) {
  const bool predicted_rule = sim::is_predicted_spec(name);
  const bool model = name.rfind("model:", 0) == 0;
  const std::string rule_name = predicted_rule ? std::string(sim::predicted_rule(name)) : name;
  auto rule = policy::make_policy_scorer(rule_name, scorer_settings(inputs));
  if (!rule.ok()) return rule.status();
  ServedPolicy served;
  const bool predicted_model = model && inputs.plugin_config.run_time == RunTimeView::kPredicted;
  if ((predicted_rule || predicted_model) && protocol != sim::Protocol::kFull)
    return Status::InvalidInput(
        fmt::format("policy '{}' runs under --protocol full only (it hears the run's job ends{})", name,
                    predicted_model ? ": rlsched.yaml says run_time: predicted" : ""));
  if (predicted_rule || predicted_model) {
    auto predicted = std::make_unique<sim::PredictedRunTimeScorer>(inputs.workload.jobs, std::move(*rule));
    served.hears = [view = predicted.get()](const sim::ScheduleEvent& e) { view->observe(e); };
    served.scorer = std::move(predicted);
  } else {
    served.scorer = std::move(*rule);
  }
  return served;
}

std::function<void(const sim::ScheduleEvent&)> also_hears(std::function<void(const sim::ScheduleEvent&)> hears,
                                                          std::function<void(const sim::ScheduleEvent&)> observer) {
  if (!hears) return observer;
  return [hears = std::move(hears), observer = std::move(observer)](const sim::ScheduleEvent& e) {
    hears(e);
    if (observer) observer(e);
  };
}

}  // namespace rlsched::cli
