"""rlsched's Slurm plugins inside a real slurmctld: site_factor/rlsched (the learned rank as the SITE factor of
multifactor priority) and job_submit/rlsched (typeless GPU requests mapped to a partition and type).

Depends on the plugin build: RLSCHED_PLUGIN_DIR names the folder(s) with site_factor_rlsched.so and
job_submit_rlsched.so (ctest sets it, and registers this module only when the build has plugins). A missing plugin
fails every test here; it never skips.

Site factors change at the multifactor decay cycle, at most once a minute (PriorityCalcPeriod=1 is Slurm's least).
Three tests read them, each under its own rlsched.yaml (fallback sjf, a trained model, shadow mode), so each has its
own lab cluster, and their queues are submitted together when the module starts: one wait of at most a minute then
covers all three. The start-up tests (corrupt model, unsafe config) restart slurmctld and come last.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

import plugin_helpers as ph
import rlsched_plugins
from lab import Lab

SCALE = rlsched_plugins.SCORE_SCALE  # score_scale of the test config: site factors in [0, SCALE]


@dataclass
class RankedQueue:
    """Pending jobs behind a blocker job, submitted after log offset `offset`."""
    lab: Lab
    blocker: int
    jobs: list[int]
    offset: int


@pytest.fixture(scope="module")
def model(rlsched_cli: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small policy trained by `rlsched train` for these tests."""
    return rlsched_plugins.train_model(rlsched_cli, tmp_path_factory.mktemp("model"))


@pytest.fixture(scope="module")
def lab(request: pytest.FixtureRequest, plugin_dirs: list[str]) -> Lab:
    """Enforce mode, no model: the fallback sjf scores (shortest time limit first)."""
    return ph.plugin_lab(request, plugin_dirs, "test_plugins.lab")


@pytest.fixture(scope="module")
def model_lab(request: pytest.FixtureRequest, plugin_dirs: list[str], model: Path) -> Lab:
    """Enforce mode with the trained model."""
    return ph.plugin_lab(request, plugin_dirs, "test_plugins.model_lab", model=model)


@pytest.fixture(scope="module")
def shadow_lab(request: pytest.FixtureRequest, plugin_dirs: list[str]) -> Lab:
    return ph.plugin_lab(request, plugin_dirs, "test_plugins.shadow_lab", mode="shadow")


def ranked_queue(lab: Lab, partition: str, gres: str, shapes: list[list[str]]) -> RankedQueue:
    """A job holding the partition's accelerators, then one pending job per shape needing all of them."""
    blocker = ph.occupy(lab, partition, gres)
    offset = lab.log_size()
    jobs = [lab.sbatch("-p", partition, f"--gres={gres}", *shape, wrap="sleep 3") for shape in shapes]
    return RankedQueue(lab, blocker, jobs, offset)


SJF_LIMITS = [40, 10, 30, 20]  # minutes


@pytest.fixture(scope="module")
def sjf_queue(lab: Lab) -> RankedQueue:
    return ranked_queue(lab, "npu", "npu:8", [["-t", str(t)] for t in SJF_LIMITS])


@pytest.fixture(scope="module")
def learned_queue(model_lab: Lab) -> RankedQueue:
    # Different sizes and time limits, so that the policy has something to rank.
    shapes = [["-c", "1", "-t", "120"], ["-c", "8", "-t", "5"], ["-c", "2", "-t", "45"], ["-c", "4", "-t", "15"]]
    return ranked_queue(model_lab, "h200", "gpu:h200:4", shapes)


@pytest.fixture(scope="module")
def shadow_queue(shadow_lab: Lab) -> RankedQueue:
    return ranked_queue(shadow_lab, "h200", "gpu:h200:4", [["-t", str(t)] for t in (30, 10, 20)])


@pytest.fixture(scope="module", autouse=True)
def queues_submitted_together(sjf_queue: RankedQueue, learned_queue: RankedQueue, shadow_queue: RankedQueue) -> None:
    """Submits the three ranked queues before the first test, so that their decay cycles overlap."""


def site_factors(lab: Lab, jobs: list[int]) -> dict[int, int]:
    rows = {int(r["id"]): r for r in lab.sprio()}
    missing = [j for j in jobs if j not in rows]
    assert not missing, f"sprio does not list jobs {missing}: {lab.run('sprio').stdout}"
    return {j: int(rows[j]["site"]) for j in jobs}


def cancel(lab: Lab, *jobs: int) -> None:
    lab.run("scancel", *map(str, jobs), check=False)


# ---- job_submit/rlsched ---------------------------------------------------------------------------------------

def test_both_plugins_load_with_the_config(lab: Lab) -> None:
    config = ph.config_path(lab)
    assert lab.log_lines(rf"job_submit/rlsched: loaded, config {re.escape(str(config))}$"), lab.log_tails("slurmctld")
    assert lab.log_lines(r"site_factor/rlsched: loaded, mode enforce, scoring with sjf"), lab.log_tails("slurmctld")


def test_typeless_gpu_job_is_mapped_to_the_faster_idle_type(lab: Lab) -> None:
    job = lab.sbatch("-J", "any-gpu", "--gres=gpu:2", "-t", "10", wrap="sleep 2")
    info = lab.job(job)
    assert info["TresPerNode"] == lab.tres("gpu:h200:2"), info
    assert info["AdminComment"].startswith("rlsched: gpu:2 -> gpu:h200:2"), info
    assert f"in partition {info['Partition']}" in info["AdminComment"], info
    assert lab.wait_job_state(job, "COMPLETED")["NodeList"] == "h200-1"


def test_typeless_gpu_job_goes_to_a100_while_h200_is_busy(lab: Lab) -> None:
    blocker = ph.occupy(lab, "h200", "gpu:h200:4", minutes=60)
    try:
        # The a100 first; the faster h200 stays in the set (late binding: should it free first, the job gains), so
        # the request is a partition list with a typeless GRES, and Slurm starts it on the idle a100.
        job = lab.sbatch("-J", "any-gpu-busy", "--gres=gpu:2", "-t", "10", wrap="sleep 2")
        info = lab.job(job)
        # Partition is the list while the job waits, the one it runs in once started (it may start at once).
        assert info["Partition"] in ("a100,h200", "a100"), f"h200-1's 4 GPUs are all allocated: {info['AdminComment']}"
        assert info["TresPerNode"] == lab.tres("gpu:2"), info
        assert "next best gpu:h200" in info["AdminComment"] and "may also start in h200" in info["AdminComment"], info
        assert lab.wait_job_state(job, "COMPLETED")["NodeList"] == "a100-1"
        assert lab.log_lines(r"job_submit/rlsched: uid 0 job any-gpu-busy: rlsched: gpu:2 -> gpu:2: gpu:a100 in "
                             r"partition a100")
    finally:
        cancel(lab, blocker)


def test_job_class_speeds_decide_the_type(lab: Lab) -> None:
    """The job name selects the class (rlsched.yaml job_classes); its speeds, not the types' defaults, decide: the
    idle a100 (10 min) first, the h200 (10 / 0.9 = 11.1 min, within the default slack of 1.3) after it. By the types'
    default speeds the h200 (2x) would lead alone."""
    job = lab.sbatch("-J", "membound-embed", "--gres=gpu:2", "-t", "10", wrap="sleep 2")
    info = lab.job(job)
    assert info["Partition"] in ("a100,h200", "a100", "h200"), info  # the list while pending, then where it runs
    assert info["TresPerNode"] == lab.tres("gpu:2"), info
    assert info["AdminComment"].startswith("rlsched: gpu:2 -> gpu:2 (class membound): gpu:a100 in partition a100:"), info
    assert "may also start in h200" in info["AdminComment"], info
    assert lab.wait_job_state(job, "COMPLETED")["NodeList"] in ("a100-1", "h200-1")


def test_plain_gpu_job_never_lands_on_an_npu(lab: Lab) -> None:
    """gres_equivalence [[gpu, npu]] with the GPUs taken: a plain job keeps gpu, a job of a gres_portable class may
    go to the idle NPUs (rlsched.yaml: job_classes[].gres_portable)."""
    portable = {"name": "portable", "match": {"job_name": "xpu-*"}, "speeds": {"h200": 2.0, "a100": 1.0, "910b": 0.8},
                "gres_portable": True}
    ph.write_config(lab, gres_equivalence=[["gpu", "npu"]], job_classes=rlsched_plugins.LAB_JOB_CLASSES + [portable])
    jobs = [ph.occupy(lab, "h200", "gpu:h200:4", minutes=600), ph.occupy(lab, "a100", "gpu:a100:4", minutes=600)]
    try:
        time.sleep(3)  # the config is re-read at most once a second; the cached queue lives 2 s
        jobs.append(lab.sbatch("-J", "cuda-train", "--gres=gpu:2", "-t", "10", wrap="sleep 2"))
        plain = lab.job(jobs[-1])
        assert plain["TresPerNode"].startswith(lab.tres("gpu:")), plain
        assert "npu" not in plain["Partition"], plain
        jobs.append(lab.sbatch("-J", "xpu-train", "--gres=gpu:2", "-t", "10", wrap="sleep 2"))
        moved = lab.job(jobs[-1])
        assert moved["TresPerNode"] == lab.tres("npu:910b:2"), moved
        assert moved["Partition"] == "npu", moved
    finally:
        cancel(lab, *jobs)  # the site factor tests count this lab's pending jobs
        ph.write_config(lab)


def test_impossible_request_is_refused_by_sbatch_with_the_plugins_message(lab: Lab) -> None:
    message = lab.sbatch_refused("-J", "too-big", "--gres=gpu:16", wrap="true")
    assert "rlsched: cannot place gpu:16: no partition has 16 gpu (any type); most is 4 gpu:h200" in message, message
    assert lab.log_lines(r"job_submit/rlsched: uid 0 job too-big rejected: rlsched: cannot place gpu:16")


# ---- site_factor/rlsched ----------------------------------------------------------------------------------------

def test_site_factor_in_sprio_is_the_rank_share_the_core_computes(sjf_queue: RankedQueue) -> None:
    # sjf: a shorter time limit scores higher. With n pending jobs the core gives each
    # floor(SCALE * (jobs scoring strictly lower) / n) (rlsched/site_factor.h).
    q = sjf_queue
    update = ph.wait_for_update(q.lab, q.offset, jobs=len(q.jobs))
    assert update.scorer == "sjf", update.line
    expected = {j: SCALE * sum(other > t for other in SJF_LIMITS) // len(SJF_LIMITS)
                for j, t in zip(q.jobs, SJF_LIMITS)}
    assert site_factors(q.lab, q.jobs) == expected, q.lab.run("sprio").stdout
    cancel(q.lab, q.blocker, *q.jobs)


def test_pending_jobs_start_in_the_learned_order(learned_queue: RankedQueue) -> None:
    q = learned_queue
    # The jobs start within ~15 s of the blocker's end: act right after a cycle, so that none re-ranks them meanwhile.
    update = ph.recent_update(q.lab, q.offset, ph.wait_for_update(q.lab, q.offset, jobs=len(q.jobs)))
    assert update.scorer.startswith("model:"), update.line
    site = site_factors(q.lab, q.jobs)
    assert len(set(site.values())) > 1, f"the model ranks every job alike, the order would prove nothing: {site}"
    priority = {int(r["id"]): int(r["priority"]) for r in q.lab.sprio()}
    expected = sorted(q.jobs, key=lambda j: (-priority[j], j))  # Slurm: higher priority first, then lower job id

    cancel(q.lab, q.blocker)
    q.lab.wait_accounted(q.jobs, timeout=120)
    starts = {int(r["JobIDRaw"]): r["Start"]
              for r in q.lab.sacct("-X", "-j", ",".join(map(str, q.jobs)), "--format=JobIDRaw,Start")}
    started = sorted(q.jobs, key=lambda j: (starts[j], j))
    assert started == expected, f"start order {started}, expected {expected}; SITE {site}; starts {starts}"


def test_shadow_mode_leaves_priorities_unchanged(shadow_queue: RankedQueue) -> None:
    q = shadow_queue
    update = ph.wait_for_update(q.lab, q.offset, jobs=len(q.jobs))
    assert update.shadow and update.changed > 0, f"shadow mode should report what it would change: {update.line}"
    rows = {int(r["id"]): r for r in q.lab.sprio()}
    assert [rows[j]["site"] for j in q.jobs] == ["0"] * len(q.jobs), rows
    assert len({rows[j]["priority"] for j in q.jobs}) == 1, f"priorities differ in shadow mode: {rows}"
    cancel(q.lab, q.blocker, *q.jobs)


def test_corrupt_model_swapped_in_at_runtime_keeps_the_last_good_model(model_lab: Lab, model: Path,
                                                                        tmp_path: Path) -> None:
    lab = model_lab
    path = ph.installed_model(lab, model)
    lab.wait_for(lambda: lab.log_lines(rf"site_factor/rlsched: loaded model {re.escape(str(path))}"), 30,
                 "the good model to be loaded")
    offset = lab.log_size()
    ph.copy_model(ph.flip_weight_byte(model, tmp_path / "flipped.pt"), path)
    lab.wait_for(lambda: lab.log_lines_since(offset, r"site_factor/rlsched: keeping previous model"), 30,
                 "the reload check (every 2 s) to refuse the corrupt model")
    job = lab.sbatch("-p", "a100", "--gres=gpu:a100:1", "-t", "2", wrap="true")  # scored at submit
    lab.wait_job_state(job, "COMPLETED")
    time.sleep(4)  # two more reload checks: the refusal is not logged again
    refusals = lab.log_lines_since(offset, r"keeping previous model")
    assert len(refusals) == 1 and "sha256" in refusals[0], refusals
    # The engine's counters, logged when slurmctld stops: every scoring call was served by the model.
    lab.restart_slurmctld()
    counters = lab.log_lines_since(offset, r"site_factor/rlsched: unloading;")
    assert counters and re.search(r"\d+ scoring calls, 0 served by the fallback, 1 model loads, 1 refused",
                                  counters[0]), counters


def test_corrupt_model_at_startup_leaves_slurmctld_scheduling_with_the_fallback(lab: Lab) -> None:
    garbage = lab.root / "models" / "garbage.pt"
    garbage.parent.mkdir(parents=True, exist_ok=True)
    garbage.write_bytes(b"this is not a TorchScript archive\n" * 100)
    garbage.chmod(0o600)
    ph.write_config(lab, model=garbage)
    offset = lab.log_size()
    lab.restart_slurmctld()
    refusals = lab.log_lines_since(offset, rf"site_factor/rlsched: serving fallback 'sjf': {re.escape(str(garbage))}")
    assert len(refusals) == 1, lab.log_lines_since(offset, "rlsched")
    assert lab.log_lines_since(offset, r"site_factor/rlsched: loaded, mode enforce, scoring with sjf")
    job = lab.sbatch("-p", "a100", "--gres=gpu:a100:1", "-t", "2", wrap="true")
    lab.wait_job_state(job, "COMPLETED")
    assert ph.slurmctld_alive(lab)


def test_config_writable_by_others_is_refused(lab: Lab) -> None:
    config = ph.write_config(lab)
    config.chmod(0o666)
    offset = lab.log_size()
    lab.restart_slurmctld()
    refused = lab.log_lines_since(offset, r"site_factor/rlsched: loading the config failed.*writable by group or others")
    assert refused and str(config) in refused[0], lab.log_lines_since(offset, "rlsched")
    assert not lab.log_lines_since(offset, r"site_factor/rlsched: loaded"), "the plugin used a config others can write"
    job = lab.sbatch("--gres=gpu:1", "-t", "2", wrap="true")
    assert lab.job(job)["TresPerNode"] == lab.tres("gpu:1"), "job_submit/rlsched mapped a job with an unsafe config"
    assert ph.slurmctld_alive(lab)
