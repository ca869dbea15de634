/*****************************************************************************\
 *  site_factor_rlsched.c - learned job ranking as Slurm's site factor.
 *
 *  The rlsched policy (a TorchScript model, or a heuristic fallback) scores
 *  all pending jobs in one batched call at each decay cycle; each job's rank
 *  share becomes its site factor, visible in sprio's SITE column:
 *	site_factor = NICE_OFFSET + floor(score_scale * share scoring lower)
 *  Shadow mode computes and logs the same numbers but writes nothing.
 *
 *  slurm.conf:
 *	PriorityType=priority/multifactor
 *	PrioritySiteFactorPlugin=site_factor/rlsched
 *	PrioritySiteFactorParameters=/etc/slurm/rlsched.yaml
 *  Detail per job: DebugFlags=Priority (or `debug: true` in rlsched.yaml).
 *  The file is re-read when it changes (looked at once a second at most, as
 *  by the other two plugins) and at scontrol reconfigure.
 *
 *  Faults never take slurmctld down: an engine error is logged once, the
 *  site factors are left as they are, and the fault is counted.
\*****************************************************************************/

#include <pthread.h>
#include <time.h>

#include "../common/rlsched_slurm.h"

RLSCHED_EXPORT const char plugin_name[] = "rlsched site factor: learned ranking of pending jobs";
RLSCHED_EXPORT const char plugin_type[] = "site_factor/rlsched";
RLSCHED_EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;

#define RLSCHED_SLOW_UPDATE_MS 5.0
/* Jobs ahead whose records site_factor_p_update prefetches */
#define RLSCHED_PREFETCH_AHEAD 8

static pthread_mutex_t rlsched_lock = PTHREAD_MUTEX_INITIALIZER;
/* rlsched.yaml by the rule of all three plugins (rlsched_slurm.h), and
 * re-read at scontrol reconfigure; ce.engine is NULL while it is unusable */
static rlsched_config_engine_t ce = {
	/* what ended jobs taught the predicted run times outlives a restart
	 * (slurmctld forgets ended jobs after MinJobAge) */
	.flags = RLSCHED_ENGINE_KEEP_RUN_TIMES,
	.type = plugin_type,
	.consequence = "site factors left unchanged",
	.size = -1,
};
static rlsched_snapshot_t snapshot;
static bool snapshot_valid = false;

/* The pending jobs of one update: reused across cycles, grown as needed */
static rlsched_job *jobs = NULL;
/* ... and the ended jobs Slurm still keeps (run_time: predicted learns from them) */
static rlsched_ended_job *ended = NULL;
static job_record_t **job_ptrs = NULL;
static uint32_t *factors = NULL;
static double *scores = NULL;
static size_t job_cap = 0;

static uint64_t update_cnt = 0;

static void _fault(const char *what, const char *why)
{
	rlsched_fault(&ce.faults, plugin_type, what, ce.consequence, why);
}

static void _success(void)
{
	rlsched_fault_cleared(&ce.faults, plugin_type);
}

static bool _want_detail(const rlsched_engine_info *inf)
{
	return inf->debug || (slurm_conf.debug_flags & DEBUG_FLAG_PRIO);
}

/* Predicted run times hear of an ended job only while Slurm keeps it */
static void _check_min_job_age(const rlsched_engine_info *inf)
{
	if (inf->reads_ended_jobs &&
	    (slurm_conf.min_job_age < slurm_conf.priority_calc_period))
		info("%s: predicted run times learn from the ended jobs Slurm keeps, and MinJobAge (%u s) is below PriorityCalcPeriod (%u s): jobs that end between two updates may go unheard",
		     plugin_type, slurm_conf.min_job_age,
		     slurm_conf.priority_calc_period);
}

extern RLSCHED_EXPORT int init(void)
{
	rlsched_engine_info inf;

	slurm_mutex_lock(&rlsched_lock);
	rlsched_config_engine_refresh(&ce);
	if (ce.engine && (rlsched_engine_get_info(ce.engine, &inf) == RLSCHED_OK)) {
		info("%s: loaded, mode %s, scoring with %s, site factors in [0, %u] (+NICE_OFFSET)%s",
		     plugin_type,
		     (inf.mode == RLSCHED_MODE_ENFORCE) ? "enforce" : "shadow",
		     inf.scorer, inf.score_scale,
		     inf.run_time_predicted ? ", run_time: predicted" : "");
		_check_min_job_age(&inf);
	}
	slurm_mutex_unlock(&rlsched_lock);
	/* Never fail init: slurmctld would retry on every call. The plugin
	 * stays loaded, inactive until a reconfigure fixes the config. */
	return SLURM_SUCCESS;
}

extern RLSCHED_EXPORT int fini(void)
{
	rlsched_counters c;

	slurm_mutex_lock(&rlsched_lock);
	if (ce.engine && (rlsched_engine_get_counters(ce.engine, &c) == RLSCHED_OK))
		info("%s: unloading; %"PRIu64" scoring calls, %"PRIu64" served by the fallback, %"PRIu64" model loads, %"PRIu64" refused, %"PRIu64" plugin faults",
		     plugin_type, c.score_calls, c.fallback_calls,
		     c.model_loads, c.model_load_failures + c.model_untrusted,
		     ce.faults.total);
	rlsched_config_engine_release(&ce);
	rlsched_snapshot_free(&snapshot);
	snapshot_valid = false;
	xfree(jobs);
	xfree(ended);
	xfree(job_ptrs);
	xfree(factors);
	xfree(scores);
	job_cap = 0;
	slurm_mutex_unlock(&rlsched_lock);
	return SLURM_SUCCESS;
}

/* scontrol reconfigure: re-read rlsched.yaml (a bad file keeps the old
 * settings), or create the engine if the last attempt failed. */
extern RLSCHED_EXPORT void site_factor_p_reconfig(void)
{
	slurm_mutex_lock(&rlsched_lock);
	rlsched_config_engine_reload(&ce);
	slurm_mutex_unlock(&rlsched_lock);
}

static bool _grow(size_t need)
{
	size_t cap = job_cap ? job_cap : 1024;

	if (need <= job_cap)
		return true;
	while (cap < need)
		cap *= 2;
	if (!try_xrealloc(jobs, cap * sizeof(*jobs)) ||
	    !try_xrealloc(ended, cap * sizeof(*ended)) ||
	    !try_xrealloc(job_ptrs, cap * sizeof(*job_ptrs)) ||
	    !try_xrealloc(factors, cap * sizeof(*factors)) ||
	    !try_xrealloc(scores, cap * sizeof(*scores)))
		return false;
	job_cap = cap;
	return true;
}

/* Called at submit (job write lock held): score the new job and rank it
 * against the last batch. Uses the cluster snapshot of the last update. */
extern RLSCHED_EXPORT void site_factor_p_set(job_record_t *job_ptr)
{
	rlsched_job job;
	rlsched_engine_info inf;
	double score = 0;
	uint32_t factor = 0;

	if (!job_ptr)
		return;
	slurm_mutex_lock(&rlsched_lock);
	rlsched_config_engine_refresh(&ce);
	if (!ce.engine)
		goto done;
	if (!snapshot_valid) {
		if (!rlsched_snapshot_begin(&snapshot) ||
		    !rlsched_snapshot_finish(&snapshot, NO_VAL)) {
			_fault("site_factor_p_set", "out of memory");
			goto done;
		}
		snapshot_valid = true;
	}
	rlsched_job_fill(&job, job_ptr, &snapshot);
	/* A new job: its partition record may be newer than the snapshot */
	if ((job.partition < 0) && job_ptr->part_ptr)
		job.partition = rlsched_snapshot_part_by_name(
			&snapshot, job_ptr->part_ptr->name);
	rlsched_jobs_fill_partitions(&snapshot, &job, &job_ptr, 1);
	job.state = RLSCHED_JOB_PENDING;
	if ((rlsched_score_one(ce.engine, time(NULL), &snapshot.cluster, &job,
			       &score, &factor) != RLSCHED_OK) ||
	    (rlsched_engine_get_info(ce.engine, &inf) != RLSCHED_OK)) {
		_fault("site_factor_p_set", rlsched_last_error(ce.engine));
		goto done;
	}
	_success();
	if (inf.mode == RLSCHED_MODE_ENFORCE)
		job_ptr->site_factor = NICE_OFFSET + factor;
	if (_want_detail(&inf))
		info("%s: %pJ submitted: score %.6g, site factor %u%s",
		     plugin_type, job_ptr, score, factor,
		     (inf.mode == RLSCHED_MODE_ENFORCE) ? "" :
		     " (shadow: not applied)");
done:
	slurm_mutex_unlock(&rlsched_lock);
}

/* Called by the multifactor decay thread with the job write lock held;
 * slurmctld warns when it takes over 50 ms. One pass over job_list copies
 * the pending jobs (and the CPUs running jobs hold, and the ended jobs Slurm
 * still keeps, for predicted run times), one batched call scores them all, a
 * second pass over the copied pointers writes site factors. */
extern RLSCHED_EXPORT void site_factor_p_update(void)
{
	struct timespec start;
	list_itr_t *it;
	job_record_t *job_ptr;
	rlsched_engine_info inf;
	size_t n = 0, n_ended = 0, heard = 0, changed = 0;
	double copy_ms, total_ms;
	bool detail, enforce, predicted;
	time_t now = time(NULL);

	clock_gettime(CLOCK_MONOTONIC, &start);
	slurm_mutex_lock(&rlsched_lock);
	rlsched_config_engine_refresh(&ce);
	if (!ce.engine || !job_list)
		goto done;
	if (rlsched_engine_get_info(ce.engine, &inf) != RLSCHED_OK) {
		_fault("site_factor_p_update", rlsched_last_error(ce.engine));
		goto done;
	}
	/*
	 * Ended jobs are read only when the policy learns from them (job lock
	 * held): run_time: predicted, or a model that reads predicted run times
	 */
	predicted = inf.reads_ended_jobs;
	if (!_grow((size_t) list_count(job_list) + 1) ||
	    !rlsched_snapshot_begin(&snapshot)) {
		snapshot_valid = false;
		_fault("site_factor_p_update", "out of memory");
		goto done;
	}
	snapshot_valid = false;
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		if (IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr)) {
			rlsched_snapshot_add_running(&snapshot, job_ptr);
			continue;
		}
		if (predicted && (n_ended < job_cap) &&
		    rlsched_ended_fill(&ended[n_ended], job_ptr)) {
			n_ended++;
			continue;
		}
		if (!IS_JOB_PENDING(job_ptr) || !job_ptr->details ||
		    (n >= job_cap))
			continue;
		job_ptrs[n++] = job_ptr;
	}
	list_iterator_destroy(it);
	if (!rlsched_snapshot_finish(&snapshot, NO_VAL)) {
		_fault("site_factor_p_update", "out of memory");
		goto done;
	}
	snapshot_valid = true;
	/* Partition indices are known only once the snapshot is complete.
	 * The job records are cold (the decay thread runs once a cycle):
	 * fetch the parts a fill reads a few jobs ahead, so that the cache
	 * misses overlap instead of queueing up one job after the other. */
	for (size_t i = 0; i < n; i++) {
		if (i + RLSCHED_PREFETCH_AHEAD < n) {
			job_record_t *ahead = job_ptrs[i + RLSCHED_PREFETCH_AHEAD];

			__builtin_prefetch(ahead->details);
			__builtin_prefetch(ahead->prio_factors);
			__builtin_prefetch(RLSCHED_JOB_GRES_REQ(ahead));
		}
		rlsched_job_fill(&jobs[i], job_ptrs[i], &snapshot);
	}
	rlsched_jobs_fill_partitions(&snapshot, jobs, job_ptrs, n);
	copy_ms = rlsched_elapsed_ms(&start);

	/* Not reading them, the plugin says nothing of ended jobs: an empty
	 * list would tell the engine Slurm forgot them all, and it would
	 * learn again from those still kept once it reads them again. */
	if ((predicted &&
	     (rlsched_jobs_ended(ce.engine, ended, n_ended, &heard) !=
	      RLSCHED_OK)) ||
	    (rlsched_score_batch(ce.engine, now, &snapshot.cluster, jobs, n,
				 scores, factors) != RLSCHED_OK) ||
	    (rlsched_engine_get_info(ce.engine, &inf) != RLSCHED_OK)) {
		_fault("site_factor_p_update", rlsched_last_error(ce.engine));
		goto done;
	}
	_success();
	enforce = (inf.mode == RLSCHED_MODE_ENFORCE);
	detail = _want_detail(&inf);
	if (detail && heard)
		info("%s: heard of %zu ended jobs (%zu kept by Slurm); run_time: %s",
		     plugin_type, heard, n_ended,
		     inf.run_time_predicted ? "predicted" : "limit");
	for (size_t i = 0; i < n; i++) {
		uint32_t site_factor = NICE_OFFSET + factors[i];

		if (job_ptrs[i]->site_factor != site_factor)
			changed++;
		if (detail)
			info("%s: %pJ score %.6g site factor %u (was %"PRId64")%s",
			     plugin_type, job_ptrs[i], scores[i], factors[i],
			     (int64_t) job_ptrs[i]->site_factor -
			     (int64_t) NICE_OFFSET,
			     enforce ? "" : " (shadow: not applied)");
		if (enforce)
			job_ptrs[i]->site_factor = site_factor;
	}
	update_cnt++;
	total_ms = rlsched_elapsed_ms(&start);
	(void) rlsched_health_note_update(ce.engine, total_ms / 1000.0);
	/* Shadow mode exists to be read: always one info line per cycle */
	if ((total_ms > RLSCHED_SLOW_UPDATE_MS) || !enforce)
		info("%s: update scored %zu pending jobs in %.2f ms (copy %.2f ms) with %s, %zu site factors %s",
		     plugin_type, n, total_ms, copy_ms, inf.scorer, changed,
		     enforce ? "changed" : "would change (shadow)");
	else
		debug("%s: update scored %zu pending jobs in %.2f ms (copy %.2f ms) with %s, %zu site factors %s",
		      plugin_type, n, total_ms, copy_ms, inf.scorer, changed,
		      enforce ? "changed" : "would change (shadow)");
done:
	slurm_mutex_unlock(&rlsched_lock);
}
