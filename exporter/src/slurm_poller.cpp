#include "slurm_poller.h"

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include <ctime>

#include <fmt/format.h>

#include "capi/tres.h"
#include "io/cluster_common.h"
#include "text/text.h"
#include "text/type_set.h"

// Exported by libslurm 22.05 but not declared in its slurm.h.
extern "C" char* slurm_job_reason_string(enum job_state_reason inx);
extern "C" void slurm_free_stats_response_msg(stats_info_response_msg_t* msg);

namespace rlsched::exporter {

namespace {

std::string text(const char* s) {
  return s ? std::string(s) : std::string();
}

bool shared_gres(const std::string& name) {
  return name == "mps" || name == "shard";
}

void add_gres(const char* list, std::vector<NodeAccelerators>& out, bool used) {
  if (!list) return;
  const std::string all(list);
  for (std::string_view item : io::split_gres_list(all)) {
    if (item.empty() || item == "(null)") continue;
    GresCount g;
    std::string error;
    if (!io::parse_gres_spec(item, g, error, used ? 0 : 1) || shared_gres(g.name)) continue;
    NodeAccelerators* slot = nullptr;
    for (auto& a : out)
      if (a.gres == g.name && a.type == g.type) slot = &a;
    if (!slot) {
      if (used) continue;  // in use but not configured: nothing to count it against
      out.push_back({g.name, g.type, 0, 0});
      slot = &out.back();
    }
    (used ? slot->allocated : slot->total) += g.count;
  }
}

std::vector<std::string> split_partitions(const char* list) {
  return rlsched::text::split_names(text(list));
}

bool usable(std::uint32_t state) {
  const std::uint32_t base = state & NODE_STATE_BASE;
  if (base == NODE_STATE_DOWN || base == NODE_STATE_FUTURE || base == NODE_STATE_UNKNOWN) return false;
  return !(state & (NODE_STATE_DRAIN | NODE_STATE_FAIL | NODE_STATE_NO_RESPOND | NODE_STATE_POWERED_DOWN));
}

}  // namespace

std::vector<NodeAccelerators> parse_node_gres(const char* gres, const char* gres_used) {
  std::vector<NodeAccelerators> out;
  add_gres(gres, out, false);
  add_gres(gres_used, out, true);
  return out;
}

AcceleratorAsk parse_job_ask(const char* per_job, const char* per_node, const char* per_task, std::int64_t nodes,
                             std::int64_t tasks) {
  const std::pair<const char*, std::int64_t> sources[] = {
      {per_job, 1}, {per_node, std::max<std::int64_t>(1, nodes)}, {per_task, std::max<std::int64_t>(1, tasks)}};
  for (const auto& [tres, times] : sources) {
    for (const capi::TresEntry& e : capi::parse_tres(text(tres))) {
      if (!e.gres || shared_gres(e.name)) continue;
      return {e.name, text::parse_type_set(e.type), e.count * times};
    }
  }
  return {};
}

struct SlurmPoller::Tables {
  job_info_msg_t* jobs = nullptr;
  node_info_msg_t* nodes = nullptr;
  ~Tables() {
    if (jobs) slurm_free_job_info_msg(jobs);
    if (nodes) slurm_free_node_info_msg(nodes);
  }
};

SlurmPoller::SlurmPoller(const std::string& slurm_conf) : tables_(std::make_unique<Tables>()) {
  slurm_init(slurm_conf.empty() ? nullptr : slurm_conf.c_str());
}

SlurmPoller::~SlurmPoller() {
  tables_.reset();
  slurm_fini();
}

namespace {

// Loads a whole table every poll. Not "what changed since the last reply": slurmctld 22.05 does not bump its
// last update time for every change a dashboard shows (a pending job's reason set by the scheduler, seen stuck at
// its submit-time reason in e2e.exporter), and at the poll interval a full table costs slurmctld little.
template <typename Msg, typename Load, typename Free>
Status refresh(Msg*& current, Load load, Free free_msg, const char* what) {
  Msg* fresh = nullptr;
  if (load(0, &fresh) == SLURM_SUCCESS) {
    if (current) free_msg(current);
    current = fresh;
    return Status::Ok();
  }
  const int err = slurm_get_errno();
  return Status::IoError(fmt::format("cannot load {} from slurmctld: {}", what, slurm_strerror(err)));
}

}  // namespace

Result<ClusterPoll> SlurmPoller::poll() {
  Status st = refresh(
      tables_->jobs, [](time_t t, job_info_msg_t** m) { return slurm_load_jobs(t, m, SHOW_ALL); },
      slurm_free_job_info_msg, "jobs");
  if (!st.ok()) return st;
  // SHOW_DETAIL: without it libslurm 22.05 leaves gres_used empty.
  st = refresh(
      tables_->nodes, [](time_t t, node_info_msg_t** m) { return slurm_load_node(t, m, SHOW_ALL | SHOW_DETAIL); },
      slurm_free_node_info_msg, "nodes");
  if (!st.ok()) return st;

  ClusterPoll poll;
  poll.now = static_cast<Seconds>(std::time(nullptr));
  const job_info_msg_t* jobs = tables_->jobs;
  poll.jobs.reserve(jobs->record_count);
  for (std::uint32_t i = 0; i < jobs->record_count; ++i) {
    const slurm_job_info_t& j = jobs->job_array[i];
    PolledJob job;
    job.id = j.job_id;
    const std::uint32_t state = j.job_state & JOB_STATE_BASE;
    job.phase = state == JOB_PENDING                               ? JobPhase::kPending
                : (state == JOB_RUNNING || state == JOB_SUSPENDED) ? JobPhase::kRunning
                                                                   : JobPhase::kOther;
    job.partitions = split_partitions(j.partition);
    job.qos = text(j.qos);
    job.reason = text(slurm_job_reason_string(static_cast<enum job_state_reason>(j.state_reason)));
    job.eligible = static_cast<Seconds>(j.eligible_time > 0 ? j.eligible_time : j.submit_time);
    // A pending job's start_time is a forecast, and a job cancelled while pending gets one too, without nodes.
    if (job.phase != JobPhase::kPending && j.nodes && *j.nodes) job.start = static_cast<Seconds>(j.start_time);
    job.ask = parse_job_ask(j.tres_per_job, j.tres_per_node, j.tres_per_task, j.num_nodes, j.num_tasks);
    poll.jobs.push_back(std::move(job));
  }
  const node_info_msg_t* nodes = tables_->nodes;
  poll.nodes.reserve(nodes->record_count);
  for (std::uint32_t i = 0; i < nodes->record_count; ++i) {
    const node_info_t& n = nodes->node_array[i];
    if (!n.name) continue;  // a hidden or future node slot
    poll.nodes.push_back(
        {n.name, split_partitions(n.partitions), usable(n.node_state), parse_node_gres(n.gres, n.gres_used)});
  }

  stats_info_request_msg_t req{};
  req.command_id = STAT_COMMAND_GET;
  stats_info_response_msg_t* stats = nullptr;
  if (slurm_get_statistics(&stats, &req) == SLURM_SUCCESS && stats) {
    SchedulerCycles& c = poll.cycles;
    c.main_last_us = stats->schedule_cycle_last;
    c.main_cycles = stats->schedule_cycle_counter;
    c.main_mean_us =
        stats->schedule_cycle_counter ? double(stats->schedule_cycle_sum) / stats->schedule_cycle_counter : 0;
    c.backfill_last_us = stats->bf_cycle_last;
    c.backfill_cycles = stats->bf_cycle_counter;
    c.backfill_mean_us = stats->bf_cycle_counter ? double(stats->bf_cycle_sum) / stats->bf_cycle_counter : 0;
    slurm_free_stats_response_msg(stats);
  }
  return poll;
}

}  // namespace rlsched::exporter
