#include "rlsched/placement.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "text/type_set.h"

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

const AcceleratorType* find(const Options& o, std::string_view gres, std::string_view type) {
  for (const AcceleratorType& t : o.types)
    if (t.name == type && t.gres == gres) return &t;
  return nullptr;
}

double count_scale(const Options& o, std::string_view gres, std::string_view type) {
  const AcceleratorType* t = find(o, gres, type);
  return t ? t->count_scale : 1.0;
}

/// Whether pool (gres, type) may serve a request for `gres` with allowed `types` ("h200|a100"; "" = any type).
bool serves(const AcceleratorPool& pool, std::string_view gres, std::string_view types) {
  return pool.gres == gres && type_allowed(types, pool.type);
}

/// The one type `part` offers GRES `gres` in, or nullptr when it offers several (a typeless request there could
/// land on any of them) or none.
const std::string* single_type(const PartitionState& part, const std::string& gres) {
  const std::string* type = nullptr;
  for (const AcceleratorPool& pool : part.pools) {
    if (pool.gres != gres || pool.total <= 0) continue;
    if (type && *type != pool.type) return nullptr;
    type = &pool.type;
  }
  return type;
}

/// The latest predicted completion if the job is allowed pool `c` beside the best pool `best`: Slurm starts it in
/// whichever frees first, so it starts in `c` no later than the earlier of the two predicted waits, and then runs at
/// c's speed. When `c` is predicted to free first this is c's own completion; when it frees later, the bound is the
/// best's wait plus c's run (a wrong prediction of the best's wait costs at most c's slower run).
double late_binding_completion(const Candidate& c, const Candidate& best) {
  return std::min(c.wait, best.wait) + c.run;
}

/// Seconds until `missing` more nodes of `per_node` devices are wholly free, while `busy_nodes` nodes drain at once,
/// each device held by one job with `mean_left` seconds left on average: one node drains after the last of its jobs,
/// mean_left * H(per_node) (harmonic number; exponential remaining times), so nodes come free at busy_nodes per that.
double whole_nodes_wait(int missing, int busy_nodes, int per_node, double mean_left) {
  double harmonic = 0;
  for (int i = 1; i <= per_node; ++i) harmonic += 1.0 / i;
  return missing * mean_left * harmonic / std::max(busy_nodes, 1);
}

std::string pool_name(const AcceleratorPool& p) {
  return p.type.empty() ? p.gres : p.gres + ":" + p.type;
}

std::string wanted(const Request& r) {
  const std::string types = text::format_type_set(r.types);
  return types.empty() ? fmt::format("{} {} (any type)", r.count, r.gres)
                       : fmt::format("{} {} of type {}", r.count, r.gres, types);
}

}  // namespace

NodeShape fewest_nodes(int count, int per_node_max) {
  if (count <= 0 || per_node_max <= 0) return {};
  const int nodes = (count + per_node_max - 1) / per_node_max;
  return {nodes, (count + nodes - 1) / nodes};
}

bool may_change_gres(const Options& options, std::string_view job_class) {
  return !job_class.empty() && std::find(options.gres_portable_classes.begin(), options.gres_portable_classes.end(),
                                         job_class) != options.gres_portable_classes.end();
}

bool type_allowed(std::string_view types, std::string_view type) {
  return text::type_set_allows(types, type);
}

double speed_of(const Options& options, std::string_view gres, std::string_view type, const std::string& job_class) {
  const AcceleratorType* t = find(options, gres, type);
  return t ? t->speed_for(job_class) : 1.0;
}

int scaled_count(const Options& o, int count, std::string_view gres_from, std::string_view from,
                 std::string_view gres_to, std::string_view to) {
  const double base = from.empty() ? 1.0 : count_scale(o, gres_from, from);
  const double n = std::ceil(count * count_scale(o, gres_to, to) / base - 1e-9);
  return n >= 1 << 30 ? 1 << 30 : std::max(static_cast<int>(n), count > 0 ? 1 : 0);
}

namespace {

void append_key(std::string& key, std::string_view gres, std::string_view types, std::string_view job_class,
                const std::vector<int>& partitions) {
  key.assign(gres);
  key += '\x1f';
  key.append(types);
  key += '\x1f';
  key.append(job_class);
  for (int p : partitions) {
    key += '\x1f';
    key += std::to_string(p);
  }
}

}  // namespace

QueueLoad::Work& QueueLoad::slot(std::string_view gres, std::string_view types, std::string_view job_class,
                                 const std::vector<int>& partitions) {
  // A queue holds a handful of distinct requests: the last one hit, then a scan, and a map only beyond that.
  auto same = [&](const Work& w) {
    return w.gres == gres && w.types == types && w.job_class == job_class && w.partitions == partitions;
  };
  if (last_ < work_.size() && same(work_[last_])) return work_[last_];
  if (work_.size() <= kScanLimit) {
    for (std::size_t i = 0; i < work_.size(); ++i)
      if (same(work_[i])) return work_[last_ = i];
  } else {
    append_key(key_, gres, types, job_class, partitions);
    if (const auto it = index_.find(key_); it != index_.end()) return work_[last_ = it->second];
  }
  last_ = work_.size();
  work_.push_back(Work{std::string(gres), std::string(types), std::string(job_class), partitions, 0, {}});
  if (work_.size() > kScanLimit) {  // (re)build the index once the scan gets long
    for (std::size_t i = index_.size(); i < work_.size(); ++i) {
      append_key(key_, work_[i].gres, work_[i].types, work_[i].job_class, work_[i].partitions);
      index_.emplace(key_, i);
    }
  }
  return work_.back();
}

void QueueLoad::add_pending(std::string_view gres, std::string_view types, int count, double limit,
                            std::string_view job_class, const std::vector<int>& partitions) {
  if (count <= 0 || !(limit > 0)) return;
  slot(gres, types, job_class, partitions).pending += count * limit;
}

void QueueLoad::add_running(std::string_view gres, std::string_view types, int count, double limit, double elapsed,
                            std::string_view job_class) {
  if (count <= 0 || !(limit > 0)) return;
  static const std::vector<int> kAny;
  slot(gres, types, job_class, kAny).running.push_back(Running{double(count), limit, std::max(elapsed, 0.0)});
}

void QueueLoad::apply(std::vector<PartitionState>& partitions) const {
  struct Share {
    const std::string* type;
    double size;  // most accelerators of the type in one of the request's partitions
  };
  std::vector<Share> shares;
  for (const Work& w : work_) {
    shares.clear();
    double total = 0;
    for (std::size_t p = 0; p < partitions.size(); ++p) {
      if (!w.partitions.empty() &&
          std::find(w.partitions.begin(), w.partitions.end(), static_cast<int>(p)) == w.partitions.end())
        continue;
      for (const AcceleratorPool& pool : partitions[p].pools) {
        if (!serves(pool, w.gres, w.types) || pool.total <= 0) continue;
        auto s = std::find_if(shares.begin(), shares.end(), [&](const Share& x) { return *x.type == pool.type; });
        if (s == shares.end()) {
          shares.push_back(Share{&pool.type, double(pool.total)});
          total += pool.total;
        } else if (pool.total > s->size) {
          total += pool.total - s->size;
          s->size = pool.total;
        }
      }
    }
    if (total <= 0) continue;
    for (PartitionState& part : partitions)
      for (AcceleratorPool& pool : part.pools) {
        if (!serves(pool, w.gres, w.types)) continue;
        const auto s = std::find_if(shares.begin(), shares.end(), [&](const Share& x) { return *x.type == pool.type; });
        if (s == shares.end()) continue;
        const double share = s->size / total;
        const double speed = speed_of(options_, pool.gres, pool.type, w.job_class);
        pool.pending_work += share * w.pending / speed;
        for (const Running& r : w.running)
          pool.running_work += share * r.count * std::max(r.limit / speed - r.elapsed, 0.0);
      }
  }
}

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
  const bool portable = may_change_gres(options, request.job_class);

  for (std::size_t p = 0; p < partitions.size(); ++p) {
    const PartitionState& part = partitions[p];
    if (!request.partitions.empty() &&
        std::find(request.partitions.begin(), request.partitions.end(), part.name) == request.partitions.end())
      continue;
    for (std::size_t k = 0; k < part.pools.size(); ++k) {
      const AcceleratorPool& pool = part.pools[k];
      if (pool.gres != request.gres && !(portable && equivalent(options, request.gres, pool.gres))) continue;
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
        c.count = scaled_count(options, request.count, request.gres, request.count_type, pool.gres, pool.type);
        const int per_node = request.per_node > 0 ? scaled_count(options, request.per_node, request.gres,
                                                                 request.count_type, pool.gres, pool.type)
                                                  : 0;
        if (pool.total < c.count) {
          c.why_not = fmt::format("has {} {}, job needs {}", pool.total, pool_name(pool), c.count);
        } else if (per_node > 0 && pool.max_per_node < per_node) {
          c.why_not = fmt::format("at most {} {} per node, job needs {} per node", pool.max_per_node, pool_name(pool),
                                  per_node);
        } else if (request.per_node > 0 && pool.nodes < request.nodes) {
          c.why_not = fmt::format("{} nodes with {}, job needs {}", pool.nodes, pool_name(pool), request.nodes);
        } else if (part.max_time > 0 && request.time_limit > part.max_time) {
          c.why_not = fmt::format("time limit {} exceeds MaxTime {}", format_duration(double(request.time_limit)),
                                  format_duration(double(part.max_time)));
          time_blocked = true;
        } else {
          c.feasible = true;
          const double speed = speed_of(options, pool.gres, pool.type, request.job_class);
          const int busy = std::max(pool.total - pool.idle, 0);
          const double mean_remaining = busy > 0 ? std::max(pool.running_work, 0.0) / busy : 0.0;
          const int shortage = std::max(c.count - std::max(pool.idle, 0), 0);
          double freeing = shortage * mean_remaining / pool.total;
          // A job that takes whole nodes waits for nodes to drain, not for any `shortage` devices.
          const NodeShape shape =
              per_node > 0 ? NodeShape{std::max(request.nodes, 1), per_node} : fewest_nodes(c.count, pool.max_per_node);
          if (shape.per_node == pool.max_per_node && pool.idle_nodes >= 0 && shape.nodes > pool.idle_nodes)
            freeing = std::max(freeing, whole_nodes_wait(shape.nodes - pool.idle_nodes, pool.nodes - pool.idle_nodes,
                                                         shape.per_node, mean_remaining));
          c.wait = std::max(pool.pending_work, 0.0) / pool.total + freeing;
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
  d.count = w.count;
  if (request.per_node > 0)
    d.per_node = scaled_count(options, request.per_node, request.gres, request.count_type, pool.gres, pool.type);
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
  d.set.push_back(SetMember{w.partition, w.pool, part.name, pool.type, w.wait, w.run});
  if (single_type(part, pool.gres)) {
    std::vector<int> order;
    for (std::size_t i = 0; i < d.candidates.size(); ++i) {
      const Candidate& c = d.candidates[i];
      const PartitionState& cp = partitions[c.partition];
      if (!c.feasible || static_cast<int>(i) == best || c.count != w.count || cp.pools[c.pool].gres != pool.gres ||
          !single_type(cp, pool.gres) || !(late_binding_completion(c, w) <= options.slack * best_completion))
        continue;
      if (request.per_node > 0 && scaled_count(options, request.per_node, request.gres, request.count_type, pool.gres,
                                               cp.pools[c.pool].type) != d.per_node)
        continue;  // one GRES string: the same count per node everywhere
      order.push_back(static_cast<int>(i));
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return d.candidates[a].wait + d.candidates[a].run < d.candidates[b].wait + d.candidates[b].run;
    });
    for (int i : order) {
      const Candidate& c = d.candidates[i];
      const PartitionState& cp = partitions[c.partition];
      // One member per type: another partition with a type already in the set shows, as far as the snapshot can
      // tell, the same accelerators (a catch-all "all" beside the per-type partitions).
      const bool listed = std::any_of(d.set.begin(), d.set.end(), [&](const SetMember& m) {
        return m.partition_name == cp.name || m.type == cp.pools[c.pool].type;
      });
      if (!listed) d.set.push_back(SetMember{c.partition, c.pool, cp.name, cp.pools[c.pool].type, c.wait, c.run});
    }
  }
  int second = runner_up(true);
  if (second < 0) second = runner_up(false);
  d.reason = fmt::format("{} in partition {}: start in ~{}, run ~{}", pool_name(pool), part.name,
                         format_duration(w.wait), format_duration(w.run));
  if (second >= 0) {
    const Candidate& s = d.candidates[second];
    d.reason += fmt::format(" (next best {} in {}: done in ~{})", pool_name(partitions[s.partition].pools[s.pool]),
                            partitions[s.partition].name, format_duration(s.wait + s.run));
  }
  if (d.set.size() > 1) {
    d.reason += ", and may also start in";
    for (std::size_t i = 1; i < d.set.size(); ++i)
      d.reason += fmt::format("{} {} (done in ~{})", i > 1 ? "," : "", d.set[i].partition_name,
                              format_duration(d.set[i].wait + d.set[i].run));
  }
  return d;
}

}  // namespace placement
}  // namespace rlsched
