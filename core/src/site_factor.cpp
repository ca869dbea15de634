#include "rlsched/site_factor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace rlsched {
namespace {

// One formula for both functions, so a job ranked alone gets exactly what it would get in the batch. In whole
// numbers: floor(scale * below / n) exactly (below < n, scale <= 10^9: the product fits in 64 bits). The former
// floor(below / n * scale) in doubles fell one short at some ranks (57 of 100 at scale 10,000 gave 5,699).
std::uint32_t share_of(std::size_t below, std::size_t n, std::uint32_t scale) {
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(below) * scale / n);
}

// NaN has no place in an order: it ranks last, as the policy runtime does with non-finite scores.
double orderable(double score) {
  return std::isnan(score) ? -std::numeric_limits<double>::infinity() : score;
}

// Pairs of equal neighbours' runs in a sorted sequence: sum of k(k-1)/2 over its runs of k equal values.
template <typename T>
std::uint64_t tied_pairs(const std::vector<T>& sorted) {
  std::uint64_t pairs = 0, run = 1;
  for (std::size_t i = 1; i <= sorted.size(); ++i) {
    if (i < sorted.size() && sorted[i] == sorted[i - 1]) {
      ++run;
      continue;
    }
    pairs += run * (run - 1) / 2;
    run = 1;
  }
  return pairs;
}

// Pairs i < j with v[i] > v[j], counted while merge-sorting v[lo, hi).
std::uint64_t inversions(std::vector<double>& v, std::vector<double>& tmp, std::size_t lo, std::size_t hi) {
  if (hi - lo < 2) return 0;
  const std::size_t mid = lo + (hi - lo) / 2;
  std::uint64_t n = inversions(v, tmp, lo, mid) + inversions(v, tmp, mid, hi);
  std::size_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) {
    if (v[j] < v[i]) {
      n += mid - i;  // v[j] is below every value left in the first half
      tmp[k++] = v[j++];
    } else {
      tmp[k++] = v[i++];
    }
  }
  while (i < mid) tmp[k++] = v[i++];
  while (j < hi) tmp[k++] = v[j++];
  std::copy(tmp.begin() + static_cast<std::ptrdiff_t>(lo), tmp.begin() + static_cast<std::ptrdiff_t>(hi),
            v.begin() + static_cast<std::ptrdiff_t>(lo));
  return n;
}

}  // namespace

RankDisagreement rank_disagreement(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t n = a.size();
  if (n != b.size() || n < 2) return {};
  std::vector<std::pair<double, double>> both(n);
  for (std::size_t i = 0; i < n; ++i) both[i] = {orderable(a[i]), orderable(b[i])};
  // By a, ties by b: then a pair ordered opposite ways is exactly an inversion of the b sequence (a pair tied in a
  // is in b's order, one tied in b is no strict inversion).
  std::sort(both.begin(), both.end());
  std::vector<double> seq(n), tmp(n), sorted_a(n);
  for (std::size_t i = 0; i < n; ++i) {
    seq[i] = both[i].second;
    sorted_a[i] = both[i].first;
  }
  const std::uint64_t tied_both = tied_pairs(both);
  const std::uint64_t tied_a = tied_pairs(sorted_a);
  const std::uint64_t discordant = inversions(seq, tmp, 0, n);  // leaves seq sorted: b's ties
  const std::uint64_t tied_b = tied_pairs(seq);
  const std::uint64_t all = static_cast<std::uint64_t>(n) * (n - 1) / 2;
  RankDisagreement r;
  r.pairs = all - tied_a - tied_b + tied_both;
  r.share = r.pairs ? static_cast<double>(discordant) / static_cast<double>(r.pairs) : 0.0;
  return r;
}

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
