/*****************************************************************************\
 *  plugin_load_test.c - load the rlsched plugins outside slurmctld.
 *
 *  usage: plugin_load_test <scenario> <plugin_dir>
 *  dlopen()s site_factor_rlsched.so / job_submit_rlsched.so as slurmctld
 *  does (RTLD_LAZY), against the weak stubs of slurm_stubs.c, builds fake
 *  job/node/partition records and checks what the plugin did to them and
 *  what it logged. Exit 0 when every check passed.
\*****************************************************************************/

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rlsched_slurm.h"
#include "slurm_stubs.h"
#include "check.h"

extern int rlsched_test_write_model(const char *path, unsigned seed);

static char work_dir[256];
static char config_path[512];
static char model_path[512];
static const char *plugin_dir;

typedef struct {
	void *handle;
	const char *type;
	int (*init)(void);
	int (*fini)(void);
	void (*reconfig)(void);
	void (*set)(job_record_t *);
	void (*update)(void);
	int (*submit)(job_desc_msg_t *, uint32_t, char **);
	int (*modify)(job_desc_msg_t *, job_record_t *,
		      uint32_t RLSCHED_JOB_MODIFY_ERR_MSG(err_msg));
	bool (*preemptable)(job_record_t *, job_record_t *);
	uint32_t (*get_grace_time)(job_record_t *);
	uint16_t (*get_mode)(job_record_t *);
	uint32_t (*get_prio)(job_record_t *);
#if RLSCHED_PREEMPT_HAS_GET_DATA
	int (*get_data)(job_record_t *, slurm_preempt_data_type_t, void *);
#endif
} plugin_t;

static void _write(const char *path, const char *text, mode_t mode)
{
	char tmp[600];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || (fputs(text, f) < 0) || fclose(f)) {
		perror(tmp);
		exit(2);
	}
	chmod(tmp, mode);
	rename(tmp, path);
}

static void _config(const char *body, mode_t mode)
{
	_write(config_path, body, mode);
	slurm_conf.site_factor_params = config_path;
}

static int _load(plugin_t *p, const char *type)
{
	char path[512];
	const uint32_t *version;
	const char *ptype;

	memset(p, 0, sizeof(*p));
	snprintf(path, sizeof(path), "%s/%s_rlsched.so", plugin_dir, type);
	p->handle = dlopen(path, RTLD_LAZY);
	if (!p->handle) {
		fprintf(stderr, "dlopen(%s): %s\n", path, dlerror());
		return -1;
	}
	version = dlsym(p->handle, "plugin_version");
	ptype = dlsym(p->handle, "plugin_type");
	CHECK(dlsym(p->handle, "plugin_name") != NULL, "plugin_name");
	CHECK(version && (*version == SLURM_VERSION_NUMBER),
	      "plugin_version 0x%x, Slurm 0x%x", version ? *version : 0,
	      SLURM_VERSION_NUMBER);
	CHECK(ptype && !strncmp(ptype, type, strlen(type)) &&
	      !strcmp(strchr(ptype, '/'), "/rlsched"), "plugin_type %s",
	      ptype ? ptype : "(null)");
	/* Only the Slurm entry points are exported */
	CHECK(!dlsym(p->handle, "rlsched_engine_create"),
	      "the C ABI must not be exported");
	CHECK(!dlsym(p->handle, "rlsched_snapshot_begin"),
	      "shared helpers must not be exported");
	p->init = (int (*)(void)) dlsym(p->handle, "init");
	p->fini = (int (*)(void)) dlsym(p->handle, "fini");
	CHECK(p->init && p->fini, "init/fini");
	if (!strcmp(type, "site_factor")) {
		p->reconfig = (void (*)(void)) dlsym(p->handle,
						     "site_factor_p_reconfig");
		p->set = (void (*)(job_record_t *)) dlsym(p->handle,
							  "site_factor_p_set");
		p->update = (void (*)(void)) dlsym(p->handle,
						   "site_factor_p_update");
		CHECK(p->reconfig && p->set && p->update, "site_factor_p_*");
	} else if (!strcmp(type, "preempt")) {
		p->preemptable = (bool (*)(job_record_t *, job_record_t *))
			dlsym(p->handle, "preempt_p_preemptable");
		p->get_grace_time = (uint32_t (*)(job_record_t *))
			dlsym(p->handle, "preempt_p_get_grace_time");
		p->get_mode = (uint16_t (*)(job_record_t *))
			dlsym(p->handle, "preempt_p_get_mode");
		p->get_prio = (uint32_t (*)(job_record_t *))
			dlsym(p->handle, "preempt_p_get_prio");
		CHECK(p->preemptable && p->get_grace_time && p->get_mode &&
		      p->get_prio &&
		      dlsym(p->handle, "preempt_p_job_preempt_check"),
		      "preempt_p_*");
#if RLSCHED_PREEMPT_HAS_GET_DATA
		p->get_data = (int (*)(job_record_t *, slurm_preempt_data_type_t,
				       void *)) dlsym(p->handle,
						      "preempt_p_get_data");
		CHECK(p->get_data, "preempt_p_get_data");
#endif
	} else {
		p->submit = (int (*)(job_desc_msg_t *, uint32_t, char **))
			dlsym(p->handle, "job_submit");
		p->modify = (int (*)(job_desc_msg_t *, job_record_t *,
				     uint32_t RLSCHED_JOB_MODIFY_ERR_MSG(e)))
			dlsym(p->handle, "job_modify");
		CHECK(p->submit && p->modify, "job_submit/job_modify");
	}
	return (p->init && p->fini) ? 0 : -1;
}

static void _unload(plugin_t *p)
{
	if (p->fini)
		p->fini();
	/* slurmctld dlclose()s too; the plugin is linked -z nodelete */
	if (p->handle)
		dlclose(p->handle);
}

/* Nodes: h200-1 (busy), h200-2, a100-1, npu-1, cpu-1; partitions h200, a100,
 * npu, cpu and all. */
static part_record_t *parts[5];

static void _cluster_with(int extra_nodes)
{
	stub_reset_cluster();
	stub_add_node("h200-1", 64, "gpu", "h200", 8, 8);
	stub_add_node("h200-2", 64, "gpu", "h200", 8, 0);
	stub_add_node("a100-1", 64, "gpu", "a100", 8, 0);
	stub_add_node("npu-1", 96, "npu", "910b", 8, 0);
	stub_add_node("cpu-1", 64, NULL, NULL, 0, 0);
	/* bitmaps are sized by the node count: nodes before partitions */
	for (int n = 0; n < extra_nodes; n++)
		stub_add_node("extra", 64, "gpu", (n % 2) ? "a100" : "h200",
			      8, n % 8);
	parts[0] = stub_add_part("h200", 0, 1, 2880);
	parts[1] = stub_add_part("a100", 2, 2, 4320);
	parts[2] = stub_add_part("npu", 3, 3, 4320);
	parts[3] = stub_add_part("cpu", 4, 4, INFINITE);
	parts[4] = stub_add_part("all", 0, 4 + extra_nodes, 1440);
	slurm_conf.priority_weight_age = 1000;
}

static void _cluster(void)
{
	_cluster_with(0);
}

/* n pending jobs submitted one minute apart, job ids 1..n */
static job_record_t **_pending(int n, time_t now)
{
	job_record_t **jobs = calloc(n, sizeof(*jobs));
	for (int i = 0; i < n; i++) {
		bool gpu = (i % 3) == 0;
		jobs[i] = stub_add_job(i + 1, JOB_PENDING, parts[i % 5],
				       now - 86400 + 60 * i, 60 + i % 240,
				       1 + i % 32, gpu ? "gpu" : NULL,
				       (gpu && (i % 2)) ? "a100" : NULL,
				       gpu ? 1 + i % 8 : 0);
	}
	return jobs;
}

static uint32_t _site(job_record_t *job_ptr)
{
	return job_ptr->site_factor - NICE_OFFSET;
}

/* ---- site_factor scenarios ---- */

static int _site_factor_enforce(void)
{
	plugin_t p;
	time_t now = time(NULL);
	job_record_t **jobs, *late, *early;

	_cluster();
	jobs = _pending(10, now);
	_config("mode: enforce\nfallback: fcfs\nscore_scale: 1000\n", 0644);
	if (_load(&p, "site_factor"))
		return 1;
	CHECK(p.init() == SLURM_SUCCESS, "init");
	CHECK(stub_log_count("mode enforce, scoring with fcfs") == 1,
	      "init announces mode and scorer");
	p.update();
	/* fcfs: earlier submit ranks higher; rank share of 10 jobs */
	for (int i = 0; i < 10; i++)
		CHECK(_site(jobs[i]) == (uint32_t) (900 - 100 * i),
		      "job %d site factor %u, want %d", i + 1,
		      _site(jobs[i]), 900 - 100 * i);
	CHECK(stub_log_count("update scored 10 pending jobs") == 1,
	      "update logs its duration");
	late = stub_add_job(100, JOB_PENDING, parts[1], now, 60, 4, NULL,
			    NULL, 0);
	early = stub_add_job(101, JOB_PENDING, parts[1], now - 2 * 86400, 60,
			     4, NULL, NULL, 0);
	p.set(late);
	p.set(early);
	CHECK(_site(late) == 0, "latest job ranks last: %u", _site(late));
	CHECK(_site(early) == 1000, "earliest job ranks first: %u",
	      _site(early));
	/* Running jobs keep their factor; the next update covers 12 jobs */
	stub_job_set_running(jobs[0], 2, 8, now + 3600);
	jobs[0]->site_factor = NICE_OFFSET + 7;
	p.update();
	CHECK(_site(jobs[0]) == 7, "running job untouched");
	CHECK(stub_log_count("update scored 11 pending jobs") == 1,
	      "11 pending after one started");
	_unload(&p);
	CHECK(stub_log_count("unloading") == 1, "fini logs counters");
	CHECK(stub_log_count_level(LOG_LEVEL_ERROR, "") == 0,
	      "no error lines");
	free(jobs);
	return 0;
}

static int _site_factor_shadow(void)
{
	plugin_t p;
	time_t now = time(NULL);
	job_record_t **jobs, *extra;

	_cluster();
	jobs = _pending(20, now);
	_config("mode: shadow\nfallback: sjf\nscore_scale: 10000\n", 0600);
	if (_load(&p, "site_factor"))
		return 1;
	p.init();
	p.update();
	for (int i = 0; i < 20; i++)
		CHECK(jobs[i]->site_factor == NICE_OFFSET,
		      "shadow mode wrote job %d: %u", i + 1, _site(jobs[i]));
	CHECK(stub_log_count("would change (shadow)") == 1,
	      "shadow logs what it would do");
	extra = stub_add_job(50, JOB_PENDING, parts[0], now, 60, 1, NULL,
			     NULL, 0);
	extra->site_factor = NICE_OFFSET + 3;
	p.set(extra);
	CHECK(_site(extra) == 3, "shadow p_set wrote %u", _site(extra));
	/* Priority-style detail on demand */
	slurm_conf.debug_flags |= DEBUG_FLAG_PRIO;
	p.update();
	CHECK(stub_log_count("(shadow: not applied)") == 21,
	      "one detail line per pending job with DebugFlags=Priority: %d",
	      stub_log_count("(shadow: not applied)"));
	slurm_conf.debug_flags &= ~DEBUG_FLAG_PRIO;
	_unload(&p);
	free(jobs);
	return 0;
}

static int _site_factor_model(void)
{
	plugin_t p;
	time_t now = time(NULL);
	job_record_t **jobs;
	char body[1024];
	int distinct = 0;
	uint32_t seen[100] = { 0 };

	_cluster();
	jobs = _pending(100, now);
	CHECK(rlsched_test_write_model(model_path, 7) == 0, "model written");
	snprintf(body, sizeof(body),
		 "mode: enforce\nmodel: %s\nfallback: fcfs\nscore_scale: 100\n"
		 "reload_check_interval: 0\n"
		 "accelerator_types:\n"
		 "  - {name: h200, gres: gpu, speed: 2.0}\n"
		 "  - {name: a100, gres: gpu, speed: 1.0}\n"
		 "  - {name: 910b, gres: npu, speed: 0.8}\n", model_path);
	_config(body, 0644);
	if (_load(&p, "site_factor"))
		return 1;
	p.init();
	CHECK(stub_log_count("loaded model") == 1, "model loaded");
	CHECK(stub_log_count("scoring with model:") == 1,
	      "init names the model");
	p.update();
	for (int i = 0; i < 100; i++) {
		uint32_t s = _site(jobs[i]);
		CHECK(s < 100, "site factor %u within scale", s);
		if (s < 100 && !seen[s]++)
			distinct++;
	}
	CHECK(distinct > 50, "a random MLP ranks 100 jobs into %d distinct "
	      "site factors", distinct);
	/* (a note on OpenBLAS kernels is a warning, hence an error line) */
	CHECK(stub_log_count_level(LOG_LEVEL_ERROR, "") ==
	      stub_log_count_level(LOG_LEVEL_ERROR, "OpenBLAS"),
	      "no error lines");
	_unload(&p);
	free(jobs);
	return 0;
}

static int _site_factor_corrupt_model(void)
{
	plugin_t p;
	time_t now = time(NULL);
	job_record_t **jobs;
	char body[1024];

	_cluster();
	jobs = _pending(10, now);
	_write(model_path, "this is not a TorchScript archive\n", 0644);
	snprintf(body, sizeof(body),
		 "mode: enforce\nmodel: %s\nfallback: fcfs\nscore_scale: 1000\n"
		 "reload_check_interval: 0\n", model_path);
	_config(body, 0644);
	if (_load(&p, "site_factor"))
		return 1;
	p.init();
	for (int k = 0; k < 3; k++)
		p.update();
	CHECK(stub_log_count("serving fallback 'fcfs'") == 1,
	      "a corrupt model is logged once: %d",
	      stub_log_count("serving fallback 'fcfs'"));
	CHECK(stub_log_count("not a TorchScript archive") == 1,
	      "the log line says why");
	CHECK(_site(jobs[0]) == 900 && _site(jobs[9]) == 0,
	      "the fallback ranks: %u %u", _site(jobs[0]), _site(jobs[9]));
	/* A good model replaces it at the next check (reconfigure checks) */
	CHECK(rlsched_test_write_model(model_path, 3) == 0, "model written");
	p.reconfig();
	CHECK(stub_log_count("loaded model") == 1, "good model loaded");
	p.update();
	_unload(&p);
	CHECK(stub_log_count("1 refused") == 1, "fini counts the refusal");
	free(jobs);
	return 0;
}

static int _site_factor_bad_config(void)
{
	plugin_t p;
	time_t now = time(NULL);
	job_record_t **jobs;

	_cluster();
	jobs = _pending(5, now);
	_config("mode: enforce\nfallback: fcfs\n", 0666);
	if (_load(&p, "site_factor"))
		return 1;
	CHECK(p.init() == SLURM_SUCCESS, "init never fails");
	CHECK(stub_log_count_level(LOG_LEVEL_ERROR,
				   "refusing config file writable by group or others") == 1,
	      "refused, once");
	p.update();
	p.update();
	for (int i = 0; i < 5; i++)
		CHECK(jobs[i]->site_factor == NICE_OFFSET, "untouched");
	CHECK(stub_log_count_level(LOG_LEVEL_ERROR, "") == 1,
	      "logged once: %d", stub_log_count_level(LOG_LEVEL_ERROR, ""));
	/* Fix it, reconfigure: working again */
	chmod(config_path, 0644);
	p.reconfig();
	CHECK(stub_log_count("working again") == 1, "recovery logged");
	p.update();
	/* No score_scale in the file: the built-in 100000 (the shipped example's); the oldest of 5 ranks above 4 */
	CHECK(_site(jobs[0]) == 80000, "site factors after the fix: %u",
	      _site(jobs[0]));
	/* A config error at reconfigure keeps the previous settings */
	_config("mode: enforce\nfallback: fcfs\nscore_scael: 5\n", 0644);
	p.reconfig();
	CHECK(stub_log_count("reconfigure: keeping the previous settings: ") == 1 &&
	      stub_log_count("rlsched.yaml:3: unknown key 'score_scael'") == 1,
	      "line-precise config error, logged once");
	jobs[0]->site_factor = NICE_OFFSET;
	p.update();
	CHECK(_site(jobs[0]) == 80000, "previous settings still serve");
	_unload(&p);
	free(jobs);
	return 0;
}

static int _site_factor_untrusted_model(void)
{
	plugin_t p;
	time_t now = time(NULL);
	job_record_t **jobs;
	char body[1024];

	_cluster();
	jobs = _pending(4, now);
	CHECK(rlsched_test_write_model(model_path, 9) == 0, "model written");
	chmod(model_path, 0666);
	snprintf(body, sizeof(body),
		 "mode: enforce\nmodel: %s\nfallback: fcfs\n"
		 "reload_check_interval: 0\n", model_path);
	_config(body, 0644);
	if (_load(&p, "site_factor"))
		return 1;
	p.init();
	CHECK(stub_log_count("refusing model file writable by group or others") == 1,
	      "model refused");
	CHECK(stub_log_count("loaded model") == 0, "and not loaded");
	p.update();
	CHECK(_site(jobs[0]) > _site(jobs[3]), "fallback serves");
	chmod(model_path, 0644);
	p.reconfig();
	CHECK(stub_log_count("loaded model") == 1, "loaded once trusted");
	_unload(&p);
	free(jobs);
	return 0;
}

static double _now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int _cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return (x > y) - (x < y);
}

/* p_update on 10,000 pending jobs (and 200 running), with a heuristic and
 * with a model: every update scores the whole queue and logs its duration.
 * The durations are printed, not asserted (shared machines are noisy); the
 * measured figures come from bench/capi_bench and the real slurmctld. */
static int _site_factor_update_10k(void)
{
	time_t now = time(NULL);
	char body[1024];
	const char *configs[2] = { "multifactor", "model" };

	_cluster_with(200);
	free(_pending(10000, now));
	for (int i = 0; i < 200; i++) {
		job_record_t *job_ptr = stub_add_job(20000 + i, JOB_PENDING,
						     parts[0], now - 600, 60,
						     8, "gpu", "h200", 4);
		stub_job_set_running(job_ptr, i % 5, 8, now + 600);
	}
	CHECK(rlsched_test_write_model(model_path, 11) == 0, "model written");
	stub_quiet = 1;
	for (int c = 0; c < 2; c++) {
		plugin_t p;
		double t[7];

		if (c == 0)
			snprintf(body, sizeof(body),
				 "mode: enforce\nfallback: multifactor\n");
		else
			snprintf(body, sizeof(body),
				 "mode: enforce\nmodel: %s\n"
				 "reload_check_interval: 0\n", model_path);
		_config(body, 0644);
		if (_load(&p, "site_factor"))
			return 1;
		p.init();
		for (int k = 0; k < 7; k++) {
			double start = _now_ms();
			p.update();
			t[k] = _now_ms() - start;
		}
		qsort(t, 7, sizeof(double), _cmp_double);
		printf("site_factor_p_update, 10000 pending + 200 running jobs, %s: median %.2f ms, min %.2f ms, max %.2f ms\n",
		       configs[c], t[3], t[0], t[6]);
		CHECK(stub_log_count("update scored 10000 pending jobs") >= 7,
		      "each update logs its duration");
		_unload(&p);
		stub_log_reset();
	}
	stub_quiet = 0;
	return 0;
}

/* ---- job_submit scenarios ---- */

static const char *submit_config =
	"mode: shadow\n"
	"accelerator_types:\n"
	"  - {name: h200, gres: gpu, speed: 2.0}\n"
	"  - {name: a100, gres: gpu, speed: 1.0}\n"
	"  - {name: 910b, gres: npu, speed: 0.8}\n"
	"gres_equivalence: [[gpu, npu]]\n"
	"job_classes:\n"
	"  - {name: portable, match: {job_name: 'xpu-*'}, gres_portable: true,\n"
	"     speeds: {h200: 2.0, a100: 1.0, 910b: 0.8}}\n"
	"placement:\n"
	"  partitions: [h200, a100, npu]\n"
	"  record: admin_comment\n"
	"  slack: 1.3\n";

static job_desc_msg_t *_desc(const char *partition, const char *per_node,
			     const char *per_job, uint32_t minutes)
{
	job_desc_msg_t *d = calloc(1, sizeof(*d));
	d->partition = partition ? strdup(partition) : NULL;
	d->tres_per_node = per_node ? strdup(per_node) : NULL;
	d->tres_per_job = per_job ? strdup(per_job) : NULL;
	d->time_limit = minutes;
	d->min_nodes = NO_VAL;
	d->num_tasks = NO_VAL;
	d->requeue = NO_VAL16;	/* unset, as slurm_init_job_desc_msg() leaves it */
	d->name = strdup("train");
	return d;
}

static void _free_desc(job_desc_msg_t *d)
{
	free(d->partition);
	free(d->tres_per_node);
	free(d->tres_per_job);
	free(d->tres_per_task);
	free(d->admin_comment);
	free(d->comment);
	free(d->name);
	free(d);
}

static int _submit(plugin_t *p, job_desc_msg_t *d, char **err)
{
	*err = NULL;
	return p->submit(d, 1000, err);
}

static int _job_submit_mapping(void)
{
	plugin_t p;
	job_desc_msg_t *d;
	char *err = NULL;
	time_t now = time(NULL);
	int rc;

	_cluster();
	_config(submit_config, 0644);
	if (_load(&p, "job_submit"))
		return 1;
	CHECK(p.init() == SLURM_SUCCESS, "init");

	/* Typeless: h200 is twice as fast and has 8 idle */
	d = _desc(NULL, RLSCHED_TRES_GRES "gpu:4", NULL, 60);
	rc = _submit(&p, d, &err);
	CHECK(rc == SLURM_SUCCESS, "rc %d", rc);
	CHECK(d->tres_per_node && !strcmp(d->tres_per_node, RLSCHED_TRES_GRES "gpu:h200:4"),
	      "tres_per_node %s", d->tres_per_node);
	CHECK(d->partition && !strcmp(d->partition, "h200"), "partition %s",
	      d->partition);
	CHECK(d->admin_comment &&
	      strstr(d->admin_comment, "rlsched: gpu:4 -> gpu:h200:4"),
	      "admin comment %s", d->admin_comment);
	_free_desc(d);

	/* --gpus=2 in partition a100: stays there, gets the type */
	d = _desc("a100", NULL, RLSCHED_TRES_GRES "gpu:2", 60);
	rc = _submit(&p, d, &err);
	CHECK(!strcmp(d->tres_per_job, RLSCHED_TRES_GRES "gpu:a100:2"), "tres_per_job %s",
	      d->tres_per_job);
	CHECK(!strcmp(d->partition, "a100"), "partition %s", d->partition);
	_free_desc(d);

	/* Any-of across GRES names (declared equivalent): a100 beats 910b */
	d = _desc(NULL, RLSCHED_TRES_GRES "gpu:a100|910b:2", NULL, 60);
	rc = _submit(&p, d, &err);
	CHECK(!strcmp(d->tres_per_node, RLSCHED_TRES_GRES "gpu:a100:2"), "any-of: %s",
	      d->tres_per_node);
	_free_desc(d);

	/* Typed: left alone */
	d = _desc(NULL, RLSCHED_TRES_GRES "gpu:h200:2", NULL, 60);
	rc = _submit(&p, d, &err);
	CHECK(!strcmp(d->tres_per_node, RLSCHED_TRES_GRES "gpu:h200:2") && !d->partition &&
	      !d->admin_comment, "typed request changed");
	_free_desc(d);

	/* No accelerators: left alone */
	d = _desc(NULL, NULL, NULL, 60);
	rc = _submit(&p, d, &err);
	CHECK(rc == SLURM_SUCCESS && !d->partition && !d->admin_comment,
	      "cpu job changed");
	_free_desc(d);

	/* Impossible: rejected with a message for the user */
	d = _desc(NULL, RLSCHED_TRES_GRES "gpu:64", NULL, 60);
	rc = _submit(&p, d, &err);
	CHECK(rc == ESLURM_INVALID_GRES, "rc %d", rc);
	CHECK(err && strstr(err, "no partition has 64 gpu"), "err_msg %s",
	      err ? err : "(null)");
	free(err);
	_free_desc(d);

	/* Queue: h200 and a100 have hours of pending work: npu wins (once
	 * the plugin's cached queue, kept 2 s, has expired) */
	sleep(2);
	for (int i = 0; i < 40; i++) {
		stub_add_job(500 + i, JOB_PENDING, parts[0], now, 600, 8,
			     "gpu", "h200", 8);
		stub_add_job(600 + i, JOB_PENDING, parts[1], now, 600, 8,
			     "gpu", "a100", 8);
	}
	/* ... for a job of the portable class only */
	d = _desc(NULL, RLSCHED_TRES_GRES "gpu:4", NULL, 60);
	free(d->name);
	d->name = strdup("xpu-train");
	rc = _submit(&p, d, &err);
	CHECK(!strcmp(d->tres_per_node, RLSCHED_TRES_GRES "npu:910b:4"), "cross-GRES: %s",
	      d->tres_per_node);
	CHECK(!strcmp(d->partition, "npu"), "partition %s", d->partition);
	_free_desc(d);

	/* A plain gpu job (CUDA code) never lands on an NPU, however long
	 * the GPU queues */
	d = _desc(NULL, RLSCHED_TRES_GRES "gpu:4", NULL, 60);
	rc = _submit(&p, d, &err);
	CHECK(rc == SLURM_SUCCESS && d->tres_per_node &&
	      !strncmp(d->tres_per_node, RLSCHED_TRES_GRES "gpu:", strlen(RLSCHED_TRES_GRES "gpu:")) &&
	      d->partition && !strstr(d->partition, "npu"),
	      "plain gpu job moved: %s in %s", d->tres_per_node, d->partition);
	_free_desc(d);

	/* ... nor for a portable job that names the GRES elsewhere */
	d = _desc(NULL, RLSCHED_TRES_GRES "gpu:4", NULL, 60);
	free(d->name);
	d->name = strdup("xpu-train");
	d->cpus_per_tres = strdup(RLSCHED_TRES_GRES "gpu:8");
	rc = _submit(&p, d, &err);
	CHECK(strstr(d->tres_per_node, RLSCHED_TRES_GRES "gpu:"), "kept gpu: %s",
	      d->tres_per_node);
	free(d->cpus_per_tres);
	_free_desc(d);

	CHECK(p.modify(NULL, NULL, 0 RLSCHED_JOB_MODIFY_ERR_MSG_ARG(NULL)) ==
	      SLURM_SUCCESS, "job_modify");
	_unload(&p);
	CHECK(stub_log_count("jobs mapped") == 1, "fini counters");
	CHECK(stub_log_count_level(LOG_LEVEL_ERROR, "") == 0,
	      "no error lines");
	return 0;
}

/* A burst of submits shares one queue snapshot, and each mapped job joins
 * the queue, which drains at the speed of its type: four 1 h 8-GPU jobs go
 * h200 (done in 30 min; a100's 60 min is beyond the slack, 1.3 x 30),
 * h200 (45 min; 60 > 1.3 x 45), the set h200,a100 (60 min on both: a tie,
 * the faster type first; written typeless), then the set a100,h200 (60 min
 * against 75 on h200, within 1.3 x 60: the set job before it weighs on h200,
 * the one partition the cached queue knows for it). */
static int _job_submit_burst(void)
{
	plugin_t p;
	job_desc_msg_t *d[4];
	char *err = NULL;
	const char *want[4] = { RLSCHED_TRES_GRES "gpu:h200:8", RLSCHED_TRES_GRES "gpu:h200:8",
				RLSCHED_TRES_GRES "gpu:8", RLSCHED_TRES_GRES "gpu:8" };
	const char *want_part[4] = { "h200", "h200", "h200,a100", "a100,h200" };

	_cluster();
	_config(submit_config, 0644);
	if (_load(&p, "job_submit"))
		return 1;
	p.init();
	for (int i = 0; i < 4; i++) {
		d[i] = _desc(NULL, RLSCHED_TRES_GRES "gpu:8", NULL, 60);
		CHECK(_submit(&p, d[i], &err) == SLURM_SUCCESS, "submit %d", i);
		CHECK(!strcmp(d[i]->tres_per_node, want[i]), "job %d: %s, want %s",
		      i, d[i]->tres_per_node, want[i]);
		CHECK(d[i]->partition && !strcmp(d[i]->partition, want_part[i]),
		      "job %d: partition %s, want %s", i, d[i]->partition,
		      want_part[i]);
		_free_desc(d[i]);
	}
	CHECK(stub_log_count("over 0 queued jobs") == 1 &&
	      stub_log_count("over 1 queued jobs") == 1 &&
	      stub_log_count("over 2 queued jobs") == 1 &&
	      stub_log_count("over 3 queued jobs") == 1,
	      "each decision sees the jobs mapped before it");
	_unload(&p);
	return 0;
}

static int _job_submit_bad_config(void)
{
	plugin_t p;
	job_desc_msg_t *d;
	char *err = NULL;

	_cluster();
	_config("placement:\n  map_any_of: maybe\n", 0644);
	if (_load(&p, "job_submit"))
		return 1;
	CHECK(p.init() == SLURM_SUCCESS, "init never fails");
	CHECK(stub_log_count("rlsched.yaml:2: placement.map_any_of must be true or false (got 'maybe')") == 1,
	      "line-precise error");
	for (int i = 0; i < 3; i++) {
		d = _desc(NULL, RLSCHED_TRES_GRES "gpu:4", NULL, 60);
		CHECK(_submit(&p, d, &err) == SLURM_SUCCESS, "job passes");
		CHECK(!strcmp(d->tres_per_node, RLSCHED_TRES_GRES "gpu:4") && !d->partition,
		      "unchanged");
		_free_desc(d);
	}
	CHECK(stub_log_count_level(LOG_LEVEL_ERROR, "") == 1,
	      "logged once: %d", stub_log_count_level(LOG_LEVEL_ERROR, ""));
	/* Fixed file: picked up by the first submit once the plugin looks
	 * at the file again (no reconfig hook) */
	_config(submit_config, 0644);
	sleep(RLSCHED_CONFIG_CHECK_SECONDS);
	d = _desc(NULL, RLSCHED_TRES_GRES "gpu:4", NULL, 60);
	_submit(&p, d, &err);
	CHECK(!strcmp(d->tres_per_node, RLSCHED_TRES_GRES "gpu:h200:4"), "mapped after fix: %s",
	      d->tres_per_node);
	_free_desc(d);
	_unload(&p);
	return 0;
}

/* ---- checkpoint declarations and preempt/rlsched ---- */

static int _job_submit_checkpoint(void)
{
	plugin_t p;
	job_desc_msg_t *d;
	char *err = NULL;
	int rc;

	_cluster();
	_config("mode: shadow\npreemption:\n  grace_margin: 20s\n", 0644);
	if (_load(&p, "job_submit"))
		return 1;
	CHECK(p.init() == SLURM_SUCCESS, "init");

	/* Declared: requeue, B:USR1 at cost 90 + margin 20, append */
	d = _desc(NULL, NULL, NULL, 600);
	d->comment = strdup("sweep 3 checkpoint:interval=30m,cost=90s");
	rc = _submit(&p, d, &err);
	CHECK(rc == SLURM_SUCCESS, "rc %d err %s", rc, err ? err : "");
	CHECK(d->requeue == 1, "requeue %u", d->requeue);
	CHECK(d->warn_signal == SIGUSR1 && d->warn_flags == KILL_JOB_BATCH &&
	      d->warn_time == 110, "signal %u flags %u time %u",
	      d->warn_signal, d->warn_flags, d->warn_time);
	CHECK(d->open_mode == OPEN_MODE_APPEND, "open_mode %u", d->open_mode);
	_free_desc(d);

	/* The job's own signal and output mode are kept */
	d = _desc(NULL, NULL, NULL, 600);
	d->comment = strdup("checkpoint:interval=30m,cost=90s");
	d->warn_signal = SIGUSR2;
	d->warn_time = 300;
	d->open_mode = OPEN_MODE_TRUNCATE;
	CHECK(_submit(&p, d, &err) == SLURM_SUCCESS, "own signal");
	CHECK(d->warn_signal == SIGUSR2 && d->warn_time == 300 &&
	      d->open_mode == OPEN_MODE_TRUNCATE && d->requeue == 1,
	      "signal %u@%u open_mode %u", d->warn_signal, d->warn_time,
	      d->open_mode);
	_free_desc(d);

	/* Malformed: rejected with the parser's message */
	d = _desc(NULL, NULL, NULL, 600);
	d->comment = strdup("checkpoint:interval=30m");
	rc = _submit(&p, d, &err);
	CHECK(rc != SLURM_SUCCESS, "malformed accepted");
	CHECK(err && strstr(err, "rlsched: --comment checkpoint:interval=30m: cost= is missing"),
	      "err %s", err ? err : "(none)");
	free(err);
	err = NULL;
	_free_desc(d);

	/* --no-requeue contradicts it */
	d = _desc(NULL, NULL, NULL, 600);
	d->comment = strdup("checkpoint:interval=30m,cost=90s");
	d->requeue = 0;
	rc = _submit(&p, d, &err);
	CHECK(rc != SLURM_SUCCESS && err && strstr(err, "--no-requeue"),
	      "no-requeue: rc %d err %s", rc, err ? err : "(none)");
	free(err);
	err = NULL;
	_free_desc(d);

	/* No declaration: untouched */
	d = _desc(NULL, NULL, NULL, 600);
	d->comment = strdup("just notes");
	CHECK(_submit(&p, d, &err) == SLURM_SUCCESS, "plain");
	CHECK(d->requeue == NO_VAL16 && !d->warn_signal && !d->open_mode,
	      "plain job changed");
	_free_desc(d);
	_unload(&p);
	return 0;
}

static slurmdb_qos_rec_t qos_low, qos_high;

/* QOS low (id 1) and high (id 2, Preempt=low) */
static void _qos(void)
{
	free(qos_high.preempt_bitstr);
	memset(&qos_low, 0, sizeof(qos_low));
	memset(&qos_high, 0, sizeof(qos_high));
	qos_low.id = 1;
	qos_low.name = "low";
	qos_low.grace_time = 15;
	qos_high.id = 2;
	qos_high.name = "high";
	qos_high.priority = 1000;
	qos_high.preempt_bitstr = stub_bit_alloc(8);
	stub_bit_set(qos_high.preempt_bitstr, 1);
}

static job_record_t *_running(uint32_t id, slurmdb_qos_rec_t *qos,
			      const char *comment, time_t started, int gpus)
{
	job_record_t *j = stub_add_job(id, JOB_RUNNING, parts[0], started - 60,
				       600, 8, "gpu", "h200", gpus);
	j->qos_ptr = qos;
	j->comment = comment ? strdup(comment) : NULL;
	j->start_time = started;
	j->node_cnt = 1;
	return j;
}

static uint32_t _prio(plugin_t *p, job_record_t *j)
{
	return p->get_prio(j);
}

#if RLSCHED_PREEMPT_HAS_GET_DATA
/* Before 25.05 slurmctld asks preempt_p_get_data(): the same answers as the
 * getters (grace time last: it records the preemption) */
static int _preempt_get_data(plugin_t *p, job_record_t *j,
			     uint32_t want_grace)
{
	uint32_t prio = 0, grace = 0;
	uint16_t mode = 0;
	bool enabled = false;

	CHECK(p->get_data(j, PREEMPT_DATA_ENABLED, &enabled) ==
	      SLURM_SUCCESS && enabled, "PREEMPT_DATA_ENABLED");
	CHECK(p->get_data(j, PREEMPT_DATA_MODE, &mode) == SLURM_SUCCESS &&
	      mode == p->get_mode(j), "PREEMPT_DATA_MODE %u", mode);
	CHECK(p->get_data(j, PREEMPT_DATA_PRIO, &prio) == SLURM_SUCCESS &&
	      prio == p->get_prio(j), "PREEMPT_DATA_PRIO %u", prio);
	CHECK(p->get_data(j, PREEMPT_DATA_GRACE_TIME, &grace) ==
	      SLURM_SUCCESS && grace == want_grace,
	      "PREEMPT_DATA_GRACE_TIME %u", grace);
	CHECK(p->get_data(j, 99, &grace) == SLURM_ERROR, "unknown data type");
	return 0;
}
#endif

static int _preempt_victims(void)
{
	plugin_t p;
	time_t now = time(NULL);
	job_record_t *ckpt, *ckpt_more_lost, *plain, *young, *urgent;
	uint32_t grace = 0;
	uint16_t mode = 0;

	_cluster();
	_qos();
	slurm_conf.preempt_mode = PREEMPT_MODE_REQUEUE;
	_config("mode: enforce\npreemption:\n  min_run_time: 10m\n"
		"  max_preemptions: 1\n  window: 1h\n  grace_margin: 20\n",
		0644);
	if (_load(&p, "preempt"))
		return 1;
	CHECK(p.init() == SLURM_SUCCESS, "init");

	/* 40 min in, 30 min interval: 10 min lost on 2 GPUs (20 GPU-min) */
	ckpt = _running(1, &qos_low, "checkpoint:interval=30m,cost=90s",
			now - 2400, 2);
	/* 25 min since its last checkpoint on 4 GPUs (100 GPU-min) */
	ckpt_more_lost = _running(2, &qos_low,
				  "checkpoint:interval=1h,cost=1m",
				  now - 1500, 4);
	plain = _running(3, &qos_low, "no declaration", now - 3600, 1);
	young = _running(4, &qos_low, "checkpoint:interval=30m,cost=90s",
			 now - 60, 1);
	urgent = stub_add_job(5, JOB_PENDING, parts[0], now, 60, 8, "gpu",
			      "h200", 8);
	urgent->qos_ptr = &qos_high;

	CHECK(p.preemptable(ckpt, urgent), "checkpointable job refused");
	CHECK(p.preemptable(ckpt_more_lost, urgent), "second victim refused");
	CHECK(!p.preemptable(plain, urgent), "job without checkpoint chosen");
	/* (the stubs print Slurm's %pJ as a pointer: match the rest) */
	CHECK(stub_log_count("is no victim for") &&
	      stub_log_count(": not checkpointable"), "refusal not logged");
	CHECK(!p.preemptable(young, urgent), "young job chosen");
	CHECK(!p.preemptable(urgent, ckpt), "low QOS preempting high");
	CHECK(_prio(&p, ckpt) < _prio(&p, ckpt_more_lost),
	      "victim order: %u >= %u", _prio(&p, ckpt),
	      _prio(&p, ckpt_more_lost));
	mode = p.get_mode(ckpt);
	CHECK(mode == PREEMPT_MODE_REQUEUE, "mode %u", mode);

	/* Slurm preempts it: grace = cost 90 + margin 20, logged, counted */
	grace = p.get_grace_time(ckpt);
	CHECK(grace == 110, "grace %u", grace);
	/* The plugin reads the clock itself: under a sanitizer on a busy machine
	 * a second or two may have passed since `now` (600 s at `now`). */
	CHECK(stub_log_count(": grace 110 s, 600 s of run time since its last periodic checkpoint") ||
	      stub_log_count(": grace 110 s, 601 s of run time since its last periodic checkpoint") ||
	      stub_log_count(": grace 110 s, 602 s of run time since its last periodic checkpoint"),
	      "preemption not logged");
	/* The cap (1 per hour): not again once it runs again */
	ckpt->start_time = now;
	CHECK(!p.preemptable(ckpt, urgent), "preempted twice within the cap");
	/* A QOS victim without a checkpoint gets its QOS's GraceTime */
	grace = p.get_grace_time(plain);
	CHECK(grace == 15, "plain grace %u", grace);
#if RLSCHED_PREEMPT_HAS_GET_DATA
	_preempt_get_data(&p, plain, 15);
#endif
	_unload(&p);
	return 0;
}

static int _preempt_bad_config(void)
{
	plugin_t p;
	time_t now = time(NULL);
	job_record_t *requeueable, *plain, *urgent;

	_cluster();
	_qos();
	_config("preemption:\n  max_preemptions: many\n", 0644);
	if (_load(&p, "preempt"))
		return 1;
	CHECK(p.init() == SLURM_SUCCESS, "init with a bad config");
	CHECK(stub_log_count("preempt/rlsched: loading the config failed") == 1,
	      "fault not logged once");
	/* Fallback: jobs Slurm can signal and requeue, by the QOS relation */
	requeueable = _running(1, &qos_low, NULL, now - 3600, 2);
	requeueable->details->requeue = 1;
	requeueable->warn_signal = SIGUSR1;
	plain = _running(2, &qos_low, NULL, now - 3600, 2);
	urgent = stub_add_job(3, JOB_PENDING, parts[0], now, 60, 8, "gpu",
			      "h200", 8);
	urgent->qos_ptr = &qos_high;
	CHECK(p.preemptable(requeueable, urgent), "fallback: requeueable job");
	CHECK(!p.preemptable(plain, urgent), "fallback: plain job chosen");
	CHECK(stub_log_count("loading the config failed") == 1,
	      "fault logged again");
	_unload(&p);
	return 0;
}

int main(int argc, char **argv)
{
	const char *scenario;
	char cmd[600];
	int rc = 1;

	if (argc < 3) {
		fprintf(stderr, "usage: %s <scenario> <plugin_dir>\n", argv[0]);
		return 2;
	}
	scenario = argv[1];
	plugin_dir = argv[2];
	/* A private folder (0700): the plugins refuse files others could
	 * replace */
	snprintf(work_dir, sizeof(work_dir), "%s/rlsched-plugin-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(work_dir)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(config_path, sizeof(config_path), "%s/rlsched.yaml", work_dir);
	snprintf(model_path, sizeof(model_path), "%s/policy.pt", work_dir);

	if (!strcmp(scenario, "site_factor_enforce"))
		rc = _site_factor_enforce();
	else if (!strcmp(scenario, "site_factor_shadow"))
		rc = _site_factor_shadow();
	else if (!strcmp(scenario, "site_factor_model"))
		rc = _site_factor_model();
	else if (!strcmp(scenario, "site_factor_corrupt_model"))
		rc = _site_factor_corrupt_model();
	else if (!strcmp(scenario, "site_factor_bad_config"))
		rc = _site_factor_bad_config();
	else if (!strcmp(scenario, "site_factor_untrusted_model"))
		rc = _site_factor_untrusted_model();
	else if (!strcmp(scenario, "site_factor_update_10k"))
		rc = _site_factor_update_10k();
	else if (!strcmp(scenario, "job_submit_mapping"))
		rc = _job_submit_mapping();
	else if (!strcmp(scenario, "job_submit_burst"))
		rc = _job_submit_burst();
	else if (!strcmp(scenario, "job_submit_checkpoint"))
		rc = _job_submit_checkpoint();
	else if (!strcmp(scenario, "preempt_victims"))
		rc = _preempt_victims();
	else if (!strcmp(scenario, "preempt_bad_config"))
		rc = _preempt_bad_config();
	else if (!strcmp(scenario, "job_submit_bad_config"))
		rc = _job_submit_bad_config();
	else
		fprintf(stderr, "unknown scenario %s\n", scenario);

	stub_reset_cluster();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", work_dir);
	if (failures) {
		fprintf(stderr, "%s: %d check(s) failed; log:\n", scenario,
			failures);
		stub_log_dump();
	}
	stub_log_reset();
	return (rc || failures) ? 1 : 0;
}
