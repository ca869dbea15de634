"""A benchmark (run by hand, not by ctest: it times things): what rlsched-exporter costs slurmctld.

With PENDING jobs queued in a parked partition and the site_factor plugin scoring them at every decay cycle,
site_factor_p_update's time (the plugin's log line, under the job write lock) is read for CYCLES cycles without the
exporter, then CYCLES cycles with it polling every second (30 times the default interval), and the exporter's own
poll durations (slurm_exporter_poll_duration_seconds) are sampled meanwhile. Prints the numbers; asserts only that
the median update with the exporter is within NOISE of the median without it.

    RLSCHED_PLUGIN_DIR=build/release/plugin RLSCHED_EXPORTER=build/release/exporter/rlsched-exporter \\
      python3 -m pytest -s test/e2e/bench_exporter.py
"""

from __future__ import annotations

import statistics
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import plugin_helpers as ph
import rlsched_plugins
from lab import Lab, free_port, wait_for
from test_exporter import exporter_binary, scrape, stop

PENDING = 5000
CYCLES = 3
NOISE = 1.25  # a 25% band: the update's cycle-to-cycle spread on this shared 2-core machine is of that order
PARKED = "PartitionName=parked Nodes=h200-1,a100-1,npu-1 MaxTime=INFINITE State=DOWN"


@pytest.fixture(scope="module")
def lab(request: pytest.FixtureRequest, plugin_dirs: list[str], rlsched_cli: Path,
        tmp_path_factory: pytest.TempPathFactory) -> Lab:
    model = rlsched_plugins.train_model(rlsched_cli, tmp_path_factory.mktemp("model"))
    return ph.plugin_lab(request, plugin_dirs, "bench_exporter.lab", model=model, extra_conf=(PARKED,))


def updates(lab: Lab, since: int, count: int) -> list[float]:
    out: list[ph.Update] = []
    for _ in range(count):
        out.append(ph.wait_for_update(lab, since, jobs=PENDING, timeout=150, after=out[-1] if out else None))
    return [u.ms for u in out]


def test_site_factor_update_with_the_exporter_polling_stays_within_noise(lab: Lab, tmp_path: Path) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda i: lab.sbatch("-p", "parked", "--gres=gpu:1", "-t", "30", wrap="true"), range(PENDING)))
    offset = lab.log_size()
    ph.wait_for_update(lab, offset, jobs=PENDING, timeout=150)  # the first full cycle grows buffers once
    without = updates(lab, lab.log_size(), CYCLES)

    address = f"127.0.0.1:{free_port()}"
    config = tmp_path / "exporter.yaml"
    config.write_text(f"listen: {address}\npoll_interval: 1s\nslurm_conf: {lab.conf_path}\n")
    proc = subprocess.Popen([exporter_binary(), "--config", str(config)], env=lab.env())
    polls: list[float] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            try:
                for line in scrape(address).splitlines():
                    if line.startswith("slurm_exporter_poll_duration_seconds "):
                        polls.append(float(line.split()[1]))
            except OSError:
                pass
            time.sleep(1)
    sampler = threading.Thread(target=sample)
    try:
        wait_for(lambda: "slurm_up 1" in scrape(address), 60, "the exporter's first poll")
        sampler.start()
        with_ = updates(lab, lab.log_size(), CYCLES)
    finally:
        done.set()
        if sampler.is_alive():
            sampler.join()
        stop(proc)
    print(f"\nsite_factor_p_update with {PENDING} pending jobs, ms: without the exporter {without}, with it polling "
          f"every 1 s {with_}; medians {statistics.median(without):.2f} vs {statistics.median(with_):.2f}")
    if polls:
        print(f"exporter poll with {PENDING} pending jobs and 3 nodes: "
              f"median {1000 * statistics.median(polls):.1f} ms, max {1000 * max(polls):.1f} ms over {len(polls)} samples")
    assert statistics.median(with_) <= NOISE * statistics.median(without)
