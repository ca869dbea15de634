/*****************************************************************************\
 *  rlsched_snapshot.c - copy slurmctld state into the rlsched C ABI structs.
 *
 *  No policy here: this file only reads Slurm's records. Every pointer that
 *  Slurm may leave NULL is checked; allocations use try_x* so that a failed
 *  allocation degrades the plugin instead of killing slurmctld (x* fatal()s).
 *
 *  A snapshot is built under slurmctld's job write lock: one pass over the
 *  node table, each node's GRES read once and added to the cluster and to
 *  the partitions of its part_pptr (as Slurm walks nodes), into buffers kept
 *  from one build to the next.
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

/* ---- strings ---- */

/* xstrdup() fatal()s when out of memory; this returns NULL */
static char *_try_strdup(const char *s)
{
	size_t len = strlen(s);
	char *copy = try_xmalloc(len + 1);

	if (copy)
		memcpy(copy, s, len + 1);
	return copy;
}

static uint32_t _str_hash(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char) *s) * 16777619u;
	return h;
}

/* The slot holding s, or the free slot where it belongs (cap > 0) */
static uint32_t _strset_slot(const rlsched_strset_t *set, const char *s)
{
	uint32_t mask = set->cap - 1, i = _str_hash(s) & mask;

	while (set->slots[i] && strcmp(set->slots[i], s))
		i = (i + 1) & mask;
	return i;
}

static const char *_strset_find(const rlsched_strset_t *set, const char *s)
{
	return set->cap ? set->slots[_strset_slot(set, s)] : NULL;
}

/* Adds s (not in the set; the caller owns it). False when out of memory. */
static bool _strset_add(rlsched_strset_t *set, const char *s)
{
	if ((set->cnt + 1) * 2 > set->cap) {	/* keep it at most half full */
		rlsched_strset_t grown = { NULL, set->cap ? 2 * set->cap : 64,
					   set->cnt };

		if (!(grown.slots = try_xcalloc(grown.cap, sizeof(char *))))
			return false;
		for (uint32_t i = 0; i < set->cap; i++)
			if (set->slots[i])
				grown.slots[_strset_slot(&grown,
							 set->slots[i])] =
					set->slots[i];
		xfree(set->slots);
		*set = grown;
	}
	set->slots[_strset_slot(set, s)] = s;
	set->cnt++;
	return true;
}

static void _strset_clear(rlsched_strset_t *set)
{
	if (set->cnt)
		memset(set->slots, 0, sizeof(char *) * set->cap);
	set->cnt = 0;
}

/* A copy of s until the next build */
static const char *_keep(rlsched_snapshot_t *snap, const char *s)
{
	char *copy;

	if (!s)
		return NULL;
	if (!_reserve((void **) &snap->strings, &snap->string_cap,
		      snap->string_cnt + 1, sizeof(char *)) ||
	    !(copy = _try_strdup(s)))
		return NULL;
	snap->strings[snap->string_cnt++] = copy;
	return copy;
}

/* The snapshot's lasting copy of a partition or GRES name: made once per
 * distinct name, so that a build of an unchanged cluster copies nothing */
static const char *_name(rlsched_snapshot_t *snap, const char *s)
{
	const char *found = _strset_find(&snap->names, s);
	char *copy;

	if (found)
		return found;
	if (!(copy = _try_strdup(s)))
		return NULL;
	if (!_strset_add(&snap->names, copy)) {
		xfree(copy);
		return NULL;
	}
	return copy;
}

/* ---- partitions by record address ---- */

static uint32_t _ptr_hash(const void *p)
{
	uint64_t x = (uint64_t) (uintptr_t) p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (uint32_t) x;
}

/* Empties the table, with room for n partitions */
static bool _part_slots_reset(rlsched_snapshot_t *snap, int n)
{
	uint32_t cap = snap->part_slot_cap ? snap->part_slot_cap : 64;

	while (cap < 2 * (uint32_t) n)
		cap *= 2;
	if (cap != snap->part_slot_cap) {
		int32_t *slots = try_xcalloc(cap, sizeof(int32_t));

		if (!slots)
			return false;
		xfree(snap->part_slots);
		snap->part_slots = slots;
		snap->part_slot_cap = cap;
	} else {
		memset(snap->part_slots, 0, sizeof(int32_t) * cap);
	}
	return true;
}

static void _part_slots_add(rlsched_snapshot_t *snap, int index)
{
	uint32_t mask = snap->part_slot_cap - 1;
	uint32_t i = _ptr_hash(snap->part_ptrs[index]) & mask;

	while (snap->part_slots[i])
		i = (i + 1) & mask;
	snap->part_slots[i] = index + 1;
}

extern int rlsched_snapshot_part_index(const rlsched_snapshot_t *snap,
				       const part_record_t *part_ptr)
{
	uint32_t mask, i;

	if (!part_ptr || !snap->part_slot_cap)
		return -1;
	mask = snap->part_slot_cap - 1;
	for (i = _ptr_hash(part_ptr) & mask; snap->part_slots[i];
	     i = (i + 1) & mask) {
		int p = snap->part_slots[i] - 1;

		if ((p < snap->cluster.n_partitions) &&
		    (snap->part_ptrs[p] == part_ptr))
			return p;
	}
	return -1;
}

/* ---- the build ---- */

static bool _uid_allowed(const part_record_t *part_ptr, uint32_t uid)
{
	if ((uid == NO_VAL) || (uid == 0) || !part_ptr->allow_uids)
		return true;
	for (int i = 0; !RLSCHED_PART_UIDS_END(part_ptr, i); i++)
		if (part_ptr->allow_uids[i] == uid)
			return true;
	return false;
}

extern bool rlsched_snapshot_begin(rlsched_snapshot_t *snap)
{
	for (int i = 0; i < snap->string_cnt; i++)
		xfree(snap->strings[i]);
	snap->string_cnt = 0;
	_strset_clear(&snap->interned);
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

/* What one build pass carries through the list callbacks */
typedef struct {
	rlsched_snapshot_t *snap;
	uint32_t submit_uid;
	int n_parts;		/* partitions copied so far */
	int max_parts;		/* room in snap->parts */
	int stride;		/* n_parts + 1: a row of snap->acc */
	int node;		/* the node whose GRES are being added */
	int node_part_cnt;	/* its partitions, in snap->node_parts */
	bool failed;		/* out of memory */
} _build_t;

/* list_for_each_ro over part_list: one partition's own fields */
static int _add_part(void *x, void *arg)
{
	part_record_t *part_ptr = x;
	_build_t *b = arg;
	rlsched_partition *part;

	if (b->n_parts >= b->max_parts)
		return 0;
	part = &b->snap->parts[b->n_parts];
	memset(part, 0, sizeof(*part));
	if (!(part->name = _name(b->snap, part_ptr->name ? part_ptr->name : ""))) {
		b->failed = true;
		return -1;
	}
	part->accepts_jobs = (part_ptr->state_up & PARTITION_SUBMIT) &&
			     _uid_allowed(part_ptr, b->submit_uid);
	if ((part_ptr->max_time != INFINITE) && (part_ptr->max_time != NO_VAL))
		part->max_time = (int64_t) part_ptr->max_time * 60;
	b->snap->part_ptrs[b->n_parts] = part_ptr;
	_part_slots_add(b->snap, b->n_parts);
	b->n_parts++;
	return 0;
}

/* Index of the (gres, type) kind, added (with a zeroed row of sums) when
 * new; -1 when out of memory */
static int _kind(_build_t *b, const char *gres, const char *type)
{
	rlsched_snapshot_t *snap = b->snap;
	rlsched_accel *kind;
	int k = snap->kind_cnt;

	for (int i = 0; i < snap->kind_cnt; i++)
		if (!xstrcmp(snap->kinds[i].gres, gres) &&
		    !xstrcmp(snap->kinds[i].type, type))
			return i;
	if (!_reserve((void **) &snap->kinds, &snap->kind_cap, k + 1,
		      sizeof(rlsched_accel)) ||
	    !_reserve((void **) &snap->acc, &snap->acc_cap,
		      (k + 1) * b->stride, sizeof(rlsched_accel)) ||
	    !_reserve((void **) &snap->acc_first, &snap->acc_first_cap,
		      (k + 1) * b->stride, sizeof(int32_t)))
		return -1;
	kind = &snap->kinds[k];
	memset(kind, 0, sizeof(*kind));
	if (!(kind->gres = _name(snap, gres)) ||
	    (type && !(kind->type = _name(snap, type))))
		return -1;
	memset(snap->acc + k * b->stride, 0, sizeof(rlsched_accel) * b->stride);
	snap->kind_cnt++;
	return k;
}

/* Adds avail/idle of one kind on the current node to the cluster and to
 * the node's partitions */
static void _add_accel(_build_t *b, int k, int64_t avail, int64_t idle)
{
	rlsched_snapshot_t *snap = b->snap;

	for (int j = -1; j < b->node_part_cnt; j++) {
		int p = (j < 0) ? b->n_parts : snap->node_parts[j];
		int at = k * b->stride + p;
		rlsched_accel *sum = &snap->acc[at];

		if (!sum->nodes)
			snap->acc_first[at] = b->node;
		sum->total += (int32_t) avail;
		sum->idle += (int32_t) idle;
		if (avail > sum->max_per_node)
			sum->max_per_node = (int32_t) avail;
		if (idle >= avail)
			sum->idle_nodes++;
		sum->nodes++;
	}
}

/* list_for_each_ro over a node's gres_list: its accelerators */
static int _add_node_gres(void *x, void *arg)
{
	gres_state_t *gres_state_node = x;
	_build_t *b = arg;
	gres_node_state_t *gres_ns = gres_state_node->gres_data;
	int types;
	int64_t node_idle;

	if (!gres_ns || !gres_state_node->gres_name ||
	    (gres_state_node->config_flags & GRES_CONF_SHARED))
		return 0;	/* mps, shard: shares of a GPU */
	node_idle = (int64_t) gres_ns->gres_cnt_avail -
		    (int64_t) gres_ns->gres_cnt_alloc;
	if (node_idle < 0)
		node_idle = 0;
	types = gres_ns->type_cnt ? gres_ns->type_cnt : 1;
	for (int t = 0; t < types; t++) {
		const char *type = NULL;
		int64_t avail, idle;
		int k;

		if (gres_ns->type_cnt) {
			type = gres_ns->type_name ? gres_ns->type_name[t] : NULL;
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
		if ((k = _kind(b, gres_state_node->gres_name, type)) < 0) {
			b->failed = true;
			return -1;
		}
		_add_accel(b, k, avail, idle);
	}
	return 0;
}

/* One node: its CPUs and accelerators, into the cluster and its partitions */
static bool _add_node(_build_t *b, node_record_t *node_ptr)
{
	rlsched_snapshot_t *snap = b->snap;
	int index = RLSCHED_NODE_INDEX(node_ptr);
	int32_t cpus = RLSCHED_NODE_CPUS(node_ptr), used = 0, idle;

	if (!_reserve((void **) &snap->node_parts, &snap->node_part_cap,
		      node_ptr->part_cnt + 1, sizeof(int32_t)))
		return false;
	b->node = index;
	b->node_part_cnt = 0;
	for (int j = 0; node_ptr->part_pptr && (j < node_ptr->part_cnt); j++) {
		int p = rlsched_snapshot_part_index(snap,
						    node_ptr->part_pptr[j]);
		if (p >= 0)
			snap->node_parts[b->node_part_cnt++] = p;
	}
	if ((index >= 0) && (index < snap->node_cap))
		used = (int32_t) snap->node_alloc_cpus[index];
	idle = (used < cpus) ? (cpus - used) : 0;
	snap->cluster.nodes_total++;
	snap->cluster.cpus_total += cpus;
	snap->cluster.cpus_idle += idle;
	for (int j = 0; j < b->node_part_cnt; j++) {
		rlsched_partition *part = &snap->parts[snap->node_parts[j]];

		part->nodes_total++;
		part->cpus_total += cpus;
		part->cpus_idle += idle;
	}
	if (node_ptr->gres_list)
		list_for_each_ro(node_ptr->gres_list, _add_node_gres, b);
	return !b->failed;
}

/* The pools of partition p (p == n_parts: the cluster) appended to accel,
 * in the order their first node comes in the node table, as a walk of the
 * partition's nodes would meet them */
static void _emit_pools(_build_t *b, int p, int *cnt, int32_t *first_node)
{
	rlsched_snapshot_t *snap = b->snap;
	int start = *cnt;

	for (int k = 0; k < snap->kind_cnt; k++) {
		int at = k * b->stride + p, pos = *cnt;

		if (!snap->acc[at].nodes)
			continue;
		while ((pos > start) &&
		       (first_node[pos - 1 - start] > snap->acc_first[at])) {
			snap->accel[pos] = snap->accel[pos - 1];
			first_node[pos - start] = first_node[pos - 1 - start];
			pos--;
		}
		snap->accel[pos] = snap->acc[at];
		snap->accel[pos].gres = snap->kinds[k].gres;
		snap->accel[pos].type = snap->kinds[k].type;
		first_node[pos - start] = snap->acc_first[at];
		(*cnt)++;
	}
}

extern bool rlsched_snapshot_finish(rlsched_snapshot_t *snap,
				    uint32_t submit_uid)
{
	node_record_t *node_ptr;
	_build_t b = { .snap = snap, .submit_uid = submit_uid };
	int listed = part_list ? list_count(part_list) : 0;
	int pools = 0, cnt = 0;

	snap->cluster.n_partitions = 0;	/* no stale lookups while failing */
	if (!_reserve((void **) &snap->parts, &snap->part_cap, listed + 1,
		      sizeof(rlsched_partition)) ||
	    !_reserve((void **) &snap->part_ptrs, &snap->part_ptr_cap,
		      listed + 1, sizeof(part_record_t *)) ||
	    !_part_slots_reset(snap, listed + 1))
		return false;
	b.max_parts = listed;
	if (listed)
		list_for_each_ro(part_list, _add_part, &b);
	if (b.failed)
		return false;
	snap->cluster.n_partitions = b.n_parts;	/* part_index() needs it */
	b.stride = b.n_parts + 1;
	if (!_reserve((void **) &snap->acc, &snap->acc_cap,
		      snap->kind_cnt * b.stride, sizeof(rlsched_accel)) ||
	    !_reserve((void **) &snap->acc_first, &snap->acc_first_cap,
		      snap->kind_cnt * b.stride, sizeof(int32_t)))
		return false;
	if (snap->kind_cnt)
		memset(snap->acc, 0, sizeof(rlsched_accel) * snap->kind_cnt *
		       b.stride);

	RLSCHED_FOR_EACH_NODE(i, node_ptr) {
		if (RLSCHED_NODE_USABLE(node_ptr) && !_add_node(&b, node_ptr))
			return false;
	}

	for (int at = 0; at < snap->kind_cnt * b.stride; at++)
		if (snap->acc[at].nodes)
			pools++;
	/* node_parts is free again: the sort keys of one partition's pools */
	if (!_reserve((void **) &snap->accel, &snap->accel_cap, pools + 1,
		      sizeof(rlsched_accel)) ||
	    !_reserve((void **) &snap->node_parts, &snap->node_part_cap,
		      snap->kind_cnt + 1, sizeof(int32_t)))
		return false;
	for (int p = 0; p <= b.n_parts; p++) {
		int start = cnt;

		_emit_pools(&b, p, &cnt, snap->node_parts);
		if (p < b.n_parts) {
			snap->parts[p].accel = snap->accel + start;
			snap->parts[p].n_accel = cnt - start;
		} else {
			snap->cluster.accel = snap->accel + start;
			snap->cluster.n_accel = cnt - start;
		}
	}
	snap->cluster.partitions = snap->parts;
	snap->built = time(NULL);
	return true;
}

extern void rlsched_snapshot_free(rlsched_snapshot_t *snap)
{
	for (int i = 0; i < snap->string_cnt; i++)
		xfree(snap->strings[i]);
	for (uint32_t i = 0; i < snap->names.cap; i++)
		if (snap->names.slots[i]) {
			char *name = (char *) snap->names.slots[i];
			xfree(name);
		}
	xfree(snap->names.slots);
	xfree(snap->interned.slots);
	xfree(snap->strings);
	xfree(snap->parts);
	xfree(snap->part_ptrs);
	xfree(snap->part_slots);
	xfree(snap->accel);
	xfree(snap->kinds);
	xfree(snap->acc);
	xfree(snap->acc_first);
	xfree(snap->node_parts);
	xfree(snap->node_alloc_cpus);
	xfree(snap->job_parts);
	memset(snap, 0, sizeof(*snap));
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
	const char *found, *copy;

	if (!s)
		return NULL;
	if ((found = _strset_find(&snap->names, s)) ||
	    (found = _strset_find(&snap->interned, s)))
		return found;
	if (!(copy = _keep(snap, s)))
		return NULL;
	/* Out of memory for the table: still a copy, only not shared */
	(void) _strset_add(&snap->interned, copy);
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

extern bool rlsched_ended_fill(rlsched_ended_job *out, job_record_t *job_ptr)
{
	if (!IS_JOB_FINISHED(job_ptr) || (job_ptr->start_time <= 0) ||
	    (job_ptr->end_time < job_ptr->start_time))
		return false;
	memset(out, 0, sizeof(*out));
	out->job_id = job_ptr->job_id;
	out->user_id = job_ptr->user_id;
	if ((job_ptr->time_limit != NO_VAL) &&
	    (job_ptr->time_limit != INFINITE))
		out->time_limit = (int64_t) job_ptr->time_limit * 60;
	out->start_time = job_ptr->start_time;
	out->end_time = job_ptr->end_time;
	out->suspended = job_ptr->tot_sus_time;
	return true;
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
	out->comment = job_ptr->comment;	/* checkpointable: declared there */
	out->user_id = job_ptr->user_id;	/* job_name, account: see _collect */
	/* Read during the call only (a kept queue must drop it) */
	out->qos = job_ptr->qos_ptr ? job_ptr->qos_ptr->name : NULL;
	if (details) {
		out->submit_time = details->submit_time;
		out->begin_time = details->begin_time;
		out->cpus = (int32_t) details->min_cpus;
		out->nodes = (int32_t) details->min_nodes;
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
