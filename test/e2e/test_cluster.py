"""The lab cluster itself, without rlsched plugins: what the plugin tests and the demo build on.

One cluster is shared by the tests of this module (jobs of one test do not affect the others: each waits for its own
jobs); the teardown test starts its own.
"""

from __future__ import annotations

import csv
import json
import socket
import subprocess
import time
from pathlib import Path

from lab import (CLUSTER_NAME, NODES, PARTITIONS, Lab, LabError, ephemeral_ports, free_port, marked_pids,
                 process_name)

REPO = Path(__file__).resolve().parents[2]
# A real dump of Slurm 22.05 made with the command of docs/sacct.md (a copy of shared/samples/sacct-slurm22.05-lab.txt).
SAMPLE = REPO / "test/data/sacct/slurm22.05-lab.txt"
# The header of `sacct -P --format=...` with the field list of docs/sacct.md.
SACCT_HEADER = ("JobIDRaw|JobID|JobName|User|Account|Partition|QOS|Submit|Eligible|Start|End|Elapsed|TimelimitRaw|"
                "ReqTRES|AllocTRES|NNodes|NCPUS|State|ExitCode|Reason|Flags|Priority|ReqMem|NodeList")


def test_lab_ports_lie_outside_the_ephemeral_range_and_can_be_bound() -> None:
    """A daemon's port must not be one the kernel may give a client's connect() before the daemon binds it."""
    ephemeral = ephemeral_ports()
    ports = [free_port() for _ in range(50)]
    assert not [p for p in ports if p in ephemeral], ports
    for port in ports[:5]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("", port))
    assert len(set(ports)) > 1, "free_port always gives the same port"


def test_cluster_comes_up_with_three_idle_nodes(lab: Lab) -> None:
    assert lab.node_states() == {n.name: "idle" for n in NODES}, lab.log_tails("slurmctld")
    partitions = set(lab.run("sinfo", "-h", "-o", "%R").stdout.split())
    assert partitions == set(PARTITIONS)


def test_sbatch_returns_a_job_id_that_squeue_lists(lab: Lab) -> None:
    job = lab.sbatch("--hold", "-J", "held", wrap="true")
    try:
        rows = lab.squeue([job])
        assert [(r["id"], r["name"], r["state"], r["reason"]) for r in rows] == [
            (str(job), "held", "PENDING", "JobHeldUser")]
    finally:
        lab.run("scancel", str(job))


def test_typed_gpu_job_lands_on_its_node_and_sacct_shows_the_type(lab: Lab) -> None:
    job = lab.sbatch("--gres=gpu:h200:2", "-t", "2", wrap="sleep 1")
    info = lab.wait_job_state(job, "COMPLETED")
    assert info["NodeList"] == "h200-1", info
    lab.wait_accounted([job])
    row = lab.sacct("-X", "-j", str(job), "--format=JobIDRaw,AllocTRES,NodeList")[0]
    assert "gres/gpu:h200=2" in row["AllocTRES"].split(","), row


def test_npu_job_lands_on_the_npu_node(lab: Lab) -> None:
    job = lab.sbatch("--gres=npu:4", "-t", "2", wrap="true")
    info = lab.wait_job_state(job, "COMPLETED")
    assert info["NodeList"] == "npu-1", info


def test_sacct_dump_of_an_array_and_steps_matches_the_sample_and_rlsched_reads_it(
        lab: Lab, rlsched_cli: Path, tmp_path: Path) -> None:
    # The window starts at the next whole second, so jobs of earlier tests (ended before it) are not in the dump.
    next_second = int(time.time()) + 1
    time.sleep(next_second - time.time())
    window_start = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(next_second))
    array = lab.sbatch("--array=0-2", "-J", "sweep", "-p", "a100", "--gres=gpu:a100:1", "-t", "2", wrap="sleep 1")
    steps = lab.sbatch("-J", "steps", "-p", "h200", "--gres=gpu:h200:1", "-t", "3",
                       script="#!/bin/bash\nsrun sleep 1\nsrun true\n")
    tasks = [f"{array}_{i}" for i in range(3)]
    lab.wait_accounted([*tasks, steps])
    dump = lab.sacct_dump(tmp_path / "sacct.txt", starttime=window_start, expect=[*tasks, steps])
    lines = dump.read_text().splitlines()
    assert lines[0] == SACCT_HEADER == SAMPLE.read_text().splitlines()[0]
    fields = SACCT_HEADER.split("|")
    assert all(len(ln.split("|")) == len(fields) for ln in lines), "a record has a different field count"
    rows = [dict(zip(fields, ln.split("|"))) for ln in lines[1:]]
    by_jobid = {r["JobID"]: r for r in rows}
    for i in range(3):
        task = by_jobid.get(f"{array}_{i}")
        assert task is not None, f"array task {array}_{i} missing from the dump:\n{dump.read_text()}"
        assert task["State"] == "COMPLETED" and "gres/gpu:a100=1" in task["AllocTRES"], task
        assert f"{array}_{i}.batch" in by_jobid
    for step in ("batch", "0", "1"):
        assert f"{steps}.{step}" in by_jobid, f"step {steps}.{step} missing from the dump:\n{dump.read_text()}"
    assert by_jobid[f"{steps}.0"]["JobName"] == "sleep"
    assert all(r["JobIDRaw"] for r in rows)

    outcomes = tmp_path / "jobs.csv"
    cp = subprocess.run([str(rlsched_cli), "simulate", "--trace", str(dump), "--cluster", str(lab.conf_path),
                         "--policy", "fcfs", "--json", str(tmp_path / "report.json"), "--outcomes", str(outcomes)],
                        capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, f"rlsched simulate failed:\n{cp.stdout}\n{cp.stderr}"
    report = json.loads((tmp_path / "report.json").read_text())["report"]
    assert report["skipped"] == 0, f"skipped records: {report['reasons']}"
    assert report["records"] == len(rows)
    read_ids = {r["id"] for r in csv.DictReader(outcomes.open())}
    array_raw_ids = {by_jobid[t]["JobIDRaw"] for t in tasks}
    assert {*array_raw_ids, str(steps)} <= read_ids, f"jobs read: {sorted(read_ids)}"


def test_sprio_shows_the_multifactor_columns_for_pending_jobs(lab: Lab) -> None:
    blocker = lab.sbatch("-p", "h200", "--gres=gpu:h200:4", "-t", "5", wrap="sleep 300")
    try:
        lab.wait_job_state(blocker, "RUNNING")
        pending = [lab.sbatch("-p", "h200", "--gres=gpu:h200:4", "-t", "5", wrap="true") for _ in range(2)]
        header = lab.run("sprio").stdout.splitlines()[0].split()
        assert header == ["JOBID", "PARTITION", "PRIORITY", "SITE", "AGE", "FAIRSHARE", "JOBSIZE", "PARTITION",
                          "QOS"], header
        rows = {int(r["id"]): r for r in lab.sprio()}
        assert set(pending) <= set(rows), f"sprio lists {sorted(rows)}, expected {pending}"
        for job in pending:
            r = rows[job]
            # Weights of lab.py: partition factor 1 x 1000, QOS normal (100 of max 1000) x 10000, no site factor.
            assert (r["partition_prio"], r["qos"], r["site"]) == ("1000", "1000", "0"), r
            parts = sum(int(r[k]) for k in ("site", "age", "fairshare", "jobsize", "partition_prio", "qos"))
            assert abs(int(r["priority"]) - parts) <= 6, f"priority is not the sum of the factors: {r}"
    finally:
        lab.run("scancel", "-u", "root")


def test_teardown_leaves_no_process_behind() -> None:
    lab = Lab()
    lab.start()
    try:
        job = lab.sbatch("-p", "a100", script="#!/bin/bash\nsrun sleep 300 &\nsleep 300\n")
        lab.wait_job_state(job, "RUNNING")
        lab.wait_for(lambda: any("slurmstepd" in process_name(p) for p in marked_pids(lab.marker)), 30,
                     "the job's slurmstepd")
        started = {p: process_name(p) for p in [*lab.pids.values(), *marked_pids(lab.marker)]}
    finally:
        lab.stop()
    alive = {p: n for p, n in started.items() if Path(f"/proc/{p}").exists() and process_name(p) == n}
    assert not alive, f"still running after stop(): {alive}"
    assert not marked_pids(lab.marker)


def crashing_mariadbd(lab: Lab, crashes: int) -> None:
    """Puts a mariadbd in front of the real one that dies of SIGSEGV on its first `crashes` starts, as MariaDB
    10.11 did once under slurmdbd's schema queries."""
    real = lab.programs["mariadbd"]
    lab.root.mkdir(parents=True, exist_ok=True)
    count = lab.root / "mariadbd.starts"
    wrapper = lab.root / "mariadbd-crashing"
    wrapper.write_text(f"""#!/bin/sh
n=$(cat {count} 2>/dev/null || echo 0)
echo $((n + 1)) > {count}
if [ "$n" -lt {crashes} ]; then kill -SEGV $$; fi
exec {real} "$@"
""")
    wrapper.chmod(0o755)
    lab.programs["mariadbd"] = str(wrapper)


def test_a_mariadb_crash_at_start_up_is_survived_once_on_a_fresh_data_folder() -> None:
    lab = Lab()
    crashing_mariadbd(lab, crashes=1)
    try:
        lab.start()
        assert lab.database_restarts == 1
        assert (lab.root / "mariadbd.starts").read_text().strip() == "2"
        assert lab.node_states() == {n.name: "idle" for n in NODES}
        assert CLUSTER_NAME in lab.run("sacctmgr", "-n", "-P", "show", "cluster", "format=cluster").stdout.split()
    finally:
        lab.stop()


def test_a_second_mariadb_crash_fails_the_start_and_leaves_nothing_running() -> None:
    lab = Lab()
    crashing_mariadbd(lab, crashes=2)
    try:
        try:
            lab.start()
        except LabError as e:
            assert "mariadbd exited with status -11" in str(e), e
        else:
            raise AssertionError("start() succeeded although MariaDB crashed twice")
        assert lab.database_restarts == 1
        assert not marked_pids(lab.marker)
    finally:
        lab.stop()
