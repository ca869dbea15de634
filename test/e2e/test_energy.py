"""Energy-aware deferral inside a real slurmctld (docs/energy.md): rlsched.yaml's energy section with a price series
whose windows are minutes long. job_submit/rlsched gives a deferrable job submitted in an expensive window the begin
time of the next cheap one (squeue: reason BeginTime) and says why in its AdminComment; a normal job submitted beside
it starts at once; a deferrable job whose budget ends before the cheap window starts in the expensive one.

Depends on the plugin build (RLSCHED_PLUGIN_DIR), like test_plugins.py; fails, never skips, without it. The lab's
QOS low and high stand for two deferrable groups with different budgets; about three minutes in all.
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import pytest

import plugin_helpers as ph
from lab import Lab

STEP = 30            # seconds between the price series' rows
EXPENSIVE, CHEAP = 0.50, 0.10


@pytest.fixture(scope="module")
def lab(request: pytest.FixtureRequest, plugin_dirs: list[str]) -> Lab:
    return ph.plugin_lab(request, plugin_dirs, "test_energy.lab")


def write_prices(path: Path, cheap_from: int, cheap_to: int) -> None:
    """A price series every STEP seconds from ten minutes ago to half an hour ahead: cheap in [cheap_from, cheap_to),
    expensive elsewhere. 0600, as the plugins refuse a schedule others could write."""
    first = (cheap_from // STEP) * STEP - 600
    rows = ["timestamp,eur_per_kwh"]
    for t in range(first, cheap_from + 1800, STEP):
        rows.append(f"{t},{CHEAP if cheap_from <= t < cheap_to else EXPENSIVE}")
    path.write_text("\n".join(rows) + "\n")
    path.chmod(0o600)


def local_time(epoch: int) -> str:
    """As scontrol prints times (slurmctld runs in this process's time zone)."""
    return datetime.fromtimestamp(epoch).strftime("%Y-%m-%dT%H:%M:%S")


def epoch_of(text: str) -> int:
    return int(datetime.strptime(text, "%Y-%m-%dT%H:%M:%S").timestamp())


def test_deferrable_job_waits_for_the_cheap_window_and_others_do_not(lab: Lab) -> None:
    now = int(time.time())
    cheap_from = (now // STEP + 3) * STEP  # 60-90 s ahead, on a row of the series
    cheap_to = cheap_from + 4 * STEP
    prices = lab.etc / "prices.csv"
    write_prices(prices, cheap_from, cheap_to)
    ph.write_config(lab, energy={
        "mode": "enforce",
        "power": {"accelerators": {"h200": {"busy_w": 700, "idle_w": 100}}, "node": {"busy_w": 400, "idle_w": 150}},
        "price": {"csv": str(prices)},
        "deferrable": [{"qos": ["low"], "max_deferral": "10m"}, {"qos": ["high"], "max_deferral": "20s"}],
    })
    time.sleep(1.2)  # the plugins look at rlsched.yaml's mtime at most once a second

    deferred = lab.sbatch("-J", "energy-sweep", "--qos=low", "-t", "1", wrap="sleep 5")
    normal = lab.sbatch("-J", "energy-normal", "--qos=normal", "-t", "1", wrap="sleep 5")
    short_budget = lab.sbatch("-J", "energy-short-budget", "--qos=high", "-t", "1", wrap="sleep 5")

    job = lab.job(deferred)
    assert job["JobState"] == "PENDING", job
    assert job["Reason"] == "BeginTime", job
    assert job["BeginTime"] == local_time(cheap_from), (job["BeginTime"], local_time(cheap_from))
    assert "deferred to" in job.get("AdminComment", ""), job
    log = lab.log_lines(rf"job_submit/rlsched: uid \d+ job energy-sweep: rlsched: deferred to")
    assert log, lab.log_tails("slurmctld")

    for other in (normal, short_budget):
        started = lab.wait_job_state(other, {"RUNNING", "COMPLETING", "COMPLETED"}, timeout=30)
        assert epoch_of(started["StartTime"]) < cheap_from, started  # in the expensive window
        assert "deferred" not in started.get("AdminComment", ""), started

    ran = lab.wait_job_state(deferred, {"RUNNING", "COMPLETING", "COMPLETED"},
                             timeout=cheap_to - time.time() + 10)
    start = epoch_of(ran["StartTime"])
    assert cheap_from <= start < cheap_to, (ran["StartTime"], local_time(cheap_from), local_time(cheap_to))


def test_shadow_mode_only_says_when_it_would_have_deferred(lab: Lab) -> None:
    now = int(time.time())
    cheap_from = (now // STEP + 4) * STEP
    prices = lab.etc / "prices.csv"
    write_prices(prices, cheap_from, cheap_from + 4 * STEP)
    ph.write_config(lab, energy={
        "mode": "shadow",
        "power": {"node": {"busy_w": 400, "idle_w": 150}},
        "price": {"csv": str(prices)},
        "deferrable": {"qos": ["low"], "max_deferral": "10m"},
    })
    time.sleep(1.2)
    job_id = lab.sbatch("-J", "energy-shadow", "--qos=low", "-t", "1", wrap="sleep 2")
    started = lab.wait_job_state(job_id, {"RUNNING", "COMPLETING", "COMPLETED"}, timeout=30)
    assert epoch_of(started["StartTime"]) < cheap_from, started
    assert "energy shadow mode, not applied): would be deferred to" in started.get("AdminComment", ""), started
