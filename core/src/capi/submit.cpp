#include "capi/submit.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "capi/c_snapshot.h"
#include "capi/job_classes.h"
#include "capi/tres.h"
#include "text/text.h"
#include "text/type_set.h"

namespace rlsched::capi {
namespace {

struct Field {
  const char* name;  // for messages: "--gres/--gpus-per-node"
  std::vector<TresEntry> entries;
};

std::string request_text(const TresEntry& e) {
  return e.type.empty() ? fmt::format("{}:{}", e.name, e.count) : fmt::format("{}:{}:{}", e.name, e.type, e.count);
}

}  // namespace

SubmitDecision decide_submit(const config::PluginConfig& config,
                             const std::vector<placement::PartitionState>& partitions, const rlsched_submit& job) {
  SubmitDecision d;
  if (!config.placement.enabled) return d;

  // The GRES names that are accelerators: those of the snapshot's pools and of the configured types.
  std::set<std::string> accel_names;
  for (const auto& p : partitions)
    for (const auto& pool : p.pools) accel_names.insert(pool.gres);
  for (const auto& t : config.accelerator_types) accel_names.insert(t.gres);

  enum { kJob, kNode, kSocket, kTask };
  Field fields[] = {{"tres_per_job (--gpus)", parse_tres(view(job.tres_per_job))},
                    {"tres_per_node (--gres, --gpus-per-node)", parse_tres(view(job.tres_per_node))},
                    {"tres_per_socket (--gpus-per-socket)", parse_tres(view(job.tres_per_socket))},
                    {"tres_per_task (--gpus-per-task)", parse_tres(view(job.tres_per_task))}};
  int field = -1;
  std::size_t entry = 0;
  int found = 0;
  for (int f = 0; f < 4; ++f)
    for (std::size_t i = 0; i < fields[f].entries.size(); ++i)
      if (fields[f].entries[i].gres && accel_names.count(fields[f].entries[i].name)) {
        ++found;
        field = f;
        entry = i;
      }
  if (found == 0) return d;  // no accelerators: nothing to do, nothing to say
  if (found > 1) {
    d.message = "left alone: the job asks for accelerators in several ways (map one request at most)";
    return d;
  }
  if (field == kSocket) {
    d.message = "left alone: per-socket accelerator requests are not mapped";
    return d;
  }
  TresEntry& asked = fields[field].entries[entry];
  const std::string original = request_text(asked);
  const std::vector<std::string> types = text::parse_type_set(asked.type);
  const bool any_of = types.size() > 1;
  const bool typed = types.size() == 1;
  const int nodes = std::max(job.min_nodes, 1);
  int total = 0;  // accelerators over the job
  switch (field) {
    case kJob:
      total = static_cast<int>(std::min<std::int64_t>(asked.count, 1 << 30));
      break;
    case kNode:
      total = static_cast<int>(std::min<std::int64_t>(asked.count * nodes, 1 << 30));
      break;
    case kTask:
      total = static_cast<int>(std::min<std::int64_t>(asked.count * std::max(job.num_tasks, 1), 1 << 30));
      break;
    default:
      break;
  }
  d.asked_accelerators = total;
  d.asked_types = types;
  if (typed && !config.placement.retype_typed) return d;  // explicit choice: the user's, unless configured
  if (any_of && !config.placement.map_any_of) {
    d.message = fmt::format("left alone: {}: any-of types are not mapped (placement.map_any_of: false)", original);
    return d;
  }
  if (types.empty() && !config.placement.map_typeless) return d;

  placement::Request r;
  r.gres = asked.name;
  if (any_of) r.types = types;              // typeless, and typed with retype_typed: any type
  if (typed) r.count_type = types.front();  // the count is in devices of that type
  r.job_class = config.classify(view(job.job_name), view(job.account), user_name_for_classes(config, job.user_id));
  r.count = total;
  if (field == kNode) {
    r.per_node = static_cast<int>(asked.count);
    r.nodes = nodes;
  }
  r.time_limit = job.time_limit > 0 ? job.time_limit : 0;
  r.partitions = text::split_names(view(job.partition));
  const bool user_partitions = !r.partitions.empty();
  if (!user_partitions) r.partitions = config.placement.partitions;

  placement::Options o = placement_options(config);
  // The GRES name may change only if nothing else of the job refers to it (cpus_per_tres=gres:gpu:8, ...).
  const bool name_referenced = mentions_gres(view(job.cpus_per_tres), r.gres) ||
                               mentions_gres(view(job.mem_per_tres), r.gres) ||
                               mentions_gres(view(job.tres_bind), r.gres) || mentions_gres(view(job.tres_freq), r.gres);
  if (name_referenced) o.gres_equivalence.clear();

  const placement::Decision p = placement::place(r, partitions, o);
  if (!p.placed) {
    if (!config.placement.reject_impossible) {
      d.message = fmt::format("left alone: {}: {}", original, p.reason);
      return d;
    }
    d.action = RLSCHED_SUBMIT_REJECTED;
    d.message = fmt::format("rlsched: cannot place {}: {}", original, p.reason);
    return d;
  }

  asked.count = placement::scaled_count(o, static_cast<int>(std::min<std::int64_t>(asked.count, 1 << 30)), r.gres,
                                        r.count_type, p.gres, p.type);
  asked.name = p.gres;
  // A set of two or more: Slurm binds late among the listed partitions, each of which offers this GRES in one type
  // only (placement.h), so the request drops its type and names the partitions, best first.
  std::string partition_list;
  for (const placement::SetMember& m : p.set) partition_list += (partition_list.empty() ? "" : ",") + m.partition_name;
  asked.type = p.set.size() > 1 ? std::string() : p.type;
  const std::string placed = request_text(asked);
  const std::string text = join_entries(fields[field].entries);
  switch (field) {
    case kJob:
      d.set_tres_per_job = true;
      d.tres_per_job = text;
      break;
    case kNode:
      d.set_tres_per_node = true;
      d.tres_per_node = text;
      break;
    case kTask:
      d.set_tres_per_task = true;
      d.tres_per_task = text;
      break;
    default:
      break;
  }
  d.set_partition = view(job.partition) != partition_list;
  d.partition = partition_list;
  d.action = RLSCHED_SUBMIT_MODIFIED;
  d.partition_index = p.partition;
  d.accelerators = p.count;
  d.job_class = r.job_class;
  d.gres = p.gres;
  d.type = p.set.size() > 1 ? std::string() : p.type;
  d.wait = p.wait;
  d.run = p.run;
  d.message = fmt::format("rlsched: {} -> {}{}: {}", original, placed,
                          r.job_class.empty() ? std::string() : fmt::format(" (class {})", r.job_class), p.reason);
  return d;
}

}  // namespace rlsched::capi
