/*****************************************************************************\
 *  job_submit_rlsched.c - accelerator type and partition mapping at submit.
 *
 *  A job that asks for accelerators without a type (--gres=gpu:4, --gpus=4)
 *  or with an any-of set (--gres='gpu:h200|a100:4') gets the partition and
 *  GRES type where rlsched predicts the earliest completion (queue estimate
 *  plus run time scaled by the type's speed), across GRES names the admin
 *  declared equivalent (gpu ~ npu). Typed requests are left alone unless
 *  placement.retype_typed is set. A request no partition can ever hold is
 *  rejected with a message sbatch prints. The decision is logged and written
 *  to the job's AdminComment (or Comment, see placement.record).
 *
 *  A job that declares a checkpoint in its comment (checkpoint:interval=30m,
 *  cost=90s) is made requeueable, with the checkpoint signal and append-mode
 *  output (docs/preemption.md); a malformed declaration is rejected.
 *
 *  slurm.conf: JobSubmitPlugins=rlsched. The config file is the one named by
 *  PrioritySiteFactorParameters (default /etc/slurm/rlsched.yaml); it is
 *  re-read when it changes (looked at once a second at most, not at every
 *  submit). Faults never reject a job: the job passes
 *  unchanged, the fault is logged once and counted.
\*****************************************************************************/

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "../common/rlsched_slurm.h"

RLSCHED_EXPORT const char plugin_name[] = "rlsched job_submit: accelerator type and partition mapping";
RLSCHED_EXPORT const char plugin_type[] = "job_submit/rlsched";
RLSCHED_EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;

static pthread_mutex_t rlsched_lock = PTHREAD_MUTEX_INITIALIZER;
static rlsched_config_engine_t ce = {
	.flags = RLSCHED_ENGINE_NO_POLICY,
	.type = plugin_type,
	.consequence = "jobs pass unchanged",
	.size = -1,
};
/* Seconds a snapshot and queue are reused across submits */
#define RLSCHED_QUEUE_TTL 2
#define RLSCHED_QUEUE_SPARE 1024

static rlsched_snapshot_t snapshot;
static rlsched_job *queue = NULL;
static job_record_t **queue_ptrs = NULL;
static size_t queue_cap = 0;
static size_t n_queue = 0;
static bool queue_valid = false;
static uint32_t queue_uid = 0;

static void _fault(const char *what, const char *why)
{
	rlsched_fault(&ce.faults, plugin_type, what, ce.consequence, why);
}

static void _success(void)
{
	rlsched_fault_cleared(&ce.faults, plugin_type);
}

extern RLSCHED_EXPORT int init(void)
{
	slurm_mutex_lock(&rlsched_lock);
	rlsched_config_engine_refresh(&ce);
	if (ce.engine)
		info("%s: loaded, config %s", plugin_type, rlsched_config_path());
	slurm_mutex_unlock(&rlsched_lock);
	return SLURM_SUCCESS;	/* a bad config leaves jobs unchanged */
}

extern RLSCHED_EXPORT int fini(void)
{
	rlsched_counters c;

	slurm_mutex_lock(&rlsched_lock);
	if (ce.engine && (rlsched_engine_get_counters(ce.engine, &c) == RLSCHED_OK))
		info("%s: unloading; %"PRIu64" jobs mapped, %"PRIu64" rejected, %"PRIu64" plugin faults",
		     plugin_type, c.placements, c.rejections, ce.faults.total);
	rlsched_config_engine_release(&ce);
	rlsched_snapshot_free(&snapshot);
	queue_valid = false;
	n_queue = 0;
	xfree(queue);
	xfree(queue_ptrs);
	queue_cap = 0;
	slurm_mutex_unlock(&rlsched_lock);
	return SLURM_SUCCESS;
}

static uint32_t _or_zero(uint32_t value)
{
	return ((value == NO_VAL) || (value == INFINITE)) ? 0 : value;
}

/* Snapshot of partitions and nodes, and the jobs holding or waiting for
 * accelerators (for the queue estimate). One pass over job_list. Kept for
 * RLSCHED_QUEUE_TTL seconds while no node changes: a burst of submits pays
 * for one pass, and each mapped job is appended so that the next decision
 * sees it. The job records
 * may go away meanwhile: their strings are interned in the snapshot. */
/* Whether rlsched.yaml has job classes (only then are job names copied) */
static bool _uses_job_classes(void)
{
	rlsched_engine_info info;

	return ce.engine && (rlsched_engine_get_info(ce.engine, &info) == RLSCHED_OK) &&
	       (info.job_classes > 0);
}

/* Whether rlsched.yaml's energy section may defer jobs (then CPU-only jobs are decided too) */
static bool _energy_defers(void)
{
	rlsched_engine_info info;

	return ce.engine && (rlsched_engine_get_info(ce.engine, &info) == RLSCHED_OK) &&
	       (info.energy_defers > 0);
}

static bool _collect(uint32_t submit_uid)
{
	bool classes;
	list_itr_t *it;
	job_record_t *job_ptr;
	size_t n = 0, need = job_list ? (size_t) list_count(job_list) : 0;
	time_t now = time(NULL);

	/* Reused only while no node changed: slurmctld stamps
	 * last_node_update when it allocates or frees nodes (and their GRES),
	 * so a job started a moment ago is never missed. Stamps are seconds:
	 * a change in the second the snapshot was built invalidates it too. */
	if (queue_valid && (submit_uid == queue_uid) &&
	    (now - snapshot.built < RLSCHED_QUEUE_TTL) &&
	    (now >= snapshot.built) && (last_node_update < snapshot.built))
		return true;
	queue_valid = false;
	n_queue = 0;
	need += RLSCHED_QUEUE_SPARE;	/* room for jobs mapped meanwhile */
	if (need > queue_cap) {
		size_t cap = queue_cap ? queue_cap : 1024;
		while (cap < need)
			cap *= 2;
		if (!try_xrealloc(queue, cap * sizeof(*queue)) ||
		    !try_xrealloc(queue_ptrs, cap * sizeof(*queue_ptrs)))
			return false;
		queue_cap = cap;
	}
	if (!rlsched_snapshot_begin(&snapshot))
		return false;
	if (job_list) {
		it = list_iterator_create(job_list);
		while ((job_ptr = list_next(it)) &&
		       (n + RLSCHED_QUEUE_SPARE < queue_cap)) {
			bool running = IS_JOB_RUNNING(job_ptr) ||
				       IS_JOB_SUSPENDED(job_ptr);
			if (running)
				rlsched_snapshot_add_running(&snapshot,
							     job_ptr);
			if ((running || IS_JOB_PENDING(job_ptr)) &&
			    (RLSCHED_JOB_GRES_REQ(job_ptr) ||
			     RLSCHED_JOB_GRES_ALLOC(job_ptr)))
				queue_ptrs[n++] = job_ptr;
		}
		list_iterator_destroy(it);
	}
	if (!rlsched_snapshot_finish(&snapshot, submit_uid))
		return false;
	classes = _uses_job_classes();
	for (size_t i = 0; i < n; i++) {
		rlsched_job *q = &queue[i];

		rlsched_job_fill(q, queue_ptrs[i], &snapshot);
		q->qos = NULL;	/* not interned: placement does not read it */
		q->gres = rlsched_snapshot_intern(&snapshot, q->gres);
		q->gres_type = rlsched_snapshot_intern(&snapshot,
						       q->gres_type);
		if (!q->gres)
			q->accelerators = 0;
		/* Job classes (rlsched.yaml job_classes) need the job's
		 * name and account: copied, as the snapshot outlives this
		 * lock and a pending job's name may be changed or freed */
		if (classes) {
			q->job_name = rlsched_snapshot_keep(&snapshot,
							    queue_ptrs[i]->name);
			q->account = rlsched_snapshot_intern(
				&snapshot, queue_ptrs[i]->account);
		}
	}
	/* A job given a set of partitions (sbatch -p a,b, or by this plugin)
	 * weighs on each of their types by its share (placement.h, QueueLoad) */
	rlsched_jobs_fill_partitions(&snapshot, queue, queue_ptrs, n);
	n_queue = n;
	queue_uid = submit_uid;
	queue_valid = true;
	return true;
}

/* The job just mapped waits in the queue too, for the next decisions */
static void _enqueue(const rlsched_submit *req,
		     const rlsched_submit_result *res)
{
	rlsched_job *q;

	if (!queue_valid || (n_queue >= queue_cap) || (res->accelerators <= 0))
		return;
	q = &queue[n_queue];
	memset(q, 0, sizeof(*q));
	q->state = RLSCHED_JOB_PENDING;
	q->submit_time = time(NULL);
	q->time_limit = req->time_limit;
	q->cpus = 1;
	q->nodes = 1;
	q->accelerators = res->accelerators;
	q->gres = rlsched_snapshot_intern(&snapshot, res->gres);
	q->user_id = req->user_id;
	if (_uses_job_classes()) {
		q->job_name = rlsched_snapshot_keep(&snapshot, req->job_name);
		q->account = rlsched_snapshot_intern(&snapshot, req->account);
	}
	q->gres_type = rlsched_snapshot_intern(&snapshot, res->gres_type);
	q->partition = res->partition_index;
	if (q->gres)
		n_queue++;
}

static void _record(job_desc_msg_t *job_desc, int32_t where, const char *line)
{
	char **field = NULL;

	if (where == RLSCHED_RECORD_ADMIN_COMMENT)
		field = &job_desc->admin_comment;
	else if (where == RLSCHED_RECORD_COMMENT)
		field = &job_desc->comment;
	if (!field)
		return;
	if (*field && (*field)[0])
		xstrfmtcat(*field, "; %s", line);
	else {
		xfree(*field);
		*field = xstrdup(line);
	}
}

static void _replace(char **field, const char *value)
{
	xfree(*field);
	*field = xstrdup(value);
}

/* A deferrable job waits for cheaper power: its begin time (squeue shows
 * reason BeginTime) and why, in the record field; in energy shadow mode
 * only the line that says when it would have started */
static void _defer(job_desc_msg_t *job_desc, uint32_t submit_uid,
		   const rlsched_submit_result *res)
{
	if (!res->deferral || (res->action == RLSCHED_SUBMIT_REJECTED))
		return;
	if (res->begin_time > 0)
		job_desc->begin_time = (time_t) res->begin_time;
	_record(job_desc, res->record, res->deferral);
	info("%s: uid %u job %s: %s", plugin_type, submit_uid,
	     job_desc->name ? job_desc->name : "(no name)", res->deferral);
}

/* Rejects the job with a message sbatch prints */
static int _reject(char **err_msg, const char *message)
{
	if (err_msg) {
		xfree(*err_msg);
		*err_msg = xstrdup(message);
	}
	return SLURM_ERROR;
}

/*
 * A checkpoint declaration in the comment (--comment=checkpoint:interval=30m,
 * cost=90s, docs/preemption.md) makes the job requeueable, gives it the
 * checkpoint signal (B:USR1, sent by preempt/rlsched at preemption and
 * `grace` seconds before its time limit) and append-mode output, unless the
 * job set them itself. A malformed declaration rejects the job.
 */
static int _checkpointable(job_desc_msg_t *job_desc, uint32_t submit_uid,
			   char **err_msg)
{
	int32_t declared = 0;
	rlsched_checkpoint ckpt;
	uint32_t grace = 0;
	char *message = NULL;
	const char *name = job_desc->name ? job_desc->name : "(no name)";
	int rc;

	if (rlsched_checkpoint_parse(job_desc->comment, &declared, &ckpt) !=
	    RLSCHED_OK) {
		message = xstrdup_printf("rlsched: %s", rlsched_last_error(NULL));
		info("%s: uid %u job %s rejected: %s", plugin_type, submit_uid,
		     name, message);
		rc = _reject(err_msg, message);
		xfree(message);
		return rc;
	}
	if (!declared)
		return SLURM_SUCCESS;
	if (job_desc->requeue == 0) {
		info("%s: uid %u job %s rejected: checkpointable with --no-requeue",
		     plugin_type, submit_uid, name);
		return _reject(err_msg, "rlsched: a checkpointable job must be requeueable to resume: drop --no-requeue");
	}
	if (rlsched_checkpoint_grace(ce.engine, &ckpt, &grace) != RLSCHED_OK) {
		_fault("job_submit", rlsched_last_error(ce.engine));
		return SLURM_SUCCESS;
	}
	if (job_desc->requeue == NO_VAL16)
		job_desc->requeue = 1;
	if (!job_desc->warn_signal) {
		job_desc->warn_signal = SIGUSR1;
		job_desc->warn_flags = KILL_JOB_BATCH;
		job_desc->warn_time = grace < UINT16_MAX ? grace : UINT16_MAX - 1;
	}
	if (!job_desc->open_mode)
		job_desc->open_mode = OPEN_MODE_APPEND;
	info("%s: uid %u job %s: checkpointable (interval %"PRId64" s, cost %"PRId64" s): requeue, signal %u@%u, append",
	     plugin_type, submit_uid, name, ckpt.interval, ckpt.cost,
	     job_desc->warn_signal, job_desc->warn_time);
	return SLURM_SUCCESS;
}

/* Locks held by slurmctld: config, job, node and partition read */
extern RLSCHED_EXPORT int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid,
		      char **err_msg)
{
	rlsched_submit req;
	rlsched_submit_result res = { 0 };
	struct timespec start;
	size_t seen;
	int rc = SLURM_SUCCESS;

	if (!job_desc)
		return SLURM_SUCCESS;
	clock_gettime(CLOCK_MONOTONIC, &start);
	slurm_mutex_lock(&rlsched_lock);
	rlsched_config_engine_refresh(&ce);
	if (!ce.engine)
		goto done;
	if ((rc = _checkpointable(job_desc, submit_uid, err_msg)) !=
	    SLURM_SUCCESS)
		goto done;
	/* Nothing to map without a GRES request, nor to defer without an
	 * energy section: skip the snapshot */
	if (!job_desc->tres_per_job && !job_desc->tres_per_node &&
	    !job_desc->tres_per_task && !job_desc->tres_per_socket &&
	    !_energy_defers())
		goto done;
	if (!_collect(submit_uid)) {
		_fault("job_submit", "out of memory");
		goto done;
	}

	memset(&req, 0, sizeof(req));
	req.user_id = submit_uid;
	req.partition = job_desc->partition;
	req.tres_per_job = job_desc->tres_per_job;
	req.tres_per_node = job_desc->tres_per_node;
	req.tres_per_socket = job_desc->tres_per_socket;
	req.tres_per_task = job_desc->tres_per_task;
	req.cpus_per_tres = job_desc->cpus_per_tres;
	req.mem_per_tres = job_desc->mem_per_tres;
	req.tres_bind = job_desc->tres_bind;
	req.tres_freq = job_desc->tres_freq;
	req.min_nodes = (int32_t) _or_zero(job_desc->min_nodes);
	req.num_tasks = (int32_t) _or_zero(job_desc->num_tasks);
	req.time_limit = (int64_t) _or_zero(job_desc->time_limit) * 60;
	req.job_name = job_desc->name;
	req.account = job_desc->account;
	req.qos = job_desc->qos;
	req.begin_time = (int64_t) job_desc->begin_time;
	req.cpus = (int32_t) _or_zero(job_desc->min_cpus);

	seen = n_queue;
	if (rlsched_submit_map(ce.engine, time(NULL), &snapshot.cluster, queue,
			       n_queue, &req, &res) != RLSCHED_OK) {
		_fault("job_submit", rlsched_last_error(ce.engine));
		goto done;
	}
	_success();
	_defer(job_desc, submit_uid, &res);
	switch (res.action) {
	case RLSCHED_SUBMIT_MODIFIED:
		if (res.partition)
			_replace(&job_desc->partition, res.partition);
		if (res.tres_per_job)
			_replace(&job_desc->tres_per_job, res.tres_per_job);
		if (res.tres_per_node)
			_replace(&job_desc->tres_per_node, res.tres_per_node);
		if (res.tres_per_task)
			_replace(&job_desc->tres_per_task, res.tres_per_task);
		if (res.message)
			_record(job_desc, res.record, res.message);
		_enqueue(&req, &res);
		info("%s: uid %u job %s: %s (decided in %.2f ms over %zu queued jobs)",
		     plugin_type, submit_uid,
		     job_desc->name ? job_desc->name : "(no name)",
		     res.message ? res.message : "mapped",
		     rlsched_elapsed_ms(&start), seen);
		break;
	case RLSCHED_SUBMIT_REJECTED:
		info("%s: uid %u job %s rejected: %s", plugin_type,
		     submit_uid, job_desc->name ? job_desc->name : "(no name)",
		     res.message ? res.message : "impossible request");
		_reject(err_msg, res.message ? res.message :
			"rlsched: impossible accelerator request");
		rc = ESLURM_INVALID_GRES;
		break;
	default:
		if (res.message)
			debug("%s: uid %u job %s: %s", plugin_type, submit_uid,
			      job_desc->name ? job_desc->name : "(no name)",
			      res.message);
		break;
	}
done:
	rlsched_submit_result_free(&res);
	slurm_mutex_unlock(&rlsched_lock);
	return rc;
}

extern RLSCHED_EXPORT int job_modify(job_desc_msg_t *job_desc, job_record_t *job_ptr,
		      uint32_t submit_uid RLSCHED_JOB_MODIFY_ERR_MSG(err_msg))
{
	/* Updates keep what the user asks: remapping happens at submit only */
	return SLURM_SUCCESS;
}
