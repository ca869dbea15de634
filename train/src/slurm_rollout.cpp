#include "slurm_rollout.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "rlsched/features.h"

namespace rlsched::train {
namespace {

constexpr std::size_t kF = features::kFeatureCount;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The policy's scores plus each job's held offset; keeps the last call's feature rows and plain scores so that the
/// decision hook can record them beside what was played.
class ExploringScorer final : public Scorer {
 public:
  ExploringScorer(const PlainMlp& policy, const Exploration& exploration)
      : policy_(policy), exploration_(exploration) {}
  std::string_view name() const override { return "learned (exploring)"; }
  bool is_static() const override { return false; }
  bool reads_predicted_run_time() const override { return policy_.reads_predicted_run_time; }
  void score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
             std::vector<double>& out) const override {
    rows_.resize(jobs.size() * kF);
    for (std::size_t i = 0; i < jobs.size(); ++i) features::extract_all(jobs[i], context, rows_.data() + i * kF);
    mean_.resize(jobs.size());
    policy_.forward(rows_.data(), jobs.size(), mean_.data(), scratch_);
    const double scale = exploration_.sign * exploration_.sigma;
    for (std::size_t i = 0; i < jobs.size(); ++i)
      out[i] = scale == 0 ? static_cast<double>(mean_[i])
                          : static_cast<double>(mean_[i]) + scale * job_offset(exploration_.key, jobs[i].id);
  }
  const std::vector<float>& rows() const { return rows_; }
  const std::vector<float>& mean() const { return mean_; }

 private:
  const PlainMlp& policy_;
  const Exploration exploration_;
  mutable std::vector<float> rows_, mean_, scratch_;
};

/// Keeps at most k calls of every job, a uniform draw over its calls (reservoir sampling), so that an episode's
/// samples stay bounded whatever the waits.
class SampleReservoir {
 public:
  SampleReservoir(std::size_t jobs, std::size_t k, std::mt19937_64& rng) : k_(k), rng_(rng), seen_(jobs, 0) {
    slots_.resize(jobs);
  }

  void offer(std::size_t job, const float* row, float played, float mean) {
    if (job >= seen_.size()) return;
    const std::size_t n = ++seen_[job];
    std::vector<std::size_t>& slots = slots_[job];
    std::size_t at;
    if (k_ == 0 || slots.size() < k_) {
      at = played_.size();
      slots.push_back(at);
      features_.resize(features_.size() + kF);
      played_.push_back(0);
      mean_.push_back(0);
      job_.push_back(static_cast<std::uint32_t>(job));
    } else {
      const std::size_t r = std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
      if (r >= k_) return;
      at = slots[r];
    }
    std::copy_n(row, kF, features_.data() + at * kF);
    played_[at] = played;
    mean_[at] = mean;
  }

  void finish(ScoreEpisode& e, double sigma) {
    e.features = std::move(features_);
    e.played = std::move(played_);
    e.job = std::move(job_);
    e.logp.resize(e.played.size());
    e.weight.resize(e.played.size());
    for (std::size_t i = 0; i < e.played.size(); ++i) {
      e.logp[i] = sigma > 0 ? static_cast<float>(score_log_density(e.played[i], mean_[i], sigma)) : 0.0f;
      e.weight[i] = 1.0f / static_cast<float>(slots_[e.job[i]].size());
    }
  }

 private:
  const std::size_t k_;
  std::mt19937_64& rng_;
  std::vector<std::size_t> seen_;
  std::vector<std::vector<std::size_t>> slots_;
  std::vector<float> features_, played_, mean_;
  std::vector<std::uint32_t> job_;
};

/// A scorer seen as dynamic: the simulator caches a static scorer's scores from submit and never scores its queue
/// again, which would leave the imitation without ticks. The schedule is the same (the scores do not change).
class Rescored final : public Scorer {
 public:
  Rescored(const Scorer& scorer, bool predicted) : scorer_(scorer), predicted_(predicted) {}
  std::string_view name() const override { return scorer_.name(); }
  bool is_static() const override { return false; }
  /// The rows recorded beside it have them where training asks for them, and a rule on them needs them.
  bool reads_predicted_run_time() const override { return predicted_ || scorer_.reads_predicted_run_time(); }
  void score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
             std::vector<double>& out) const override {
    scorer_.score(context, jobs, out);
  }

 private:
  const Scorer& scorer_;
  const bool predicted_;
};

}  // namespace

std::vector<Job> sequence_jobs(const SlurmSequence& s) {
  const TraceSplit& t = *s.trace;
  std::vector<Job> jobs;
  const std::size_t begin = s.first - std::min(s.warmup, s.first);  // the trace's first jobs have none
  const std::size_t end = std::min(s.first + s.length, t.prepared.jobs.size());
  jobs.reserve(end - std::min(begin, end));
  for (std::size_t i = begin; i < end; ++i) jobs.push_back(t.workload.jobs[t.prepared.jobs[i].source]);
  if (jobs.empty()) return jobs;
  Seconds first = jobs.front().submit;
  for (const Job& j : jobs) first = std::min(first, j.submit);
  for (Job& j : jobs) j.submit -= first;  // the cluster is empty at 0, when the first job arrives
  return jobs;
}

double job_offset(std::uint64_t key, JobId id) {
  const std::uint64_t a = splitmix64(key ^ splitmix64(static_cast<std::uint64_t>(id)));
  const std::uint64_t b = splitmix64(a);
  // Box-Muller from two uniforms in (0, 1].
  const double u1 = (static_cast<double>(a >> 11) + 1.0) * 0x1.0p-53;
  const double u2 = static_cast<double>(b >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

double score_log_density(double played, double mean, double sigma) {
  const double z = (played - mean) / sigma;
  return -0.5 * z * z - std::log(sigma) - 0.5 * std::log(2.0 * M_PI);
}

double slurm_cost(const std::vector<sim::JobOutcome>& outcomes, const CostModel& cost, std::size_t warmup) {
  std::vector<sim::JobOutcome> ran;
  ran.reserve(outcomes.size());
  for (const sim::JobOutcome& o : outcomes)
    if (o.ran() && o.job >= warmup) ran.push_back(o);
  return cost.sequence_cost(ran);
}

double slurm_reference_cost(const SlurmSequence& s, const Scorer& scorer, const sim::SimConfig& base,
                            const CostModel& cost) {
  sim::SimConfig config = base;
  const std::vector<Job> jobs = sequence_jobs(s);
  auto r = sim::simulate(*s.trace->cluster, jobs, scorer, config);
  return r.ok() ? slurm_cost(r->outcomes, cost, std::min(s.warmup, s.first)) : 0.0;
}

ScoreEpisode run_slurm_policy(const SlurmSequence& s, const PlainMlp& policy, const Exploration& exploration,
                              const sim::SimConfig& base, const CostModel& cost, double reference, std::mt19937_64& rng,
                              bool keep_outcomes) {
  ScoreEpisode episode;
  episode.reference_cost = reference;
  const ExploringScorer scorer(policy, exploration);
  sim::SimConfig config = base;
  const std::vector<Job> jobs = sequence_jobs(s);
  SampleReservoir reservoir(jobs.size(), exploration.samples_per_job, rng);
  if (exploration.record) {
    config.on_scoring = [&](const sim::ScoringDecision& d) {
      ++episode.calls;
      episode.scored_rows += d.jobs.size();
      for (std::size_t i = 0; i < d.jobs.size(); ++i)
        reservoir.offer(static_cast<std::size_t>(d.jobs[i]), scorer.rows().data() + i * kF,
                        static_cast<float>(d.scores[i]), scorer.mean()[i]);
    };
  }
  auto r = sim::simulate(*s.trace->cluster, jobs, scorer, config);
  if (!r.ok()) return episode;
  episode.cost = slurm_cost(r->outcomes, cost, std::min(s.warmup, s.first));
  if (exploration.record) reservoir.finish(episode, exploration.sigma);
  if (keep_outcomes) episode.outcomes = std::move(r->outcomes);
  return episode;
}

Episode run_slurm_imitation(const SlurmSequence& s, const Scorer& teacher, const sim::SimConfig& base,
                            std::size_t visible, std::mt19937_64& rng, bool predicted) {
  struct Tick {
    std::vector<float> rows;
    std::uint32_t action;
  };
  std::vector<Tick> kept;
  std::size_t seen = 0;
  const std::size_t limit = std::max<std::size_t>(s.length, 1);
  std::vector<std::size_t> order;
  sim::SimConfig config = base;
  config.on_scoring = [&](const sim::ScoringDecision& d) {
    if (d.at_submit || d.jobs.size() < 2) return;
    const std::size_t n = ++seen;
    std::size_t slot = kept.size();
    if (kept.size() >= limit) {
      slot = std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
      if (slot >= limit) return;
    }
    // The oldest `visible` of the batch (earliest submit, then job index), as the compat agents see the queue.
    order.resize(d.views.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return d.views[a].submit != d.views[b].submit ? d.views[a].submit < d.views[b].submit : d.jobs[a] < d.jobs[b];
    });
    if (visible > 0 && order.size() > visible) order.resize(visible);
    Tick tick;
    tick.rows.resize(order.size() * kF);
    std::size_t best = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
      features::extract_all(d.views[order[i]], d.context, tick.rows.data() + i * kF);
      if (d.scores[order[i]] > d.scores[order[best]]) best = i;
    }
    tick.action = static_cast<std::uint32_t>(best);
    if (slot == kept.size())
      kept.push_back(std::move(tick));
    else
      kept[slot] = std::move(tick);
  };
  (void)sim::simulate(*s.trace->cluster, sequence_jobs(s), Rescored(teacher, predicted), config);
  Episode episode;
  for (const Tick& t : kept) {
    const auto first_row = static_cast<std::uint32_t>(episode.features.size() / kF);
    episode.features.insert(episode.features.end(), t.rows.begin(), t.rows.end());
    episode.decisions.push_back(
        Decision{first_row, static_cast<std::uint32_t>(t.rows.size() / kF), t.action, 0.0f, 0.0f});
    episode.rewards.push_back(0.0f);
  }
  return episode;
}

}  // namespace rlsched::train
