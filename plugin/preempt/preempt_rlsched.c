/*****************************************************************************\
 *  preempt_rlsched.c - checkpoint-aware preemption.
 *
 *  Who may preempt whom is Slurm's QOS relation, as with preempt/qos (the
 *  preemptor's QOS lists the victim's in Preempt=). Among those, rlsched's
 *  rules (rlsched.yaml `preemption`, docs/preemption.md) choose the victims:
 *  only jobs that declared a checkpoint (or are of a preemptable QOS), never
 *  before the minimum run time nor more than the cap in the window; ordered
 *  by work lost since their last checkpoint, then by learned rank; each gets
 *  its declared checkpoint cost (plus a margin) as grace time, between the
 *  checkpoint signal and the requeue.
 *
 *  slurm.conf: PreemptType=preempt/rlsched, PreemptMode=REQUEUE,
 *  SlurmctldParameters=preempt_send_user_signal. Faults never stop
 *  scheduling: without a usable config the QOS relation decides, and only
 *  jobs Slurm can signal and requeue are victims; logged once, counted.
\*****************************************************************************/

#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "../common/rlsched_slurm.h"

RLSCHED_EXPORT const char plugin_name[] = "rlsched preempt: checkpoint-aware preemption";
RLSCHED_EXPORT const char plugin_type[] = "preempt/rlsched";
RLSCHED_EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;

static pthread_mutex_t rlsched_lock = PTHREAD_MUTEX_INITIALIZER;
static rlsched_config_engine_t ce = {
	/* the cap's history is kept in StateSaveLocation */
	.flags = RLSCHED_ENGINE_NO_POLICY | RLSCHED_ENGINE_KEEP_PREEMPTIONS,
	.type = plugin_type,
	.consequence = "only requeueable jobs with a signal are victims, in QOS order",
	.size = -1,
};
static const rlsched_snapshot_t no_partitions;	/* job fields only */
static uint64_t preemptions = 0;

extern RLSCHED_EXPORT int init(void)
{
	slurm_mutex_lock(&rlsched_lock);
	rlsched_config_engine_refresh(&ce);
	if (ce.engine)
		info("%s: loaded, config %s", plugin_type, rlsched_config_path());
	slurm_mutex_unlock(&rlsched_lock);
	return SLURM_SUCCESS;
}

extern RLSCHED_EXPORT int fini(void)
{
	slurm_mutex_lock(&rlsched_lock);
	info("%s: unloading; %"PRIu64" preemptions, %"PRIu64" plugin faults",
	     plugin_type, preemptions, ce.faults.total);
	rlsched_config_engine_release(&ce);
	slurm_mutex_unlock(&rlsched_lock);
	return SLURM_SUCCESS;
}

/* PreemptMode of the job's QOS, else the cluster's (as preempt/qos) */
extern RLSCHED_EXPORT uint16_t preempt_p_get_mode(job_record_t *job_ptr)
{
	uint16_t mode;

	if (job_ptr->qos_ptr && job_ptr->qos_ptr->preempt_mode)
		mode = job_ptr->qos_ptr->preempt_mode;
	else
		mode = slurm_conf.preempt_mode;
	mode &= ~PREEMPT_MODE_GANG;
	mode &= ~PREEMPT_MODE_WITHIN;
	return mode;
}

/* Slurm's QOS relation: may the preemptor's QOS preempt the preemptee's? */
static bool _qos_preempts(job_record_t *preemptee, job_record_t *preemptor)
{
	slurmdb_qos_rec_t *qos_ee = preemptee->qos_ptr;
	slurmdb_qos_rec_t *qos_or = preemptor->qos_ptr;

	if (!qos_ee || !qos_or)
		return false;
	if (qos_or->id == qos_ee->id)
		return ((qos_or->preempt_mode & PREEMPT_MODE_WITHIN) ||
			(slurm_conf.preempt_mode & PREEMPT_MODE_WITHIN)) &&
		       (preemptor->priority > preemptee->priority);
	return qos_or->preempt_bitstr &&
	       bit_test(qos_or->preempt_bitstr, qos_ee->id);
}

/* The job as the core sees a preemption candidate; lock held */
static void _candidate(job_record_t *job_ptr, rlsched_preempt_job *out)
{
	rlsched_job fields;
	rlsched_engine_info engine_info;
	uint32_t site;

	rlsched_job_fill(&fields, job_ptr, &no_partitions);
	memset(out, 0, sizeof(*out));
	out->job_id = job_ptr->job_id;
	out->comment = job_ptr->comment;
	out->qos = job_ptr->qos_ptr ? job_ptr->qos_ptr->name : NULL;
	out->run_start = job_ptr->start_time;
	out->size = fields.accelerators > 0 ? fields.accelerators :
		    (fields.cpus > 0 ? fields.cpus : 1);
	site = job_ptr->site_factor;
	if ((site > NICE_OFFSET) &&
	    (rlsched_engine_get_info(ce.engine, &engine_info) == RLSCHED_OK) &&
	    engine_info.score_scale)
		out->rank = (double) (site - NICE_OFFSET) /
			    engine_info.score_scale;
}

/* Without a usable config: jobs Slurm can signal and requeue */
static bool _fallback_victim(job_record_t *job_ptr)
{
	return job_ptr->details && job_ptr->details->requeue &&
	       job_ptr->warn_signal;
}

extern RLSCHED_EXPORT bool preempt_p_preemptable(job_record_t *preemptee,
						 job_record_t *preemptor)
{
	rlsched_preempt_job job;
	int32_t allowed = 0;
	const char *why = NULL;
	bool victim;

	if (!preemptee || !preemptor || !_qos_preempts(preemptee, preemptor))
		return false;
	slurm_mutex_lock(&rlsched_lock);
	rlsched_config_engine_refresh(&ce);
	if (!ce.engine) {
		victim = _fallback_victim(preemptee);
		goto done;
	}
	_candidate(preemptee, &job);
	if (rlsched_preempt_allowed(ce.engine, time(NULL), &job, &allowed,
				    &why) != RLSCHED_OK) {
		rlsched_fault(&ce.faults, plugin_type, "preempt check",
			      ce.consequence, rlsched_last_error(ce.engine));
		victim = _fallback_victim(preemptee);
		goto done;
	}
	rlsched_fault_cleared(&ce.faults, plugin_type);
	victim = allowed;
	if (!victim)
		debug("%s: %pJ is no victim for %pJ: %s", plugin_type,
		      preemptee, preemptor, why);
done:
	slurm_mutex_unlock(&rlsched_lock);
	return victim;
}

extern RLSCHED_EXPORT bool preempt_p_job_preempt_check(
	job_queue_rec_t *preemptor, job_queue_rec_t *preemptee)
{
	return preempt_p_preemptable(preemptee->job_ptr, preemptor->job_ptr);
}

/* Victim order, ascending; QOS priority then size (preempt/qos) as fallback */
extern RLSCHED_EXPORT uint32_t preempt_p_get_prio(job_record_t *job_ptr)
{
	rlsched_preempt_job job;
	uint32_t order = 0;
	uint32_t qos_prio;

	slurm_mutex_lock(&rlsched_lock);
	if (ce.engine) {
		_candidate(job_ptr, &job);
		if (rlsched_preempt_order(ce.engine, time(NULL), &job,
					  &order) == RLSCHED_OK) {
			slurm_mutex_unlock(&rlsched_lock);
			return order;
		}
		rlsched_fault(&ce.faults, plugin_type, "victim order",
			      ce.consequence, rlsched_last_error(ce.engine));
	}
	slurm_mutex_unlock(&rlsched_lock);
	qos_prio = job_ptr->qos_ptr ? job_ptr->qos_ptr->priority : 0;
	return (MIN(qos_prio, 0xffff) << 16) + MIN(job_ptr->node_cnt, 0xffff);
}

/* Called once as Slurm starts preempting the job: records it, grace time */
extern RLSCHED_EXPORT uint32_t preempt_p_get_grace_time(job_record_t *job_ptr)
{
	rlsched_preempt_job job;
	uint32_t grace = 0;
	int64_t lost = 0;
	uint32_t qos_grace = job_ptr->qos_ptr ? job_ptr->qos_ptr->grace_time : 0;

	slurm_mutex_lock(&rlsched_lock);
	preemptions++;
	if (!ce.engine) {
		slurm_mutex_unlock(&rlsched_lock);
		return qos_grace;
	}
	_candidate(job_ptr, &job);
	if (rlsched_preempt_begin(ce.engine, time(NULL), &job, &grace,
				  &lost) != RLSCHED_OK) {
		rlsched_fault(&ce.faults, plugin_type, "grace time",
			      ce.consequence, rlsched_last_error(ce.engine));
		grace = qos_grace;
	} else {
		if (!grace)	/* no checkpoint: the QOS's GraceTime */
			grace = qos_grace;
		info("%s: preempting %pJ: grace %u s, %"PRId64" s of run time since its last periodic checkpoint",
		     plugin_type, job_ptr, grace, lost);
	}
	slurm_mutex_unlock(&rlsched_lock);
	return grace;
}

/* Before Slurm 25.05: preempt_p_get_data(), built from the three above */
RLSCHED_PREEMPT_GET_DATA(plugin_type)
