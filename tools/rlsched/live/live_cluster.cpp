// slurmctld's tables through libslurm, converted once into the plugins' C snapshot (live_cluster.h). The
// conversion mirrors plugin/common/rlsched_snapshot.c: usable nodes only, pools per (GRES, type) in the order their
// first node comes in the node table, factors normalised by slurm.conf's weights and clamped to [0, 1].
#include "live/live_cluster.h"

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <ctime>
#include <unordered_map>

#include <fmt/format.h>

#include "slurm_poller.h"  // rlsched-exporter's readers of libslurm's GRES strings
#include "text/duration.h"
#include "text/text.h"
#include "text/type_set.h"

// Exported by libslurm 22.05 but not declared in its slurm.h.
extern "C" char* slurm_job_reason_string(enum job_state_reason inx);
extern "C" char* slurm_job_state_string(uint32_t inx);

namespace rlsched::cli::live {
namespace {

std::string text_of(const char* s) { return s ? std::string(s) : std::string(); }

bool usable(std::uint32_t state) {
  const std::uint32_t base = state & NODE_STATE_BASE;
  if (base == NODE_STATE_DOWN || base == NODE_STATE_FUTURE || base == NODE_STATE_UNKNOWN) return false;
  return !(state & (NODE_STATE_DRAIN | NODE_STATE_FAIL | NODE_STATE_NO_RESPOND | NODE_STATE_POWERED_DOWN));
}

Seconds minutes_limit(std::uint32_t minutes) {
  return (minutes == INFINITE || minutes == NO_VAL) ? 0 : Seconds(minutes) * 60;
}

double normalised(double weighted, double weight) {
  if (weight <= 0) return 0;
  return std::clamp(weighted / weight, 0.0, 1.0);
}

std::string user_name(std::uint32_t uid, const char* given) {
  if (given && *given) return given;
  static std::unordered_map<std::uint32_t, std::string> known;  // one lookup per user, not per job
  auto [it, added] = known.try_emplace(uid);
  if (added) {
    const passwd* pw = getpwuid(uid);
    it->second = pw ? pw->pw_name : std::to_string(uid);
  }
  return it->second;
}

// A running job's accelerators from its allocated TRES ("cpu=2,...,gres/gpu=2,gres/gpu:h200=2"): the typed entry
// when there is one, as the plugin takes the allocation's type.
void held_accelerators(const char* tres_alloc, LiveJob& job) {
  for (const std::string& entry : text::split_names(text_of(tres_alloc))) {
    if (entry.rfind("gres/", 0) != 0) continue;
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string what = entry.substr(5, eq - 5);
    const auto colon = what.find(':');
    const std::string name = what.substr(0, colon);
    if (name == "mps" || name == "shard") continue;
    if (!job.gres.empty() && (job.gres != name || colon == std::string::npos)) continue;
    job.gres = name;
    job.gres_type = colon == std::string::npos ? std::string() : what.substr(colon + 1);
    job.c.accelerators = std::atoi(entry.c_str() + eq + 1);
  }
}

// The site factor as sprio shows it: site_factor/rlsched writes NICE_OFFSET + its scaled rank.
std::int64_t site_of(std::uint32_t site) {
  return site >= NICE_OFFSET ? std::int64_t(site) - std::int64_t(NICE_OFFSET) : std::int64_t(site);
}

template <typename Msg>
struct Freed {
  Msg* msg = nullptr;
  void (*free_msg)(Msg*);
  ~Freed() {
    if (msg) free_msg(msg);
  }
};

Status unreachable(const char* what) {
  const char* conf = std::getenv("SLURM_CONF");
  return Status::IoError(fmt::format("cannot reach slurmctld ({} failed: {}; slurm.conf: {})", what,
                                     slurm_strerror(slurm_get_errno()), conf ? conf : "the default"));
}

// One job record in the engine's terms (its C view's strings are bound once every record is in place).
LiveJob job_from(const slurm_job_info_t& j, const LiveCluster& live) {
  LiveJob job;
  const std::uint32_t base = j.job_state & JOB_STATE_BASE;
  job.phase = base == JOB_PENDING                             ? JobPhase::kPending
              : (base == JOB_RUNNING || base == JOB_SUSPENDED) ? JobPhase::kRunning
                                                               : JobPhase::kFinished;
  job.state = text_of(slurm_job_state_string(j.job_state));
  job.reason = text_of(slurm_job_reason_string(static_cast<enum job_state_reason>(j.state_reason)));
  job.user = user_name(j.user_id, j.user_name);
  job.account = text_of(j.account);
  job.qos = text_of(j.qos);
  job.name = text_of(j.name);
  job.comment = text_of(j.comment);
  job.admin_comment = text_of(j.admin_comment);
  job.partition_list = text_of(j.partition);
  job.node_list = text_of(j.nodes);
  job.priority = j.priority;
  job.submit = j.submit_time;
  job.eligible = j.eligible_time > 0 ? j.eligible_time : j.submit_time;
  job.start = j.start_time;
  job.end = j.end_time;
  if (job.phase == JobPhase::kFinished)
    job.suspended = suspended_seconds(j.start_time, j.end_time, j.suspend_time, j.pre_sus_time);
  for (int k = 0; j.node_inx && j.node_inx[k] >= 0; k += 2)
    for (int n = j.node_inx[k]; n <= j.node_inx[k + 1] && n < int(live.nodes.size()); ++n)
      job.nodes.push_back(live.nodes[n].name);
  for (std::size_t k = 0; j.job_resrcs && k < job.nodes.size(); ++k) {
    const int cpus = slurm_job_cpus_allocated_on_node_id(j.job_resrcs, static_cast<int>(k));
    if (cpus <= 0) break;
    job.node_cpus.push_back(cpus);
  }
  if (job.node_cpus.size() != job.nodes.size()) job.node_cpus.clear();
  for (const std::string& name : text::split_names(job.partition_list))
    if (const int p = live.partition_index(name); p >= 0) job.partitions.push_back(p);

  rlsched_job& c = job.c;
  c.job_id = j.job_id;
  c.state = job.phase == JobPhase::kRunning ? RLSCHED_JOB_RUNNING : RLSCHED_JOB_PENDING;
  c.submit_time = j.submit_time;
  c.begin_time = j.eligible_time > j.submit_time ? j.eligible_time : 0;
  c.end_time = job.phase == JobPhase::kRunning ? j.end_time : 0;
  c.time_limit = minutes_limit(j.time_limit);
  c.cpus = static_cast<int32_t>(std::max<std::uint32_t>(j.num_cpus, 1));
  c.nodes = static_cast<int32_t>(std::max<std::uint32_t>(j.num_nodes, 1));
  c.restarts = j.restart_cnt;
  c.user_id = j.user_id;
  c.partition = job.partitions.empty() ? -1 : job.partitions.front();
  if (job.phase == JobPhase::kRunning) {
    held_accelerators(j.tres_alloc_str, job);
  } else {
    const exporter::AcceleratorAsk ask =
        exporter::parse_job_ask(j.tres_per_job, j.tres_per_node, j.tres_per_task, j.num_nodes, j.num_tasks);
    job.gres = ask.gres;
    job.gres_type = text::format_type_set(ask.types);
    c.accelerators = static_cast<int32_t>(ask.count);
  }
  return job;
}

// Slurm's factors of a pending job (the first entry when it has one per partition), weighted as sprio shows them
// and normalised as the plugin normalises them.
void add_factors(const priority_factors_object_t& f, const LiveCluster& live, LiveJob& job) {
  if (job.has_factors) return;
  job.has_factors = true;
  job.factors = {f.priority_age,  f.priority_fs,    f.priority_js,         f.priority_part,
                 f.priority_qos,  f.priority_assoc, site_of(f.priority_site), std::int64_t(f.nice) - std::int64_t(NICE_OFFSET)};
  job.c.age_factor = normalised(f.priority_age, live.weight_age);
  job.c.fairshare_factor = normalised(f.priority_fs, live.weight_fairshare);
  job.c.job_size_factor = normalised(f.priority_js, live.weight_job_size);
  job.c.partition_factor = normalised(f.priority_part, live.weight_partition);
  job.c.qos_factor = normalised(f.priority_qos, live.weight_qos);
}

}  // namespace

std::string LiveJob::request() const {
  std::string out;
  if (c.accelerators > 0)
    out = fmt::format("{}:{}{}, ", gres, gres_type.empty() ? "" : gres_type + ":", c.accelerators);
  out += fmt::format("{} cpu{}, {} node{}", c.cpus, c.cpus == 1 ? "" : "s", c.nodes, c.nodes == 1 ? "" : "s");
  if (c.time_limit > 0) out += ", " + text::format_duration(c.time_limit);
  return out;
}

LiveCluster::~LiveCluster() { slurm_fini(); }

const LiveJob* LiveCluster::find(JobId id) const {
  for (const LiveJob& j : jobs)
    if (j.c.job_id == id) return &j;
  return nullptr;
}

int LiveCluster::partition_index(const std::string& name) const {
  for (int p = 0; p < cluster.n_partitions; ++p)
    if (name == cluster.partitions[p].name) return p;
  return -1;
}

std::vector<rlsched_job> LiveCluster::pending(std::vector<std::size_t>* pending_of) const {
  std::vector<rlsched_job> out;
  if (pending_of) pending_of->clear();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].phase != JobPhase::kPending) continue;
    out.push_back(jobs[i].c);
    if (pending_of) pending_of->push_back(i);
  }
  return out;
}

Result<std::unique_ptr<LiveCluster>> LiveCluster::load(const std::string& slurm_conf) {
  // libslurm retries a missing slurm.conf for a minute before it gives up: say so at once instead.
  const char* env = std::getenv("SLURM_CONF");
  const std::string conf_path = !slurm_conf.empty() ? slurm_conf : env && *env ? env : "/etc/slurm/slurm.conf";
  if (access(conf_path.c_str(), R_OK) != 0)
    return Status::IoError(fmt::format("cannot read slurm.conf {}: {} (set SLURM_CONF to the cluster's)", conf_path,
                                       std::strerror(errno)));
  slurm_init(slurm_conf.empty() ? nullptr : slurm_conf.c_str());
  std::unique_ptr<LiveCluster> live(new LiveCluster());
  live->now = static_cast<Seconds>(std::time(nullptr));

  Freed<slurm_conf_t> conf{nullptr, slurm_free_ctl_conf};
  if (slurm_load_ctl_conf(0, &conf.msg) != SLURM_SUCCESS) return unreachable("slurm_load_ctl_conf");
  live->weight_age = conf.msg->priority_weight_age;
  live->weight_fairshare = conf.msg->priority_weight_fs;
  live->weight_job_size = conf.msg->priority_weight_js;
  live->weight_partition = conf.msg->priority_weight_part;
  live->weight_qos = conf.msg->priority_weight_qos;
  if (conf.msg->state_save_location) live->state_save_location = conf.msg->state_save_location;
  Freed<partition_info_msg_t> parts{nullptr, slurm_free_partition_info_msg};
  if (slurm_load_partitions(0, &parts.msg, SHOW_ALL) != SLURM_SUCCESS) return unreachable("slurm_load_partitions");
  // SHOW_DETAIL: without it libslurm 22.05 leaves gres_used empty.
  Freed<node_info_msg_t> node_msg{nullptr, slurm_free_node_info_msg};
  if (slurm_load_node(0, &node_msg.msg, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS)
    return unreachable("slurm_load_node");
  slurm_populate_node_partitions(node_msg.msg, parts.msg);  // node_info_t.partitions is empty until then
  Freed<job_info_msg_t> job_msg{nullptr, slurm_free_job_info_msg};
  if (slurm_load_jobs(0, &job_msg.msg, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS) return unreachable("slurm_load_jobs");
  // Absent under priority/basic: the factors are then unknown (0), as the plugin has none either.
  Freed<priority_factors_response_msg_t> prio{nullptr, slurm_free_priority_factors_response_msg};
  if (slurm_load_job_prio(&prio.msg, nullptr, nullptr, nullptr, 0) != SLURM_SUCCESS) prio.msg = nullptr;

  // Partitions.
  const std::size_t n_parts = parts.msg->record_count;
  live->partitions_.resize(n_parts);
  live->partition_pools_.resize(n_parts);
  for (std::size_t p = 0; p < n_parts; ++p) {
    const partition_info_t& pi = parts.msg->partition_array[p];
    rlsched_partition& part = live->partitions_[p];
    part.name = live->names_.emplace_back(text_of(pi.name)).c_str();
    part.accepts_jobs = (pi.state_up & PARTITION_SUBMIT) ? 1 : 0;
    part.max_time = minutes_limit(pi.max_time);
  }
  live->cluster.partitions = live->partitions_.data();
  live->cluster.n_partitions = static_cast<int32_t>(n_parts);

  // Nodes: CPUs and accelerator pools of usable nodes, for the cluster (slot n_parts) and each partition.
  struct Pool {
    std::string gres, type;
    rlsched_accel sum{};
  };
  std::vector<std::vector<Pool>> pools(n_parts + 1);
  auto add_pool = [](std::vector<Pool>& in, const exporter::NodeAccelerators& a) {
    auto it = std::find_if(in.begin(), in.end(), [&](const Pool& p) { return p.gres == a.gres && p.type == a.type; });
    if (it == in.end()) it = in.insert(in.end(), Pool{a.gres, a.type, {}});
    it->sum.total += static_cast<int32_t>(a.total);
    it->sum.idle += static_cast<int32_t>(std::max<std::int64_t>(a.total - a.allocated, 0));
    it->sum.max_per_node = std::max(it->sum.max_per_node, static_cast<int32_t>(a.total));
    it->sum.nodes++;
  };
  for (std::uint32_t i = 0; i < node_msg.msg->record_count; ++i) {
    const node_info_t& n = node_msg.msg->node_array[i];
    live->nodes.push_back({text_of(n.name), n.name && usable(n.node_state)});
    if (!live->nodes.back().usable) continue;
    std::uint16_t alloc = 0;
    slurm_get_select_nodeinfo(n.select_nodeinfo, SELECT_NODEDATA_SUBCNT, NODE_STATE_ALLOCATED, &alloc);
    const int idle = std::max(0, int(n.cpus) - int(alloc));
    const auto accel = exporter::parse_node_gres(n.gres, n.gres_used);
    std::vector<std::size_t> slots = {n_parts};
    for (const std::string& name : text::split_names(text_of(n.partitions)))
      if (const int p = live->partition_index(name); p >= 0) slots.push_back(std::size_t(p));
    for (std::size_t slot : slots) {
      if (slot == n_parts) {
        live->cluster.nodes_total++;
        live->cluster.cpus_total += n.cpus;
        live->cluster.cpus_idle += idle;
      } else {
        live->partitions_[slot].nodes_total++;
        live->partitions_[slot].cpus_total += n.cpus;
        live->partitions_[slot].cpus_idle += idle;
      }
      for (const auto& a : accel) add_pool(pools[slot], a);
    }
  }
  auto emit = [&live](std::vector<Pool>& in, std::vector<rlsched_accel>& out) {
    for (Pool& p : in) {
      p.sum.gres = live->names_.emplace_back(p.gres).c_str();
      p.sum.type = live->names_.emplace_back(p.type).c_str();
      out.push_back(p.sum);
    }
  };
  for (std::size_t p = 0; p < n_parts; ++p) {
    emit(pools[p], live->partition_pools_[p]);
    live->partitions_[p].accel = live->partition_pools_[p].data();
    live->partitions_[p].n_accel = static_cast<int32_t>(live->partition_pools_[p].size());
  }
  emit(pools[n_parts], live->pools_);
  live->cluster.accel = live->pools_.data();
  live->cluster.n_accel = static_cast<int32_t>(live->pools_.size());

  // Jobs, and the factors of the pending ones.
  live->jobs.reserve(job_msg.msg->record_count);
  std::unordered_map<JobId, std::size_t> index;
  for (std::uint32_t i = 0; i < job_msg.msg->record_count; ++i) {
    index.emplace(job_msg.msg->job_array[i].job_id, live->jobs.size());
    live->jobs.push_back(job_from(job_msg.msg->job_array[i], *live));
  }
  if (prio.msg && prio.msg->priority_factors_list) {
    ListIterator it = slurm_list_iterator_create(prio.msg->priority_factors_list);
    while (auto* f = static_cast<priority_factors_object_t*>(slurm_list_next(it)))
      if (const auto found = index.find(f->job_id); found != index.end()) add_factors(*f, *live, live->jobs[found->second]);
    slurm_list_iterator_destroy(it);
  }
  // The C view's strings and partition lists, now that no record moves any more.
  for (LiveJob& job : live->jobs) {
    rlsched_job& c = job.c;
    c.gres = c.accelerators > 0 && !job.gres.empty() ? job.gres.c_str() : nullptr;
    c.gres_type = c.gres ? job.gres_type.c_str() : nullptr;
    c.comment = job.comment.c_str();
    c.job_name = job.name.c_str();
    c.account = job.account.c_str();
    c.qos = job.qos.c_str();
    if (job.partitions.size() > 1) {
      c.partitions = job.partitions.data();
      c.n_partitions = static_cast<int32_t>(job.partitions.size());
    }
  }
  return live;
}

}  // namespace rlsched::cli::live
