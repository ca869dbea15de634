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

// A model that ranks the longest time limit first (score = limit_log, through one ReLU unit): a policy whose order is
// known exactly, the opposite of SJF, for tests that must see a change of model in the ranks.
extern "C" int rlsched_test_write_longest_first_model(const char* path) {
  try {
    using namespace rlsched;
    policy::MlpSpec spec;
    spec.features = {"limit_log"};
    spec.input_mean = torch::zeros({1});
    spec.input_std = torch::ones({1});
    spec.layers = {{torch::ones({1, 1}), torch::zeros({1})}, {torch::ones({1, 1}), torch::zeros({1})}};
    Result<torch::jit::Module> module = policy::build_mlp_module(spec);
    if (!module.ok()) return 1;
    policy::ModelMetadata meta = policy::ModelMetadata::ForFeatures(spec.features, spec.architecture());
    meta.training = {{"data", "none: hand-built, longest time limit first"}};
    return policy::save_model(path, *module, meta).ok() ? 0 : 1;
  } catch (...) {
    return 1;
  }
}
