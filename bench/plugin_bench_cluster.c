/*****************************************************************************\
 *  plugin_bench_cluster.c - the C half of bench/plugin_bench.cpp: a cluster
 *  of stub records (test/plugin/slurm_stubs.c) and the site_factor and
 *  job_submit plugins dlopen()ed against them, as the plugin load tests do.
\*****************************************************************************/

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "plugin_bench.h"
#include "rlsched_slurm.h"
#include "slurm_stubs.h"

static void *site_factor, *job_submit;
static void (*update)(void);
static int (*submit)(job_desc_msg_t *, uint32_t, char **);
static int n_parts;

static int _write_config(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || (fputs(text, f) < 0) || fclose(f))
		return -1;
	return chmod(path, 0644);
}

static void *_open(const char *dir, const char *type)
{
	char path[600];
	void *handle;
	int (*init)(void);

	snprintf(path, sizeof(path), "%s/%s_rlsched.so", dir, type);
	if (!(handle = dlopen(path, RTLD_LAZY))) {
		fprintf(stderr, "dlopen(%s): %s\n", path, dlerror());
		return NULL;
	}
	init = (int (*)(void)) dlsym(handle, "init");
	if (!init || (init() != SLURM_SUCCESS))
		return NULL;
	return handle;
}

extern int pb_setup(const char *plugin_dir, const char *config_path,
		    const char *scorer, int nodes, int partitions, int types,
		    int pending)
{
	char config[2048];
	part_record_t *parts[256];
	time_t now = time(NULL);
	int len;

	if ((partitions < 1) || (partitions > 256) || (types < 1) ||
	    (types > 8))
		return -1;
	stub_quiet = 1;
	stub_large_cluster(nodes, partitions, types, parts);
	n_parts = partitions;
	/* Pending jobs over the partitions, two in three asking for GPUs
	 * (half of those typed); running jobs on an eighth of the nodes */
	for (int i = 0; i < pending; i++) {
		int p = i % partitions;
		bool gpu = (i % 3) != 0;

		stub_add_job(i + 1, JOB_PENDING, parts[p], now - 60 * (i % 1440),
			     60 + i % 600, 1 + i % 32, gpu ? "gpu" : NULL,
			     (gpu && (i % 2)) ?
			     stub_large_cluster_type(p, types) : NULL,
			     gpu ? 1 + i % 8 : 0);
	}
	for (int n = 0; n < nodes; n += 8) {
		job_record_t *job_ptr = stub_add_job(1000000 + n, JOB_PENDING,
						     parts[partitions - 1],
						     now - 600, 600, 32, "gpu",
						     NULL, 4);
		stub_job_set_running(job_ptr, n, 32, now + 3600);
	}
	slurm_conf.priority_weight_age = 1000;
	slurm_conf.priority_weight_fs = 1000;
	len = snprintf(config, sizeof(config),
		       "mode: enforce\n%s\nreload_check_interval: 0\n"
		       "accelerator_types:\n", scorer);
	for (int t = 0; t < types; t++)
		len += snprintf(config + len, sizeof(config) - len,
				"  - {name: %s, gres: gpu, speed: %.1f}\n",
				stub_large_cluster_type(t, types), 1.0 + 0.5 * t);
	if (_write_config(config_path, config))
		return -1;
	slurm_conf.site_factor_params = (char *) config_path;
	if (!(site_factor = _open(plugin_dir, "site_factor")) ||
	    !(job_submit = _open(plugin_dir, "job_submit")))
		return -1;
	update = (void (*)(void)) dlsym(site_factor, "site_factor_p_update");
	submit = (int (*)(job_desc_msg_t *, uint32_t, char **))
		dlsym(job_submit, "job_submit");
	return (update && submit) ? 0 : -1;
}

extern long pb_update(void)
{
	stub_alloc_reset();
	update();
	return stub_alloc_count();
}

extern int pb_submit(bool fresh)
{
	job_desc_msg_t desc = { 0 };
	char *err = NULL;
	int rc;

	/* A node changed since: job_submit builds its queue and snapshot anew */
	if (fresh)
		last_node_update = time(NULL) + 1;
	desc.tres_per_node = strdup(RLSCHED_TRES_GRES "gpu:4");
	desc.time_limit = 60;
	desc.min_nodes = NO_VAL;
	desc.num_tasks = NO_VAL;
	desc.requeue = NO_VAL16;
	desc.name = strdup("bench");
	rc = submit(&desc, 1000, &err);
	free(desc.tres_per_node);
	free(desc.partition);
	free(desc.admin_comment);
	free(desc.comment);
	free(desc.name);
	free(err);
	return rc;
}

static int _add_running(void *x, void *arg)
{
	job_record_t *job_ptr = x;

	if (IS_JOB_RUNNING(job_ptr))
		rlsched_snapshot_add_running(arg, job_ptr);
	return 0;
}

extern long pb_snapshot(void)
{
	static rlsched_snapshot_t snap;

	stub_alloc_reset();
	if (!rlsched_snapshot_begin(&snap))
		return -1;
	list_for_each_ro(job_list, _add_running, &snap);
	if (!rlsched_snapshot_finish(&snap, NO_VAL))
		return -1;
	return stub_alloc_count();
}

extern int pb_errors(void)
{
	return stub_log_count_level(LOG_LEVEL_ERROR, "");
}

extern void pb_teardown(void)
{
	void *handles[2] = { site_factor, job_submit };

	for (int i = 0; i < 2; i++) {
		int (*fini)(void);

		if (!handles[i])
			continue;
		if ((fini = (int (*)(void)) dlsym(handles[i], "fini")))
			fini();
		dlclose(handles[i]);
	}
	site_factor = job_submit = NULL;
	stub_reset_cluster();
	stub_log_reset();
	last_node_update = 0;
}
