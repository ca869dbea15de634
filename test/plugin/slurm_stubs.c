/*****************************************************************************\
 *  slurm_stubs.c - weak stand-ins for the slurmctld/libslurmfull symbols the
 *  rlsched plugins import (nm -u on the .so lists them). The executable
 *  exports them (-rdynamic), so dlopen() resolves the plugin against them.
\*****************************************************************************/

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm_stubs.h"

#define WEAK __attribute__((weak))

/* ---- slurmctld globals ---- */
WEAK slurm_conf_t slurm_conf;
WEAK list_t *job_list = NULL;
WEAK list_t *part_list = NULL;
WEAK node_record_t **node_record_table_ptr = NULL;
WEAK int node_record_count = 0;
WEAK time_t last_node_update = 0;

/* ---- allocation counter ---- */
static long stub_allocs = 0;
static long stub_fail_from = -1;

extern void stub_alloc_reset(void)
{
	stub_allocs = 0;
}

extern void stub_alloc_fail_after(long n)
{
	stub_fail_from = n;
}

/* Counts one allocation; true when it must fail */
static bool _alloc_fails(void)
{
	long n = stub_allocs++;

	return (stub_fail_from >= 0) && (n >= stub_fail_from);
}

static void _out_of_memory(bool try)
{
	if (!try) {
		fprintf(stderr, "stub: fatal: out of memory in a non-try allocation\n");
		abort();
	}
}

extern long stub_alloc_count(void)
{
	return stub_allocs;
}

/* ---- lists ---- */
struct xlist {
	void **items;
	int count;
	int cap;
};

struct listIterator {
	struct xlist *list;
	int pos;
};

extern list_t *stub_list_create(void)
{
	return calloc(1, sizeof(struct xlist));
}

extern void stub_list_append(list_t *l, void *item)
{
	if (l->count == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->items = realloc(l->items, sizeof(void *) * l->cap);
	}
	l->items[l->count++] = item;
}

extern void stub_list_clear(list_t *l)
{
	l->count = 0;
}

extern void stub_list_destroy(list_t *l)
{
	if (!l)
		return;
	free(l->items);
	free(l);
}

WEAK int slurm_list_count(list_t *l)
{
	return l ? l->count : 0;
}

WEAK list_itr_t *slurm_list_iterator_create(list_t *l)
{
	list_itr_t *it = calloc(1, sizeof(*it));

	if (_alloc_fails())	/* xmalloc() in Slurm's list.c */
		_out_of_memory(false);
	it->list = l;
	return it;
}

WEAK void *slurm_list_next(list_itr_t *it)
{
	if (it->pos >= it->list->count)
		return NULL;
	return it->list->items[it->pos++];
}

WEAK void slurm_list_iterator_destroy(list_itr_t *it)
{
	free(it);
}

WEAK int slurm_list_for_each_ro(list_t *l, ListForF f, void *arg)
{
	int n = 0;

	for (int i = 0; l && (i < l->count); i++) {
		n++;
		if (f(l->items[i], arg) < 0)
			return -n;
	}
	return n;
}

WEAK void *slurm_list_find_first_ro(list_t *l, ListFindF f, void *key)
{
	for (int i = 0; l && (i < l->count); i++)
		if (f(l->items[i], key))
			return l->items[i];
	return NULL;
}

/* ---- bitmaps ---- */
extern bitstr_t *stub_bit_alloc(int nbits)
{
	bitstr_t *b = calloc(1 + (nbits + 63) / 64, sizeof(bitstr_t));
	b[0] = nbits;
	return b;
}

extern void stub_bit_set(bitstr_t *b, int bit)
{
	b[1 + bit / 64] |= (int64_t) (((uint64_t) 1) << (bit % 64));
}

WEAK int slurm_bit_test(bitstr_t *b, bitoff_t bit)
{
	if (bit < 0 || bit >= b[0]) {
		fprintf(stderr, "stub: bit_test(%ld) out of range %ld\n",
			(long) bit, (long) b[0]);
		abort();
	}
	return (int) ((((uint64_t) b[1 + bit / 64]) >> (bit % 64)) & 1);
}

/* A word at a time, as Slurm's bitstring.c: benchmarks on thousands of
 * nodes must not measure a bit-by-bit scan slurmctld does not do */
WEAK bitoff_t slurm_bit_ffs(bitstr_t *b)
{
	for (bitoff_t w = 0; w < (b[0] + 63) / 64; w++)
		if (b[1 + w])
			return w * 64 + __builtin_ctzll((uint64_t) b[1 + w]);
	return -1;
}

WEAK bitoff_t slurm_bit_fls(bitstr_t *b)
{
	for (bitoff_t w = (b[0] + 63) / 64 - 1; w >= 0; w--)
		if (b[1 + w])
			return w * 64 + 63 - __builtin_clzll((uint64_t) b[1 + w]);
	return -1;
}

/* ---- memory (plain malloc: the harness frees what it made the same way) ---- */
WEAK void *slurm_xcalloc(size_t count, size_t size, bool clear, bool try,
			 const char *file, int line, const char *func)
{
	void *p;

	if (_alloc_fails()) {
		_out_of_memory(try);
		return NULL;
	}
	p = calloc(count ? count : 1, size ? size : 1);
	if (!p && !try)
		abort();
	return p;
}

WEAK void *slurm_xrecalloc(void **item, size_t count, size_t size, bool clear,
			   bool try, const char *file, int line,
			   const char *func)
{
	void *p;

	if (_alloc_fails()) {
		_out_of_memory(try);
		return NULL;
	}
	p = realloc(*item, count * size);
	if (!p) {
		if (!try)
			abort();
		return NULL;
	}
	*item = p;
	return p;
}

WEAK void slurm_xfree(void **item)
{
	free(*item);
	*item = NULL;
}

WEAK char *slurm_xstrdup(const char *s)
{
	if (!s)
		return NULL;
	if (_alloc_fails())
		_out_of_memory(false);
	return strdup(s);
}

WEAK int slurm_xstrcmp(const char *a, const char *b)
{
	if (!a && !b)
		return 0;
	if (!a)
		return -1;
	if (!b)
		return 1;
	return strcmp(a, b);
}

WEAK void slurm_xstrfmtcat(char **str, const char *fmt, ...)
{
	va_list ap;
	char *add = NULL, *joined = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&add, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	if (asprintf(&joined, "%s%s", *str ? *str : "", add) < 0)
		abort();
	free(add);
	free(*str);
	*str = joined;
}

WEAK char *slurm_xstrdup_printf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

/* ---- logging: every line captured with its level ---- */
#define STUB_LOG_MAX 200000
static struct {
	int level;
	char *line;
} stub_lines[STUB_LOG_MAX];
static int stub_line_cnt = 0;
int stub_quiet = 0;

static void _capture(int level, const char *fmt, va_list ap)
{
	char *line = NULL;

	if (vasprintf(&line, fmt, ap) < 0)
		abort();
	if (!stub_quiet)
		fprintf(stderr, "[log %d] %s\n", level, line);
	if (stub_line_cnt < STUB_LOG_MAX) {
		stub_lines[stub_line_cnt].level = level;
		stub_lines[stub_line_cnt++].line = line;
	} else {
		free(line);
	}
}

WEAK int slurm_get_log_level(void)
{
	return LOG_LEVEL_DEBUG;
}

WEAK void slurm_log_var(const log_level_t level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_capture(level, fmt, ap);
	va_end(ap);
}

WEAK int slurm_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_capture(LOG_LEVEL_ERROR, fmt, ap);
	va_end(ap);
	return SLURM_ERROR;
}

WEAK void slurm_fatal(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "stub: fatal: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	abort();
}

extern void stub_log_reset(void)
{
	for (int i = 0; i < stub_line_cnt; i++)
		free(stub_lines[i].line);
	stub_line_cnt = 0;
}

extern int stub_log_count_level(int level, const char *substring)
{
	int n = 0;
	for (int i = 0; i < stub_line_cnt; i++)
		if (((level < 0) || (stub_lines[i].level == level)) &&
		    strstr(stub_lines[i].line, substring))
			n++;
	return n;
}

extern int stub_log_count(const char *substring)
{
	return stub_log_count_level(-1, substring);
}

extern void stub_log_dump(void)
{
	for (int i = 0; i < stub_line_cnt; i++)
		fprintf(stderr, "  [%d] %s\n", stub_lines[i].level,
			stub_lines[i].line);
}

/* ---- node table ---- */
WEAK node_record_t *next_node(int *index)
{
	while (*index < node_record_count) {
		if (node_record_table_ptr[*index])
			return node_record_table_ptr[*index];
		(*index)++;
	}
	return NULL;
}

/* ---- record builders ---- */
static int node_cap = 0;

extern node_record_t *stub_add_node(const char *name, int cpus,
				    const char *gres, const char *type,
				    int count, int alloc)
{
	node_record_t *node_ptr = calloc(1, sizeof(*node_ptr));

	node_ptr->name = strdup(name);
	node_ptr->cpus = cpus;
	node_ptr->cpus_efctv = cpus;
	node_ptr->node_state = NODE_STATE_IDLE;
	node_ptr->index = node_record_count;
	if (gres) {
		gres_state_t *gs = calloc(1, sizeof(*gs));
		gres_node_state_t *ns = calloc(1, sizeof(*ns));

		gs->gres_name = strdup(gres);
		gs->gres_data = ns;
		ns->gres_cnt_avail = count;
		ns->gres_cnt_alloc = alloc;
		if (type) {
			ns->type_cnt = 1;
			ns->type_name = calloc(1, sizeof(char *));
			ns->type_name[0] = strdup(type);
			ns->type_cnt_avail = calloc(1, sizeof(uint64_t));
			ns->type_cnt_alloc = calloc(1, sizeof(uint64_t));
			ns->type_cnt_avail[0] = count;
			ns->type_cnt_alloc[0] = alloc;
		}
		node_ptr->gres_list = stub_list_create();
		stub_list_append(node_ptr->gres_list, gs);
	}
	if (node_record_count == node_cap) {
		node_cap = node_cap ? 2 * node_cap : 16;
		node_record_table_ptr = realloc(node_record_table_ptr,
						sizeof(node_record_t *) *
						node_cap);
	}
	node_record_table_ptr[node_record_count++] = node_ptr;
	return node_ptr;
}

/* Partitions cover [first_node, last_node] of the node table; build the
 * nodes first. max_time_min: INFINITE for none. */
extern part_record_t *stub_add_part(const char *name, int first_node,
				    int last_node, uint32_t max_time_min)
{
	part_record_t *part_ptr = calloc(1, sizeof(*part_ptr));

	part_ptr->name = strdup(name);
	part_ptr->state_up = PARTITION_UP;
	part_ptr->max_time = max_time_min;
	part_ptr->node_bitmap = stub_bit_alloc(node_record_count);
	for (int i = first_node; i <= last_node; i++) {
		node_record_t *node_ptr = node_record_table_ptr[i];

		stub_bit_set(part_ptr->node_bitmap, i);
		node_ptr->part_pptr = realloc(node_ptr->part_pptr,
					      sizeof(void *) *
					      (node_ptr->part_cnt + 1));
		node_ptr->part_pptr[node_ptr->part_cnt++] = part_ptr;
	}
	if (!part_list)
		part_list = stub_list_create();
	stub_list_append(part_list, part_ptr);
	return part_ptr;
}

extern void stub_part_allow_uids(part_record_t *part_ptr, const uid_t *uids,
				 int n, uid_t beyond)
{
	uid_t *copy = calloc(n + 2, sizeof(uid_t));

	memcpy(copy, uids, sizeof(uid_t) * n);
#if RLSCHED_PART_UIDS_COUNTED
	copy[n] = beyond;
	part_ptr->allow_uids_cnt = n;
#endif
	free(part_ptr->allow_uids);
	part_ptr->allow_uids = copy;
}

extern job_record_t *stub_add_job(uint32_t job_id, uint32_t state,
				  part_record_t *part, time_t submit,
				  uint32_t time_limit_min, uint32_t cpus,
				  const char *gres, const char *type,
				  uint64_t count)
{
	job_record_t *job_ptr = calloc(1, sizeof(*job_ptr));
	job_details_t *details = calloc(1, sizeof(*details));

	job_ptr->job_id = job_id;
	job_ptr->job_state = state;
	job_ptr->part_ptr = part;
	job_ptr->time_limit = time_limit_min;
	job_ptr->site_factor = NICE_OFFSET;
	job_ptr->details = details;
	details->submit_time = submit;
	details->min_cpus = cpus;
	details->min_nodes = 1;
	job_ptr->prio_factors = calloc(1, sizeof(priority_factors_t));
	job_ptr->prio_factors->priority_age = (job_id % 10) * 100.0;
	if (gres) {
		gres_state_t *gs = calloc(1, sizeof(*gs));
		gres_job_state_t *js = calloc(1, sizeof(*js));

		gs->gres_name = strdup(gres);
		gs->gres_data = js;
		js->type_name = type ? strdup(type) : NULL;
		js->total_gres = count;
		job_ptr->gres_list_req = stub_list_create();
		stub_list_append(job_ptr->gres_list_req, gs);
	}
	if (!job_list)
		job_list = stub_list_create();
	stub_list_append(job_list, job_ptr);
	return job_ptr;
}

extern void stub_job_set_running(job_record_t *job_ptr, int node,
				 uint16_t cpus, time_t end)
{
	job_resources_t *res = calloc(1, sizeof(*res));

	job_ptr->job_state = JOB_RUNNING;
	job_ptr->end_time = end;
	job_ptr->total_cpus = cpus;
	job_ptr->node_cnt = 1;
	res->nhosts = 1;
	res->node_bitmap = stub_bit_alloc(node_record_count);
	stub_bit_set(res->node_bitmap, node);
	res->cpus = calloc(1, sizeof(uint16_t));
	res->cpus[0] = cpus;
	job_ptr->job_resrcs = res;
}

static void _free_gres_list(list_t *l, bool node)
{
	if (!l)
		return;
	for (int i = 0; i < l->count; i++) {
		gres_state_t *gs = l->items[i];
		if (node) {
			gres_node_state_t *ns = gs->gres_data;
			if (ns->type_cnt)
				free(ns->type_name[0]);
			free(ns->type_name);
			free(ns->type_cnt_avail);
			free(ns->type_cnt_alloc);
			free(ns);
		} else {
			gres_job_state_t *js = gs->gres_data;
			free(js->type_name);
			free(js);
		}
		free(gs->gres_name);
		free(gs);
	}
	stub_list_destroy(l);
}

extern void stub_reset_cluster(void)
{
	for (int i = 0; job_list && (i < job_list->count); i++) {
		job_record_t *job_ptr = job_list->items[i];
		free(job_ptr->details);
		free(job_ptr->prio_factors);
		free(job_ptr->comment);	/* set by tests with strdup */
		_free_gres_list(job_ptr->gres_list_req, false);
		if (job_ptr->job_resrcs) {
			free(job_ptr->job_resrcs->node_bitmap);
			free(job_ptr->job_resrcs->cpus);
			free(job_ptr->job_resrcs);
		}
		free(job_ptr);
	}
	stub_list_destroy(job_list);
	job_list = NULL;
	for (int i = 0; part_list && (i < part_list->count); i++) {
		part_record_t *part_ptr = part_list->items[i];
		free(part_ptr->name);
		free(part_ptr->node_bitmap);
		free(part_ptr->allow_uids);
		free(part_ptr);
	}
	stub_list_destroy(part_list);
	part_list = NULL;
	for (int i = 0; i < node_record_count; i++) {
		node_record_t *node_ptr = node_record_table_ptr[i];
		free(node_ptr->name);
		free(node_ptr->part_pptr);
		_free_gres_list(node_ptr->gres_list, true);
		free(node_ptr);
	}
	free(node_record_table_ptr);
	node_record_table_ptr = NULL;
	node_record_count = 0;
	node_cap = 0;
}

extern const char *stub_large_cluster_type(int p, int types)
{
	static const char *const names[] = { "h200", "a100", "l40s", "mi300",
					     "h100", "v100", "t4", "a10" };

	return names[(p % types) % 8];
}

extern void stub_large_cluster(int nodes, int partitions, int types,
			       part_record_t **parts_out)
{
	int groups = (partitions > 1) ? partitions - 1 : 1;
	int per = (nodes >= groups) ? nodes / groups : 1;
	char name[32];

	stub_reset_cluster();
	for (int i = 0; i < nodes; i++) {
		int p = (i / per < groups) ? i / per : groups - 1;

		snprintf(name, sizeof(name), "n%d", i);
		stub_add_node(name, 64, "gpu", stub_large_cluster_type(p, types),
			      8, i % 9);
	}
	for (int p = 0; p < partitions - 1; p++) {
		part_record_t *part_ptr;
		int last = (p == groups - 1) ? nodes - 1 : (p + 1) * per - 1;

		snprintf(name, sizeof(name), "p%d", p);
		part_ptr = stub_add_part(name, p * per, last, 2880);
		if (parts_out)
			parts_out[p] = part_ptr;
	}
	if (partitions > 0) {
		part_record_t *part_ptr = stub_add_part("all", 0, nodes - 1,
							INFINITE);
		if (parts_out)
			parts_out[partitions - 1] = part_ptr;
	}
	job_list = stub_list_create();
}
