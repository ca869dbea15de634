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
