/*****************************************************************************\
 *  rlsched_slurm.c - copy slurmctld state into the rlsched C ABI structs.
 *
 *  No policy here: this file only reads Slurm's records. Every pointer that
 *  Slurm may leave NULL is checked; allocations use try_x* so that a failed
 *  allocation degrades the plugin instead of killing slurmctld (x* fatal()s).
\*****************************************************************************/

#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "rlsched_slurm.h"

static bool _reserve(void **array, int *cap, int need, size_t size)
{
	void *grown;
	int new_cap;

	if (need <= *cap)
		return true;
	new_cap = (*cap > 0) ? *cap : 16;
	while (new_cap < need)
		new_cap *= 2;
	grown = *array;
	if (!try_xrealloc(grown, (size_t) new_cap * size))
		return false;
	*array = grown;
	*cap = new_cap;
	return true;
}

static const char *_keep(rlsched_snapshot_t *snap, const char *s)
{
	char *copy;

	if (!s)
		return NULL;
	if (!_reserve((void **) &snap->strings, &snap->string_cap,
		      snap->string_cnt + 1, sizeof(char *)))
		return NULL;
	copy = xstrdup(s);
	snap->strings[snap->string_cnt++] = copy;
	return copy;
}

/* Accelerators of one node, added to the pools in accel[first .. accel_cnt) */
static bool _add_node_gres(rlsched_snapshot_t *snap, int first,
			   node_record_t *node_ptr)
{
	list_itr_t *it;
	gres_state_t *gres_state_node;
	bool ok = true;

	if (!node_ptr->gres_list)
		return true;
	it = list_iterator_create(node_ptr->gres_list);
	while ((gres_state_node = list_next(it))) {
		gres_node_state_t *gres_ns = gres_state_node->gres_data;
		int types, t;
		int64_t node_idle;

		if (!gres_ns || !gres_state_node->gres_name ||
		    (gres_state_node->config_flags & GRES_CONF_SHARED))
			continue;	/* mps, shard: shares of a GPU */
		node_idle = (int64_t) gres_ns->gres_cnt_avail -
			    (int64_t) gres_ns->gres_cnt_alloc;
		if (node_idle < 0)
			node_idle = 0;
		types = gres_ns->type_cnt ? gres_ns->type_cnt : 1;
		for (t = 0; t < types; t++) {
			const char *type = NULL;
			int64_t avail, idle;
			rlsched_accel *pool = NULL;
			int k;

			if (gres_ns->type_cnt) {
				type = gres_ns->type_name ?
					gres_ns->type_name[t] : NULL;
				avail = gres_ns->type_cnt_avail ?
					(int64_t) gres_ns->type_cnt_avail[t] : 0;
				idle = avail - (gres_ns->type_cnt_alloc ?
					(int64_t) gres_ns->type_cnt_alloc[t] : 0);
				/* typeless allocations count only in total */
				if (idle > node_idle)
					idle = node_idle;
			} else {
				avail = (int64_t) gres_ns->gres_cnt_avail;
				idle = node_idle;
			}
			if (avail <= 0)
				continue;
			if (idle < 0)
				idle = 0;
			for (k = first; k < snap->accel_cnt; k++) {
				rlsched_accel *a = &snap->accel[k];
				if (!xstrcmp(a->gres, gres_state_node->gres_name) &&
				    !xstrcmp(a->type, type)) {
					pool = a;
					break;
				}
			}
			if (!pool) {
				if (!_reserve((void **) &snap->accel,
					      &snap->accel_cap,
					      snap->accel_cnt + 1,
					      sizeof(rlsched_accel))) {
					ok = false;
					break;
				}
				pool = &snap->accel[snap->accel_cnt++];
				memset(pool, 0, sizeof(*pool));
				pool->gres = _keep(snap,
						   gres_state_node->gres_name);
				pool->type = _keep(snap, type);
			}
			pool->total += (int32_t) avail;
			pool->idle += (int32_t) idle;
			if (avail > pool->max_per_node)
				pool->max_per_node = (int32_t) avail;
			pool->nodes++;
		}
		if (!ok)
			break;
	}
	list_iterator_destroy(it);
	return ok;
}

static bool _uid_allowed(const part_record_t *part_ptr, uint32_t uid)
{
	if ((uid == NO_VAL) || (uid == 0) || !part_ptr->allow_uids)
		return true;
	for (int i = 0; part_ptr->allow_uids[i]; i++)
		if (part_ptr->allow_uids[i] == uid)
			return true;
	return false;
}

extern bool rlsched_snapshot_begin(rlsched_snapshot_t *snap)
{
	for (int i = 0; i < snap->string_cnt; i++)
		xfree(snap->strings[i]);
	snap->string_cnt = 0;
	snap->interned_cnt = 0;
	snap->accel_cnt = 0;
	memset(&snap->cluster, 0, sizeof(snap->cluster));
	if (!_reserve((void **) &snap->node_alloc_cpus, &snap->node_cap,
		      node_record_count + 1, sizeof(uint32_t)))
		return false;
	memset(snap->node_alloc_cpus, 0,
	       sizeof(uint32_t) * (size_t) snap->node_cap);
	return true;
}

extern void rlsched_snapshot_add_running(rlsched_snapshot_t *snap,
					 job_record_t *job_ptr)
{
	job_resources_t *res = job_ptr->job_resrcs;
	uint32_t j = 0;
	int last;

	if (!res || !res->node_bitmap || !res->cpus || !snap->node_alloc_cpus)
		return;
	last = bit_fls(res->node_bitmap);
	for (int i = bit_ffs(res->node_bitmap);
	     (i >= 0) && (i <= last) && (j < res->nhosts); i++) {
		if (!bit_test(res->node_bitmap, i))
			continue;
		if (i < snap->node_cap)
			snap->node_alloc_cpus[i] += res->cpus[j];
		j++;
	}
}

static void _node_cpus(const rlsched_snapshot_t *snap, node_record_t *node_ptr,
		       int32_t *total, int32_t *idle)
{
	int index = RLSCHED_NODE_INDEX(node_ptr);
	int32_t cpus = RLSCHED_NODE_CPUS(node_ptr);
	int32_t used = 0;

	if ((index >= 0) && (index < snap->node_cap))
		used = (int32_t) snap->node_alloc_cpus[index];
	*total += cpus;
	*idle += (used < cpus) ? (cpus - used) : 0;
}

extern bool rlsched_snapshot_finish(rlsched_snapshot_t *snap,
				    uint32_t submit_uid)
{
	list_itr_t *it;
	part_record_t *part_ptr;
	node_record_t *node_ptr;
	int n_parts = part_list ? list_count(part_list) : 0;
	int p = 0, cluster_first;
	int *first = NULL;

	if (!_reserve((void **) &snap->parts, &snap->part_cap, n_parts + 1,
		      sizeof(rlsched_partition)) ||
	    !_reserve((void **) &snap->part_ptrs, &snap->part_ptr_cap,
		      n_parts + 1, sizeof(part_record_t *)))
		return false;
	if (!(first = try_xcalloc(n_parts + 1, sizeof(int))))
		return false;

	if (n_parts) {
		it = list_iterator_create(part_list);
		while ((p < n_parts) && (part_ptr = list_next(it))) {
			rlsched_partition *part = &snap->parts[p];

			memset(part, 0, sizeof(*part));
			snap->part_ptrs[p] = part_ptr;
			part->name = _keep(snap, part_ptr->name);
			part->accepts_jobs =
				(part_ptr->state_up & PARTITION_SUBMIT) &&
				_uid_allowed(part_ptr, submit_uid);
			if ((part_ptr->max_time != INFINITE) &&
			    (part_ptr->max_time != NO_VAL))
				part->max_time =
					(int64_t) part_ptr->max_time * 60;
			first[p] = snap->accel_cnt;
			for (int i = 0; part_ptr->node_bitmap &&
			     (i < node_record_count); i++) {
				if (!bit_test(part_ptr->node_bitmap, i) ||
				    !(node_ptr = node_record_table_ptr[i]) ||
				    !RLSCHED_NODE_USABLE(node_ptr))
					continue;
				part->nodes_total++;
				_node_cpus(snap, node_ptr, &part->cpus_total,
					   &part->cpus_idle);
				if (!_add_node_gres(snap, first[p], node_ptr))
					break;
			}
			p++;
		}
		list_iterator_destroy(it);
	}
	n_parts = p;

	cluster_first = snap->accel_cnt;
	RLSCHED_FOR_EACH_NODE(i, node_ptr) {
		if (!RLSCHED_NODE_USABLE(node_ptr))
			continue;
		snap->cluster.nodes_total++;
		_node_cpus(snap, node_ptr, &snap->cluster.cpus_total,
			   &snap->cluster.cpus_idle);
		if (!_add_node_gres(snap, cluster_first, node_ptr))
			break;
	}

	/* accel may have moved while growing: point into it only now */
	for (p = 0; p < n_parts; p++) {
		int end = (p + 1 < n_parts) ? first[p + 1] : cluster_first;
		snap->parts[p].accel = snap->accel + first[p];
		snap->parts[p].n_accel = end - first[p];
	}
	snap->cluster.partitions = snap->parts;
	snap->cluster.n_partitions = n_parts;
	snap->cluster.accel = snap->accel + cluster_first;
	snap->cluster.n_accel = snap->accel_cnt - cluster_first;
	snap->built = time(NULL);
	xfree(first);
	return true;
}

extern void rlsched_snapshot_free(rlsched_snapshot_t *snap)
{
	for (int i = 0; i < snap->string_cnt; i++)
		xfree(snap->strings[i]);
	xfree(snap->strings);
	xfree(snap->interned);
	xfree(snap->parts);
	xfree(snap->part_ptrs);
	xfree(snap->accel);
	xfree(snap->node_alloc_cpus);
	xfree(snap->job_parts);
	memset(snap, 0, sizeof(*snap));
}

extern int rlsched_snapshot_part_index(const rlsched_snapshot_t *snap,
				       const part_record_t *part_ptr)
{
	if (!part_ptr)
		return -1;
	for (int p = 0; p < snap->cluster.n_partitions; p++)
		if (snap->part_ptrs[p] == part_ptr)
			return p;
	return -1;
}

extern int rlsched_snapshot_part_by_name(const rlsched_snapshot_t *snap,
					 const char *name)
{
	if (!name)
		return -1;
	for (int p = 0; p < snap->cluster.n_partitions; p++)
		if (!xstrcmp(snap->parts[p].name, name))
			return p;
	return -1;
}

extern const char *rlsched_snapshot_keep(rlsched_snapshot_t *snap,
					 const char *s)
{
	return _keep(snap, s);
}

extern const char *rlsched_snapshot_intern(rlsched_snapshot_t *snap,
					   const char *s)
{
	const char *copy;

	if (!s)
		return NULL;
	for (int k = 0; k < snap->cluster.n_accel; k++) {
		const rlsched_accel *a = &snap->cluster.accel[k];
		if (!xstrcmp(a->gres, s))
			return a->gres;
		if (!xstrcmp(a->type, s))
			return a->type;
	}
	for (int i = 0; i < snap->interned_cnt; i++)
		if (!xstrcmp(snap->interned[i], s))
			return snap->interned[i];
	if (!_reserve((void **) &snap->interned, &snap->interned_cap,
		      snap->interned_cnt + 1, sizeof(char *)) ||
	    !(copy = _keep(snap, s)))
		return NULL;
	snap->interned[snap->interned_cnt++] = copy;
	return copy;
}

extern void rlsched_jobs_fill_partitions(rlsched_snapshot_t *snap,
					 rlsched_job *jobs,
					 job_record_t **job_ptrs, size_t n)
{
	size_t need = 0;
	int used = 0;

	for (size_t i = 0; i < n; i++)
		if (job_ptrs[i]->part_ptr_list)
			need += list_count(job_ptrs[i]->part_ptr_list);
	if (!need || (need > INT32_MAX) ||
	    !_reserve((void **) &snap->job_parts, &snap->job_part_cap,
		      (int) need, sizeof(int32_t)))
		return;
	for (size_t i = 0; i < n; i++) {
		list_itr_t *it;
		part_record_t *part_ptr;
		int32_t *first = snap->job_parts + used;
		int count = 0;

		if (!job_ptrs[i]->part_ptr_list)
			continue;
		it = list_iterator_create(job_ptrs[i]->part_ptr_list);
		while ((part_ptr = list_next(it)) && (used < (int) need)) {
			int p = rlsched_snapshot_part_index(snap, part_ptr);

			if (p < 0)
				p = rlsched_snapshot_part_by_name(snap,
								  part_ptr->name);
			if (p < 0)
				continue;
			first[count++] = p;
			used++;
		}
		list_iterator_destroy(it);
		if (count > 1) {
			jobs[i].partitions = first;
			jobs[i].n_partitions = count;
		}
	}
}

/* list_find_first callback: the first GRES that is not a share (mps, shard) */
static int _find_accel_gres(void *x, void *key)
{
	gres_state_t *gres_state = x;

	return gres_state && gres_state->gres_data &&
	       gres_state->gres_name &&
	       !(gres_state->config_flags & GRES_CONF_SHARED);
}

static double _normalised(double weighted, uint32_t weight)
{
	double v;

	if (!weight)
		return 0.0;
	v = weighted / (double) weight;
	return (v < 0.0) ? 0.0 : ((v > 1.0) ? 1.0 : v);
}

extern void rlsched_job_fill(rlsched_job *out, job_record_t *job_ptr,
			     const rlsched_snapshot_t *snap)
{
	job_details_t *details = job_ptr->details;
	list_t *gres_list;
	gres_state_t *gres_state;
	bool running = IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr);

	memset(out, 0, sizeof(*out));
	out->job_id = job_ptr->job_id;
	out->state = running ? RLSCHED_JOB_RUNNING : RLSCHED_JOB_PENDING;
	out->partition = rlsched_snapshot_part_index(snap, job_ptr->part_ptr);
	if ((job_ptr->time_limit != NO_VAL) &&
	    (job_ptr->time_limit != INFINITE))
		out->time_limit = (int64_t) job_ptr->time_limit * 60;
	if (running)
		out->end_time = job_ptr->end_time;
	out->restarts = job_ptr->restart_cnt;
	out->user_id = job_ptr->user_id;	/* job_name, account: see _collect */
	if (details) {
		out->submit_time = details->submit_time;
		out->begin_time = details->begin_time;
		out->cpus = (int32_t) details->min_cpus;
		out->nodes = (int32_t) details->min_nodes;
		/* Checkpointable: requeue allowed and a warning signal set */
		out->checkpointable = details->requeue &&
				      job_ptr->warn_signal;
	}
	if (running) {
		out->cpus = (int32_t) job_ptr->total_cpus;
		out->nodes = (int32_t) job_ptr->node_cnt;
	}
	if (job_ptr->prio_factors) {
		priority_factors_t *f = job_ptr->prio_factors;
		out->age_factor = _normalised(f->priority_age,
					      slurm_conf.priority_weight_age);
		out->fairshare_factor = _normalised(f->priority_fs,
						    slurm_conf.priority_weight_fs);
		out->job_size_factor = _normalised(f->priority_js,
						   slurm_conf.priority_weight_js);
		out->partition_factor = _normalised(
			f->priority_part, slurm_conf.priority_weight_part);
		out->qos_factor = _normalised(f->priority_qos,
					      slurm_conf.priority_weight_qos);
	}

	gres_list = RLSCHED_JOB_GRES_REQ(job_ptr);
	if (gres_list &&
	    (gres_state = list_find_first_ro(gres_list, _find_accel_gres,
					     NULL))) {
		gres_job_state_t *gres_js = gres_state->gres_data;
		uint64_t count = gres_js->total_gres;

		if (!count || (count == NO_VAL64)) {
			uint64_t nodes = out->nodes > 0 ? out->nodes : 1;
			count = gres_js->gres_per_job;
			if (!count || (count == NO_VAL64))
				count = gres_js->gres_per_node * nodes;
		}
		if (count && (count != NO_VAL64) && (count < INT32_MAX)) {
			out->accelerators = (int32_t) count;
			out->gres = gres_state->gres_name;
			out->gres_type = gres_js->type_name;
		}
	}
	/* A running job holds what was allocated: the count per node and the
	 * type (a typeless request was given one) */
	gres_list = running ? RLSCHED_JOB_GRES_ALLOC(job_ptr) : NULL;
	if (gres_list &&
	    (gres_state = list_find_first_ro(gres_list, _find_accel_gres,
					     NULL))) {
		gres_job_state_t *gres_js = gres_state->gres_data;
		uint64_t count = 0;

		if (gres_js->gres_cnt_node_alloc)
			for (uint32_t n = 0; n < gres_js->node_cnt; n++)
				count += gres_js->gres_cnt_node_alloc[n];
		if (!count && (gres_js->total_gres != NO_VAL64))
			count = gres_js->total_gres;
		if (count && (count < INT32_MAX))
			out->accelerators = (int32_t) count;
		out->gres = gres_state->gres_name;
		if (gres_js->type_name)
			out->gres_type = gres_js->type_name;
	}
}

extern void rlsched_slurm_log(void *ctx, int level, const char *line)
{
	const char *type = ctx ? ctx : "rlsched";

	switch (level) {
	case RLSCHED_LOG_ERROR:
		error("%s: %s", type, line);
		break;
	case RLSCHED_LOG_INFO:
		info("%s: %s", type, line);
		break;
	default:
		debug("%s: %s", type, line);
		break;
	}
}

extern void rlsched_engine_options_weights(rlsched_engine_options *opts)
{
	opts->weight_age = slurm_conf.priority_weight_age;
	opts->weight_fairshare = slurm_conf.priority_weight_fs;
	opts->weight_job_size = slurm_conf.priority_weight_js;
	opts->weight_partition = slurm_conf.priority_weight_part;
	opts->weight_qos = slurm_conf.priority_weight_qos;
}

extern double rlsched_elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double) (now.tv_sec - start->tv_sec) * 1e3 +
	       (double) (now.tv_nsec - start->tv_nsec) / 1e6;
}

extern const char *rlsched_config_path(void)
{
	if (slurm_conf.site_factor_params && slurm_conf.site_factor_params[0])
		return slurm_conf.site_factor_params;
	return "/etc/slurm/rlsched.yaml";
}

extern void rlsched_fault(rlsched_faults_t *faults, const char *type,
			  const char *what, const char *consequence,
			  const char *why)
{
	faults->total++;
	if (faults->in_row++ == 0)
		error("%s: %s failed, %s (logged once until it works again; %"PRIu64" faults so far): %s",
		      type, what, consequence, faults->total, why);
}

extern void rlsched_fault_cleared(rlsched_faults_t *faults, const char *type)
{
	if (faults->in_row) {
		info("%s: working again after %"PRIu64" consecutive faults",
		     type, faults->in_row);
		faults->in_row = 0;
	}
}

/* True when the config file differs from the one last read (or vanished) */
static bool _config_changed(const rlsched_config_engine_t *ce)
{
	struct stat st;

	if (stat(rlsched_config_path(), &st) != 0)
		return ce->size != -1;
	return (st.st_size != ce->size) ||
	       (st.st_mtim.tv_sec != ce->mtime.tv_sec) ||
	       (st.st_mtim.tv_nsec != ce->mtime.tv_nsec);
}

static void _remember_config(rlsched_config_engine_t *ce)
{
	struct stat st;

	if (stat(rlsched_config_path(), &st) == 0) {
		ce->mtime = st.st_mtim;
		ce->size = st.st_size;
	} else {
		ce->size = -1;
	}
}

extern void rlsched_config_engine_refresh(rlsched_config_engine_t *ce)
{
	rlsched_engine_options opts = {
		.abi_version = RLSCHED_ABI_VERSION,
		.log = rlsched_slurm_log,
		.log_ctx = (void *) ce->type,
		.flags = ce->flags,
		.plugin_type = ce->type,
	};
	time_t now = time(NULL);

	if (ce->seen && ce->check_every && (now - ce->checked < ce->check_every))
		return;
	ce->checked = now;
	/* Retry a bad config only once it changed: no re-read per call */
	if (ce->seen && !_config_changed(ce))
		return;
	ce->seen = true;
	_remember_config(ce);
	if (ce->engine) {
		/* Once per version of the file: it is re-read on change only */
		if (rlsched_engine_reconfigure(ce->engine) != RLSCHED_OK) {
			ce->faults.total++;
			error("%s: %s changed: keeping the previous settings: %s",
			      ce->type, rlsched_config_path(),
			      rlsched_last_error(ce->engine));
		} else {
			rlsched_fault_cleared(&ce->faults, ce->type);
		}
		return;
	}
	opts.config_path = rlsched_config_path();
	if (rlsched_engine_create(&opts, &ce->engine) != RLSCHED_OK) {
		ce->engine = NULL;
		rlsched_fault(&ce->faults, ce->type, "loading the config",
			      ce->consequence, rlsched_last_error(NULL));
	}
}

extern void rlsched_config_engine_release(rlsched_config_engine_t *ce)
{
	rlsched_engine_destroy(ce->engine);
	ce->engine = NULL;
	ce->size = -1;
	ce->seen = false;
}
