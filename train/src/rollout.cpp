#include "rollout.h"

#include <algorithm>
#include <cmath>

#include "rlsched/sim/metrics.h"

namespace rlsched::train {

double CostModel::job_cost(Seconds wait, Seconds run) const {
  double c = 0;
  switch (objective_) {
    case Objective::kBoundedSlowdown: c = sim::bounded_slowdown(wait, run); break;
    case Objective::kWait: c = static_cast<double>(wait); break;
    case Objective::kUtilization: return 0;
  }
  if (penalty_ > 0 && static_cast<double>(wait) > threshold_)
    c += penalty_ * (static_cast<double>(wait) - threshold_) / threshold_;
  return c;
}

double CostModel::sequence_cost(const std::vector<sim::JobOutcome>& outcomes) const {
  if (outcomes.empty()) return 0;
  if (!per_job()) {
    Seconds first = outcomes.front().submit, last = outcomes.front().end;
    for (const sim::JobOutcome& o : outcomes) {
      first = std::min(first, o.submit);
      last = std::max(last, o.end);
    }
    return static_cast<double>(std::max<Seconds>(last - first, 1));  // same work: shorter makespan = higher use
  }
  double sum = 0;
  for (const sim::JobOutcome& o : outcomes) sum += job_cost(o.wait(), o.run());
  return sum / static_cast<double>(outcomes.size());
}

double reference_cost(const Sequence& s, const Scorer& reference, bool backfill, const CostModel& cost) {
  return cost.sequence_cost(sim::run_compat_sequence(*s.workload, s.first, s.length, reference, backfill));
}

namespace {

/// Shared by both agents: the visible part of the queue as feature rows.
struct VisibleQueue {
  std::vector<PendingJob> jobs;
  std::vector<float> rows;

  void fill(const ScoringContext& context, const std::vector<PendingJob>& queue, std::size_t visible) {
    const std::size_t n = visible == 0 ? queue.size() : std::min(visible, queue.size());
    jobs.assign(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(n));
    rows.resize(n * features::kFeatureCount);
    for (std::size_t i = 0; i < n; ++i) features::extract_all(jobs[i], context, rows.data() + i * features::kFeatureCount);
  }
};

class PolicyAgent final : public sim::DecisionMaker {
 public:
  PolicyAgent(const PlainMlp& policy, double temperature, std::size_t visible, const CostModel& cost,
              Episode& episode, std::mt19937_64& rng, std::size_t jobs)
      : policy_(policy),
        temperature_(temperature),
        visible_(visible),
        cost_(cost),
        episode_(episode),
        rng_(rng),
        jobs_(jobs) {}

  bool reads_predicted_run_time() const override { return policy_.reads_predicted_run_time; }

  std::size_t choose(const ScoringContext& context, const std::vector<PendingJob>& queue) override {
    if (queue.size() == 1) return 0;
    view_.fill(context, queue, visible_);
    const std::size_t n = view_.jobs.size();
    logits_.resize(n);
    policy_.forward(view_.rows.data(), n, logits_.data(), scratch_);
    if (temperature_ <= 0)
      return static_cast<std::size_t>(std::max_element(logits_.begin(), logits_.end()) - logits_.begin());
    if (temperature_ != 1.0)
      for (float& l : logits_) l = static_cast<float>(static_cast<double>(l) / temperature_);

    const float top = *std::max_element(logits_.begin(), logits_.end());
    double total = 0;
    probabilities_.resize(n);
    for (std::size_t i = 0; i < n; ++i) total += probabilities_[i] = std::exp(static_cast<double>(logits_[i] - top));
    std::uniform_real_distribution<double> unit(0.0, total);
    double u = unit(rng_);
    std::size_t action = n - 1;
    for (std::size_t i = 0; i < n; ++i) {
      u -= probabilities_[i];
      if (u <= 0) {
        action = i;
        break;
      }
    }
    const auto first_row = static_cast<std::uint32_t>(episode_.features.size() / features::kFeatureCount);
    episode_.features.insert(episode_.features.end(), view_.rows.begin(), view_.rows.end());
    const auto logp = static_cast<float>(static_cast<double>(logits_[action] - top) - std::log(total));
    const auto remaining = static_cast<float>(1.0 - static_cast<double>(started_) / static_cast<double>(jobs_));
    episode_.decisions.push_back(
        Decision{first_row, static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(action), logp, remaining});
    episode_.rewards.push_back(static_cast<float>(-carried_));
    carried_ = 0;
    return action;
  }

  void on_start(std::size_t, Seconds wait, Seconds run) override {
    ++started_;
    const double c = cost_.job_cost(wait, run);
    if (episode_.rewards.empty()) {
      carried_ += c;  // jobs started before the first real choice are charged to it
    } else {
      episode_.rewards.back() -= static_cast<float>(c);
    }
  }

  double carried() const { return carried_; }

 private:
  const PlainMlp& policy_;
  const double temperature_;  ///< 0: greedy
  const std::size_t visible_;
  const CostModel& cost_;
  Episode& episode_;
  std::mt19937_64& rng_;
  VisibleQueue view_;
  std::vector<float> logits_, scratch_;
  std::vector<double> probabilities_;
  double carried_ = 0;
  const std::size_t jobs_;
  std::size_t started_ = 0;
};

class ImitationAgent final : public sim::DecisionMaker {
 public:
  ImitationAgent(const Scorer& reference, std::size_t visible, Episode& episode, bool predicted)
      : reference_(reference), visible_(visible), episode_(episode), predicted_(predicted) {}

  bool reads_predicted_run_time() const override { return predicted_; }

  std::size_t choose(const ScoringContext& context, const std::vector<PendingJob>& queue) override {
    scores_.assign(queue.size(), 0.0);
    reference_.score(context, queue, scores_);
    std::size_t best = 0;  // the queue is in FCFS order, so the first of equal scores is the caller's tie-break
    for (std::size_t i = 1; i < queue.size(); ++i)
      if (scores_[i] > scores_[best]) best = i;
    view_.fill(context, queue, visible_);
    if (queue.size() > 1 && best < view_.jobs.size()) {
      const auto first_row = static_cast<std::uint32_t>(episode_.features.size() / features::kFeatureCount);
      episode_.features.insert(episode_.features.end(), view_.rows.begin(), view_.rows.end());
      episode_.decisions.push_back(Decision{first_row, static_cast<std::uint32_t>(view_.jobs.size()),
                                            static_cast<std::uint32_t>(best), 0.0f, 0.0f});
      episode_.rewards.push_back(0.0f);
    }
    return best;
  }

 private:
  const Scorer& reference_;
  const std::size_t visible_;
  Episode& episode_;
  const bool predicted_;
  VisibleQueue view_;
  std::vector<double> scores_;
};

}  // namespace

std::size_t GreedyPolicy::choose(const ScoringContext& context, const std::vector<PendingJob>& queue) {
  rows_.resize(queue.size() * features::kFeatureCount);
  for (std::size_t i = 0; i < queue.size(); ++i)
    features::extract_all(queue[i], context, rows_.data() + i * features::kFeatureCount);
  logits_.resize(queue.size());
  policy_.forward(rows_.data(), queue.size(), logits_.data(), scratch_);
  return static_cast<std::size_t>(std::max_element(logits_.begin(), logits_.end()) - logits_.begin());
}

void PlainMlpScorer::score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
                           std::vector<double>& out) const {
  rows_.resize(jobs.size() * features::kFeatureCount);
  for (std::size_t i = 0; i < jobs.size(); ++i)
    features::extract_all(jobs[i], context, rows_.data() + i * features::kFeatureCount);
  logits_.resize(jobs.size());
  policy_.forward(rows_.data(), jobs.size(), logits_.data(), scratch_);
  for (std::size_t i = 0; i < jobs.size(); ++i) out[i] = logits_[i];
}

Episode run_policy(const Sequence& s, const PlainMlp& policy, bool backfill, double temperature, std::size_t visible,
                   const CostModel& cost, double reference, std::mt19937_64& rng) {
  Episode episode;
  PolicyAgent agent(policy, temperature, visible, cost, episode, rng, std::max<std::size_t>(s.length, 1));
  const auto outcomes = sim::run_compat_sequence(*s.workload, s.first, s.length, agent, backfill);
  episode.cost = cost.sequence_cost(outcomes);
  episode.reference_cost = reference;
  if (episode.rewards.empty()) return episode;
  if (!cost.per_job()) episode.rewards.back() = static_cast<float>(-episode.cost);
  // Rewards so far are minus job costs; scale so that the return is -(average cost / reference average cost).
  const double scale = 1.0 / (static_cast<double>(std::max<std::size_t>(outcomes.size(), 1)) *
                              std::max(reference, 1e-9));
  for (float& r : episode.rewards) r = static_cast<float>(r * (cost.per_job() ? scale : 1.0 / std::max(reference, 1e-9)));
  return episode;
}

Episode run_imitation(const Sequence& s, const Scorer& reference, bool backfill, std::size_t visible, bool predicted) {
  Episode episode;
  ImitationAgent agent(reference, visible, episode, predicted || reference.reads_predicted_run_time());
  sim::run_compat_sequence(*s.workload, s.first, s.length, agent, backfill);
  return episode;
}

}  // namespace rlsched::train
