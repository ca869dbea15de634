// Per-input ablation against the queue's median (rlsched/attribution.h).
#include "rlsched/attribution.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rlsched::attribution {
namespace {

enum class Kind { kReal, kInteger, kBool };

struct Input {
  std::string_view name;
  Kind kind;
  double (*get)(const PendingJob&);
  void (*set)(PendingJob&, double);
};

// PendingJob's inputs, in its field order. submit and wait are one input: wait counts from submit (eligibility),
// so replacing the wait moves the submit with it.
#define RLSCHED_INPUT(field, kind, cast)                                         \
  Input {                                                                        \
    #field, kind, [](const PendingJob& j) { return static_cast<double>(j.field); }, \
        [](PendingJob& j, double v) { j.field = static_cast<cast>(v); }          \
  }
const Input kInputs[] = {
    RLSCHED_INPUT(wait, Kind::kInteger, Seconds),
    RLSCHED_INPUT(time_limit, Kind::kInteger, Seconds),
    RLSCHED_INPUT(cpus, Kind::kInteger, int),
    RLSCHED_INPUT(nodes, Kind::kInteger, int),
    RLSCHED_INPUT(accelerators, Kind::kInteger, int),
    RLSCHED_INPUT(restarts, Kind::kInteger, int),
    Input{"checkpointable", Kind::kBool, [](const PendingJob& j) { return j.checkpointable ? 1.0 : 0.0; },
          [](PendingJob& j, double v) { j.checkpointable = v > 0.5; }},
    Input{"fits_now", Kind::kBool, [](const PendingJob& j) { return j.fits_now ? 1.0 : 0.0; },
          [](PendingJob& j, double v) { j.fits_now = v > 0.5; }},
    RLSCHED_INPUT(accel_speed, Kind::kReal, double),
    RLSCHED_INPUT(idle_accel_share, Kind::kReal, double),
    RLSCHED_INPUT(age_factor, Kind::kReal, double),
    RLSCHED_INPUT(fairshare_factor, Kind::kReal, double),
    RLSCHED_INPUT(job_size_factor, Kind::kReal, double),
    RLSCHED_INPUT(partition_factor, Kind::kReal, double),
    RLSCHED_INPUT(qos_factor, Kind::kReal, double),
};
#undef RLSCHED_INPUT

double median(std::vector<double> values) {
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2) return values[mid];
  const double upper = values[mid];
  return (*std::max_element(values.begin(), values.begin() + mid) + upper) / 2;
}

double median_of(const Input& input, const std::vector<PendingJob>& queue) {
  std::vector<double> values;
  values.reserve(queue.size());
  for (const PendingJob& j : queue) values.push_back(input.get(j));
  const double m = median(std::move(values));
  // An integer or yes/no input takes an integer median (halves round up: a queue split evenly counts as "yes").
  return input.kind == Kind::kReal ? m : std::floor(m + 0.5);
}

}  // namespace

Attribution explain(const Scorer& scorer, const ScoringContext& context, const std::vector<PendingJob>& queue,
                    std::size_t job) {
  if (job >= queue.size()) throw std::out_of_range("attribution::explain: job is not in the queue");
  const std::size_t n_inputs = std::size(kInputs);
  // Row 0: the job itself; row 1 + i: the job with input i at the queue's median.
  std::vector<PendingJob> variants(1 + n_inputs, queue[job]);
  std::vector<double> medians(n_inputs);
  for (std::size_t i = 0; i < n_inputs; ++i) {
    medians[i] = median_of(kInputs[i], queue);
    PendingJob& v = variants[1 + i];
    kInputs[i].set(v, medians[i]);
    if (kInputs[i].name == "wait") v.submit = context.now - v.wait;
  }
  std::vector<double> scores(variants.size(), 0.0);
  scorer.score(context, variants, scores);

  Attribution out;
  out.score = scores[0];
  std::vector<double> queue_scores(queue.size(), 0.0);
  scorer.score(context, queue, queue_scores);
  out.median_score = median(std::move(queue_scores));
  for (std::size_t i = 0; i < n_inputs; ++i)
    out.effects.push_back({kInputs[i].name, kInputs[i].get(queue[job]), medians[i], scores[0] - scores[1 + i]});
  std::stable_sort(out.effects.begin(), out.effects.end(),
                   [](const InputEffect& a, const InputEffect& b) { return std::abs(a.delta) > std::abs(b.delta); });
  return out;
}

}  // namespace rlsched::attribution
