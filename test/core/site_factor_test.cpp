// The rank share (rlsched/site_factor.h): a job's site factor is floor(scale * (jobs scored lower) / n), worked out
// here by hand; NaN ranks last; ties share the rank of the first of them.
#include "rlsched/site_factor.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

using namespace rlsched;

TEST_CASE("site factors are floor(scale * below / n), exactly") {
  struct Case {
    std::size_t n, below;
    std::uint32_t scale, expected;
  };
  const Case cases[] = {
      {100, 57, 10000, 5700},  // in doubles 57 / 100 * 10000 is 5699.999...
      {100, 69, 10000, 6900},
      {500, 9, 100000, 1800},
      {3, 1, 10000, 3333},
      {3, 2, 10000, 6666},
      {10, 0, 1000, 0},
      {10, 9, 1000, 900},
      {7, 7, 1000000000, 1000000000},  // above every score of the batch: the whole scale
  };
  for (const Case& c : cases) {
    INFO("n " << c.n << " below " << c.below << " scale " << c.scale);
    std::vector<double> sorted;
    for (std::size_t i = 0; i < c.n; ++i) sorted.push_back(static_cast<double>(i));
    CHECK(site_factor_of(static_cast<double>(c.below) - 0.5, sorted, c.scale) == c.expected);
    if (c.below < c.n) {
      std::vector<double> scores = sorted;
      std::vector<double> out_sorted;
      std::vector<std::uint32_t> out(c.n);
      site_factors_of(scores, c.scale, out_sorted, out.data());
      CHECK(out[c.below] == c.expected);
    }
  }
}

TEST_CASE("NaN ranks last and ties share a rank") {
  std::vector<double> sorted;
  std::vector<std::uint32_t> out(5);
  site_factors_of({3.0, std::numeric_limits<double>::quiet_NaN(), 2.0, 2.0, 5.0}, 100, sorted, out.data());
  CHECK(out == std::vector<std::uint32_t>{60, 0, 20, 20, 80});
  CHECK(site_factor_of(std::numeric_limits<double>::quiet_NaN(), sorted, 100) == 0);
  CHECK(site_factor_of(1.0, {}, 100) == 0);
}
