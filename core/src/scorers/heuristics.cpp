// Hand-written ranking rules, the baselines every learned policy must beat.
// Formulas follow RLScheduler (SC'20), which ranks lowest-first; here higher runs first, so each is negated.
// r = requested time (s), n = CPUs, s = submit time (s), w = wait so far (s).
#include <cmath>

#include "rlsched/area_rule.h"
#include "rlsched/scorer.h"

namespace rlsched {
namespace {

class Fcfs final : public Scorer {
 public:
  std::string_view name() const override { return "fcfs"; }
  bool is_static() const override { return true; }
  void score(const ScoringContext&, const std::vector<PendingJob>& jobs, std::vector<double>& out) const override {
    for (std::size_t i = 0; i < jobs.size(); ++i) out[i] = -static_cast<double>(jobs[i].submit);
  }
};

/// Shortest (requested) job first; equal requests fall to the caller's tie-break: earlier submit first.
class Sjf final : public Scorer {
 public:
  std::string_view name() const override { return "sjf"; }
  bool is_static() const override { return true; }
  void score(const ScoringContext&, const std::vector<PendingJob>& jobs, std::vector<double>& out) const override {
    for (std::size_t i = 0; i < jobs.size(); ++i) out[i] = -static_cast<double>(jobs[i].time_limit);
  }
};

/// WFP3 (Tang et al.): favours jobs that waited long relative to their request, weighted by size: (w/r)^3 * n.
class Wfp3 final : public Scorer {
 public:
  std::string_view name() const override { return "wfp3"; }
  void score(const ScoringContext&, const std::vector<PendingJob>& jobs, std::vector<double>& out) const override {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const double ratio = static_cast<double>(jobs[i].wait) / static_cast<double>(jobs[i].time_limit);
      out[i] = ratio * ratio * ratio * jobs[i].cpus;
    }
  }
};

/// UNICEP (Tang et al.): w / (log2(n) * r). A one-CPU job has log2(1) = 0; RLScheduler's 1e-15 guard makes its
/// score huge, which we keep so that results compare.
class Unicep final : public Scorer {
 public:
  std::string_view name() const override { return "unicep"; }
  void score(const ScoringContext&, const std::vector<PendingJob>& jobs, std::vector<double>& out) const override {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const double n = jobs[i].cpus;
      out[i] = (static_cast<double>(jobs[i].wait) + 1e-15) /
               (std::log2(n + 1e-15) * static_cast<double>(jobs[i].time_limit));
    }
  }
};

/// F1 (Carastan-Santos & de Camargo, SC'17): log10(r) * n + 870 * log10(s), lowest first.
class F1 final : public Scorer {
 public:
  std::string_view name() const override { return "f1"; }
  bool is_static() const override { return true; }
  void score(const ScoringContext&, const std::vector<PendingJob>& jobs, std::vector<double>& out) const override {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const double r = jobs[i].time_limit > 0 ? static_cast<double>(jobs[i].time_limit) : 0.1;
      const double s = jobs[i].submit > 0 ? static_cast<double>(jobs[i].submit) : 0.1;
      out[i] = -(std::log10(r) * jobs[i].cpus + 870.0 * std::log10(s));
    }
  }
};

/// Slurm's priority/multifactor: the weighted sum of the normalised factors Slurm computes for every pending job.
class Multifactor final : public Scorer {
 public:
  explicit Multifactor(const PriorityWeights& weights) : weights_(weights) {}
  std::string_view name() const override { return "multifactor"; }
  void score(const ScoringContext&, const std::vector<PendingJob>& jobs, std::vector<double>& out) const override {
    for (std::size_t i = 0; i < jobs.size(); ++i) out[i] = multifactor_priority(weights_, jobs[i]);
  }

 private:
  PriorityWeights weights_;
};

}  // namespace

double multifactor_priority(const PriorityWeights& w, const PendingJob& j) {
  return w.age * j.age_factor + w.fairshare * j.fairshare_factor + w.job_size * j.job_size_factor +
         w.partition * j.partition_factor + w.qos * j.qos_factor;
}

std::vector<std::string> scorer_names() { return {"fcfs", "sjf", "wfp3", "unicep", "f1", "multifactor"}; }

Result<std::unique_ptr<Scorer>> make_scorer(std::string_view name, const ScorerSettings& settings) {
  if (name == "fcfs") return std::unique_ptr<Scorer>(new Fcfs());
  if (name == "sjf") return std::unique_ptr<Scorer>(new Sjf());
  if (name == "wfp3") return std::unique_ptr<Scorer>(new Wfp3());
  if (name == "unicep") return std::unique_ptr<Scorer>(new Unicep());
  if (name == "f1") return std::unique_ptr<Scorer>(new F1());
  if (name == "multifactor") return std::unique_ptr<Scorer>(new Multifactor(settings.multifactor));
  if (is_area_rule_spec(name)) {
    auto rule = parse_area_rule(name);
    if (!rule.ok()) return rule.status();
    return make_area_scorer(*rule);
  }
  std::string known;
  for (const auto& n : scorer_names()) known += (known.empty() ? "" : ", ") + n;
  return Status::InvalidInput("unknown policy '" + std::string(name) + "' (known: " + known + ", " +
                              std::string(kAreaRuleGrammar) + ")");
}

}  // namespace rlsched
