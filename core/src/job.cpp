#include "rlsched/job.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace rlsched {

bool AcceleratorRequest::allows(const std::string& type) const {
  return types.empty() || std::find(types.begin(), types.end(), type) != types.end();
}

void ReadReport::skip(std::string reason) {
  ++skipped;
  if (reasons.size() < kMaxReasons) reasons.push_back(std::move(reason));
}

void ReadReport::warn(std::string warning) {
  ++warned;
  if (warnings.size() < kMaxReasons) warnings.push_back(std::move(warning));
}

Workload take_recent(Workload& workload, double share) {
  std::vector<Job>& jobs = workload.jobs;
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.submit < b.submit; });
  const auto count = std::min(
      jobs.size(), static_cast<std::size_t>(std::ceil(static_cast<double>(jobs.size()) * std::clamp(share, 0.0, 1.0))));
  Workload recent;
  recent.max_procs = workload.max_procs;
  recent.max_nodes = workload.max_nodes;
  recent.report.source = workload.report.source;
  const auto first = jobs.end() - static_cast<std::ptrdiff_t>(count);
  recent.jobs.assign(std::make_move_iterator(first), std::make_move_iterator(jobs.end()));
  jobs.erase(first, jobs.end());
  return recent;
}

}  // namespace rlsched
