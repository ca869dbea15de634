/*
 * rlsched.h - the C ABI of the rlsched core, for the Slurm plugins (site_factor/rlsched, job_submit/rlsched).
 *
 * C99, no C++ type, exception or libtorch symbol crosses it. The plugins copy what they need out of Slurm's
 * structs into the plain structs below, call the engine, and write the results back; the engine knows nothing of
 * Slurm's internals. docs/plugins.md describes every function, struct field and log line.
 *
 * Conventions
 *   - Every function returns an int: RLSCHED_OK (0) or a positive RLSCHED_E* code. After a failure,
 *     rlsched_last_error() gives one line saying what was wrong (thread-local: the last failure of this thread).
 *   - Strings passed in are read during the call only; the engine keeps no pointer to caller memory.
 *   - Strings returned in structs are either engine-owned (valid until the engine is reconfigured or destroyed, as
 *     documented per field) or malloc'ed and released with the matching _free function.
 *   - An engine is thread-safe: scoring, placement, reconfigure and the model reload thread may run concurrently.
 *   - Times are epoch seconds (int64_t); durations are seconds.
 */
/* C, read by the C shims in plugin/: written in their (Slurm's) style, not formatted by the C++ .clang-format. */
/* clang-format off */
#ifndef RLSCHED_RLSCHED_H
#define RLSCHED_RLSCHED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a struct below changes layout or meaning; rlsched_engine_options.abi_version must equal it. */
#define RLSCHED_ABI_VERSION 10

/* Return codes. */
#define RLSCHED_OK 0
#define RLSCHED_EINVAL 1    /* a bad argument: NULL pointer, count out of range, wrong abi_version */
#define RLSCHED_ECONFIG 2   /* the config file is missing, unreadable, invalid or refused (permissions) */
#define RLSCHED_ENOMEM 3    /* out of memory */
#define RLSCHED_EINTERNAL 4 /* anything else (an exception caught at the boundary); the call had no effect */

/* Log levels of rlsched_log_fn: the plugins map them to Slurm's error(), info() and debug(). */
#define RLSCHED_LOG_ERROR 0 /* also warnings, e.g. "keeping previous model: ..." */
#define RLSCHED_LOG_INFO 1
#define RLSCHED_LOG_DEBUG 2

/* One log line, without trailing newline. Called from any thread that uses the engine (and from its reload
 * thread), never while an engine lock is held. */
typedef void (*rlsched_log_fn)(void *ctx, int level, const char *line);

/* Opaque engine: the plugin config, the policy (model with hot reload, fallback heuristic) and counters. */
typedef struct rlsched_engine rlsched_engine;

/* rlsched_engine_options.flags */
#define RLSCHED_ENGINE_NO_POLICY 0x1        /* placement only: never load the model (job_submit/rlsched) */
#define RLSCHED_ENGINE_NO_RELOAD_THREAD 0x2 /* no background model checks; call rlsched_engine_check_model() */
#define RLSCHED_ENGINE_TRUST_ANY_FILE 0x4   /* skip owner/permission checks of config and model (tests only) */
#define RLSCHED_ENGINE_KEEP_PREEMPTIONS 0x8 /* keep the preemption history in state_dir (preempt/rlsched) */
#define RLSCHED_ENGINE_KEEP_RUN_TIMES 0x10  /* keep what ended jobs taught the predicted run times in state_dir */

typedef struct rlsched_engine_options {
	uint32_t abi_version;    /* RLSCHED_ABI_VERSION */
	const char *config_path; /* rlsched.yaml */
	rlsched_log_fn log;      /* NULL: lines go to stderr */
	void *log_ctx;
	uint32_t flags;          /* RLSCHED_ENGINE_* */
	/* slurm.conf PriorityWeight{Age,FairShare,JobSize,Partition,QOS}, for the "multifactor" fallback scorer.
	 * All 0: the typical weights 1000, 10000, 100, 1000, 10000. */
	double weight_age;
	double weight_fairshare;
	double weight_job_size;
	double weight_partition;
	double weight_qos;
	/* The plugin's type ("site_factor/rlsched"): with health_dir in the config, the engine's own thread rewrites
	 * <health_dir>/site_factor.json every 10 s (slurm_conf_examples/monitoring/README.md). NULL: no record. */
	const char *plugin_type;
	/* slurm.conf StateSaveLocation: what the flags ask to keep across restarts of slurmctld is loaded from there
	 * at create and rewritten there every few seconds and at destroy. KEEP_PREEMPTIONS: the preemption history
	 * (the cap's memory), <state_dir>/rlsched_preemptions.json, every 5 s. KEEP_RUN_TIMES: each user's ended jobs
	 * as the predicted run times remember them (slurmctld forgets ended jobs after MinJobAge),
	 * <state_dir>/rlsched_run_times.json, every 10 s. A damaged file is logged and renamed <file>.damaged; the
	 * engine starts without it. NULL: kept in memory only. */
	const char *state_dir;
} rlsched_engine_options;

/* Reads the config (refusing a file writable by group/others or owned by another user than root or the caller),
 * builds the fallback scorer, loads the model (a missing or invalid model is logged and the fallback serves: not
 * an error) and starts the reload thread (every reload_check_interval seconds, unless 0 or NO_RELOAD_THREAD).
 * On success *out is the engine; on failure *out is NULL, nothing is leaked, and rlsched_last_error() says why. */
int rlsched_engine_create(const rlsched_engine_options *options, rlsched_engine **out);

/* Stops the reload thread and frees everything. NULL is a no-op. */
void rlsched_engine_destroy(rlsched_engine *engine);

/* Re-reads the config file (scontrol reconfigure). On success the new settings apply to the next call (a changed
 * model path loads the new model) and one info line is logged; on failure the previous settings stay in force and
 * the error is returned, not logged (the caller logs it, e.g. "keeping the previous settings: <error>"). */
int rlsched_engine_reconfigure(rlsched_engine *engine);

/* Checks the model file now and reloads it when it changed (what the reload thread does periodically). A file
 * that fails verification is logged once and the previous model (or the fallback) keeps serving: RLSCHED_OK. */
int rlsched_engine_check_model(rlsched_engine *engine);

/* The text of this thread's last failure ("" when none). engine may be NULL (e.g. after a failed create). The
 * pointer stays valid until this thread's next rlsched_* call. */
const char *rlsched_last_error(const rlsched_engine *engine);

#define RLSCHED_MODE_SHADOW 0  /* compute and log; leave priorities alone */
#define RLSCHED_MODE_ENFORCE 1 /* write site factors */

#define RLSCHED_RECORD_NONE 0
#define RLSCHED_RECORD_ADMIN_COMMENT 1
#define RLSCHED_RECORD_COMMENT 2

/* Settings in force. Strings are engine-owned, valid until the next reconfigure or destroy. */
typedef struct rlsched_engine_info {
	int32_t mode;               /* RLSCHED_MODE_* */
	int32_t debug;              /* config `debug: true` */
	uint32_t score_scale;       /* site factors are in [0, score_scale] */
	int32_t placement_enabled;  /* placement.enabled */
	int32_t record;             /* RLSCHED_RECORD_*: where job_submit records its decision */
	int64_t reload_check_interval;
	const char *config_path;
	const char *model_path;     /* "" when none configured */
	const char *scorer;         /* what scores now: "model:<path>" or the fallback's name */
	int32_t job_classes;        /* job classes configured (rlsched.yaml job_classes) */
	int32_t energy_defers;      /* rlsched.yaml energy defers jobs (job_submit must see CPU-only jobs too) */
	int32_t run_time_predicted; /* rlsched.yaml run_time: predicted (the policy sees predicted run times) */
	int32_t reads_ended_jobs;   /* the policy learns from ended jobs (rlsched_jobs_ended): run_time: predicted, or
	                               a model served that reads predicted run times (feature schema v2) */
} rlsched_engine_info;

int rlsched_engine_get_info(rlsched_engine *engine, rlsched_engine_info *out);

/* Monotonic counters since create (reconfigure keeps them). */
typedef struct rlsched_counters {
	uint64_t score_calls;         /* rlsched_score_batch + rlsched_score_one calls that succeeded */
	uint64_t jobs_scored;
	uint64_t fallback_calls;      /* score calls the fallback heuristic served (no model, or forward failed) */
	uint64_t model_loads;         /* models loaded and verified */
	uint64_t model_load_failures; /* model file versions refused (one per bad version) */
	uint64_t model_untrusted;     /* model file versions refused for owner/permissions */
	uint64_t forward_failures;    /* batches whose forward pass failed (served by the fallback) */
	uint64_t nonfinite_scores;    /* NaN/inf scores replaced (they rank last) */
	uint64_t placements;          /* rlsched_submit_map calls that mapped a job */
	uint64_t rejections;          /* ... that rejected an impossible request */
	uint64_t errors;              /* calls that returned an error code */
	uint64_t deferrals;           /* jobs given a later begin time for cheaper power (energy.mode enforce) */
	uint64_t deferrals_shadow;    /* ... that would have been (energy.mode shadow) */
	uint64_t sunk_jobs;           /* scored deferrable jobs ranked last in an expensive window (enforce) */
	uint64_t boosted_jobs;        /* ... ranked first in a cheap window (enforce) */
	uint64_t ended_jobs;          /* ended jobs heard by rlsched_jobs_ended, each once (predicted run times) */
} rlsched_counters;

int rlsched_engine_get_counters(rlsched_engine *engine, rlsched_counters *out);

/* Counts one site_factor update of `seconds` (under the job write lock) in the health record's histogram: a few
 * atomic additions, no I/O. */
int rlsched_health_note_update(rlsched_engine *engine, double seconds);

/* ---- Cluster snapshot ---------------------------------------------------------------------------------------- */

/* Accelerators of one GRES name and type, in a partition or in the whole cluster. */
typedef struct rlsched_accel {
	const char *gres;     /* GRES name, "gpu" */
	const char *type;     /* GRES type, "h200"; NULL or "" for an untyped GRES */
	int32_t total;        /* on usable (not down, drained or future) nodes */
	int32_t idle;         /* not allocated */
	int32_t max_per_node;
	int32_t nodes;        /* nodes with at least one */
	int32_t idle_nodes;   /* nodes with all of theirs idle; -1 = unknown */
} rlsched_accel;

typedef struct rlsched_partition {
	const char *name;
	int32_t accepts_jobs;   /* 0: down, inactive, or this user may not submit there */
	int32_t cpus_total;
	int32_t cpus_idle;
	int32_t nodes_total;
	int64_t max_time;       /* seconds; 0 = unlimited */
	const rlsched_accel *accel;
	int32_t n_accel;
} rlsched_partition;

typedef struct rlsched_cluster {
	int32_t cpus_total;
	int32_t cpus_idle;
	int32_t nodes_total;
	const rlsched_accel *accel;  /* whole cluster, one entry per (gres, type), each node counted once */
	int32_t n_accel;
	const rlsched_partition *partitions;
	int32_t n_partitions;
} rlsched_cluster;

/* ---- Jobs ------------------------------------------------------------------------------------------------------ */

#define RLSCHED_JOB_PENDING 0
#define RLSCHED_JOB_RUNNING 1

/* What the engine sees of one job (mirrors rlsched::PendingJob and the inputs of feature schema v1). */
typedef struct rlsched_job {
	uint32_t job_id;
	int32_t state;          /* RLSCHED_JOB_* */
	int64_t submit_time;
	int64_t begin_time;     /* eligible from (--begin); 0 = at submit. Wait counts from the later of the two */
	int64_t end_time;       /* running jobs: expected end (start + time limit); else 0 */
	int64_t time_limit;     /* seconds; 0 = unknown (the partition's MaxTime is used, else 1 h) */
	int32_t cpus;
	int32_t nodes;
	int32_t accelerators;   /* total over the job; 0 for none */
	const char *gres;       /* GRES name of the accelerators ("gpu"); NULL when none */
	const char *gres_type;  /* "h200"; "h200|a100" for an any-of set; NULL or "" for any type */
	int32_t restarts;
	const char *comment;    /* its checkpoint declaration, if any: checkpointable when it declares one */
	/* Slurm's multifactor factors, each normalised to [0, 1] (the weighted value divided by its weight). */
	double age_factor;
	double fairshare_factor;
	double job_size_factor;
	double partition_factor;
	double qos_factor;
	int32_t partition;      /* index into rlsched_cluster.partitions; -1 when unknown */
	/* Every partition a pending job may start in (sbatch -p a,b: Slurm's part_ptr_list), as indices into
	 * rlsched_cluster.partitions; NULL or 0: just `partition`. Read during the call only. */
	const int32_t *partitions;
	int32_t n_partitions;
	const char *job_name;   /* with account and user_id: the job class (job_classes), whose speeds */
	const char *account;    /* say how fast its queued or running work drains on each type; NULL: none */
	uint32_t user_id;
	const char *qos;        /* its QOS name; with the class it makes a job deferrable (rlsched.yaml energy) */
} rlsched_job;

/* ---- Scoring (site_factor/rlsched) ---------------------------------------------------------------------------- */

/* Scores the n pending jobs in ONE batched call of the policy, then maps each score to a site factor in
 * [0, score_scale] (a deferrable job scores -inf in an expensive window, +inf in a cheap one, energy.mode enforce): floor(score_scale * share of the batch scoring strictly lower) (rlsched/site_factor.h). The
 * plugin writes NICE_OFFSET + out_site_factors[i]. Either output may be NULL. Running jobs in the array are an
 * error (RLSCHED_EINVAL). The sorted batch is kept for rlsched_score_one. On any error the outputs are untouched.
 * n == 0 is fine (nothing scored). */
int rlsched_score_batch(rlsched_engine *engine, int64_t now, const rlsched_cluster *cluster, const rlsched_job *jobs,
			size_t n, double *out_scores, uint32_t *out_site_factors);

/* Scores one new job (site_factor_p_set) and ranks it against the last batch (0 before the first batch). */
int rlsched_score_one(rlsched_engine *engine, int64_t now, const rlsched_cluster *cluster, const rlsched_job *job,
		      double *out_score, uint32_t *out_site_factor);

/* A job that ran and ended (completed, failed, timed out, cancelled while running, ...): what run_time: predicted
 * learns from (rlsched/predicted_run_times.h). */
typedef struct rlsched_ended_job {
	uint32_t job_id;
	uint32_t user_id;
	int64_t time_limit;     /* seconds; 0 = none */
	int64_t start_time;     /* of its last run */
	int64_t end_time;
	int64_t suspended;      /* seconds of its run spent suspended */
} rlsched_ended_job;

/* The ended jobs Slurm still keeps (site_factor/rlsched passes every one in its job list, each cycle). A job is
 * learned from once: those of the last call are known; one not in it is new (a job id whose end time changed, too).
 * The new ones count in the order they ended, by end time. Jobs without a start (never ran) or with an end before
 * their start are skipped. Call it before rlsched_score_batch; out_new (may be NULL): how many were new. */
int rlsched_jobs_ended(rlsched_engine *engine, const rlsched_ended_job *jobs, size_t n, size_t *out_new);

/* ---- Accelerator mapping at submit (job_submit/rlsched) ------------------------------------------------------- */

/* A job as submitted: the strings of job_desc_msg_t (NULL when unset). */
typedef struct rlsched_submit {
	uint32_t job_id;          /* 0 at submit (not yet assigned) */
	uint32_t user_id;
	const char *partition;    /* "a100,h200"; NULL = let rlsched choose among placement.partitions */
	const char *tres_per_job; /* e.g. "gres:gpu:4" (--gpus=4) */
	const char *tres_per_node;/* e.g. "gres:gpu:h200:2" (--gres=gpu:h200:2, --gpus-per-node) */
	const char *tres_per_socket;
	const char *tres_per_task;
	const char *cpus_per_tres;/* these four name a GRES too: when they do, the GRES name is not changed */
	const char *mem_per_tres;
	const char *tres_bind;
	const char *tres_freq;
	int32_t min_nodes;        /* 0 = unset */
	int32_t num_tasks;        /* 0 = unset */
	int64_t time_limit;       /* seconds; 0 = unset */
	const char *job_name;     /* --job-name; with account and user_id it selects the job class (job_classes) */
	const char *account;
	const char *qos;          /* --qos; NULL: the default (deferrable jobs: rlsched.yaml energy.deferrable) */
	int64_t begin_time;       /* --begin; 0 = unset */
	int32_t cpus;             /* CPUs over the job; 0 = unknown (1) */
} rlsched_submit;

#define RLSCHED_SUBMIT_UNCHANGED 0 /* leave the job as it is */
#define RLSCHED_SUBMIT_MODIFIED 1  /* apply the non-NULL fields below */
#define RLSCHED_SUBMIT_REJECTED 2  /* reject the job; message is for the user (sbatch prints it) */

/* Result of rlsched_submit_map. Non-NULL strings are malloc'ed: release with rlsched_submit_result_free. */
typedef struct rlsched_submit_result {
	int32_t action;       /* RLSCHED_SUBMIT_* */
	char *partition;      /* MODIFIED: the new partition, NULL = keep */
	char *tres_per_job;   /* MODIFIED: new value of that field, NULL = keep */
	char *tres_per_node;
	char *tres_per_task;
	char *message;        /* one line: the decision and why (MODIFIED, REJECTED; UNCHANGED when worth a log) */
	int32_t record;       /* RLSCHED_RECORD_*: where to record message on the job (MODIFIED only) */
	double predicted_wait;/* seconds, MODIFIED only */
	double predicted_run;
	/* MODIFIED: the mapped request, for a caller that keeps its queue
	 * between calls and appends the job to it (RLSCHED_JOB_PENDING). */
	int32_t partition_index; /* into rlsched_cluster.partitions */
	int32_t accelerators;    /* total over the job */
	char *gres;              /* "gpu" */
	char *gres_type;         /* "h200"; NULL for an untyped GRES */
	/* Energy (rlsched.yaml energy, docs/energy.md), whatever the action but REJECTED: */
	int64_t begin_time;      /* > 0: set the job's begin time to this (a deferrable job waits for cheaper power) */
	char *deferral;          /* one line: why it waits, or (energy.mode shadow) when it would have; NULL: neither */
} rlsched_submit_result;

/* Decides where a job's accelerator request should go (rlsched/placement.h for the model), and whether a
 * deferrable job waits for cheaper power (rlsched/energy.h). `queue` holds the pending and running jobs
 * (rlsched_job.state), used for the queue estimate; it may be empty. */
int rlsched_submit_map(rlsched_engine *engine, int64_t now, const rlsched_cluster *cluster, const rlsched_job *queue,
		       size_t n_queue, const rlsched_submit *job, rlsched_submit_result *out);

/* Frees the strings of a result and zeroes it. NULL is a no-op. */
void rlsched_submit_result_free(rlsched_submit_result *result);

/* ---- Checkpoint-aware preemption (job_submit/rlsched, preempt/rlsched; docs/preemption.md) ----------------- */

/* A job's checkpoint declaration, from its comment: --comment=checkpoint:interval=30m,cost=90s */
typedef struct rlsched_checkpoint {
	int64_t interval; /* seconds of run time between periodic checkpoints */
	int64_t cost;     /* seconds to write one (its grace time is this plus preemption.grace_margin) */
} rlsched_checkpoint;

/* Reads the declaration in a job comment (NULL or "" declares nothing). RLSCHED_OK with *declared 1 and *out
 * filled, or *declared 0; RLSCHED_EINVAL when the declaration is malformed: rlsched_last_error() is then the
 * message for the user (sbatch prints it). Needs no engine. */
int rlsched_checkpoint_parse(const char *comment, int32_t *declared, rlsched_checkpoint *out);

/* The grace time (seconds from the checkpoint signal to the requeue) of a job with this declaration under the
 * engine's config: its cost plus preemption.grace_margin. */
int rlsched_checkpoint_grace(rlsched_engine *engine, const rlsched_checkpoint *checkpoint, uint32_t *grace);

/* A running job as a preemption candidate. */
typedef struct rlsched_preempt_job {
	uint32_t job_id;
	const char *comment; /* holds its checkpoint declaration, if any (a malformed one declares nothing) */
	const char *qos;     /* NULL: none */
	int64_t run_start;   /* start of its current run */
	double size;         /* accelerators it holds (CPUs when none): lost work is weighed by it */
	double rank;         /* its site factor / score_scale, in [0, 1] (0 when unknown) */
} rlsched_preempt_job;

/* Whether the job may be preempted at `now` under rlsched.yaml's preemption section: *allowed 1 or 0; when 0,
 * *why (static text) says why: not checkpointable, minimum run time, preemption cap. */
int rlsched_preempt_allowed(rlsched_engine *engine, int64_t now, const rlsched_preempt_job *job, int32_t *allowed,
			    const char **why);

/* The victim order, ascending (preempted first): work lost since the job's last checkpoint, then learned rank. */
int rlsched_preempt_order(rlsched_engine *engine, int64_t now, const rlsched_preempt_job *job, uint32_t *order);

/* The job is being preempted now: counts it against the preemption cap and gives its grace time (seconds from
 * the checkpoint signal to the requeue; 0 for a job without a checkpoint declaration) and the run time it loses
 * if it writes no checkpoint on the signal (since its last periodic one). */
int rlsched_preempt_begin(rlsched_engine *engine, int64_t now, const rlsched_preempt_job *job, uint32_t *grace,
			  int64_t *lost_run_time);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RLSCHED_RLSCHED_H */
/* clang-format on */
