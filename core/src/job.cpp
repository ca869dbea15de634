#include "rlsched/job.h"

#include <algorithm>

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

}  // namespace rlsched
