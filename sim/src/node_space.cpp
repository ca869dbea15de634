#include "node_space.h"

#include <limits>

namespace rlsched::sim {

namespace {
constexpr Seconds kBeginning = std::numeric_limits<Seconds>::min();
}  // namespace

void NodeSpace::reset(int nodes) {
  slots_.assign(1, Slot{kBeginning, std::vector<char>(static_cast<std::size_t>(nodes), 0)});
}

Seconds NodeSpace::end_of(std::size_t i) const { return i + 1 < slots_.size() ? slots_[i + 1].begin : kNever; }

std::size_t NodeSpace::split(Seconds t) {
  std::size_t i = 0;
  while (i + 1 < slots_.size() && slots_[i + 1].begin <= t) ++i;
  if (slots_[i].begin == t) return i;
  slots_.insert(slots_.begin() + static_cast<std::ptrdiff_t>(i) + 1, Slot{t, slots_[i].held});
  return i + 1;
}

void NodeSpace::reserve(Seconds start, Seconds end, const std::vector<int>& nodes) {
  if (end <= start) return;
  const std::size_t first = split(start);
  const std::size_t last = split(end);  // the slot beginning at `end` is not held
  for (std::size_t i = first; i < last; ++i)
    for (int n : nodes) slots_[i].held[static_cast<std::size_t>(n)] = 1;
}

bool NodeSpace::held(int n, Seconds from, Seconds to) const {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (end_of(i) <= from) continue;
    if (slots_[i].begin > to) break;
    if (slots_[i].held[static_cast<std::size_t>(n)]) return true;
  }
  return false;
}

bool NodeSpace::held_any(const std::vector<int>& nodes, Seconds start, Seconds end) const {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (end_of(i) <= start) continue;
    if (slots_[i].begin >= end) break;
    for (int n : nodes)
      if (slots_[i].held[static_cast<std::size_t>(n)]) return true;
  }
  return false;
}

Seconds NodeSpace::later_start(Seconds from, Seconds to, const std::vector<int>& nodes) const {
  std::vector<char> usable(nodes.size(), 1);  // usable through the slots looked at so far
  for (std::size_t i = 0; i + 1 < slots_.size(); ++i) {
    if (end_of(i) <= from) continue;
    const Slot& slot = slots_[i];
    const Slot& next = slots_[i + 1];
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      const auto n = static_cast<std::size_t>(nodes[k]);
      if (!next.held[n] && !(usable[k] && !slot.held[n])) return end_of(i);
    }
    if (slot.begin > to) break;
    for (std::size_t k = 0; k < nodes.size(); ++k)
      if (slot.held[static_cast<std::size_t>(nodes[k])]) usable[k] = 0;
  }
  return 0;
}

}  // namespace rlsched::sim
