/*****************************************************************************\
 *  slurm_stubs.h - a fake slurmctld for loading the rlsched plugins outside
 *  it (as Slurm's test24.1 does for priority/multifactor): weak definitions
 *  of every slurmctld and libslurmfull symbol the plugins use, plus helpers
 *  that build job, node and partition records and capture log lines.
\*****************************************************************************/

#ifndef RLSCHED_SLURM_STUBS_H
#define RLSCHED_SLURM_STUBS_H

#include "slurm_compat.h"

/* Lists (list_t is opaque to the plugins; this is the harness's own) */
extern list_t *stub_list_create(void);
extern void stub_list_append(list_t *l, void *item);
extern void stub_list_clear(list_t *l);
extern void stub_list_destroy(list_t *l);

/* Bitmaps: b[0] = number of bits, then the bits */
extern bitstr_t *stub_bit_alloc(int nbits);
extern void stub_bit_set(bitstr_t *b, int bit);

/* Allocations the plugins asked the stubs for (xmalloc, xrealloc that
 * grows, xstrdup, list iterators: what allocates in libslurmfull), since
 * the last reset */
extern void stub_alloc_reset(void);
extern long stub_alloc_count(void);
/* From the n-th allocation after the last reset on, allocations fail:
 * try_x* ones return NULL, the others abort() (Slurm's x* fatal()). -1: never. */
extern void stub_alloc_fail_after(long n);

/* Captured log lines (every level), newest last */
extern void stub_log_reset(void);
extern int stub_log_count(const char *substring);
extern int stub_log_count_level(int level, const char *substring);
extern void stub_log_dump(void);
extern int stub_quiet;	/* 1: do not echo log lines to stderr */

/* Cluster building: nodes first, then partitions (which set the bitmaps
 * and each member node's part_pptr, as slurmctld's build_part_bitmap) */
extern node_record_t *stub_add_node(const char *name, int cpus,
				    const char *gres, const char *type,
				    int count, int alloc);
extern part_record_t *stub_add_part(const char *name, int first_node,
				    int last_node, uint32_t max_time_min);
extern job_record_t *stub_add_job(uint32_t job_id, uint32_t state,
				  part_record_t *part, time_t submit,
				  uint32_t time_limit_min, uint32_t cpus,
				  const char *gres, const char *type,
				  uint64_t count);
extern void stub_job_set_running(job_record_t *job_ptr, int node,
				 uint16_t cpus, time_t end);
extern void stub_reset_cluster(void);
/* AllowGroups members uids[0..n) of a partition, laid out as the version's
 * slurmctld does (zero-terminated, or counted); when counted, `beyond` is
 * written after them, where a walk to a 0 would wrongly find it */
extern void stub_part_allow_uids(part_record_t *part_ptr, const uid_t *uids,
				 int n, uid_t beyond);
/* A cluster of `nodes` 64-CPU nodes with 8 GPUs each (some allocated), in
 * `partitions` - 1 partitions of consecutive nodes, each of one of `types`
 * GPU types (h200, a100, l40s, mi300, ...), and a partition "all" of every
 * node. The partition records in parts_out[0..partitions) when not NULL. */
extern void stub_large_cluster(int nodes, int partitions, int types,
			       part_record_t **parts_out);
/* The GPU type name stub_large_cluster gives partition p */
extern const char *stub_large_cluster_type(int p, int types);

#endif
