// Why the policy in service ranks a pending job where it does: the inputs that pushed its score up or down relative
// to the queue. What `rlsched explain` shows under the SITE factor (docs/estimates.md).
//
// The method is per-input ablation against the queue's median: for each input of PendingJob (the policy's inputs,
// job_view::build's output), replace the job's value by the median of that input over the queue, rescore the job
// with the same scorer and context, and report score(job) - score(job with the median). Positive: the job's own
// value ranks it higher than a typical job's would. The effects are not additive for a non-linear policy (two inputs
// may act together); each one answers "what if only this were typical". Every variant of the job is scored in one
// batched call, rows independently, as the plugin scores the queue.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "rlsched/scorer.h"

namespace rlsched::attribution {

/// One input of the job, replaced by the queue's median.
struct InputEffect {
  std::string_view input;  ///< PendingJob's field name: "wait", "time_limit", "fits_now", ...
  double value = 0;        ///< the job's own value (bools as 0/1)
  double median = 0;       ///< the queue's median (rounded for integer and bool inputs)
  double delta = 0;        ///< score(job) - score(job with this input at the median); > 0: pushed it up
};

struct Attribution {
  double score = 0;         ///< the job's score
  double median_score = 0;  ///< the median score of the queue
  /// Every input, the largest |delta| first (ties: PendingJob's field order).
  std::vector<InputEffect> effects;
};

/// Explains queue[job]'s score under `scorer` in `context`. `queue` is the pending queue the median is taken over
/// (the job included); it must not be empty and `job` must index it.
Attribution explain(const Scorer& scorer, const ScoringContext& context, const std::vector<PendingJob>& queue,
                    std::size_t job);

}  // namespace rlsched::attribution
