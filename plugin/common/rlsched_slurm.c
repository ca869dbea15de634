/*****************************************************************************\
 *  rlsched_slurm.c - the plugins' plumbing around the core: Slurm logging
 *  for core messages, slurm.conf's priority weights, the config file path,
 *  faults logged once, and the engine kept in step with rlsched.yaml.
 *
 *  The snapshot of slurmctld's tables is rlsched_snapshot.c.
\*****************************************************************************/

#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "rlsched_slurm.h"

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

/* Creates the engine, or reconfigures it; `asked`: an admin's reconfigure */
static void _config_load(rlsched_config_engine_t *ce, bool asked)
{
	rlsched_engine_options opts = {
		.abi_version = RLSCHED_ABI_VERSION,
		.config_path = rlsched_config_path(),
		.log = rlsched_slurm_log,
		.log_ctx = (void *) ce->type,
		.flags = ce->flags,
		.plugin_type = ce->type,
		.state_dir = (ce->flags & (RLSCHED_ENGINE_KEEP_PREEMPTIONS |
					  RLSCHED_ENGINE_KEEP_RUN_TIMES)) ?
			     slurm_conf.state_save_location : NULL,
	};

	ce->seen = true;
	ce->checked = time(NULL);
	_remember_config(ce);
	if (ce->engine) {
		/* Once per version of the file (or per reconfigure) */
		if (rlsched_engine_reconfigure(ce->engine) != RLSCHED_OK) {
			ce->faults.total++;
			if (asked)
				error("%s: reconfigure: keeping the previous settings: %s",
				      ce->type, rlsched_last_error(ce->engine));
			else
				error("%s: %s changed: keeping the previous settings: %s",
				      ce->type, rlsched_config_path(),
				      rlsched_last_error(ce->engine));
		} else {
			rlsched_fault_cleared(&ce->faults, ce->type);
		}
		return;
	}
	rlsched_engine_options_weights(&opts);	/* multifactor fallback */
	if (rlsched_engine_create(&opts, &ce->engine) != RLSCHED_OK) {
		ce->engine = NULL;
		rlsched_fault(&ce->faults, ce->type, "loading the config",
			      ce->consequence, rlsched_last_error(NULL));
	} else {
		rlsched_fault_cleared(&ce->faults, ce->type);
	}
}

extern void rlsched_config_engine_refresh(rlsched_config_engine_t *ce)
{
	time_t now = time(NULL);

	if (ce->seen && (now >= ce->checked) &&
	    (now - ce->checked < RLSCHED_CONFIG_CHECK_SECONDS))
		return;
	ce->checked = now;
	/* Retry a bad config only once it changed: no re-read per call */
	if (ce->seen && !_config_changed(ce))
		return;
	_config_load(ce, false);
}

extern void rlsched_config_engine_reload(rlsched_config_engine_t *ce)
{
	_config_load(ce, true);
}

extern void rlsched_config_engine_release(rlsched_config_engine_t *ce)
{
	rlsched_engine_destroy(ce->engine);
	ce->engine = NULL;
	ce->size = -1;
	ce->seen = false;
}
