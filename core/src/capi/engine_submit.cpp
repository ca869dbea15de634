// job_submit/rlsched's call into the engine: the C request and queue through decide_submit (capi/submit.h), and the
// decision copied into the malloc'ed rlsched_submit_result the plugin frees.
#include <cstdlib>
#include <cstring>
#include <new>

#include "capi/c_snapshot.h"
#include "capi/deferral.h"
#include "capi/engine.h"
#include "capi/submit.h"

namespace rlsched::capi {

Status Engine::submit_map(Seconds now, const rlsched_cluster& cluster, const rlsched_job* queue, std::size_t n_queue,
                          const rlsched_submit& job, rlsched_submit_result& out) {
  if (n_queue > 0 && !queue) return Status::InvalidInput("queue is NULL");
  if (Status c = check_cluster(cluster); !c.ok()) return c;
  const std::shared_ptr<Settings> s = settings();
  std::vector<placement::PartitionState> parts;
  {
    std::lock_guard<std::mutex> lock(classes_mutex_);
    parts = to_partition_states(cluster, queue, n_queue, now, s->config, classes_);
  }
  const SubmitDecision d = decide_submit(s->config, parts, job);
  const DeferralDecision energy = decide_deferral(s->config, cluster, job, d, now);
  // Copy into malloc'ed strings only once everything that can throw is done; a failed malloc frees what was made.
  rlsched_submit_result r{};
  bool ok = true;
  auto dup = [&ok](const std::string& text) -> char* {
    char* p = static_cast<char*>(std::malloc(text.size() + 1));
    if (!p) {
      ok = false;
      return nullptr;
    }
    std::memcpy(p, text.c_str(), text.size() + 1);
    return p;
  };
  r.action = d.action;
  if (d.set_partition) r.partition = dup(d.partition);
  if (d.set_tres_per_job) r.tres_per_job = dup(d.tres_per_job);
  if (d.set_tres_per_node) r.tres_per_node = dup(d.tres_per_node);
  if (d.set_tres_per_task) r.tres_per_task = dup(d.tres_per_task);
  if (!d.message.empty()) r.message = dup(d.message);
  r.partition_index = d.partition_index;
  r.accelerators = d.accelerators;
  if (d.action == RLSCHED_SUBMIT_MODIFIED) {
    r.gres = dup(d.gres);
    if (!d.type.empty()) r.gres_type = dup(d.type);
  }
  if (!energy.message.empty()) r.deferral = dup(energy.message);
  r.begin_time = energy.begin;
  if (!ok) {
    rlsched_submit_result_free(&r);
    throw std::bad_alloc();
  }
  r.record = c_record_field(s->config.placement.record);
  r.predicted_wait = d.wait;
  r.predicted_run = d.run;
  if (d.action == RLSCHED_SUBMIT_MODIFIED) {
    placements_.fetch_add(1, std::memory_order_relaxed);
    // The placement rule is one (earliest predicted completion); whether it moved the job to another partition is
    // the distinction worth a label.
    health_.note_placement(d.type.empty() ? "any" : d.type, d.set_partition ? "moved_partition" : "typed_in_place");
  }
  if (d.action == RLSCHED_SUBMIT_REJECTED) {
    rejections_.fetch_add(1, std::memory_order_relaxed);
    health_.note_placement("none", "rejected_impossible");  // no partition can ever hold the request
  }
  if (energy.deferred) (energy.begin > 0 ? deferrals_ : deferrals_shadow_).fetch_add(1, std::memory_order_relaxed);
  out = r;
  return Status::Ok();
}

}  // namespace rlsched::capi
