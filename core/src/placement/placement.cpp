#include "rlsched/placement.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace rlsched {
namespace placement {
namespace {

bool equivalent(const Options& o, const std::string& a, const std::string& b) {
  if (a == b) return true;
  for (const auto& group : o.gres_equivalence)
    if (std::find(group.begin(), group.end(), a) != group.end() &&
        std::find(group.begin(), group.end(), b) != group.end())
      return true;
  return false;
}

double speed_of(const Options& o, const AcceleratorPool& pool) {
  for (const AcceleratorType& t : o.types)
    if (t.name == pool.type && t.gres == pool.gres) return t.speed;
  return 1.0;
}

std::string pool_name(const AcceleratorPool& p) {
  return p.type.empty() ? p.gres : p.gres + ":" + p.type;
}

std::string wanted(const Request& r) {
  std::string types;
  for (const auto& t : r.types) types += (types.empty() ? "" : "|") + t;
  return types.empty() ? fmt::format("{} {} (any type)", r.count, r.gres)
                       : fmt::format("{} {} of type {}", r.count, r.gres, types);
}

}  // namespace

std::string format_duration(double s) {
  if (!(s >= 0) || !std::isfinite(s)) return "?";
  if (s < 90) return fmt::format("{:.0f} s", s);
  if (s < 90 * 60) return fmt::format("{:.0f} min", s / 60);
  if (s < 36 * 3600) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} d", s / 86400);
}

Decision place(const Request& request, const std::vector<PartitionState>& partitions, const Options& options) {
  Decision d;
  // The biggest pool of a matching type (ignoring counts and time limits), to tell the user what exists.
  const AcceleratorPool* largest = nullptr;
  const PartitionState* largest_in = nullptr;
  bool time_blocked = false;
  int best = -1;
  double best_completion = 0, best_speed = 0;

  for (std::size_t p = 0; p < partitions.size(); ++p) {
    const PartitionState& part = partitions[p];
    if (!request.partitions.empty() &&
        std::find(request.partitions.begin(), request.partitions.end(), part.name) == request.partitions.end())
      continue;
    for (std::size_t k = 0; k < part.pools.size(); ++k) {
      const AcceleratorPool& pool = part.pools[k];
      if (!equivalent(options, request.gres, pool.gres)) continue;
      if (!request.types.empty() &&
          std::find(request.types.begin(), request.types.end(), pool.type) == request.types.end())
        continue;
      Candidate c;
      c.partition = static_cast<int>(p);
      c.pool = static_cast<int>(k);
      if (!part.accepts_jobs) {
        c.why_not = "partition does not accept jobs";
      } else {
        if (pool.total > 0 && (!largest || pool.total > largest->total)) {
          largest = &pool;
          largest_in = &part;
        }
        const Seconds limit = request.time_limit > 0 ? request.time_limit
                              : part.max_time > 0    ? part.max_time
                                                     : options.default_time_limit;
        if (pool.total < request.count) {
          c.why_not = fmt::format("has {} {}, job needs {}", pool.total, pool_name(pool), request.count);
        } else if (request.per_node > 0 && pool.max_per_node < request.per_node) {
          c.why_not = fmt::format("at most {} {} per node, job needs {} per node", pool.max_per_node, pool_name(pool),
                                  request.per_node);
        } else if (request.per_node > 0 && pool.nodes < request.nodes) {
          c.why_not = fmt::format("{} nodes with {}, job needs {}", pool.nodes, pool_name(pool), request.nodes);
        } else if (part.max_time > 0 && request.time_limit > part.max_time) {
          c.why_not = fmt::format("time limit {} exceeds MaxTime {}", format_duration(double(request.time_limit)),
                                  format_duration(double(part.max_time)));
          time_blocked = true;
        } else {
          c.feasible = true;
          const double speed = speed_of(options, pool);
          const int busy = std::max(pool.total - pool.idle, 0);
          const double mean_remaining = busy > 0 ? std::max(pool.running_work, 0.0) / busy : 0.0;
          const int shortage = std::max(request.count - std::max(pool.idle, 0), 0);
          c.wait = (std::max(pool.pending_work, 0.0) + shortage * mean_remaining) / pool.total;
          c.run = static_cast<double>(limit) / speed;
          const double completion = c.wait + c.run;
          bool better = best < 0 || completion < best_completion;
          if (!better && completion == best_completion) {
            const AcceleratorPool& b = partitions[d.candidates[best].partition].pools[d.candidates[best].pool];
            better = speed > best_speed || (speed == best_speed && pool.total < b.total);
          }
          if (better) {
            best = static_cast<int>(d.candidates.size());
            best_completion = completion;
            best_speed = speed;
          }
        }
      }
      d.candidates.push_back(std::move(c));
    }
  }

  if (best < 0) {
    if (largest && time_blocked && largest->total >= request.count)
      d.reason = fmt::format("time limit {} exceeds MaxTime of every partition with {}",
                             format_duration(double(request.time_limit)), wanted(request));
    else if (largest)
      d.reason =
          fmt::format("no partition has {}; most is {} {} in partition {}{}", wanted(request), largest->total,
                      pool_name(*largest), largest_in->name,
                      request.per_node > 0 && request.nodes > 1
                          ? fmt::format(" (the job needs {} per node on {} nodes)", request.per_node, request.nodes)
                          : std::string());
    else
      d.reason = fmt::format("no partition{} has {}", request.partitions.empty() ? std::string() : " you named",
                             wanted(request));
    return d;
  }

  const Candidate& w = d.candidates[best];
  const PartitionState& part = partitions[w.partition];
  const AcceleratorPool& pool = part.pools[w.pool];
  d.placed = true;
  d.partition = w.partition;
  d.pool = w.pool;
  d.partition_name = part.name;
  d.gres = pool.gres;
  d.type = pool.type;
  d.wait = w.wait;
  d.run = w.run;
  // The runner-up, so the reason shows what the choice was against: of another type when there is one (the same
  // type in an overlapping partition is usually the same accelerators), else of another partition.
  const std::string chosen = pool_name(pool);
  auto runner_up = [&](bool other_type) {
    int second = -1;
    for (std::size_t i = 0; i < d.candidates.size(); ++i) {
      const Candidate& c = d.candidates[i];
      if (!c.feasible || static_cast<int>(i) == best) continue;
      if (other_type && pool_name(partitions[c.partition].pools[c.pool]) == chosen) continue;
      if (second < 0 || c.wait + c.run < d.candidates[second].wait + d.candidates[second].run)
        second = static_cast<int>(i);
    }
    return second;
  };
  int second = runner_up(true);
  if (second < 0) second = runner_up(false);
  d.reason = fmt::format("{} in partition {}: start in ~{}, run ~{}", pool_name(pool), part.name,
                         format_duration(w.wait), format_duration(w.run));
  if (second >= 0) {
    const Candidate& s = d.candidates[second];
    d.reason += fmt::format(" (next best {} in {}: done in ~{})", pool_name(partitions[s.partition].pools[s.pool]),
                            partitions[s.partition].name, format_duration(s.wait + s.run));
  }
  return d;
}

}  // namespace placement
}  // namespace rlsched
