/* plugin_bench.h - what bench/plugin_bench.cpp calls in plugin_bench_cluster.c (C: it includes Slurm's headers) */
#ifndef RLSCHED_PLUGIN_BENCH_H
#define RLSCHED_PLUGIN_BENCH_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Builds the stub cluster and queue, writes rlsched.yaml (scorer: a YAML line such as "fallback: multifactor" or
 * "model: <path>") and loads site_factor/rlsched and job_submit/rlsched. 0 on success. */
int pb_setup(const char *plugin_dir, const char *config_path, const char *scorer, int nodes, int partitions,
             int types, int pending);
/* One site_factor_p_update. \return the allocations the plugin made through Slurm's allocator (stubbed) */
long pb_update(void);
/* The cluster snapshot alone (plugin/common/rlsched_snapshot.c linked in): the running jobs' CPUs, then partitions,
 * nodes and accelerators. \return its allocations, -1 on failure */
long pb_snapshot(void);
/* One typeless 4-GPU submit through job_submit; fresh: with its queue and snapshot rebuilt (a node changed) */
int pb_submit(bool fresh);
/* Error lines the plugins logged */
int pb_errors(void);
void pb_teardown(void);

#ifdef __cplusplus
}
#endif

#endif
