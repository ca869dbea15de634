// Fair-share as priority/multifactor's classic algorithm computes it: each user's usage decays with
// PriorityDecayHalfLife; the factor is 2^(-usage_share / shares), every user holding an equal share.
#pragma once

#include <cmath>
#include <vector>

#include "rlsched/job.h"

namespace rlsched::sim {

class FairShare {
 public:
  FairShare(std::size_t users, Seconds half_life) : usage_(users, 0.0), half_life_(half_life) {}

  void charge(int user, double cpu_seconds) {
    usage_[user] += cpu_seconds;
    total_ += cpu_seconds;
  }

  /// Ages all usage by `elapsed` seconds of decay.
  void decay(Seconds elapsed) {
    if (half_life_ <= 0 || elapsed <= 0) return;
    const double keep = std::exp2(-static_cast<double>(elapsed) / static_cast<double>(half_life_));
    total_ = 0;
    for (double& u : usage_) {
      u *= keep;
      total_ += u;
    }
  }

  /// \return the factor in [0, 1]; 1 for a user with no recent usage.
  double factor(int user) const {
    if (total_ <= 0 || usage_.empty()) return 1.0;
    const double share = 1.0 / static_cast<double>(usage_.size());
    return std::exp2(-(usage_[user] / total_) / share);
  }

 private:
  std::vector<double> usage_;
  double total_ = 0;
  Seconds half_life_;
};

}  // namespace rlsched::sim
