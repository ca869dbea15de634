#include "rlsched/sim/rlscheduler_compat.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <queue>

#include <fmt/format.h>

#include "rlsched/predicted_run_times.h"

namespace rlsched::sim {

Result<CompatWorkload> prepare_compat_workload(const Workload& workload, int nodes, int procs_per_node) {
  CompatWorkload out;
  std::vector<std::size_t> order;
  order.reserve(workload.jobs.size());
  for (std::size_t i = 0; i < workload.jobs.size(); ++i) {
    if (workload.jobs[i].run_time == 0) {
      ++out.dropped_zero_runtime;
      continue;
    }
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return workload.jobs[a].id < workload.jobs[b].id; });

  if (nodes > 0) {
    out.nodes = nodes;
    out.procs_per_node = std::max(procs_per_node, 1);
  } else {
    out.nodes = workload.max_nodes;
    const int procs = workload.max_procs > 0 ? workload.max_procs : workload.max_nodes;
    if (out.nodes <= 0)
      return Status::InvalidInput(fmt::format(
          "{}: the trace header gives no MaxNodes, so the RLScheduler machine size is unknown (pass a cluster)",
          workload.report.source));
    out.procs_per_node = std::max(procs / out.nodes, 1);
  }
  const long long capacity = static_cast<long long>(out.nodes) * out.procs_per_node;
  out.jobs.reserve(order.size());
  for (std::size_t i : order) {
    const Job& job = workload.jobs[i];
    if (job.cpus > capacity)
      return Status::InvalidInput(fmt::format("job {} asks for {} processors, the machine has {}", job.id, job.cpus,
                                              capacity));
    const Seconds request = job.time_limit > 0 ? job.time_limit : job.run_time;
    const int nodes_needed = (job.cpus + out.procs_per_node - 1) / out.procs_per_node;
    out.jobs.push_back(CompatJob{job.id, i, job.submit, job.run_time, request, job.cpus, nodes_needed, job.user});
  }
  return out;
}

namespace {

struct CompatRunningJob {
  Seconds end;
  Seconds start;
  Seconds request;
  int nodes;
  std::size_t job;  // index into CompatWorkload::jobs
  std::size_t seq;  // start order, breaks ties of equal end times like RLScheduler's stable sort
};

struct LaterEnd {
  bool operator()(const CompatRunningJob& a, const CompatRunningJob& b) const {
    return a.end != b.end ? a.end > b.end : a.seq > b.seq;
  }
};

/// One sequence of RLScheduler's simulation; see the header for the semantics reproduced here.
class CompatRun {
 public:
  CompatRun(const CompatWorkload& workload, std::size_t first, std::size_t count, const Scorer* scorer,
            DecisionMaker* agent, bool backfill)
      : jobs_(workload.jobs),
        procs_per_node_(workload.procs_per_node),
        first_(first),
        end_(std::min(first + count, workload.jobs.size())),
        scorer_(scorer),
        agent_(agent),
        static_(scorer != nullptr && scorer->is_static()),
        backfill_(backfill),
        predicted_((agent != nullptr && agent->reads_predicted_run_time()) ||
                   (scorer != nullptr && scorer->reads_predicted_run_time())),
        total_nodes_(workload.nodes),
        free_nodes_(workload.nodes),
        start_time_(end_ - first_, -1) {}

  std::vector<JobOutcome> run() {
    std::vector<JobOutcome> outcomes;
    if (first_ >= end_) return outcomes;
    if (static_) {  // a static score does not depend on time: score the whole sequence in one call
      batch_.clear();
      for (std::size_t j = first_; j < end_; ++j) {
        batch_.push_back(view(j));
        batch_.back().wait = 0;  // as at its arrival; a static scorer must not depend on it anyway
      }
      static_score_.assign(batch_.size(), 0.0);
      scorer_->score(context(), batch_, static_score_);
    }
    now_ = jobs_[first_].submit;
    next_ = first_;
    enqueue(next_++);
    for (;;) {
      const std::size_t head = pick();
      if (!fits(head)) {
        if (backfill_) {
          backfill_until_fits(head);
        } else {
          while (!fits(head)) advance();
        }
      }
      start(head);
      compact();
      if (!move_forward_for_job()) break;
    }
    outcomes.reserve(end_ - first_);
    for (std::size_t j = first_; j < end_; ++j) {
      const CompatJob& job = jobs_[j];
      JobOutcome o;
      o.job = job.source;
      o.submit = job.submit;
      o.start = start_time_[j - first_];
      o.end = o.start + job.run;
      o.state = JobEnd::kCompleted;
      o.cpus = job.procs;
      outcomes.push_back(o);
    }
    return outcomes;
  }

 private:
  int nodes_needed(std::size_t j) const { return jobs_[j].nodes; }
  bool fits(std::size_t j) const { return nodes_needed(j) <= free_nodes_; }
  bool started(std::size_t j) const { return start_time_[j - first_] >= 0; }
  Seconds request(std::size_t j) const { return jobs_[j].request; }

  PendingJob view(std::size_t j) const {
    PendingJob p;
    p.id = jobs_[j].id;
    p.submit = jobs_[j].submit;
    p.wait = now_ - jobs_[j].submit;
    p.time_limit = request(j);
    p.cpus = jobs_[j].procs;
    p.nodes = nodes_needed(j);
    p.fits_now = fits(j);
    if (predicted_) run_times_.annotate(jobs_[j].user, p);
    return p;
  }

  /// Queue order for a static scorer: highest score, then earliest submit, then trace order.
  struct Ranked {
    double score;
    Seconds submit;
    std::size_t job;
  };
  struct RanksBelow {
    bool operator()(const Ranked& a, const Ranked& b) const {
      if (a.score != b.score) return a.score < b.score;
      if (a.submit != b.submit) return a.submit > b.submit;
      return a.job > b.job;
    }
  };

  void enqueue(std::size_t j) {
    ++queued_count_;
    // FCFS order (submit, trace order): arrivals come in trace order, so this is an append unless submits go back.
    const Queued entry{jobs_[j].request, jobs_[j].nodes, j};
    fcfs_.insert(std::upper_bound(fcfs_.begin(), fcfs_.end(), entry, fcfs_before_), entry);
    if (static_) ranked_.push(Ranked{static_score_[j - first_], jobs_[j].submit, j});
  }

  ScoringContext context() const {
    ScoringContext c;
    c.now = now_;
    c.total_cpus = total_nodes_ * procs_per_node_;
    c.total_nodes = total_nodes_;
    c.idle_cpus = free_nodes_ * procs_per_node_;
    c.pending_jobs = static_cast<int>(queued_count_);
    return c;
  }

  std::size_t pick() {
    if (static_) {
      while (started(ranked_.top().job)) ranked_.pop();
      return ranked_.top().job;
    }
    batch_.clear();
    members_.clear();
    for (const Queued& q : fcfs_) {
      const std::size_t j = q.job;
      if (started(j)) continue;
      batch_.push_back(view(j));
      members_.push_back(j);
    }
    if (agent_ != nullptr) return members_.at(agent_->choose(context(), batch_));
    scores_.assign(batch_.size(), 0.0);
    scorer_->score(context(), batch_, scores_);
    std::size_t best = 0;
    RanksBelow below;
    for (std::size_t i = 1; i < members_.size(); ++i) {
      if (below(Ranked{scores_[best], jobs_[members_[best]].submit, members_[best]},
                Ranked{scores_[i], jobs_[members_[i]].submit, members_[i]}))
        best = i;
    }
    return members_[best];
  }

  void start(std::size_t j) {
    start_time_[j - first_] = now_;
    free_nodes_ -= nodes_needed(j);
    --queued_count_;
    running_.push_back(CompatRunningJob{now_ + jobs_[j].run, now_, request(j), nodes_needed(j), j, seq_++});
    std::push_heap(running_.begin(), running_.end(), LaterEnd());
    if (agent_ != nullptr) agent_->on_start(j, now_ - jobs_[j].submit, jobs_[j].run);
  }

  /// Drops started jobs from the FCFS list; only between scans, never while one iterates it.
  void compact() {
    if (fcfs_.size() > 64 && queued_count_ * 2 < fcfs_.size())
      fcfs_.erase(std::remove_if(fcfs_.begin(), fcfs_.end(), [this](const Queued& q) { return started(q.job); }),
                  fcfs_.end());
  }

  /// Moves time to the next event: the next arrival if it comes no later than the next completion, else that
  /// completion (arrivals first on ties, as RLScheduler does). \return true when it was an arrival.
  bool advance() {
    const Seconds release = running_.empty() ? kNever : running_.front().end;
    if (next_ < end_ && jobs_[next_].submit <= release) {
      now_ = std::max(now_, jobs_[next_].submit);
      enqueue(next_++);
      return true;
    }
    now_ = std::max(now_, release);
    free_nodes_ += running_.front().nodes;
    if (predicted_) {
      const CompatRunningJob& ended = running_.front();
      run_times_.ended(jobs_[ended.job].user, ended.request, ended.end - ended.start);
    }
    std::pop_heap(running_.begin(), running_.end(), LaterEnd());
    running_.pop_back();
    return false;
  }

  /// \return false when the queue is empty and no job is left to arrive.
  bool move_forward_for_job() {
    if (queued_count_ > 0) return true;
    if (next_ >= end_) return false;
    while (queued_count_ == 0) advance();
    return true;
  }

  void backfill_until_fits(std::size_t head) {
    // The head's reservation: when enough processors are free if running jobs end at their requested times.
    by_request_ = running_;
    std::sort(by_request_.begin(), by_request_.end(), [](const CompatRunningJob& a, const CompatRunningJob& b) {
      const Seconds ea = a.start + a.request, eb = b.start + b.request;
      return ea != eb ? ea < eb : a.seq < b.seq;
    });
    long long free_procs = static_cast<long long>(free_nodes_) * procs_per_node_;
    Seconds reservation = now_;
    for (const CompatRunningJob& r : by_request_) {
      free_procs += static_cast<long long>(r.nodes) * procs_per_node_;
      reservation = r.start + r.request;
      if (free_procs >= jobs_[head].procs) break;
    }
    // RLScheduler rescans the whole queue after every event. A job it turned down stays turned down until nodes
    // are released, and one whose request reaches past the reservation stays out for good (time only moves on).
    // So the scan keeps a list of the jobs that may still qualify, in FCFS order, and after an arrival tests only
    // the newcomer; the jobs started are the same as with full rescans.
    candidates_.clear();
    for (const Queued& q : fcfs_)
      if (!started(q.job) && now_ + q.request < reservation) candidates_.push_back(q);
    bool rescan = true;
    while (!fits(head)) {
      if (rescan) {
        std::size_t kept = 0;
        for (const Queued& q : candidates_) {
          if (started(q.job) || now_ + q.request >= reservation) continue;
          if (q.nodes <= free_nodes_) {
            start(q.job);
            continue;
          }
          candidates_[kept++] = q;
        }
        candidates_.resize(kept);
      } else {
        const std::size_t j = next_ - 1;
        if (now_ + request(j) < reservation) {
          if (fits(j)) {
            start(j);
          } else {
            const Queued entry{jobs_[j].request, jobs_[j].nodes, j};
            candidates_.insert(std::upper_bound(candidates_.begin(), candidates_.end(), entry, fcfs_before_), entry);
          }
        }
      }
      rescan = !advance();
    }
  }

  const std::vector<CompatJob>& jobs_;
  const int procs_per_node_;
  const std::size_t first_, end_;
  const Scorer* scorer_;  // exactly one of scorer_ and agent_ is set
  DecisionMaker* agent_;
  const bool static_;     // scorer_ scores do not change while jobs wait: rank once, keep a heap
  const bool backfill_;
  const bool predicted_;  // fill PendingJob::predicted_run_time from the ends so far
  PredictedRunTimes run_times_;

  Seconds now_ = 0;
  std::size_t next_ = 0;
  const int total_nodes_;
  int free_nodes_;
  std::size_t queued_count_ = 0;
  std::size_t seq_ = 0;
  std::vector<Seconds> start_time_;      // by job - first_, -1 until started
  /// A queued job in FCFS order, with what the backfill scan tests inline.
  struct Queued {
    Seconds request;
    int nodes;
    std::size_t job;
  };
  std::vector<Queued> fcfs_;  // started jobs are removed lazily (compact())
  std::vector<Queued> candidates_;  // backfill: queued jobs that may still qualify for the current reservation
  std::vector<double> static_score_;  // by job - first_, for static scorers
  /// FCFS order: earlier submit, then trace order.
  struct FcfsBefore {
    const std::vector<CompatJob>* jobs;
    bool operator()(const Queued& a, const Queued& b) const {
      const Seconds sa = (*jobs)[a.job].submit, sb = (*jobs)[b.job].submit;
      return sa != sb ? sa < sb : a.job < b.job;
    }
  };
  FcfsBefore fcfs_before_{&jobs_};
  std::priority_queue<Ranked, std::vector<Ranked>, RanksBelow> ranked_;  // static scorers only
  std::vector<CompatRunningJob> running_;      // min-heap on (end, seq)
  std::vector<CompatRunningJob> by_request_;
  std::vector<PendingJob> batch_;
  std::vector<std::size_t> members_;
  std::vector<double> scores_;
};

}  // namespace

std::vector<JobOutcome> run_compat_sequence(const CompatWorkload& workload, std::size_t first, std::size_t count,
                                            const Scorer& scorer, bool backfill) {
  return CompatRun(workload, first, count, &scorer, nullptr, backfill).run();
}

std::vector<JobOutcome> run_compat_sequence(const CompatWorkload& workload, std::size_t first, std::size_t count,
                                            DecisionMaker& agent, bool backfill) {
  return CompatRun(workload, first, count, nullptr, &agent, backfill).run();
}

}  // namespace rlsched::sim
