// preempt/rlsched's questions to the engine: may this running job be preempted, in which order, and with what grace
// time. The decision itself is rlsched/preemption.h (shared with the simulator); here the C job becomes a candidate
// and the engine keeps the preemption history the cap needs.
#include "capi/engine.h"

#include <fmt/format.h>

#include "capi/preemption_history.h"

namespace rlsched::capi {
namespace {

preemption::Candidate candidate_of(const rlsched_preempt_job& job) {
  preemption::Candidate c;
  c.id = job.job_id;
  c.checkpoint = preemption::declared_checkpoint(job.comment);
  c.qos = job.qos ? job.qos : "";
  c.run_start = job.run_start;
  c.size = job.size;
  c.rank = job.rank;
  return c;
}

}  // namespace

void Engine::keep_preemption_history(Seconds now) {
  load_state(
      kPreemptionHistoryName,
      [&](std::string_view text, const std::string& path) -> Result<std::string> {
        auto loaded = parse_preemption_history(text, path);
        if (!loaded.ok()) return loaded.status();
        loaded->prune(now, settings()->config.preemption.window);
        const std::string line =
            fmt::format("preemption history {}: {} jobs preempted within the window", path, loaded->jobs());
        std::lock_guard<std::mutex> lock(history_mutex_);
        history_ = std::move(*loaded);
        return line;
      },
      "the preemption cap starts from no history");
  history_writer_ = state_writer(kPreemptionHistoryName, 5, [this] {
    std::lock_guard<std::mutex> lock(history_mutex_);
    return preemption_history_json(history_);
  });
}

Status Engine::preempt_allowed(Seconds now, const rlsched_preempt_job& job, bool& allowed, const char*& why) {
  const std::shared_ptr<Settings> s = settings();
  preemption::Refusal r;
  {
    std::lock_guard<std::mutex> lock(history_mutex_);
    r = preemption::refusal(s->config.preemption, candidate_of(job), history_, now);
  }
  allowed = r == preemption::Refusal::kNone;
  why = preemption::refusal_text(r);
  return Status::Ok();
}

Status Engine::checkpoint_grace(const rlsched_checkpoint& checkpoint, std::uint32_t& grace) {
  preemption::Candidate c;
  c.checkpoint = preemption::Checkpoint{checkpoint.interval, checkpoint.cost};
  grace = static_cast<std::uint32_t>(preemption::grace_time(settings()->config.preemption, c));
  return Status::Ok();
}

Status Engine::preempt_order(Seconds now, const rlsched_preempt_job& job, std::uint32_t& order) {
  order = preemption::victim_order(candidate_of(job), now);
  return Status::Ok();
}

Status Engine::preempt_begin(Seconds now, const rlsched_preempt_job& job, std::uint32_t& grace, Seconds& lost) {
  const std::shared_ptr<Settings> s = settings();
  const preemption::Candidate c = candidate_of(job);
  {
    std::lock_guard<std::mutex> lock(history_mutex_);
    history_.prune(now, s->config.preemption.window);
    history_.record(c.id, now);
  }
  grace = static_cast<std::uint32_t>(preemption::grace_time(s->config.preemption, c));
  lost = preemption::run_time_lost(c, now);
  health_.note_preemption(grace, static_cast<double>(lost) * c.size);
  return Status::Ok();
}

}  // namespace rlsched::capi
