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
 *  slurm.conf: JobSubmitPlugins=rlsched. The config file is the one named by
 *  PrioritySiteFactorParameters (default /etc/slurm/rlsched.yaml); it is
 *  re-read when it changes. Faults never reject a job: the job passes
 *  unchanged, the fault is logged once and counted.
\*****************************************************************************/

#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../common/rlsched_slurm.h"

RLSCHED_EXPORT const char plugin_name[] = "rlsched job_submit: accelerator type and partition mapping";
RLSCHED_EXPORT const char plugin_type[] = "job_submit/rlsched";
RLSCHED_EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;


static pthread_mutex_t rlsched_lock = PTHREAD_MUTEX_INITIALIZER;
static rlsched_engine *engine = NULL;
static struct timespec config_mtime;
static off_t config_size = -1;
static bool config_seen = false;	/* config_mtime/size are valid */
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

static rlsched_faults_t faults;

static void _fault(const char *what, const char *why)
{
	rlsched_fault(&faults, plugin_type, what, "jobs pass unchanged", why);
}

static void _success(void)
{
	rlsched_fault_cleared(&faults, plugin_type);
}

/* True when the config file differs from the one last read (or vanished) */
static bool _config_changed(void)
{
	struct stat st;

	if (stat(rlsched_config_path(), &st) != 0)
		return config_size != -1;
	return (st.st_size != config_size) ||
	       (st.st_mtim.tv_sec != config_mtime.tv_sec) ||
	       (st.st_mtim.tv_nsec != config_mtime.tv_nsec);
}

static void _remember_config(void)
{
	struct stat st;

	if (stat(rlsched_config_path(), &st) == 0) {
		config_mtime = st.st_mtim;
		config_size = st.st_size;
	} else {
		config_size = -1;
	}
}

/* (Re)loads the config when it changed since last read; lock held */
static void _refresh_engine(void)
{
	rlsched_engine_options opts = {
		.abi_version = RLSCHED_ABI_VERSION,
		.log = rlsched_slurm_log,
		.log_ctx = (void *) plugin_type,
		.flags = RLSCHED_ENGINE_NO_POLICY,
	};

	/* Retry a bad config only once it changed: no re-read per job */
	if (config_seen && !_config_changed())
		return;
	config_seen = true;
	_remember_config();
	if (engine) {
		/* Once per version of the file: it is re-read on change only */
		if (rlsched_engine_reconfigure(engine) != RLSCHED_OK) {
			faults.total++;
			error("%s: %s changed: keeping the previous settings: %s",
			      plugin_type, rlsched_config_path(),
			      rlsched_last_error(engine));
		} else {
			_success();
		}
		return;
	}
	opts.config_path = rlsched_config_path();
	if (rlsched_engine_create(&opts, &engine) != RLSCHED_OK) {
		engine = NULL;
		_fault("loading the config", rlsched_last_error(NULL));
	}
}

extern RLSCHED_EXPORT int init(void)
{
	slurm_mutex_lock(&rlsched_lock);
	_refresh_engine();
	if (engine)
		info("%s: loaded, config %s", plugin_type, rlsched_config_path());
	slurm_mutex_unlock(&rlsched_lock);
	return SLURM_SUCCESS;	/* a bad config leaves jobs unchanged */
}

extern RLSCHED_EXPORT int fini(void)
{
	rlsched_counters c;

	slurm_mutex_lock(&rlsched_lock);
	if (engine && (rlsched_engine_get_counters(engine, &c) == RLSCHED_OK))
		info("%s: unloading; %"PRIu64" jobs mapped, %"PRIu64" rejected, %"PRIu64" plugin faults",
		     plugin_type, c.placements, c.rejections, faults.total);
	rlsched_engine_destroy(engine);
	engine = NULL;
	config_size = -1;
	config_seen = false;
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

	return engine && (rlsched_engine_get_info(engine, &info) == RLSCHED_OK) &&
	       (info.job_classes > 0);
}

static bool _collect(uint32_t submit_uid)
{
	bool classes;
	RLSCHED_LIST_ITR it;
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
	_refresh_engine();
	if (!engine)
		goto done;
	/* Nothing to map without a GRES request: skip the snapshot */
	if (!job_desc->tres_per_job && !job_desc->tres_per_node &&
	    !job_desc->tres_per_task && !job_desc->tres_per_socket)
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

	seen = n_queue;
	if (rlsched_submit_map(engine, time(NULL), &snapshot.cluster, queue,
			       n_queue, &req, &res) != RLSCHED_OK) {
		_fault("job_submit", rlsched_last_error(engine));
		goto done;
	}
	_success();
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
		if (err_msg) {
			xfree(*err_msg);
			*err_msg = xstrdup(res.message ? res.message :
					   "rlsched: impossible accelerator request");
		}
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
		      uint32_t submit_uid)
{
	/* Updates keep what the user asks: remapping happens at submit only */
	return SLURM_SUCCESS;
}
