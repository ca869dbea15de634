// Model files for the plugin load tests, written through the policy runtime's own builder (C callable, so the C
// harness can make them).
#include <string>

#include "rlsched/features.h"
#include "rlsched/policy/model_builder.h"

extern "C" int rlsched_test_write_model(const char* path, unsigned seed) {
  try {
    using namespace rlsched;
    policy::MlpSpec spec = policy::MlpSpec::Random(features::schema_names(), {64, 64}, seed);
    Result<torch::jit::Module> module = policy::build_mlp_module(spec);
    if (!module.ok()) return 1;
    policy::ModelMetadata meta = policy::ModelMetadata::ForFeatures(spec.features, spec.architecture());
    meta.training = {{"data", "plugin load test"}, {"seed", seed}};
    return policy::save_model(path, *module, meta).ok() ? 0 : 1;
  } catch (...) {
    return 1;
  }
}

namespace {

/// score = the one feature `name`, through one ReLU unit (the features are >= 0): a model whose scores say exactly
/// what it was shown.
int write_one_feature_model(const char* path, const char* name, const char* data) {
  try {
    using namespace rlsched;
    policy::MlpSpec spec;
    spec.features = {name};
    spec.input_mean = torch::zeros({1});
    spec.input_std = torch::ones({1});
    spec.layers = {{torch::ones({1, 1}), torch::zeros({1})}, {torch::ones({1, 1}), torch::zeros({1})}};
    Result<torch::jit::Module> module = policy::build_mlp_module(spec);
    if (!module.ok()) return 1;
    policy::ModelMetadata meta = policy::ModelMetadata::ForFeatures(spec.features, spec.architecture());
    meta.training = {{"data", data}};
    return policy::save_model(path, *module, meta).ok() ? 0 : 1;
  } catch (...) {
    return 1;
  }
}

}  // namespace

// A model that ranks the longest time limit first (score = limit_log): a policy whose order is known exactly, the
// opposite of SJF, for tests that must see a change of model in the ranks.
extern "C" int rlsched_test_write_longest_first_model(const char* path) {
  return write_one_feature_model(path, "limit_log", "none: hand-built, longest time limit first");
}

// A model of feature schema v2 whose score is predicted_log, log1p(predicted run time) / log1p(7 d): longest
// predicted run time first, and its score says which run time it was shown.
extern "C" int rlsched_test_write_predicted_model(const char* path) {
  return write_one_feature_model(path, "predicted_log", "none: hand-built, longest predicted run time first");
}
