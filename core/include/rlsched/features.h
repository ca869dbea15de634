// Feature schema v1: what a learned policy sees of one pending job. One definition shared by the trainer, the
// simulator and the Slurm plugin, so a policy behaves the same wherever it runs.
//
// Every feature is a float computed from PendingJob and ScoringContext and normalised to roughly [0, 1]
// (see kSchemaV1 for each one's unit and formula). A model file lists the features it was trained on by name; the
// loader maps those names onto this schema and refuses names it cannot produce.
#pragma once

#include <string>
#include <vector>

#include "rlsched/scorer.h"
#include "rlsched/status.h"

namespace rlsched::features {

inline constexpr int kSchemaVersion = 1;
inline constexpr std::size_t kFeatureCount = 21;

struct FeatureSpec {
  const char* name;
  const char* unit;           ///< of the raw quantity
  const char* normalisation;  ///< formula giving the feature value from the raw quantity
};

/// Schema v1, in canonical order.
const std::vector<FeatureSpec>& schema();
std::vector<std::string> schema_names();

/// Writes all schema features of one job, in canonical order, to row[0 .. schema().size()).
void extract_all(const PendingJob& job, const ScoringContext& context, float* row);

/// The columns a model asks for, as indices into the canonical schema.
class FeatureMap {
 public:
  /// \return InvalidInput naming the first feature this schema cannot produce, or a duplicate.
  static Result<FeatureMap> For(const std::vector<std::string>& names);
  /// All features in canonical order.
  static FeatureMap Canonical();

  std::size_t size() const { return columns_.size(); }
  const std::vector<std::string>& names() const { return names_; }

  /// Fills out[i * size() + k] with feature k of jobs[i] (row-major N x size()).
  void extract(const std::vector<PendingJob>& jobs, const ScoringContext& context, float* out) const;

 private:
  std::vector<int> columns_;
  std::vector<std::string> names_;
  bool identity_ = false;
};

}  // namespace rlsched::features
