// A verified policy network loaded from a model file, ready to score pending jobs. Torch-free header: the simulator,
// the CLI and the Slurm plugin use models through it (the libtorch types stay behind the pimpl).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "rlsched/features.h"
#include "rlsched/policy/file_checks.h"
#include "rlsched/policy/model_metadata.h"
#include "rlsched/scorer.h"
#include "rlsched/status.h"

namespace rlsched::policy {

struct LoadOptions {
  /// Refuse a model file writable by group or others (the Slurm plugin sets this: slurmctld must not run a network
  /// that any local user could have replaced).
  bool require_private = false;
};

struct ScoreOutcome {
  Status status;                       ///< not ok when forward failed; scores are then unspecified
  std::size_t nonfinite_replaced = 0;  ///< scores that were NaN or infinite, replaced by the lowest finite double
};

class Model {
 public:
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const std::string& path() const;
  /// The version of the file that was read (hot reload compares it with the file on disk).
  const FileIdentity& file() const;
  const ModelMetadata& metadata() const;
  /// The model's input columns, mapped onto the feature schema.
  const features::FeatureMap& feature_map() const;
  /// Things worth one log line that did not stop the load, e.g. "not frozen: <why>".
  const std::vector<std::string>& notes() const;
  bool frozen() const;

  /// Scores jobs[i] into scores[i] (scores.size() >= jobs.size()): one feature extraction into a float buffer and ONE
  /// forward call for the whole batch, in inference mode on one intra-op thread. Non-finite outputs are replaced by
  /// the lowest finite double so that they rank last. Thread-safe: concurrent calls share nothing mutable.
  ScoreOutcome score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
                     std::vector<double>& scores) const;

  /// Runs forward on `rows` (row-major, n x feature_map().size(), features already extracted) into out[0..n).
  /// \return the error (one line) when forward throws or its output is not a float32 tensor of shape [n].
  Status forward(const float* rows, std::size_t n, float* out) const;

 private:
  std::unique_ptr<Impl> impl_;
};

/// Loads and verifies a model file; see docs/model-file.md for every refusal. Errors are one line starting with
/// `path`. The model is in eval mode and frozen (torch::jit::freeze) unless freezing failed (then notes() says why).
/// The first call sets libtorch to one intra-op thread for the whole process (slurmctld forks without exec, which
/// hangs with an OpenMP pool alive); a trainer that wants more threads sets them again after loading.
Result<std::shared_ptr<const Model>> load_model(const std::string& path, const LoadOptions& options = {});

/// One line when OpenBLAS runs older kernels than the CPU supports (it picks them from the CPU model, which virtual
/// CPUs often hide), naming the OPENBLAS_CORETYPE to set in the process's environment; empty otherwise.
std::string blas_performance_note();

/// The 7 varied pending jobs and context every model is run on before it is accepted (also used by tests).
std::vector<PendingJob> smoke_jobs();
ScoringContext smoke_context();

}  // namespace rlsched::policy
