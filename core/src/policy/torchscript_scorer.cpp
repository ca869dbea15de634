#include "rlsched/policy/torchscript_scorer.h"

#include <algorithm>
#include <limits>

namespace rlsched::policy {

TorchScriptScorer::TorchScriptScorer(std::shared_ptr<const Model> model)
    : model_(std::move(model)), name_(std::string(kModelSpecPrefix) + model_->path()) {}

bool TorchScriptScorer::reads_predicted_run_time() const {
  return features::reads_predicted_run_time(model_->feature_map().names());
}

void TorchScriptScorer::score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
                              std::vector<double>& scores) const {
  const ScoreOutcome outcome = model_->score(context, jobs, scores);
  if (outcome.nonfinite_replaced > 0)
    nonfinite_replaced_.fetch_add(outcome.nonfinite_replaced, std::memory_order_relaxed);
  if (!outcome.status.ok()) {
    forward_failures_.fetch_add(1, std::memory_order_relaxed);
    std::fill_n(scores.begin(), jobs.size(), std::numeric_limits<double>::lowest());
  }
}

Result<std::unique_ptr<Scorer>> make_policy_scorer(std::string_view spec, const ScorerSettings& settings) {
  if (spec.substr(0, kModelSpecPrefix.size()) != kModelSpecPrefix) return make_scorer(spec, settings);
  const std::string path(spec.substr(kModelSpecPrefix.size()));
  if (path.empty()) return Status::InvalidInput("policy 'model:' needs a path: model:PATH");
  auto model = load_model(path);
  if (!model.ok()) return model.status();
  return std::unique_ptr<Scorer>(new TorchScriptScorer(std::move(*model)));
}

}  // namespace rlsched::policy
