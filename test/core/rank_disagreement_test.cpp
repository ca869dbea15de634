// rank_disagreement: Kendall's distance between two orders of the same jobs, worked out by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "rlsched/site_factor.h"

using rlsched::rank_disagreement;

TEST_CASE("rank disagreement counts the pairs two orders rank opposite ways") {
  SECTION("the same order, in other units: none of the 6 pairs") {
    const auto r = rank_disagreement({1, 2, 3, 4}, {10, 20, 30, 40});
    CHECK(r.pairs == 6);
    CHECK(r.share == 0.0);
  }
  SECTION("one reversed: all of them") {
    const auto r = rank_disagreement({1, 2, 3, 4}, {4, 3, 2, 1});
    CHECK(r.pairs == 6);
    CHECK(r.share == 1.0);
  }
  SECTION("one swap of neighbours among four: 1 of 6") {
    const auto r = rank_disagreement({1, 2, 3, 4}, {1, 3, 2, 4});
    CHECK(r.pairs == 6);
    CHECK(r.share == Approx(1.0 / 6.0));
  }
  SECTION("ties in either order do not count") {
    // a ties jobs 0 and 1; b ties jobs 2 and 3. Pairs ordered by both: (0,2) (0,3) (1,2) (1,3); b reverses
    // (0,2)? a: 1 < 3, b: 5 > 2: yes; (0,3): 1 < 4, 5 > 2: yes; (1,2): 1 < 3, 1 < 2: no; (1,3): 1 < 4, 1 < 2: no.
    const auto r = rank_disagreement({1, 1, 3, 4}, {5, 1, 2, 2});
    CHECK(r.pairs == 4);
    CHECK(r.share == Approx(0.5));
  }
  SECTION("nothing to compare") {
    CHECK(rank_disagreement({}, {}).pairs == 0);
    CHECK(rank_disagreement({1}, {2}).pairs == 0);
    CHECK(rank_disagreement({1, 2}, {1}).pairs == 0);  // sizes differ
    CHECK(rank_disagreement({1, 1, 1}, {1, 2, 3}).share == 0.0);
  }
  SECTION("NaN ranks last, as in the site factor") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const auto r = rank_disagreement({nan, 1, 2}, {0, 1, 2});  // the NaN job is lowest in both
    CHECK(r.pairs == 3);
    CHECK(r.share == 0.0);
  }
}

TEST_CASE("rank disagreement of a long batch agrees with counting every pair") {
  std::vector<double> a, b;
  unsigned x = 12345;
  for (int i = 0; i < 300; ++i) {
    x = x * 1103515245u + 12345u;
    a.push_back(static_cast<double>((x >> 8) % 50));  // many ties
    x = x * 1103515245u + 12345u;
    b.push_back(static_cast<double>((x >> 8) % 40));
  }
  std::uint64_t pairs = 0, opposite = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = i + 1; j < a.size(); ++j) {
      if (a[i] == a[j] || b[i] == b[j]) continue;
      ++pairs;
      opposite += (a[i] < a[j]) != (b[i] < b[j]);
    }
  const auto r = rank_disagreement(a, b);
  CHECK(r.pairs == pairs);
  CHECK(r.share == Approx(static_cast<double>(opposite) / static_cast<double>(pairs)));
}
