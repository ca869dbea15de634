/*****************************************************************************\
 *  slurm_compat.h - the one place where Slurm version differences live.
 *
 *  The rlsched plugins include Slurm's internal headers (from the configured
 *  source tree of the installed version, see cmake/SlurmSource.cmake) only
 *  through this file. Verified: Slurm 22.05 (Debian 12). Header locations
 *  for 23.02 - 23.11 are known (src/interfaces/); other versions stop the
 *  build here rather than fail strangely at run time.
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
#elif SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(24, 5, 0)
#include "src/interfaces/gres.h"
#else
/* 24.05 changed the site_factor plugin interface: port and test before use. */
#error "rlsched plugins are not ported to Slurm 24.05 or later yet (see plugin/common/slurm_compat.h)"
#endif

/* The plugins build with -fvisibility=hidden; the Slurm entry points (and
 * only they, see <type>/rlsched.map) are marked for export. */
#define RLSCHED_EXPORT __attribute__((visibility("default")))

/* The GRES a pending job asked for (gres_state_t list; gres_list before 21.08). */
#define RLSCHED_JOB_GRES_REQ(job_ptr) ((job_ptr)->gres_list_req)
/* The GRES a running job holds. */
#define RLSCHED_JOB_GRES_ALLOC(job_ptr) ((job_ptr)->gres_list_alloc)

/* List types: ListIterator (22.05), list_itr_t (23.02+, old name kept) */
#define RLSCHED_LIST_ITR ListIterator

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
