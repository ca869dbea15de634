// Episodes: one job sequence simulated with the policy choosing each queue head, recorded for PPO.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "plain_mlp.h"
#include "rlsched/features.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/rlscheduler_compat.h"
#include "rlsched/train/trainer.h"

namespace rlsched::train {

/// A decision the policy had a real choice in (two or more visible jobs).
struct Decision {
  std::uint32_t first_row;  ///< of its visible jobs in Episode::features
  std::uint32_t rows;
  std::uint32_t action;     ///< index among its rows
  float logp;               ///< log-probability of `action` under the policy that chose it
  float remaining;          ///< share of the sequence's jobs not yet started (the value head needs to know)
};

struct Episode {
  std::vector<float> features;   ///< visible jobs of every decision, row-major, kFeatureCount per row
  std::vector<Decision> decisions;
  std::vector<float> rewards;    ///< per decision, normalised by the reference cost
  double cost = 0;               ///< the policy's cost on the sequence (objective's unit)
  double reference_cost = 0;     ///< the reference heuristic's cost on the same sequence
  double cost_ratio() const { return reference_cost > 0 ? cost / reference_cost : 1.0; }
};

/// One job sequence of one trace, run under RLScheduler's simulator semantics.
struct Sequence {
  const sim::CompatWorkload* workload = nullptr;
  std::size_t first = 0;
  std::size_t length = 0;
};

/// How jobs are charged for the objective. Utilization is charged as a whole at the end (see episode_cost).
class CostModel {
 public:
  explicit CostModel(const TrainConfig& config)
      : objective_(config.objective),
        penalty_(config.starvation_penalty),
        threshold_(static_cast<double>(std::max<Seconds>(config.starvation_threshold, 1))) {}

  double job_cost(Seconds wait, Seconds run) const;
  /// Cost of a whole sequence from its outcomes (average job cost, or makespan for utilization).
  double sequence_cost(const std::vector<sim::JobOutcome>& outcomes) const;
  bool per_job() const { return objective_ != Objective::kUtilization; }

 private:
  Objective objective_;
  double penalty_;
  double threshold_;
};

/// The reference heuristic's cost on a sequence.
double reference_cost(const Sequence& sequence, const Scorer& reference, bool backfill, const CostModel& cost);

/// Runs the policy on a sequence. temperature 0: the highest score (deployment); otherwise samples from
/// softmax(score / temperature) and records decisions and rewards into the episode. visible: how many of the oldest
/// queued jobs it chooses among (0 = all).
Episode run_policy(const Sequence& sequence, const PlainMlp& policy, bool backfill, double temperature,
                   std::size_t visible, const CostModel& cost, double reference, std::mt19937_64& rng);

/// The deployed behaviour: always the highest-scoring job (first in FCFS order among equals), nothing recorded.
class GreedyPolicy final : public sim::DecisionMaker {
 public:
  explicit GreedyPolicy(const PlainMlp& policy) : policy_(policy) {}
  std::size_t choose(const ScoringContext& context, const std::vector<PendingJob>& queue) override;
  bool reads_predicted_run_time() const override { return policy_.reads_predicted_run_time; }

 private:
  const PlainMlp& policy_;
  std::vector<float> rows_, logits_, scratch_;
};

/// The network as a Scorer (one instance per thread: it keeps its buffers), for evaluations in the Slurm model.
class PlainMlpScorer final : public Scorer {
 public:
  explicit PlainMlpScorer(const PlainMlp& policy) : policy_(policy) {}
  std::string_view name() const override { return "learned"; }
  bool is_static() const override { return false; }
  bool reads_predicted_run_time() const override { return policy_.reads_predicted_run_time; }
  void score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
             std::vector<double>& out) const override;

 private:
  const PlainMlp& policy_;
  mutable std::vector<float> rows_, logits_, scratch_;
};

/// Runs the reference heuristic and records, for imitation, which visible job it chose at each decision; with
/// `predicted`, the rows recorded have each job's predicted run time (TrainConfig::predicted_run_times).
Episode run_imitation(const Sequence& sequence, const Scorer& reference, bool backfill, std::size_t visible,
                      bool predicted = false);

}  // namespace rlsched::train
