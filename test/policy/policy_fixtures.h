// Model files for the policy tests, generated at run time in a temporary folder: good MLPs with known weights, a
// reference forward pass in plain C++, and one bad file per refusal the loader makes. Torch-free, so that only
// policy_fixtures.cpp and model_test.cpp pay for libtorch headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rlsched/scorer.h"

namespace rlsched::policy::testing {

/// A fresh folder under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// MLP weights as plain arrays: what the reference loop computes with and what build_mlp_module receives.
struct PlainMlp {
  struct Layer {
    int in = 0;
    int out = 0;
    std::vector<float> weight;  ///< out x in, row-major
    std::vector<float> bias;    ///< out
  };
  std::vector<std::string> features;
  std::vector<float> mean;
  std::vector<float> std;
  std::vector<Layer> layers;

  /// Uniform(-1/sqrt(in), 1/sqrt(in)) weights; mean and std from `seed` too, so normalisation is exercised.
  static PlainMlp Random(std::vector<std::string> features, const std::vector<int>& hidden, std::uint64_t seed);
  /// A 6-4-2-1 network over a permuted subset of the schema whose weights, normalisation and (with dyadic_jobs())
  /// inputs are small dyadic rationals: every sum is exact in float32 whatever the order, so libtorch's result must
  /// equal the reference loop's bit for bit. Some hidden units are negative, so ReLU matters.
  static PlainMlp Dyadic();
};

/// Jobs whose Dyadic() features (qos, age, fits_now, fairshare, checkpointable, partition) are dyadic rationals.
std::vector<PendingJob> dyadic_jobs();

/// Reference forward pass: FeatureMap::extract, then ((x - mean) / std) and the layers in double.
std::vector<double> reference_scores(const PlainMlp& mlp, const std::vector<PendingJob>& jobs,
                                     const ScoringContext& context);

/// Varied pending jobs (reproducible from seed) and a matching cluster context.
std::vector<PendingJob> random_jobs(std::size_t n, std::uint64_t seed);
ScoringContext test_context(int pending_jobs);

/// Builds the MLP (build_mlp_module) and saves it (save_model). REQUIREs success.
void write_model(const std::string& path, const PlainMlp& mlp);

/// One per refusal of load_model; see write_bad_model.
enum class BadModel {
  kEmpty,
  kNotZip,
  kCorruptDirectory,  ///< bytes flipped in the zip central directory
  kCorruptPickle,     ///< bytes flipped inside data.pkl
  kTruncated,
  kNoMetadata,
  kInvalidJson,
  kWrongSchema,
  kUnknownFeature,
  kWeightBytesFlipped,  ///< one bit of a weight flipped: loads silently in libtorch, caught by weights_sha256
  kOutputN1,
  kOutputN2,
  kOutputFloat64,
  kNaNWeight,
  kForwardThrows,
};

/// Writes a file that load_model must refuse for `kind`'s reason (and only that reason).
void write_bad_model(const std::string& path, BadModel kind);

/// A model over the canonical schema whose forward is `forward_source` (TorchScript; `self.w` is a [21, 1] float32
/// parameter of 1/21), saved with valid metadata and without save_model's verification.
void write_scripted_model(const std::string& path, const std::string& forward_source);

/// \return true when torch::jit::load accepts the file (whatever rlsched's loader says).
bool libtorch_loads(const std::string& path);

std::string read_bytes(const std::string& path);
void write_bytes(const std::string& path, const std::string& bytes);
/// Writes bytes to a temporary file beside `path` and renames it over `path` (a new inode, as an admin's mv does).
void replace_file(const std::string& path, const std::string& bytes);

}  // namespace rlsched::policy::testing
