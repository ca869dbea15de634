/*****************************************************************************\
 *  slurm_compat.h - the one place where Slurm version differences live.
 *
 *  The rlsched plugins (and their load test) include Slurm's internal
 *  headers, from the configured source tree of the version they are built
 *  for (see cmake/SlurmSource.cmake), only through this file; no other file
 *  tests SLURM_VERSION_NUMBER. Built and load-tested here: 22.05 (Debian 12)
 *  and 24.11 (Debian 13); run in a real slurmctld: 22.05 and 24.11. The
 *  25.05+ entries below follow the upstream API changes but have not been
 *  compiled here (no 25.05+ source is reachable from the build machines).
 *
 *  What moved, and since when:
 *    23.02  gres.h (and the other plugin interfaces) moved to src/interfaces/;
 *           job_modify() gained char **err_msg; list_t and list_itr_t named.
 *    23.11  job_details_t and priority_factors_t (struct job_details and
 *           priority_factors_object_t before). Checked: absent in 22.05,
 *           present in 24.11; which release in between named them is not.
 *    24.05  site_factor_p_reconfig() is no longer called (scontrol
 *           reconfigure restarts slurmctld, which runs init() again);
 *           job_record_t moved to src/common/job_record.h (slurmctld.h
 *           includes it).
 *    24.11  the List and ListIterator typedefs are gone: list_t *, list_itr_t *.
 *    25.05  preempt_p_get_data() was split into preempt_p_get_grace_time(),
 *           preempt_p_get_mode() and preempt_p_get_prio().
\*****************************************************************************/

#ifndef RLSCHED_SLURM_COMPAT_H
#define RLSCHED_SLURM_COMPAT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/job_resources.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(22, 5, 0)
#error "rlsched plugins need Slurm 22.05 or later"
#elif SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 2, 0)
#include "src/common/gres.h"
#include "src/slurmctld/preempt.h"
#else
#include "src/interfaces/gres.h"
#include "src/interfaces/preempt.h"
#endif

/* The plugins build with -fvisibility=hidden; the Slurm entry points (and
 * only they, see <type>/rlsched.map) are marked for export. */
#define RLSCHED_EXPORT __attribute__((visibility("default")))

/* Lists: the names of 23.02+ (22.05 has only the pointer typedefs List and
 * ListIterator; 24.11 has only these). */
#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 2, 0)
typedef struct xlist list_t;
typedef struct listIterator list_itr_t;
#endif

/* Job records: job_details_t and priority_factors_t (a job's cached factors;
 * priority_factors_object_t before) are the names of 24.11; 22.05 has only
 * struct job_details and priority_factors_object_t. */
#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 11, 0)
typedef struct job_details job_details_t;
typedef priority_factors_object_t priority_factors_t;
#endif

/* How job_desc_msg_t's tres_per_* strings name a GRES: "gres:gpu:2" (22.05),
 * "gres/gpu:2" (24.11; from 23.02 on is assumed, not checked here). The
 * plugins keep whichever form they are given; the load test submits this. */
#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 2, 0)
#define RLSCHED_TRES_GRES "gres:"
#else
#define RLSCHED_TRES_GRES "gres/"
#endif

/* job_modify(job_desc, job_ptr, submit_uid RLSCHED_JOB_MODIFY_ERR_MSG(err_msg)):
 * the error text parameter of 23.02+; _ARG passes one in a call. */
#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 2, 0)
#define RLSCHED_JOB_MODIFY_ERR_MSG(name)
#define RLSCHED_JOB_MODIFY_ERR_MSG_ARG(value)
#else
#define RLSCHED_JOB_MODIFY_ERR_MSG(name) , char **name
#define RLSCHED_JOB_MODIFY_ERR_MSG_ARG(value) , (value)
#endif

/*
 * preempt: the plugin always exports preempt_p_get_grace_time(),
 * preempt_p_get_mode() and preempt_p_get_prio() (what 25.05+ calls); before
 * 25.05 slurmctld asks preempt_p_get_data() instead, which this builds from
 * them. RLSCHED_PREEMPT_HAS_GET_DATA says whether the version has it.
 */
#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(25, 5, 0)
#define RLSCHED_PREEMPT_HAS_GET_DATA 1
#define RLSCHED_PREEMPT_GET_DATA(plugin_type)				\
extern RLSCHED_EXPORT int preempt_p_get_data(				\
	job_record_t *job_ptr, slurm_preempt_data_type_t data_type,	\
	void *data)							\
{									\
	switch (data_type) {						\
	case PREEMPT_DATA_ENABLED:					\
		*(bool *) data = slurm_conf.preempt_mode !=		\
				 PREEMPT_MODE_OFF;			\
		return SLURM_SUCCESS;					\
	case PREEMPT_DATA_MODE:						\
		*(uint16_t *) data = preempt_p_get_mode(job_ptr);	\
		return SLURM_SUCCESS;					\
	case PREEMPT_DATA_PRIO:						\
		*(uint32_t *) data = preempt_p_get_prio(job_ptr);	\
		return SLURM_SUCCESS;					\
	case PREEMPT_DATA_GRACE_TIME:					\
		*(uint32_t *) data = preempt_p_get_grace_time(job_ptr);	\
		return SLURM_SUCCESS;					\
	default:							\
		error("%s: unknown preempt data type %d", plugin_type,	\
		      data_type);					\
		return SLURM_ERROR;					\
	}								\
}
#else
#define RLSCHED_PREEMPT_HAS_GET_DATA 0
#define RLSCHED_PREEMPT_GET_DATA(plugin_type)
#endif

/* The members of a partition's AllowGroups: a zero-terminated array in
 * 22.05, counted by allow_uids_cnt (not terminated) in 24.11; assumed from
 * 23.02 on (a version without the count fails to compile here, rather than
 * reading past the array). RLSCHED_PART_UIDS_END(part_ptr, i): no uid at i. */
#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 2, 0)
#define RLSCHED_PART_UIDS_COUNTED 0
#define RLSCHED_PART_UIDS_END(part_ptr, i) (!(part_ptr)->allow_uids[i])
#else
#define RLSCHED_PART_UIDS_COUNTED 1
#define RLSCHED_PART_UIDS_END(part_ptr, i) ((i) >= (part_ptr)->allow_uids_cnt)
#endif

/* The GRES a pending job asked for (gres_state_t list; gres_list before 21.08). */
#define RLSCHED_JOB_GRES_REQ(job_ptr) ((job_ptr)->gres_list_req)
/* The GRES a running job holds. */
#define RLSCHED_JOB_GRES_ALLOC(job_ptr) ((job_ptr)->gres_list_alloc)

/* Iterates the node table: node_record_table_ptr has holes (NULL) since 22.05. */
#define RLSCHED_FOR_EACH_NODE(i, node_ptr) \
	for (int i = 0; ((node_ptr) = next_node(&i)); i++)
#define RLSCHED_NODE_INDEX(node_ptr) ((int) (node_ptr)->index)

/* Usable for new work: not down, drained (or draining) or future. */
#define RLSCHED_NODE_USABLE(node_ptr)			\
	(!IS_NODE_DOWN(node_ptr) && !IS_NODE_DRAIN(node_ptr) &&	\
	 !IS_NODE_FUTURE(node_ptr))

/* CPUs of a node that jobs may use. */
#define RLSCHED_NODE_CPUS(node_ptr) ((node_ptr)->cpus_efctv ? \
				     (node_ptr)->cpus_efctv : (node_ptr)->cpus)

#endif /* RLSCHED_SLURM_COMPAT_H */
