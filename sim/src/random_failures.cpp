#include <algorithm>
#include <random>

#include "rlsched/sim/simulator.h"

namespace rlsched::sim {

std::vector<NodeFailure> random_failures(const Cluster& cluster, Seconds start, Seconds end, double mtbf_hours,
                                         double mttr_hours, std::uint64_t seed) {
  std::vector<NodeFailure> failures;
  const Seconds horizon = end - start;
  if (mtbf_hours <= 0 || horizon <= 0) return failures;
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> between(1.0 / (mtbf_hours * 3600.0));
  std::exponential_distribution<double> repair(1.0 / std::max(mttr_hours * 3600.0, 1.0));
  for (std::size_t n = 0; n < cluster.nodes.size(); ++n) {
    double t = between(rng);
    while (t < static_cast<double>(horizon)) {
      const auto down = static_cast<Seconds>(t);
      const auto up = down + std::max<Seconds>(1, static_cast<Seconds>(repair(rng)));
      failures.push_back(NodeFailure{static_cast<int>(n), start + down, start + up});
      t = static_cast<double>(up) + between(rng);
    }
  }
  return failures;
}

std::pair<Seconds, Seconds> workload_span(const std::vector<Job>& jobs) {
  if (jobs.empty()) return {0, 0};
  Seconds first = jobs.front().submit, last = jobs.front().submit;
  for (const Job& job : jobs) {
    first = std::min(first, job.submit);
    last = std::max(last, job.submit + std::max<Seconds>({job.run_time, job.time_limit, 0}));
  }
  return {first, last};
}

}  // namespace rlsched::sim
