#include "training_run.h"

#include <algorithm>
#include <cmath>

#include "rlsched/sim/evaluation.h"

namespace rlsched::train {

double Trainer::validation_ratio(std::size_t t, const Scorer& scorer) const {
  const std::vector<Workload>& loads = validation_jobs_[t];
  const auto ratio = [&](std::size_t k) {
    return slurm_metric(loads[k], traces_[t].cluster.get(), scorer) / validation_slurm_reference_[t][k];
  };
  if (loads.size() == 1) return ratio(0);
  double log_sum = 0;
  for (std::size_t k = 0; k < loads.size(); ++k) log_sum += std::log(ratio(k));
  return std::exp(log_sum / static_cast<double>(loads.size()));
}

SlurmSequence Trainer::search_stretch(std::size_t t) const {
  const std::size_t end = traces_[t].train_end;
  const std::size_t length = config_.search_jobs > 0 ? std::min(config_.search_jobs, end) : end;
  return SlurmSequence{&traces_[t], end - length, length};
}

double Trainer::training_part_ratio(std::size_t t, const Scorer& scorer) const {
  const SlurmSequence all = search_stretch(t);
  return slurm_reference_cost(all, scorer, slurm_sim_, cost_) / training_reference_[t];
}

double Trainer::training_part_ratio() {
  const PlainMlp plain = nets_->to_plain();
  std::vector<double> ratio(traces_.size());
  parallel_for(traces_.size(), threads_, [&](std::size_t t) {
    const PlainMlpScorer learned(plain);  // one per call: its scratch buffers are its own
    ratio[t] = training_part_ratio(t, learned);
  });
  return pool_mean(ratio);
}

double Trainer::pool_mean(const std::vector<double>& by_trace) const {
  double sum = 0, count = 0;
  for (std::size_t t = 0; t < by_trace.size(); ++t) {
    sum += traces_[t].weight * by_trace[t];
    count += traces_[t].weight;
  }
  return count > 0 ? sum / count : 1.0;
}

bool Trainer::holds_on_training_part() {
  if (!slurm_) return true;
  const double ratio = training_part_ratio();
  if (ratio > best_training_) return false;
  best_training_ = ratio;
  return true;
}

double Trainer::slurm_metric(const Workload& workload, const Cluster* cluster, const Scorer& scorer) const {
  sim::EvaluationOptions options;
  options.sim.backfill = config_.backfill;
  auto r = sim::evaluate_policy(workload, cluster, scorer, options);
  if (!r.ok()) return 1.0;  // too few jobs to evaluate: a neutral ratio
  switch (config_.objective) {
    case Objective::kWait:
      return std::max(r->metrics.avg_wait, 1e-9);
    case Objective::kUtilization:
      return 1.0 / std::max(r->metrics.utilization, 1e-9);
    default:
      return std::max(r->metrics.avg_bsld, 1e-9);
  }
}

double Trainer::slurm_validation_ratio(const std::function<double(std::size_t)>& ratio_of) {
  std::vector<double> ratio(validation_jobs_.size());
  parallel_for(validation_jobs_.size(), threads_, [&](std::size_t i) { ratio[i] = ratio_of(i); });
  return pool_mean(ratio);
}

double Trainer::validate() {
  if (!sites_.empty()) {
    const PlainMlp plain = nets_->to_plain();
    std::vector<double> ratio(sites_.size());
    parallel_for(sites_.size(), threads_, [&](std::size_t i) {
      const PlainMlpScorer learned(plain);
      ratio[i] = slurm_metric(sites_[i].workload, sites_[i].cluster.get(), learned) / site_reference_[i];
    });
    double sum = 0, count = 0;
    for (std::size_t i = 0; i < ratio.size(); ++i) {
      sum += sites_[i].weight * ratio[i];
      count += sites_[i].weight;
    }
    return sum / count;
  }
  if (config_.select_on_slurm) {
    const PlainMlp plain = nets_->to_plain();
    return slurm_validation_ratio([&](std::size_t i) {
      const PlainMlpScorer learned(plain);  // one per call: its scratch buffers are its own
      return validation_ratio(i, learned);
    });
  }
  const PlainMlp plain = nets_->to_plain();
  std::vector<double> ratio(validation_.size());
  parallel_for(validation_.size(), threads_, [&](std::size_t i) {
    std::mt19937_64 unused(0);
    const Episode e =
        run_policy(validation_[i], plain, backfill_, /*temperature=*/0, 0, cost_, validation_reference_[i], unused);
    ratio[i] = e.cost_ratio();
  });
  double sum = 0, count = 0;  // each sequence counted its trace's weight times, as pool_mean does
  for (std::size_t i = 0; i < ratio.size(); ++i) {
    sum += validation_weight_[i] * ratio[i];
    count += validation_weight_[i];
  }
  return count > 0 ? sum / count : 1.0;
}

std::vector<ValidationRow> Trainer::validation_table() {
  std::vector<ValidationRow> rows;
  const PlainMlp plain = nets_->to_plain();
  auto measure = [&](const std::string& name, const std::function<std::vector<sim::JobOutcome>(const Sequence&)>& run) {
    ValidationRow row;
    row.policy = name;
    std::vector<double> waits;
    for (const Sequence& s : validation_) {
      const auto outcomes = run(s);
      double bsld = 0;
      for (const sim::JobOutcome& o : outcomes) {
        bsld += sim::bounded_slowdown(o.wait(), o.run());
        row.avg_wait += static_cast<double>(o.wait());
        waits.push_back(static_cast<double>(o.wait()));
      }
      row.avg_bsld += bsld / static_cast<double>(std::max<std::size_t>(outcomes.size(), 1));
      row.cost += cost_.sequence_cost(outcomes);
    }
    const double n = static_cast<double>(std::max<std::size_t>(validation_.size(), 1));
    row.avg_bsld /= n;
    row.cost /= n;
    row.avg_wait /= static_cast<double>(std::max<std::size_t>(waits.size(), 1));
    row.p99_wait = sim::percentile(waits, 99);
    rows.push_back(row);
  };
  for (const std::string& name : scorer_names()) {
    auto scorer = make_scorer(name);
    measure(name, [&](const Sequence& s) {
      return sim::run_compat_sequence(*s.workload, s.first, s.length, **scorer, backfill_);
    });
  }
  measure("learned", [&](const Sequence& s) {
    GreedyPolicy agent(plain);
    return sim::run_compat_sequence(*s.workload, s.first, s.length, agent, backfill_);
  });
  return rows;
}

}  // namespace rlsched::train
