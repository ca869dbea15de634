// Feature schema v2: what a learned policy sees of one pending job. One definition shared by the trainer, the
// simulator and the Slurm plugin, so a policy behaves the same wherever it runs.
//
// Every feature is a float computed from PendingJob and ScoringContext and normalised to roughly [0, 1]
// (see kSchema for each one's unit and formula). A model file lists the features it was trained on by name; the
// loader maps those names onto this schema and refuses names it cannot produce. v2 is v1 (21 features, unchanged)
// and two on the run time the job's user's ended jobs predict (PendingJob::predicted_run_time), so a v1 model
// reads the same values under v2 and loads as it is.
#pragma once

#include <string>
#include <vector>

#include "rlsched/scorer.h"
#include "rlsched/status.h"

namespace rlsched::features {

inline constexpr int kSchemaVersion = 2;
/// The oldest schema whose models this build loads (each version keeps the features of those before it).
inline constexpr int kOldestSchemaVersion = 1;
inline constexpr std::size_t kFeatureCount = 23;
/// v1's features: the schema's first columns (v2 adds its two on the predicted run time after them).
inline constexpr std::size_t kV1FeatureCount = 21;

struct FeatureSpec {
  const char* name;
  const char* unit;           ///< of the raw quantity
  const char* normalisation;  ///< formula giving the feature value from the raw quantity
};

/// The schema, in canonical order.
const std::vector<FeatureSpec>& schema();
std::vector<std::string> schema_names();

/// Writes all schema features of one job, in canonical order, to row[0 .. schema().size()).
void extract_all(const PendingJob& job, const ScoringContext& context, float* row);

/// Whether a model over these features needs predicted run times (a feature on PendingJob::predicted_run_time).
bool reads_predicted_run_time(const std::vector<std::string>& names);

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
