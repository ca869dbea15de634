#include "rlsched/area_rule.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "text/text.h"

namespace rlsched {
namespace {

const double kRelativeCpus = std::log(1024.0);  ///< AreaRule::cluster_relative: the plain term on 1,024 CPUs
constexpr std::string_view kRelative = "relative";
constexpr std::string_view kPredicted = "predicted";

/// The rule's r: the requested time, or the predicted run time where the rule asks for it and one is known.
double requested(const AreaRule& rule, const PendingJob& job) {
  const Seconds r =
      rule.predicted && job.predicted_run_time > 0 ? std::min(job.predicted_run_time, job.time_limit) : job.time_limit;
  return std::max<double>(static_cast<double>(r), 10.0);
}

class AreaScorer final : public Scorer {
 public:
  explicit AreaScorer(const AreaRule& rule) : rule_(rule), name_(rule.spec()) {}
  std::string_view name() const override { return name_; }
  bool is_static() const override { return rule_.g == 0 && !rule_.predicted; }
  bool reads_predicted_run_time() const override { return rule_.predicted; }
  void score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
             std::vector<double>& out) const override {
    const double b = rule_.cpus_weight(context.total_cpus);
    const double cpus = std::max(context.total_cpus, 1);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const double r = requested(rule_, jobs[i]);
      const double n = std::max(jobs[i].cpus, 1);
      // As the cpus_share and accel_share features count it.
      double share = n / cpus;
      if (context.total_accelerators > 0) share += jobs[i].accelerators / double(context.total_accelerators);
      out[i] = -(rule_.a * std::log(r) + b * std::log(n) + rule_.c * share) +
               rule_.g * std::log1p(static_cast<double>(std::max<Seconds>(jobs[i].wait, 0)) / r) +
               rule_.f * jobs[i].fairshare_factor;
    }
  }

 private:
  AreaRule rule_;
  std::string name_;
};

}  // namespace

double AreaRule::cpus_weight(int total_cpus) const {
  return cluster_relative ? b * kRelativeCpus / std::log(std::max(2, total_cpus)) : b;
}

std::string AreaRule::describe() const {
  return fmt::format("-({} ln max(r,10) + {} ln n{}{}) + {} ln(1 + w/max(r,10)){}{}", a, b,
                     cluster_relative ? " ln 1024 / ln N" : "", c != 0 ? fmt::format(" + {} (n/N + k/K)", c) : "", g,
                     f != 0 ? fmt::format(" + {} F", f) : "", predicted ? ", r predicted" : "");
}

std::string AreaRule::spec() const {
  std::string weights = fmt::format("{}/{}/{}", a, b, g);
  if (c != 0 || f != 0) weights += fmt::format("/{}", c);
  if (f != 0) weights += fmt::format("/{}", f);
  return fmt::format("{}{}{}{}", kAreaRulePrefix, weights, cluster_relative ? "/relative" : "",
                     predicted ? "/predicted" : "");
}

bool is_area_rule_spec(std::string_view spec) {
  return spec.substr(0, kAreaRulePrefix.size()) == kAreaRulePrefix;
}

Result<AreaRule> parse_area_rule(std::string_view spec) {
  auto invalid = [&](const std::string& what) {
    return Status::InvalidInput(fmt::format("policy '{}': {} (expected {})", spec, what, kAreaRuleGrammar));
  };
  if (!is_area_rule_spec(spec)) return invalid(fmt::format("does not start with '{}'", kAreaRulePrefix));
  std::vector<std::string_view> parts = text::split(spec.substr(kAreaRulePrefix.size()), '/');
  AreaRule rule;
  if (parts.size() > 3 && parts.back() == kPredicted) {
    rule.predicted = true;
    parts.pop_back();
  }
  if (parts.size() > 3 && parts.back() == kRelative) {
    rule.cluster_relative = true;
    parts.pop_back();
  }
  if (parts.size() < 3 || parts.size() > 5) return invalid(fmt::format("{} numbers, not 3 to 5", parts.size()));
  double* weights[] = {&rule.a, &rule.b, &rule.g, &rule.c, &rule.f};
  const char* names[] = {"A", "B", "G", "C", "F"};
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const std::string_view part = parts[k];
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), *weights[k]);
    if (part.empty() || error != std::errc() || end != part.data() + part.size())
      return invalid(fmt::format("{} = '{}' is not a number", names[k], part));
    if (!std::isfinite(*weights[k]) || *weights[k] < 0)
      return invalid(fmt::format("{} = '{}' is not a finite number >= 0", names[k], part));
  }
  if (rule.a == 0 && rule.b == 0 && rule.c == 0)
    return invalid("A, B and C are all 0, so the rule would not look at what a job asks for");
  return rule;
}

std::unique_ptr<Scorer> make_area_scorer(const AreaRule& rule) {
  return std::make_unique<AreaScorer>(rule);
}

}  // namespace rlsched
