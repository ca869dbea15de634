// Private: what a Model holds, and the libtorch helpers the loader, the builder and the scorer share.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <torch/script.h>

#include "rlsched/policy/model.h"

namespace rlsched::policy {

struct Model::Impl {
  std::string path;
  FileIdentity file;
  ModelMetadata metadata;
  features::FeatureMap feature_map;
  std::vector<std::string> notes;
  bool frozen = false;
  // libtorch's forward() is non-const, but running a method does not change the module: concurrent calls are safe.
  mutable torch::jit::Module module;
};

/// Sets libtorch to one intra-op thread, once per process and once per calling thread (at::set_num_threads only
/// reaches the OpenMP setting of the thread that calls it; other threads keep OpenMP's default of one per core).
void use_one_intra_op_thread();

/// Runs module.forward on n rows of `width` floats (inference mode, graph optimiser off) into out[0..n).
/// \return InvalidInput for output of the wrong kind ("forward returned shape [7, 1], expected [7]"), Internal with
/// libtorch's reason when forward throws; messages carry no path.
Status run_forward(torch::jit::Module& module, const float* rows, std::size_t n, std::size_t width, float* out);

/// "float32", "float64", "int64"...: dtype names as Python prints them without the "torch." prefix.
std::string dtype_name(c10::ScalarType type);

/// A libtorch error message reduced to one printable line (the interpreter's trace spans many lines; the reason is
/// on the last one).
std::string one_line(std::string_view message);

}  // namespace rlsched::policy
