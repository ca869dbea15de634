// Episodes in the Slurm model (TrainConfig::rollouts == kSlurm): a window of a workload's jobs simulated by
// sim::simulate on the workload's own cluster, the policy's score entering as the site factor at score_scale beside
// multifactor, exactly as the deployed model acts in slurmctld; what PPO needs is recorded through the decision hook
// (SimConfig::on_scoring).
//
// Exploration. The deployed behaviour is the policy's plain score mu(x), recomputed at every decay tick and at
// submit; the site factor is its rank share within the batch. While exploring, job j plays mu(x_jt) + sigma * e_j at
// every scoring call t, with e_j ~ N(0, 1) drawn once per job and episode (a counter-based draw from the episode's
// key and the job id), not afresh per call:
//  - a job is scored tens to thousands of times while it waits, but only its rank at the few passes where it could
//    start matters. Fresh noise per call would jitter its rank from tick to tick, so what is played is an average
//    of many independent draws (exploration washes out) while the log-likelihood sums hundreds of unrelated terms
//    (variance grows with the wait). One offset per job is a perturbed ranking that holds, what a ranking policy
//    with a different score would do, and its effect on the schedule is large enough to be measured;
//  - the recorded samples are (features x_jt, played score s_jt) with log-density log N(s_jt; mu(x_jt), sigma^2),
//    recomputable from the features alone (tested). For a fixed offset the score-function gradient of the
//    episode's return with respect to job j's shift is E[R e_j] / sigma; spreading it over the job's states gives
//    (e_j / sigma) * mean_t grad mu(x_jt), which is what PPO's surrogate over the job's samples yields when each
//    sample weighs 1 / (the job's sample count). That weight is recorded; jobs count equally, however long they
//    waited. At most `samples_per_job` of a job's calls are kept (a uniform draw): the mean stays unbiased and an
//    episode's samples stay in the thousands;
//  - episodes come in antithetic pairs on the same sequence (offsets e and -e), and every episode's advantage is
//    its return minus the mean return of the episodes on its sequence: common random numbers (same jobs, same
//    cluster) remove the sequence's difficulty from the signal, the pair removes the first-order noise of the
//    other jobs' offsets.
// Credit is episode-level: a job's offset changes other jobs' waits (raising one job delays the ones it passes),
// so charging each job only its own cost would reward every job for jumping the queue. The noise is in score units;
// a policy whose scores spread over a larger range explores less, which PPO's clipping and the imitation start keep
// in bounds.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "plain_mlp.h"
#include "rlsched/scorer.h"
#include "rlsched/sim/simulator.h"
#include "rollout.h"
#include "trace_split.h"

namespace rlsched::train {

/// A window of a trace's jobs (in the split's order) run in the Slurm model on the trace's cluster.
struct SlurmSequence {
  const TraceSplit* trace = nullptr;
  std::size_t first = 0;
  std::size_t length = 0;
  /// Jobs before `first` run ahead of the window and are not charged, so that it opens on a cluster as loaded as
  /// the trace had it then, not an empty one.
  std::size_t warmup = 0;
};

/// The warm-up's and the window's jobs as the Slurm model runs them: their real submit times, shifted so that the
/// first is at 0. The window's own jobs are the last `length`.
std::vector<Job> sequence_jobs(const SlurmSequence& sequence);

/// How scores are perturbed: job j plays mu + sign * sigma * e_j, e_j a standard normal of (key, job id).
struct Exploration {
  double sigma = 0;
  std::uint64_t key = 0;
  double sign = 1;
  std::size_t samples_per_job = 8;  ///< calls of a job recorded at most (0: all)
  bool record = true;               ///< record samples through the decision hook (the trainer: when sigma > 0)
};

/// e_j: a standard normal drawn from (key, id) alone, so the same job gets the same offset at every call.
double job_offset(std::uint64_t key, JobId id);

/// log N(played; mean, sigma^2).
double score_log_density(double played, double mean, double sigma);

/// Recorded samples of one episode: one per kept (job, scoring call).
struct ScoreEpisode {
  std::vector<float> features;     ///< row-major, kFeatureCount per sample
  std::vector<float> played;       ///< the score the job played at that call
  std::vector<float> logp;         ///< log-density of `played` under the policy that acted
  std::vector<float> weight;       ///< 1 / (kept samples of the same job)
  std::vector<std::uint32_t> job;  ///< index of the job in the simulated window
  std::size_t calls = 0;           ///< scoring calls of the episode (ticks and submits)
  std::size_t scored_rows = 0;     ///< (job, call) pairs scored, before keeping at most samples_per_job per job
  double cost = 0;
  double reference_cost = 0;
  double advantage = 0;                   ///< set by the trainer: return minus the sequence's baseline
  std::vector<sim::JobOutcome> outcomes;  ///< with keep_outcomes
  std::size_t samples() const { return played.size(); }
  double cost_ratio() const { return reference_cost > 0 ? cost / reference_cost : 1.0; }
};

/// The cost of a Slurm-model run's outcomes: of the jobs from index `warmup` on (the window's), those that ran.
double slurm_cost(const std::vector<sim::JobOutcome>& outcomes, const CostModel& cost, std::size_t warmup = 0);

/// `scorer` (a heuristic) on the sequence in the Slurm model: its cost.
double slurm_reference_cost(const SlurmSequence& sequence, const Scorer& scorer, const sim::SimConfig& base,
                            const CostModel& cost);

/// Runs the policy on the sequence in the Slurm model. exploration.sigma == 0: the deployed (greedy) behaviour,
/// nothing recorded; otherwise the perturbed scores are played and recorded. `rng` draws which calls are kept.
ScoreEpisode run_slurm_policy(const SlurmSequence& sequence, const PlainMlp& policy, const Exploration& exploration,
                              const sim::SimConfig& base, const CostModel& cost, double reference, std::mt19937_64& rng,
                              bool keep_outcomes = false);

/// The teacher on the sequence in the Slurm model, recorded for imitation: at a decay tick with two or more
/// pending jobs, the teacher's top job among them (at most `visible` of the batch, oldest first, as the compat
/// imitation does) is the choice the policy's softmax must reproduce. At most sequence.length ticks are kept (a
/// uniform draw with `rng`), about as many decisions as a compat imitation episode has.
Episode run_slurm_imitation(const SlurmSequence& sequence, const Scorer& teacher, const sim::SimConfig& base,
                            std::size_t visible, std::mt19937_64& rng, bool predicted = false);

}  // namespace rlsched::train
