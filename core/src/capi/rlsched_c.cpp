// The extern "C" functions of rlsched.h. Every body catches std::exception and everything else: nothing thrown
// inside the core reaches slurmctld. Errors become a return code and a thread-local line for rlsched_last_error().
#include "rlsched/rlsched.h"

#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "capi/engine.h"
#include "rlsched/preemption.h"

struct rlsched_engine {
  std::unique_ptr<rlsched::capi::Engine> impl;
};

namespace {

thread_local std::string t_last_error;

int fail(rlsched_engine* engine, int rc, std::string message) {
  t_last_error = std::move(message);
  if (engine && engine->impl) engine->impl->count_error();
  return rc;
}

// InvalidInput from a call is the caller's mistake; anything else is ours.
int fail(rlsched_engine* engine, const rlsched::Status& status, int invalid_rc) {
  return fail(engine, status.code() == rlsched::Status::Code::kInvalidInput ? invalid_rc : RLSCHED_EINTERNAL,
              status.message());
}

int fail_exception(rlsched_engine* engine, const char* function, const std::exception& e) {
  // Deliberately no allocation for bad_alloc's message beyond the assignment, which may itself fail: then the
  // previous text stays.
  const int rc = dynamic_cast<const std::bad_alloc*>(&e) ? RLSCHED_ENOMEM : RLSCHED_EINTERNAL;
  try {
    return fail(engine, rc, std::string(function) + ": " + e.what());
  } catch (...) {
    return rc;
  }
}

int fail_unknown(rlsched_engine* engine, const char* function) {
  try {
    return fail(engine, RLSCHED_EINTERNAL, std::string(function) + ": unknown exception");
  } catch (...) {
    return RLSCHED_EINTERNAL;
  }
}

bool usable(const rlsched_engine* engine) {
  return engine && engine->impl;
}

}  // namespace

extern "C" {

int rlsched_engine_create(const rlsched_engine_options* options, rlsched_engine** out) {
  try {
    t_last_error.clear();
    if (!out) return fail(nullptr, RLSCHED_EINVAL, "rlsched_engine_create: out is NULL");
    *out = nullptr;
    if (!options) return fail(nullptr, RLSCHED_EINVAL, "rlsched_engine_create: options is NULL");
    if (options->abi_version != RLSCHED_ABI_VERSION)
      return fail(nullptr, RLSCHED_EINVAL,
                  "rlsched_engine_create: abi_version " + std::to_string(options->abi_version) +
                      " does not match this library's " + std::to_string(RLSCHED_ABI_VERSION) +
                      " (plugin and core built from different sources?)");
    if (!options->config_path || !*options->config_path)
      return fail(nullptr, RLSCHED_ECONFIG, "no config file given (set PrioritySiteFactorParameters)");
    rlsched::capi::EngineOptions o;
    o.config_path = options->config_path;
    if (options->log) {
      rlsched_log_fn fn = options->log;
      void* ctx = options->log_ctx;
      o.log = [fn, ctx](int level, const std::string& line) { fn(ctx, level, line.c_str()); };
    }
    o.no_policy = options->flags & RLSCHED_ENGINE_NO_POLICY;
    o.no_reload_thread = options->flags & RLSCHED_ENGINE_NO_RELOAD_THREAD;
    o.trust_any_file = options->flags & RLSCHED_ENGINE_TRUST_ANY_FILE;
    o.keep_preemptions = options->flags & RLSCHED_ENGINE_KEEP_PREEMPTIONS;
    o.keep_run_times = options->flags & RLSCHED_ENGINE_KEEP_RUN_TIMES;
    if (options->plugin_type) o.plugin_type = options->plugin_type;
    if (options->state_dir) o.state_dir = options->state_dir;
    const double w[] = {options->weight_age, options->weight_fairshare, options->weight_job_size,
                        options->weight_partition, options->weight_qos};
    if (w[0] != 0 || w[1] != 0 || w[2] != 0 || w[3] != 0 || w[4] != 0) {
      o.weights.age = w[0];
      o.weights.fairshare = w[1];
      o.weights.job_size = w[2];
      o.weights.partition = w[3];
      o.weights.qos = w[4];
    }
    auto engine = std::make_unique<rlsched_engine>();
    rlsched::Result<std::unique_ptr<rlsched::capi::Engine>> impl = rlsched::capi::Engine::Create(std::move(o));
    if (!impl.ok()) return fail(nullptr, RLSCHED_ECONFIG, impl.status().message());
    engine->impl = std::move(*impl);
    *out = engine.release();
    return RLSCHED_OK;
  } catch (const std::exception& e) {
    return fail_exception(nullptr, __func__, e);
  } catch (...) {
    return fail_unknown(nullptr, __func__);
  }
}

void rlsched_engine_destroy(rlsched_engine* engine) {
  try {
    delete engine;
  } catch (...) {
    // A destructor that throws would terminate; nothing more can be done for a half-destroyed engine.
  }
}

int rlsched_engine_reconfigure(rlsched_engine* engine) {
  try {
    t_last_error.clear();
    if (!usable(engine)) return fail(nullptr, RLSCHED_EINVAL, "rlsched_engine_reconfigure: engine is NULL");
    rlsched::Status s = engine->impl->reconfigure();
    return s.ok() ? RLSCHED_OK : fail(engine, RLSCHED_ECONFIG, s.message());
  } catch (const std::exception& e) {
    return fail_exception(engine, __func__, e);
  } catch (...) {
    return fail_unknown(engine, __func__);
  }
}

int rlsched_engine_check_model(rlsched_engine* engine) {
  try {
    t_last_error.clear();
    if (!usable(engine)) return fail(nullptr, RLSCHED_EINVAL, "rlsched_engine_check_model: engine is NULL");
    rlsched::Status s = engine->impl->check_model();
    return s.ok() ? RLSCHED_OK : fail(engine, s, RLSCHED_EINVAL);
  } catch (const std::exception& e) {
    return fail_exception(engine, __func__, e);
  } catch (...) {
    return fail_unknown(engine, __func__);
  }
}

const char* rlsched_last_error(const rlsched_engine* /*engine*/) {
  try {
    return t_last_error.c_str();
  } catch (...) {
    return "";
  }
}

int rlsched_engine_get_info(rlsched_engine* engine, rlsched_engine_info* out) {
  try {
    t_last_error.clear();
    if (!usable(engine) || !out) return fail(engine, RLSCHED_EINVAL, "rlsched_engine_get_info: NULL argument");
    engine->impl->info(*out);
    return RLSCHED_OK;
  } catch (const std::exception& e) {
    return fail_exception(engine, __func__, e);
  } catch (...) {
    return fail_unknown(engine, __func__);
  }
}

int rlsched_engine_get_counters(rlsched_engine* engine, rlsched_counters* out) {
  try {
    t_last_error.clear();
    if (!usable(engine) || !out) return fail(engine, RLSCHED_EINVAL, "rlsched_engine_get_counters: NULL argument");
    *out = engine->impl->counters();
    return RLSCHED_OK;
  } catch (const std::exception& e) {
    return fail_exception(engine, __func__, e);
  } catch (...) {
    return fail_unknown(engine, __func__);
  }
}

int rlsched_health_note_update(rlsched_engine* engine, double seconds) {
  try {
    t_last_error.clear();
    if (!usable(engine)) return fail(engine, RLSCHED_EINVAL, "rlsched_health_note_update: NULL engine");
    engine->impl->health().note_update(seconds);
    return RLSCHED_OK;
  } catch (const std::exception& e) {
    return fail_exception(engine, __func__, e);
  } catch (...) {
    return fail_unknown(engine, __func__);
  }
}

int rlsched_score_batch(rlsched_engine* engine, int64_t now, const rlsched_cluster* cluster, const rlsched_job* jobs,
                        size_t n, double* out_scores, uint32_t* out_site_factors) {
  try {
    t_last_error.clear();
    if (!usable(engine) || !cluster)
      return fail(engine, RLSCHED_EINVAL, "rlsched_score_batch: engine or cluster is NULL");
    rlsched::Status s = engine->impl->score_batch(now, *cluster, jobs, n, out_scores, out_site_factors);
    return s.ok() ? RLSCHED_OK : fail(engine, s, RLSCHED_EINVAL);
  } catch (const std::exception& e) {
    return fail_exception(engine, __func__, e);
  } catch (...) {
    return fail_unknown(engine, __func__);
  }
}

int rlsched_score_one(rlsched_engine* engine, int64_t now, const rlsched_cluster* cluster, const rlsched_job* job,
                      double* out_score, uint32_t* out_site_factor) {
  try {
    t_last_error.clear();
    if (!usable(engine) || !cluster || !job)
      return fail(engine, RLSCHED_EINVAL, "rlsched_score_one: engine, cluster or job is NULL");
    rlsched::Status s = engine->impl->score_one(now, *cluster, *job, out_score, out_site_factor);
    return s.ok() ? RLSCHED_OK : fail(engine, s, RLSCHED_EINVAL);
  } catch (const std::exception& e) {
    return fail_exception(engine, __func__, e);
  } catch (...) {
    return fail_unknown(engine, __func__);
  }
}

int rlsched_jobs_ended(rlsched_engine* engine, const rlsched_ended_job* jobs, size_t n, size_t* out_new) {
  try {
    t_last_error.clear();
    if (!usable(engine)) return fail(engine, RLSCHED_EINVAL, "rlsched_jobs_ended: NULL engine");
    std::size_t fresh = 0;
    rlsched::Status s = engine->impl->jobs_ended(jobs, n, fresh);
    if (!s.ok()) return fail(engine, s, RLSCHED_EINVAL);
    if (out_new) *out_new = fresh;
    return RLSCHED_OK;
  } catch (const std::exception& e) {
    return fail_exception(engine, __func__, e);
  } catch (...) {
    return fail_unknown(engine, __func__);
  }
}

int rlsched_submit_map(rlsched_engine* engine, int64_t now, const rlsched_cluster* cluster, const rlsched_job* queue,
                       size_t n_queue, const rlsched_submit* job, rlsched_submit_result* out) {
  try {
    t_last_error.clear();
    if (out) *out = rlsched_submit_result{};
    if (!usable(engine) || !cluster || !job || !out)
      return fail(engine, RLSCHED_EINVAL, "rlsched_submit_map: engine, cluster, job or out is NULL");
    rlsched::Status s = engine->impl->submit_map(now, *cluster, queue, n_queue, *job, *out);
    return s.ok() ? RLSCHED_OK : fail(engine, s, RLSCHED_EINVAL);
  } catch (const std::exception& e) {
    return fail_exception(engine, __func__, e);
  } catch (...) {
    return fail_unknown(engine, __func__);
  }
}

int rlsched_checkpoint_parse(const char* comment, int32_t* declared, rlsched_checkpoint* out) {
  try {
    t_last_error.clear();
    if (!declared || !out) return fail(nullptr, RLSCHED_EINVAL, "rlsched_checkpoint_parse: declared or out is NULL");
    *declared = 0;
    *out = rlsched_checkpoint{};
    auto parsed = rlsched::preemption::parse_checkpoint_comment(comment ? comment : "");
    if (!parsed.ok()) return fail(nullptr, RLSCHED_EINVAL, parsed.status().message());
    if (*parsed) {
      *declared = 1;
      out->interval = (*parsed)->interval;
      out->cost = (*parsed)->cost;
    }
    return RLSCHED_OK;
  } catch (const std::exception& e) {
    return fail_exception(nullptr, __func__, e);
  } catch (...) {
    return fail_unknown(nullptr, __func__);
  }
}

int rlsched_checkpoint_grace(rlsched_engine* engine, const rlsched_checkpoint* checkpoint, uint32_t* grace) {
  try {
    t_last_error.clear();
    if (!usable(engine) || !checkpoint || !grace)
      return fail(engine, RLSCHED_EINVAL, "rlsched_checkpoint_grace: engine, checkpoint or grace is NULL");
    rlsched::Status s = engine->impl->checkpoint_grace(*checkpoint, *grace);
    return s.ok() ? RLSCHED_OK : fail(engine, s, RLSCHED_EINVAL);
  } catch (const std::exception& e) {
    return fail_exception(engine, __func__, e);
  } catch (...) {
    return fail_unknown(engine, __func__);
  }
}

int rlsched_preempt_allowed(rlsched_engine* engine, int64_t now, const rlsched_preempt_job* job, int32_t* allowed,
                            const char** why) {
  try {
    t_last_error.clear();
    if (!usable(engine) || !job || !allowed || !why)
      return fail(engine, RLSCHED_EINVAL, "rlsched_preempt_allowed: engine, job, allowed or why is NULL");
    bool ok = false;
    rlsched::Status s = engine->impl->preempt_allowed(now, *job, ok, *why);
    *allowed = ok ? 1 : 0;
    return s.ok() ? RLSCHED_OK : fail(engine, s, RLSCHED_EINVAL);
  } catch (const std::exception& e) {
    return fail_exception(engine, __func__, e);
  } catch (...) {
    return fail_unknown(engine, __func__);
  }
}

int rlsched_preempt_order(rlsched_engine* engine, int64_t now, const rlsched_preempt_job* job, uint32_t* order) {
  try {
    t_last_error.clear();
    if (!usable(engine) || !job || !order)
      return fail(engine, RLSCHED_EINVAL, "rlsched_preempt_order: engine, job or order is NULL");
    rlsched::Status s = engine->impl->preempt_order(now, *job, *order);
    return s.ok() ? RLSCHED_OK : fail(engine, s, RLSCHED_EINVAL);
  } catch (const std::exception& e) {
    return fail_exception(engine, __func__, e);
  } catch (...) {
    return fail_unknown(engine, __func__);
  }
}

int rlsched_preempt_begin(rlsched_engine* engine, int64_t now, const rlsched_preempt_job* job, uint32_t* grace,
                          int64_t* lost_run_time) {
  try {
    t_last_error.clear();
    if (!usable(engine) || !job || !grace || !lost_run_time)
      return fail(engine, RLSCHED_EINVAL, "rlsched_preempt_begin: engine, job, grace or lost_run_time is NULL");
    rlsched::Seconds lost = 0;
    rlsched::Status s = engine->impl->preempt_begin(now, *job, *grace, lost);
    *lost_run_time = lost;
    return s.ok() ? RLSCHED_OK : fail(engine, s, RLSCHED_EINVAL);
  } catch (const std::exception& e) {
    return fail_exception(engine, __func__, e);
  } catch (...) {
    return fail_unknown(engine, __func__);
  }
}

void rlsched_submit_result_free(rlsched_submit_result* result) {
  try {
    if (!result) return;
    std::free(result->partition);
    std::free(result->tres_per_job);
    std::free(result->tres_per_node);
    std::free(result->tres_per_task);
    std::free(result->message);
    std::free(result->gres);
    std::free(result->gres_type);
    std::free(result->deferral);
    *result = rlsched_submit_result{};
  } catch (...) {
    // Nothing here throws; the guard keeps the rule "every extern C body catches" checkable by reading.
  }
}

}  // extern "C"
