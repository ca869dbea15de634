/*****************************************************************************\
 *  rlsched_slurm.h - copying slurmctld state into the plain structs of the
 *  rlsched C ABI (core/include/rlsched/rlsched.h; rlsched_snapshot.c), and
 *  the plumbing around the engine (rlsched_slurm.c). Shared by the plugins;
 *  compiled into each .so, hidden by its version script.
 *
 *  Call everything here with the slurmctld locks the caller documents:
 *  job read (or write), node read and partition read.
\*****************************************************************************/

#ifndef RLSCHED_SLURM_H
#define RLSCHED_SLURM_H

#include "slurm_compat.h"

#include "rlsched/rlsched.h"

/* Strings by content: open addressing, a power-of-two number of slots */
typedef struct {
	const char **slots;
	uint32_t cap;
	uint32_t cnt;
} rlsched_strset_t;

/* Partitions, nodes and accelerators as the core sees them, plus what the
 * job pass adds (CPUs and accelerators held by running jobs). All memory is
 * owned here (strings copied) and reused across builds: a build allocates
 * only when the cluster grew (more partitions, nodes or GRES kinds than any
 * build before) or for names it has not seen before. */
typedef struct {
	rlsched_cluster cluster;
	rlsched_partition *parts;	/* cluster.partitions */
	int part_cap;
	part_record_t **part_ptrs;	/* parts[i] was built from this record */
	int part_ptr_cap;
	int32_t *part_slots;		/* part_ptrs by address: index + 1, 0 free */
	uint32_t part_slot_cap;		/* a power of two, or 0 */
	rlsched_accel *accel;		/* per partition, then the cluster's */
	int accel_cap;
	rlsched_accel *kinds;		/* (gres, type) seen on nodes, kept */
	int kind_cnt, kind_cap;
	rlsched_accel *acc;		/* [kind * (partitions + 1) + p]: sums; */
	int32_t *acc_first;		/* first node of each; p == partitions: */
	int acc_cap, acc_first_cap;	/* the cluster */
	int32_t *node_parts;		/* partition indices of the current node */
	int node_part_cap;
	rlsched_strset_t names;		/* partition and GRES names, kept */
	char **strings;			/* per build copies, freed on rebuild */
	int string_cnt, string_cap;
	rlsched_strset_t interned;	/* rlsched_snapshot_intern(), per build */
	uint32_t *node_alloc_cpus;	/* by node index, from the job pass */
	int node_cap;
	int32_t *job_parts;		/* rlsched_job.partitions of multi-partition jobs */
	int job_part_cap;
	time_t built;
} rlsched_snapshot_t;

/* Begins a build: forgets the previous partitions and zeroes the node
 * allocation counters. Then call rlsched_snapshot_add_running() for each
 * running job (during the caller's job pass) and rlsched_snapshot_finish().
 * submit_uid: partitions this user may not submit to are marked
 * accepts_jobs = 0; NO_VAL skips that check. Returns false on allocation
 * failure (the snapshot is then empty and must not be used). */
extern bool rlsched_snapshot_begin(rlsched_snapshot_t *snap);
extern void rlsched_snapshot_add_running(rlsched_snapshot_t *snap,
					 job_record_t *job_ptr);
extern bool rlsched_snapshot_finish(rlsched_snapshot_t *snap,
				    uint32_t submit_uid);
extern void rlsched_snapshot_free(rlsched_snapshot_t *snap);

/* Index of a partition in the snapshot, -1 when not there. */
extern int rlsched_snapshot_part_index(const rlsched_snapshot_t *snap,
				       const part_record_t *part_ptr);
/* Same, by name (for partition records that may have been rebuilt). */
extern int rlsched_snapshot_part_by_name(const rlsched_snapshot_t *snap,
					 const char *name);

/* A copy of s owned by the snapshot until its next build; NULL for NULL or
 * when out of memory. For strings that are mostly distinct (job names). */
extern const char *rlsched_snapshot_keep(rlsched_snapshot_t *snap,
					 const char *s);
/* Same, one copy per distinct string (a hash lookup), and the snapshot's
 * own copy when a partition or GRES has that name or type. For job records
 * kept beyond the job lock (a cached queue): GRES names, accounts. */
extern const char *rlsched_snapshot_intern(rlsched_snapshot_t *snap,
					   const char *s);

/* A finished job that ran (its last run), for rlsched_jobs_ended: false for
 * jobs still pending, running or suspended, and for those that never started */
extern bool rlsched_ended_fill(rlsched_ended_job *out, job_record_t *job_ptr);

/* Fills a C ABI job from a job record. String fields point into the job
 * record: use the struct only while holding the job lock. */
extern void rlsched_job_fill(rlsched_job *out, job_record_t *job_ptr,
			     const rlsched_snapshot_t *snap);

/* Sets the partitions list of each pending job of jobs[0..n) that may start
 * in several partitions (part_ptr_list), from the same records; the lists
 * live in the snapshot until its next use. Jobs keep their one `partition`
 * when the memory cannot be had (counted by the caller as nothing: the view
 * is then that of the job's current partition, as before). */
extern void rlsched_jobs_fill_partitions(rlsched_snapshot_t *snap,
					 rlsched_job *jobs,
					 job_record_t **job_ptrs, size_t n);

/* The log callback handed to the engine: ctx is the plugin_type string.
 * Error lines go to error(), info to info(), debug to debug(). */
extern void rlsched_slurm_log(void *ctx, int level, const char *line);

/* Slurm's PriorityWeight* for the engine's "multifactor" fallback. */
extern void rlsched_engine_options_weights(rlsched_engine_options *opts);

/* Seconds since an earlier clock_gettime(CLOCK_MONOTONIC) value. */
extern double rlsched_elapsed_ms(const struct timespec *start);

/* The rlsched.yaml both plugins read: PrioritySiteFactorParameters, else
 * /etc/slurm/rlsched.yaml */
extern const char *rlsched_config_path(void);

/* A plugin's faults: all counted, logged once per run of consecutive ones
 * (a fault inside slurmctld must neither crash it nor flood its log) */
typedef struct {
	uint64_t total;
	uint64_t in_row;
} rlsched_faults_t;

/* Counts a fault of `what`; logs it, with `consequence` (what the plugin
 * does instead), only if it is the first since the plugin last worked */
extern void rlsched_fault(rlsched_faults_t *faults, const char *type,
			  const char *what, const char *consequence,
			  const char *why);
/* The plugin worked: logs the end of a run of faults */
extern void rlsched_fault_cleared(rlsched_faults_t *faults, const char *type);

/* Seconds between two looks (stat()) at rlsched.yaml by one plugin */
#define RLSCHED_CONFIG_CHECK_SECONDS 1

/* An engine that follows rlsched.yaml, the one rule of all three plugins:
 * created on first use; the file is looked at (stat()) at most once every
 * RLSCHED_CONFIG_CHECK_SECONDS and re-read when its size or mtime changed;
 * a refused version leaves the engine as it was and is retried only once
 * the file changes again. Cheap enough for job_submit (per submit) and
 * preempt (per candidate job) under slurmctld's locks. The caller holds
 * its own lock around these. */
typedef struct {
	rlsched_engine *engine;	/* NULL while the config cannot be loaded */
	uint32_t flags;		/* RLSCHED_ENGINE_* for create */
	const char *type;	/* plugin_type, for log lines */
	const char *consequence; /* what a fault means, e.g. "jobs pass unchanged" */
	rlsched_faults_t faults;
	struct timespec mtime;
	off_t size;		/* -1: no file seen */
	bool seen;		/* mtime/size are valid */
	time_t checked;		/* when the file was last looked at */
} rlsched_config_engine_t;

/* Applies the rule above. */
extern void rlsched_config_engine_refresh(rlsched_config_engine_t *ce);
/* Re-reads the file now, changed or not (scontrol reconfigure); a refused
 * version is logged every time: an admin asked. */
extern void rlsched_config_engine_reload(rlsched_config_engine_t *ce);
/* Destroys the engine and forgets the file, for fini(). */
extern void rlsched_config_engine_release(rlsched_config_engine_t *ce);

#endif /* RLSCHED_SLURM_H */
