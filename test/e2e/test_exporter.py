"""rlsched-exporter on the lab cluster, scraped by a real Prometheus (test/e2e/prometheus.py): after a known workload
the PromQL answers match what squeue says; every dashboard panel's query returns a series; with slurmctld stopped the
exporter keeps serving slurm_up 0, and recovers when slurmctld is back.

The exporter polls every second and Prometheus scrapes every second, so each expectation is awaited (a few seconds at
most) rather than read once.
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from lab import Lab, free_port, tail, wait_for
from prometheus import Prometheus

REPO = Path(__file__).resolve().parents[2]
MONITORING = REPO / "slurm_conf_examples" / "monitoring"


# A health record as the site_factor plugin writes it (core/src/capi/health.cpp, tested in capi.health); this test
# loads no plugins, so it plays their part.
HEALTH_RECORD = {
    "schema": 1, "written_at": 0,
    "model": {"sha256": "0" * 64, "path": "/etc/slurm/rlsched/model.pt", "loaded_at": 0, "fallback_active": False},
    "fallbacks": {"model_load_failed": 1}, "faults": {"score_failed": 0}, "preemptions": 2, "grace_seconds": 80,
    "lost_accelerator_hours": 0.5,
    "placements": [{"accelerator_type": "h200", "reason": "earliest_completion", "count": 3}],
    "site_factor_update_seconds": {"bounds": [0.001, 0.01], "counts": [5, 1, 0], "sum": 0.004},
    "rank_disagreement": {"share": 0.25, "pairs": 6, "jobs": 4, "mode": "shadow"},
    "energy": {"deferred": 2, "would_defer": 0, "sunk": 5, "boosted": 1},
}


LOGS: list[Path] = []  # the exporter's and Prometheus's logs, quoted when an expectation fails


def log_tails() -> str:
    return "\n".join(f"--- {log} ---\n{tail(log, 15)}" for log in LOGS)


def exporter_binary() -> str:
    binary = os.environ.get("RLSCHED_EXPORTER", str(REPO / "build/release/exporter/rlsched-exporter"))
    if not os.access(binary, os.X_OK):
        pytest.fail(f"rlsched-exporter not found at {binary}: build it or set RLSCHED_EXPORTER")
    return binary


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


@contextmanager
def running_exporter(lab: Lab, root: Path, health_dir: Path) -> Iterator[str]:
    """rlsched-exporter polling the lab every second and reading health_dir, started in `root`; its host:port."""
    address = f"127.0.0.1:{free_port()}"
    config = root / "rlsched-exporter.yaml"
    config.write_text(f"listen: {address}\npoll_interval: 1s\nslurm_conf: {lab.conf_path}\nhealth_dir: {health_dir}\n")
    log = root / "exporter.log"
    LOGS.append(log)
    with open(log, "wb") as out:
        proc = subprocess.Popen([exporter_binary(), "--config", str(config)], stdout=out, stderr=subprocess.STDOUT,
                                env=lab.env())
    try:
        wait_for(lambda: proc.poll() is None and "slurm_up 1" in scrape(address), 30, "the exporter's first poll",
                 on_timeout=lambda: tail(log))
        yield address
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def exporter(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("exporter")
    health = root / "health"
    health.mkdir()
    (health / "site_factor.json").write_text(json.dumps(HEALTH_RECORD))
    with running_exporter(lab, root, health) as address:
        yield address


@pytest.fixture(scope="module")
def prometheus(exporter: str, tmp_path_factory: pytest.TempPathFactory) -> Prometheus:
    server = Prometheus(tmp_path_factory.mktemp("prometheus"), [exporter],
                        rule_files=[MONITORING / "rlsched-alerts.yml"])
    LOGS.append(server.log)
    server.start()
    yield server
    server.stop()


def scrape(address: str) -> str:
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as r:
        return r.read().decode()


def await_value(prom: Prometheus, promql: str, expected: float, what: str, timeout: float = 45) -> None:
    last: list[object] = [None]

    def equal() -> bool:
        last[0] = prom.value(promql)
        return last[0] == expected
    try:
        wait_for(equal, timeout, what, interval=0.5)
    except Exception as e:  # noqa: BLE001 - say what Prometheus answered last
        raise AssertionError(f"{what}: {promql} = {last[0]}, expected {expected}\n{log_tails()}") from e


def allocated_by_type(lab: Lab) -> dict[str, int]:
    """Accelerators held by running jobs per type, from squeue's TRES per node (%b) and node count (%D)."""
    out = lab.run("squeue", "-h", "-t", "RUNNING", "-o", "%b|%D").stdout
    held: dict[str, int] = {}
    for line in out.splitlines():
        tres, nodes = line.split("|")
        for entry in tres.split(","):
            fields = entry.removeprefix("gres:").removeprefix("gres/").split(":")
            if len(fields) == 3:  # name:type:count
                held[fields[1]] = held.get(fields[1], 0) + int(fields[2]) * int(nodes)
    return held


# The workload: four short typed jobs that start and end, three long ones that hold accelerators of each type, and
# one that cannot start while the long h200 job holds one of the four H200s.
SHORT = [("h200", "gpu:h200:1")] * 2 + [("a100", "gpu:a100:1")] * 2
LONG = [("h200", "gpu:h200:1"), ("a100", "gpu:a100:3"), ("npu", "npu:910b:5")]
BLOCKED = ("h200", "gpu:h200:4")


def test_wait_histogram_and_allocated_accelerators_match_squeue(lab: Lab, prometheus: Prometheus) -> None:
    short = [lab.sbatch("-p", p, f"--gres={g}", "-t", "2", wrap="sleep 1") for p, g in SHORT]
    long = [lab.sbatch("-p", p, f"--gres={g}", "-t", "5", wrap="sleep 300") for p, g in LONG]
    for job in short:
        lab.wait_job_state(job, "COMPLETED", timeout=60)
    for job in long:
        lab.wait_job_state(job, "RUNNING", timeout=60)
    blocked = lab.sbatch("-p", BLOCKED[0], f"--gres={BLOCKED[1]}", "-t", "5", wrap="sleep 300")
    lab.wait_for(lambda: lab.squeue([blocked])[0]["reason"] == "Resources", 60, "the 4-H200 job to wait for Resources")
    started = [r for r in lab.squeue(short + long) if r["state"] in ("RUNNING", "COMPLETED")]
    assert len(started) == len(short) + len(long), lab.squeue()

    await_value(prometheus, "sum(slurm_job_wait_seconds_count)", len(started), "jobs whose wait was observed")
    # Per partition too: the histogram's labels are the jobs' own.
    for partition in ("h200", "a100", "npu"):
        n = sum(1 for r in started if r["partition"] == partition)
        await_value(prometheus, f'sum(slurm_job_wait_seconds_count{{partition="{partition}"}})', n,
                    f"waits observed in partition {partition}")

    expected = allocated_by_type(lab)
    assert expected == {"h200": 1, "a100": 3, "910b": 5}, expected  # what the workload holds, read from squeue
    for accel_type, count in expected.items():
        await_value(prometheus, f'slurm_accelerators_allocated{{accelerator_type="{accel_type}"}}', count,
                    f"allocated {accel_type}")
        total = {"h200": 4, "a100": 4, "910b": 8}[accel_type]  # lab.NODES
        await_value(prometheus, f'slurm_accelerators_idle{{accelerator_type="{accel_type}"}}', total - count,
                    f"idle {accel_type}")
    await_value(prometheus, "sum(slurm_jobs_running)", len(long), "running jobs")
    await_value(prometheus, 'sum(slurm_jobs_pending{partition="h200",accelerator_type="h200",reason="Resources"})', 1,
                "the blocked job pending")
    # 3 H200 idle but the waiting job asks for 4: not a job that fits, so no fragmentation is reported.
    await_value(prometheus, 'slurm_accelerators_idle_while_fitting_jobs_wait{accelerator_type="h200"}', 0,
                "h200 fragmentation")


def test_every_dashboard_panel_query_returns_a_series(lab: Lab, prometheus: Prometheus) -> None:
    dashboard = json.loads((MONITORING / "grafana-dashboard.json").read_text())
    exprs = [(p["title"], t["expr"]) for p in dashboard["panels"] for t in p.get("targets", [])]
    assert len(exprs) >= 8, exprs
    empty = []
    for title, expr in exprs:
        # Grafana's $__rate_interval and $partition variables, as the dashboard would fill them in.
        promql = expr.replace("$__rate_interval", "1m").replace("$partition", ".*")
        try:
            wait_for(lambda: prometheus.query(promql), 20, f"panel {title}", interval=1)
        except Exception:  # noqa: BLE001 - collect all, then report
            empty.append((title, promql))
    assert not empty, f"panels whose query returns no series: {empty}\n{log_tails()}"


def test_exporter_serves_slurm_up_0_while_slurmctld_is_down_and_recovers(
        lab: Lab, exporter: str, prometheus: Prometheus) -> None:
    lab.stop_slurmctld()
    try:
        wait_for(lambda: "slurm_up 0" in scrape(exporter), 60, "slurm_up 0 on /metrics", on_timeout=log_tails)
        await_value(prometheus, "slurm_up", 0, "slurm_up while slurmctld is down")
        assert "slurm_accelerators_total" in scrape(exporter)  # still serving the last poll's values
    finally:
        lab.start_slurmctld()
    wait_for(lambda: "slurm_up 1" in scrape(exporter), 60, "slurm_up 1 after slurmctld restarted", on_timeout=log_tails)
    await_value(prometheus, "slurm_up", 1, "slurm_up after slurmctld restarted")
