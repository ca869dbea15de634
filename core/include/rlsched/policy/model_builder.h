// Building and saving policy networks from C++ (the trainer's side of the model file contract). This is the one
// policy header that includes libtorch; the simulator, the CLI and the Slurm plugin include only the torch-free ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/script.h>

#include "rlsched/policy/model_metadata.h"
#include "rlsched/status.h"

namespace rlsched::policy {

/// One fully connected layer: y = x W^T + b.
struct MlpLayer {
  torch::Tensor weight;  ///< [out, in] float32
  torch::Tensor bias;    ///< [out] float32
};

/// A multi-layer perceptron over named schema features: forward(x[N, F]) = layers((x - input_mean) / input_std),
/// ReLU between layers, squeezed to [N].
struct MlpSpec {
  std::vector<std::string> features;  ///< input columns in order (names from features::schema())
  torch::Tensor input_mean;           ///< [F] float32
  torch::Tensor input_std;            ///< [F] float32, every entry > 0
  std::vector<MlpLayer> layers;       ///< layers[0].weight is [H1, F]; the last layer has out = 1

  /// Random weights (Kaiming-uniform like torch.nn.Linear, from `seed`), mean 0 and std 1: a starting point for
  /// training and a model for tests and benchmarks. hidden = {32, 32} gives F-32-32-1.
  static MlpSpec Random(std::vector<std::string> features, const std::vector<int>& hidden, std::uint64_t seed);

  /// "mlp 21-32-32-1 relu": the text for ModelMetadata::architecture.
  std::string architecture() const;
};

/// Builds a TorchScript module from `spec` in C++ alone (no Python): the tensors are copied into parameters named
/// fc<i>_weight / fc<i>_bias (trainable: requires_grad) and buffers input_mean / input_std, and forward is
/// generated TorchScript source with the layers unrolled. The module is in training mode, as torch.nn modules start.
/// \return InvalidInput naming the first tensor whose shape or dtype does not fit.
Result<torch::jit::Module> build_mlp_module(const MlpSpec& spec);

/// Lower-case hex sha256 over every parameter and buffer of `module` (recursively), sorted by name; for each:
/// name, dtype, shape and the raw little-endian bytes (docs/model-file.md gives the exact encoding).
std::string weights_sha256(const torch::jit::Module& module);

/// Writes `module` with `metadata` as a model file at `path`. Fills metadata.weights_sha256, `created` when empty and
/// empty feature normalisations from the schema. Writes a temporary file in the same directory, verifies it with
/// load_model (so a file that would be refused is never written), fsyncs it and renames it over `path`: a reader (the
/// plugin's hot reload) never sees a half-written or unloadable model. Mode 0644.
/// \return InvalidInput "refusing to save PATH: <why load_model refuses it>", IoError when it cannot be written.
Status save_model(const std::string& path, torch::jit::Module module, ModelMetadata metadata);

}  // namespace rlsched::policy
