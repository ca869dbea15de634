#include "rlsched/site_factor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace rlsched {
namespace {

// One formula for both functions, so a job ranked alone gets exactly what it would get in the batch.
std::uint32_t share_of(std::size_t below, std::size_t n, std::uint32_t scale) {
  return static_cast<std::uint32_t>(
      std::floor(static_cast<double>(below) / static_cast<double>(n) * static_cast<double>(scale)));
}

// NaN has no place in an order: it ranks last, as the policy runtime does with non-finite scores.
double orderable(double score) {
  return std::isnan(score) ? -std::numeric_limits<double>::infinity() : score;
}

}  // namespace

std::uint32_t site_factor_of(double score, const std::vector<double>& sorted_scores, std::uint32_t scale) {
  if (sorted_scores.empty()) return 0;
  const auto below =
      std::lower_bound(sorted_scores.begin(), sorted_scores.end(), orderable(score)) - sorted_scores.begin();
  return share_of(static_cast<std::size_t>(below), sorted_scores.size(), scale);
}

void site_factors_of(const std::vector<double>& scores, std::uint32_t scale, std::vector<double>& sorted,
                     std::uint32_t* out) {
  // One sort of (score, index) pairs, then one pass: equal scores share the rank of the first of them.
  thread_local std::vector<std::pair<double, std::uint32_t>> order;
  const std::size_t n = scores.size();
  order.resize(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = {orderable(scores[i]), static_cast<std::uint32_t>(i)};
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  sorted.resize(n);
  std::size_t first_equal = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (k > 0 && order[k].first != order[k - 1].first) first_equal = k;
    sorted[k] = order[k].first;
    out[order[k].second] = share_of(first_equal, n, scale);
  }
}

}  // namespace rlsched
