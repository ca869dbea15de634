// Seeded damage for readers' tests: a valid file changed at random the way a crash, a full disk, a bad copy or a
// hand edit changes one, so that a test can check every outcome (refused with a clear error, or read consistently)
// over thousands of cases, the same ones every run.
#pragma once

#include <cstddef>
#include <random>
#include <string>

namespace rlsched::test {

/// One to three random changes: a byte replaced, a run removed, bytes inserted (from `alphabet` half the time, any
/// byte otherwise), or a piece of the text copied elsewhere.
inline std::string damaged(const std::string& text, std::mt19937& rng, const std::string& alphabet) {
  std::string out = text;
  const auto at = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n)(rng); };
  const auto byte = [&] {
    return at(1) ? alphabet[at(alphabet.size() - 1)]
                 : static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
  };
  for (std::size_t c = at(2) + 1; c > 0; --c) {
    switch (at(3)) {
      case 0:
        if (!out.empty()) out[at(out.size() - 1)] = byte();
        break;
      case 1: {
        const std::size_t from = at(out.size());
        out.erase(from, at(8));
        break;
      }
      case 2: {
        std::string bytes;
        for (std::size_t k = at(6) + 1; k > 0; --k) bytes += byte();
        out.insert(at(out.size()), bytes);
        break;
      }
      default: {
        const std::size_t from = at(out.size());
        out.insert(at(out.size()), out.substr(from, at(24)));
        break;
      }
    }
  }
  return out;
}

}  // namespace rlsched::test
