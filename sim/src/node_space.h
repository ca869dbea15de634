// sched/backfill's node_space map (src/plugins/sched/backfill/backfill.c): the nodes the reservations of one
// backfill cycle hold, as time slots. Slot i covers [begin_i, begin_{i+1}), the last one runs on forever; a
// reservation holds whole nodes over [start, end).
#pragma once

#include <vector>

#include "rlsched/job.h"

namespace rlsched::sim {

class NodeSpace {
 public:
  /// Empties the map for a cycle on `nodes` nodes.
  void reset(int nodes);

  /// Holds `nodes` over [start, end).
  void reserve(Seconds start, Seconds end, const std::vector<int>& nodes);

  /// \return whether some reservation holds node n in a slot that overlaps [from, to] (both ends included, as
  /// _attempt_backfill builds a job's usable nodes).
  bool held(int n, Seconds from, Seconds to) const;

  /// \return whether some reservation holds one of `nodes` during [start, end) (_test_resv_overlap).
  bool held_any(const std::vector<int>& nodes, Seconds start, Seconds end) const;

  /// _attempt_backfill's later_start for a job whose window is [from, to] on `nodes` (the up nodes of its
  /// partition): the end of the first slot, from the one holding `from` on, after which one of those nodes is
  /// free that was not usable through that slot; 0 when there is none.
  Seconds later_start(Seconds from, Seconds to, const std::vector<int>& nodes) const;

  std::size_t slots() const { return slots_.size(); }

 private:
  struct Slot {
    Seconds begin;
    std::vector<char> held;  ///< [node]
  };
  Seconds end_of(std::size_t i) const;
  /// Splits so that a slot begins at t; \return its index.
  std::size_t split(Seconds t);

  std::vector<Slot> slots_;
};

}  // namespace rlsched::sim
