"""A benchmark, run by bench/slurm_overhead (not by ctest: it times things): what the rlsched plugins cost
slurmctld, measured in a real one (the release build's plugins; RLSCHED_PLUGIN_DIR):

- submitting 2,000 jobs with sbatch is at most 10% slower with both plugins loaded than without them, measured in
  the same run on the same cluster, slurmctld restarted between the two configurations;
- with 10,000 pending jobs, site_factor_p_update (which runs holding the job write lock) takes at most 10 ms, as
  the plugin logs it at each decay cycle.

Like test_plugins.py this depends on the plugin build and fails, never skips, when a plugin is missing.
"""

from __future__ import annotations

import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import plugin_helpers as ph
import rlsched_plugins
from conftest import start_lab
from lab import Lab

SUBMISSIONS = 2000
CHUNK = 500  # submissions per timed chunk; chunks alternate B A A B ... so that queue growth and drift cancel out
PENDING = 10000
MAX_SLOWDOWN = 1.10
MAX_UPDATE_MS = 10.0
# A mix of what users submit: typeless GPU requests (job_submit/rlsched considers them), typed ones, CPU-only jobs.
SHAPES = [["--gres=gpu:1", "-t", "30"], ["--gres=gpu:2", "-t", "120"], ["--gres=gpu:a100:1", "-t", "10"],
          ["-c", "2", "-t", "60"]]
# A partition that is down: jobs queued there stay pending (PartitionDown), whichever configuration runs, and are
# scored at submit (site_factor_p_set) and at each decay cycle. (Held jobs would skip the site factor altogether.)
PARKED = "PartitionName=parked Nodes=h200-1,a100-1,npu-1 MaxTime=INFINITE State=DOWN"


@pytest.fixture(scope="module")
def lab(request: pytest.FixtureRequest, plugin_dirs: list[str], rlsched_cli: Path,
        tmp_path_factory: pytest.TempPathFactory) -> Lab:
    """A lab that starts without the plugins; rlsched.yaml (enforce, a trained model) is ready for when they load."""
    rlsched_plugins.find_plugins(plugin_dirs)
    # The model an admin would run (bench/slurm_overhead passes the shipped default), else a tiny trained one.
    shipped = os.environ.get("RLSCHED_BENCH_MODEL")
    model = Path(shipped) if shipped else rlsched_plugins.train_model(rlsched_cli, tmp_path_factory.mktemp("model"))

    def prepare(lab: Lab) -> None:
        ph.write_config(lab, model=ph.copy_model(model, lab.root / "models" / "policy.pt"))
    return start_lab(request, "test_overhead.lab", prepare=prepare, plugin_dirs=plugin_dirs, extra_conf=[PARKED],
                     daemon_env=ph.openblas_env())


def load_plugins(lab: Lab, on: bool) -> None:
    """Restarts slurmctld with or without the plugins. Both run at debug level (the update line is at debug level
    when it takes under 5 ms), so that logging costs the same in both."""
    settings = ph.plugin_settings(ph.config_path(lab))
    if not on:
        settings = {k: None for k in settings}
    settings["SlurmctldDebug"] = "debug"
    lab.restart_slurmctld(settings=settings, wait_nodes=False)  # the jobs here never run
    if on:
        assert lab.log_lines(r"site_factor/rlsched: loaded, mode enforce, scoring with model:"), \
            lab.log_tails("slurmctld")


def plugins_loaded(lab: Lab) -> bool:
    return lab.settings_override.get("PrioritySiteFactorPlugin") is not None


def submit(lab: Lab, count: int, first: int, extra: list[str]) -> float:
    """Submits count jobs one after the other (shapes in turn) and returns the seconds it took."""
    t0 = time.monotonic()
    for i in range(first, first + count):
        lab.sbatch(*extra, *SHAPES[i % len(SHAPES)], wrap="true")
    return time.monotonic() - t0


def test_sbatch_is_at_most_10_percent_slower_with_the_plugins(lab: Lab) -> None:
    pattern = "BAAB" * (SUBMISSIONS // CHUNK // 2)  # A: without plugins, B: with them (loaded at the end)
    seconds: dict[str, list[float]] = {"A": [], "B": []}
    for n, which in enumerate(pattern):
        if plugins_loaded(lab) != (which == "B") or n == 0:
            load_plugins(lab, on=(which == "B"))
        seconds[which].append(submit(lab, CHUNK, n * CHUNK, ["-p", "parked"]))
    without, with_ = sum(seconds["A"]), sum(seconds["B"])
    per_job = f"{1000 * without / SUBMISSIONS:.2f} ms/job without, {1000 * with_ / SUBMISSIONS:.2f} ms/job with"
    print(f"\nsbatch x {SUBMISSIONS} each: {without:.1f} s without the plugins, {with_:.1f} s with them "
          f"({per_job}; ratio {with_ / without:.3f}); chunks without {[round(t, 2) for t in seconds['A']]}, "
          f"with {[round(t, 2) for t in seconds['B']]}")
    assert with_ <= MAX_SLOWDOWN * without, (
        f"sbatch with the plugins took {with_ / without:.2f}x as long ({per_job}); chunk medians "
        f"{statistics.median(seconds['A']):.2f} s without, {statistics.median(seconds['B']):.2f} s with")


def test_update_with_10000_pending_jobs_takes_at_most_10_ms(lab: Lab) -> None:
    if not plugins_loaded(lab):
        load_plugins(lab, on=True)
    pending = sum(1 for r in lab.squeue() if r["state"] == "PENDING")
    offset = lab.log_size()
    with ThreadPoolExecutor(max_workers=4) as pool:  # fast: what is timed here is the update, not sbatch
        list(pool.map(lambda i: lab.sbatch("-p", "parked", *SHAPES[i % len(SHAPES)], wrap="true"),
                      range(PENDING - pending)))
    # The first cycle over the full queue also grows the plugin's buffers once; the second is the steady state.
    first = ph.wait_for_update(lab, offset, jobs=PENDING, timeout=90)
    second = ph.wait_for_update(lab, offset, jobs=PENDING, timeout=90, after=first)
    print(f"\nfirst cycle:  {first.line}\nsecond cycle: {second.line}")
    assert second.scorer.startswith("model:"), second.line
    assert second.ms <= MAX_UPDATE_MS, (
        f"site_factor_p_update took {second.ms} ms for {second.jobs} pending jobs (copy {second.copy_ms} ms; "
        f"first cycle {first.ms} ms): {second.line}")
