/*****************************************************************************\
 *  snapshot_test.c - the plugins' cluster snapshot (plugin/common/
 *  rlsched_snapshot.c) on stub records, white-box: what it sums per partition,
 *  in which order, what it allocates per build, and what happens when
 *  memory runs out.
 *
 *  usage: snapshot_test <scenario>; exit 0 when every check passed.
\*****************************************************************************/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rlsched_slurm.h"
#include "slurm_stubs.h"
#include "check.h"

/* The pool of (gres, type) in pools[0..n), or NULL */
static const rlsched_accel *_pool(const rlsched_accel *pools, int n,
				  const char *gres, const char *type)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(pools[i].gres, gres) && pools[i].type &&
		    !strcmp(pools[i].type, type))
			return &pools[i];
	return NULL;
}

static void _check_pool(const rlsched_accel *pools, int n, const char *where,
			const char *gres, const char *type, int total,
			int idle, int max_per_node, int nodes, int idle_nodes)
{
	const rlsched_accel *a = _pool(pools, n, gres, type);

	CHECK(a, "%s: no %s:%s pool", where, gres, type);
	if (!a)
		return;
	CHECK((a->total == total) && (a->idle == idle) &&
	      (a->max_per_node == max_per_node) && (a->nodes == nodes) &&
	      (a->idle_nodes == idle_nodes),
	      "%s %s:%s: total %d idle %d max %d nodes %d idle nodes %d, "
	      "want %d %d %d %d %d", where, gres, type, a->total, a->idle,
	      a->max_per_node, a->nodes, a->idle_nodes, total, idle,
	      max_per_node, nodes, idle_nodes);
}

/*
 * n0 h200 8 (all 8 allocated), n1 a100 8 (2 allocated), n2 h200 8,
 * n3 npu 910b 4, n4 CPUs only, n5 a100 8 drained; 64 CPUs each, a running
 * job holds 16 CPUs of n0. Partitions left [n0, n1], mid [n1, n2], all
 * [n0 .. n5]. Expected values worked out by hand from that (wholly idle:
 * n2's h200 and n3's NPUs).
 */
static part_record_t *left, *mid, *all;

static void _small_cluster(void)
{
	node_record_t *drained;
	job_record_t *job;

	stub_reset_cluster();
	stub_add_node("n0", 64, "gpu", "h200", 8, 8);
	stub_add_node("n1", 64, "gpu", "a100", 8, 2);
	stub_add_node("n2", 64, "gpu", "h200", 8, 0);
	stub_add_node("n3", 64, "npu", "910b", 4, 0);
	stub_add_node("n4", 64, NULL, NULL, 0, 0);
	drained = stub_add_node("n5", 64, "gpu", "a100", 8, 0);
	drained->node_state = NODE_STATE_IDLE | NODE_STATE_DRAIN;
	left = stub_add_part("left", 0, 1, 60);
	mid = stub_add_part("mid", 1, 2, INFINITE);
	all = stub_add_part("all", 0, 5, 120);
	job = stub_add_job(1, JOB_RUNNING, left, 0, 60, 16, NULL, NULL, 0);
	stub_job_set_running(job, 0, 16, 3600);
}

static int _add_running(void *x, void *arg)
{
	job_record_t *job_ptr = x;

	if (IS_JOB_RUNNING(job_ptr))
		rlsched_snapshot_add_running(arg, job_ptr);
	return 0;
}

/* A build as the plugins do it (their job pass reduced to running jobs);
 * allocates nothing of its own */
static bool _build(rlsched_snapshot_t *snap)
{
	if (!rlsched_snapshot_begin(snap))
		return false;
	list_for_each_ro(job_list, _add_running, snap);
	return rlsched_snapshot_finish(snap, NO_VAL);
}

static void _check_small(const rlsched_snapshot_t *snap)
{
	const rlsched_cluster *c = &snap->cluster;
	const rlsched_partition *p;

	CHECK(c->n_partitions == 3, "%d partitions", c->n_partitions);
	if (c->n_partitions != 3)
		return;
	CHECK((c->nodes_total == 5) && (c->cpus_total == 320) &&
	      (c->cpus_idle == 304), "cluster: %d nodes, %d/%d CPUs idle",
	      c->nodes_total, c->cpus_idle, c->cpus_total);
	CHECK(c->n_accel == 3, "cluster: %d pools", c->n_accel);
	_check_pool(c->accel, c->n_accel, "cluster", "gpu", "h200", 16, 8, 8, 2, 1);
	_check_pool(c->accel, c->n_accel, "cluster", "gpu", "a100", 8, 6, 8, 1, 0);
	_check_pool(c->accel, c->n_accel, "cluster", "npu", "910b", 4, 4, 4, 1, 1);

	p = &c->partitions[0];
	CHECK(!strcmp(p->name, "left") && (p->nodes_total == 2) &&
	      (p->cpus_total == 128) && (p->cpus_idle == 112) &&
	      (p->max_time == 3600) && p->accepts_jobs,
	      "left: %s %d nodes %d/%d CPUs max_time %ld", p->name,
	      p->nodes_total, p->cpus_idle, p->cpus_total, (long) p->max_time);
	CHECK(p->n_accel == 2, "left: %d pools", p->n_accel);
	_check_pool(p->accel, p->n_accel, "left", "gpu", "h200", 8, 0, 8, 1, 0);
	_check_pool(p->accel, p->n_accel, "left", "gpu", "a100", 8, 6, 8, 1, 0);

	/* mid meets a100 (n1) before h200 (n2): its pools come in that order,
	 * though the cluster met h200 first */
	p = &c->partitions[1];
	CHECK(!strcmp(p->name, "mid") && (p->nodes_total == 2) &&
	      (p->cpus_idle == 128) && (p->max_time == 0),
	      "mid: %s %d nodes %d idle CPUs", p->name, p->nodes_total,
	      p->cpus_idle);
	CHECK((p->n_accel == 2) && !strcmp(p->accel[0].type, "a100") &&
	      !strcmp(p->accel[1].type, "h200"), "mid: %d pools, first %s",
	      p->n_accel, p->n_accel ? p->accel[0].type : "-");
	CHECK(!strcmp(c->accel[0].type, "h200") &&
	      !strcmp(c->accel[1].type, "a100") &&
	      !strcmp(c->accel[2].type, "910b"), "cluster pool order");

	p = &c->partitions[2];
	CHECK(!strcmp(p->name, "all") && (p->nodes_total == 5) &&
	      (p->n_accel == 3), "all: %d nodes %d pools", p->nodes_total,
	      p->n_accel);
	_check_pool(p->accel, p->n_accel, "all", "gpu", "h200", 16, 8, 8, 2, 1);

	CHECK(rlsched_snapshot_part_index(snap, left) == 0 &&
	      rlsched_snapshot_part_index(snap, mid) == 1 &&
	      rlsched_snapshot_part_index(snap, all) == 2,
	      "partition indices by record");
	CHECK(rlsched_snapshot_part_index(snap, (part_record_t *) snap) == -1 &&
	      rlsched_snapshot_part_index(snap, NULL) == -1,
	      "unknown records");
	CHECK(rlsched_snapshot_part_by_name(snap, "mid") == 1, "by name");
}

static int _snapshot_pools(void)
{
	rlsched_snapshot_t snap = { 0 };

	_small_cluster();
	CHECK(_build(&snap), "build");
	_check_small(&snap);
	/* Built again on the same buffers: the same figures, nothing doubled */
	CHECK(_build(&snap), "rebuild");
	_check_small(&snap);
	/* A node drained since: gone from the sums */
	node_record_table_ptr[2]->node_state |= NODE_STATE_DRAIN;
	CHECK(_build(&snap), "after drain");
	CHECK(snap.cluster.nodes_total == 4, "%d nodes", snap.cluster.nodes_total);
	_check_pool(snap.cluster.accel, snap.cluster.n_accel, "drained n2",
		    "gpu", "h200", 8, 0, 8, 1, 0);
	CHECK(snap.cluster.partitions[1].n_accel == 1,
	      "mid keeps only a100: %d", snap.cluster.partitions[1].n_accel);
	rlsched_snapshot_free(&snap);
	return 0;
}

/* AllowGroups: a user outside it sees the partition as not accepting jobs;
 * root and NO_VAL (site_factor: no user) see all */
static int _snapshot_allowed_users(void)
{
	rlsched_snapshot_t snap = { 0 };
	const uid_t members[2] = { 1000, 1001 };
	const struct {
		uint32_t uid;
		int left, mid;
	} cases[] = {
		{ 1000, 1, 1 }, { 1001, 1, 1 }, { 2000, 0, 1 }, { 0, 1, 1 },
		{ NO_VAL, 1, 1 },
	};

	_small_cluster();
	stub_part_allow_uids(left, members, 2, 2000);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK(rlsched_snapshot_begin(&snap) &&
		      rlsched_snapshot_finish(&snap, cases[i].uid), "build");
		CHECK((snap.parts[0].accepts_jobs == cases[i].left) &&
		      (snap.parts[1].accepts_jobs == cases[i].mid),
		      "uid %u: left %d mid %d, want %d %d", cases[i].uid,
		      snap.parts[0].accepts_jobs, snap.parts[1].accepts_jobs,
		      cases[i].left, cases[i].mid);
	}
	rlsched_snapshot_free(&snap);
	return 0;
}

/* Allocations of the third build (the first two may size the buffers) */
static long _steady_allocs(int nodes, long *first)
{
	rlsched_snapshot_t snap = { 0 };
	long n;

	stub_large_cluster(nodes, 32, 4, NULL);
	stub_alloc_reset();
	CHECK(_build(&snap), "first build, %d nodes", nodes);
	*first = stub_alloc_count();
	CHECK(_build(&snap), "second build");
	stub_alloc_reset();
	CHECK(_build(&snap), "third build");
	n = stub_alloc_count();
	CHECK(snap.cluster.nodes_total == nodes, "%d nodes",
	      snap.cluster.nodes_total);
	CHECK(snap.cluster.n_partitions == 32 && snap.cluster.n_accel == 4,
	      "%d partitions, %d pools", snap.cluster.n_partitions,
	      snap.cluster.n_accel);
	rlsched_snapshot_free(&snap);
	return n;
}

static int _snapshot_allocations(void)
{
	long first_small, first_large;
	long small = _steady_allocs(64, &first_small);
	long large = _steady_allocs(4096, &first_large);

	printf("snapshot allocations per build (32 partitions, 4 types): first %ld at 64 nodes, %ld at 4096; then %ld and %ld\n",
	       first_small, first_large, small, large);
	CHECK(small == 0 && large == 0, "steady state: %ld at 64 nodes, %ld at 4096", small, large);
	/* Sizing the buffers: a doubling per 2x nodes, not one per node */
	CHECK(first_large - first_small <= 8, "first build: %ld at 64 nodes, %ld at 4096", first_small, first_large);
	return 0;
}

static int _snapshot_intern(void)
{
	rlsched_snapshot_t snap = { 0 };
	const char *first[100];
	char account[32];
	long n;

	_small_cluster();
	CHECK(_build(&snap), "build");
	stub_alloc_reset();
	for (int i = 0; i < 10000; i++) {
		const char *s;

		snprintf(account, sizeof(account), "acct%d", i % 100);
		s = rlsched_snapshot_intern(&snap, account);
		CHECK(s && !strcmp(s, account) && (s != account), "interned %s",
		      account);
		if (i < 100)
			first[i] = s;
		else if (s != first[i % 100])
			CHECK(false, "%s copied twice", account);
	}
	n = stub_alloc_count();
	/* 100 copies, the strings array and the table growing: no per-call cost */
	CHECK(n >= 100 && n <= 120, "%ld allocations for 100 distinct accounts", n);
	CHECK(rlsched_snapshot_intern(&snap, "a100") == snap.cluster.accel[1].type,
	      "a GRES type is the pool's own copy");
	CHECK(rlsched_snapshot_intern(&snap, NULL) == NULL, "NULL");
	/* The next build forgets them (their job records may be gone) */
	CHECK(_build(&snap), "rebuild");
	stub_alloc_reset();
	rlsched_snapshot_intern(&snap, "acct1");
	CHECK(stub_alloc_count() >= 1, "copied again after a build");
	rlsched_snapshot_free(&snap);
	return 0;
}

/* Every allocation of a build failing in turn: the build says so, nothing
 * aborts (the stubs abort on a non-try allocation, as xmalloc fatal()s),
 * and a later build on the same snapshot is whole again */
static int _snapshot_out_of_memory(void)
{
	int failed = 0, k;

	_small_cluster();
	for (k = 0; k < 200; k++) {
		rlsched_snapshot_t snap = { 0 };
		bool ok;

		stub_alloc_reset();
		stub_alloc_fail_after(k);
		ok = _build(&snap) &&
		     rlsched_snapshot_keep(&snap, "job name") &&
		     rlsched_snapshot_intern(&snap, "account");
		stub_alloc_fail_after(-1);
		if (ok) {
			rlsched_snapshot_free(&snap);
			break;
		}
		failed++;
		CHECK(_build(&snap), "build after the failure at allocation %d", k);
		_check_small(&snap);
		CHECK(rlsched_snapshot_keep(&snap, "x"), "keep after %d", k);
		rlsched_snapshot_free(&snap);
	}
	printf("the build failed cleanly at each of its first %d allocations\n", failed);
	CHECK(failed >= 10 && k < 200, "%d failures, %d", failed, k);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 1;

	if (argc < 2) {
		fprintf(stderr, "usage: %s <scenario>\n", argv[0]);
		return 2;
	}
	stub_quiet = 1;
	if (!strcmp(argv[1], "snapshot_pools"))
		rc = _snapshot_pools();
	else if (!strcmp(argv[1], "snapshot_allocations"))
		rc = _snapshot_allocations();
	else if (!strcmp(argv[1], "snapshot_allowed_users"))
		rc = _snapshot_allowed_users();
	else if (!strcmp(argv[1], "snapshot_intern"))
		rc = _snapshot_intern();
	else if (!strcmp(argv[1], "snapshot_out_of_memory"))
		rc = _snapshot_out_of_memory();
	else
		fprintf(stderr, "unknown scenario %s\n", argv[1]);
	stub_reset_cluster();
	if (failures)
		fprintf(stderr, "%s: %d check(s) failed\n", argv[1], failures);
	stub_log_reset();
	return (rc || failures) ? 1 : 0;
}
