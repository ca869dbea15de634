"""The README's first command, as a new user runs it: `scripts/demo --live` (the live part of scripts/demo) on the
build of this checkout, with the lab kept so that what the demo claims can be checked against slurmctld's own log
and the jobs' output. And the demo's own checks: given a config the plugins refuse, it must fail and say why.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "policy_models" / "default" / "policy.pt"


def run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RLSCHED_DEMO_")}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env)


def lab_folder() -> Path:
    """A fresh folder in /tmp (munged wants every folder above its socket open to all, unlike pytest's tmp_path)."""
    folder = Path(tempfile.mkdtemp(prefix="rlsched-demo-test-"))
    folder.chmod(0o755)
    return folder


@pytest.fixture(scope="module")
def demo(request: pytest.FixtureRequest) -> Iterator[tuple[subprocess.CompletedProcess, Path]]:
    lab = lab_folder()
    env_cmd = ["env", f"RLSCHED_DEMO_LAB={lab}", "bash", str(REPO / "scripts" / "demo"), "--live"]
    cp = run(env_cmd, timeout=540)
    yield cp, lab
    if request.session.testsfailed:
        print(f"\ndemo lab kept in {lab}")
    else:
        shutil.rmtree(lab, ignore_errors=True)


def slurmctld_log(lab: Path) -> str:
    return (lab / "log" / "slurmctld.log").read_text(errors="replace")


def test_the_demo_exits_0_and_reports_every_step_ok(demo: tuple[subprocess.CompletedProcess, Path]) -> None:
    cp, _ = demo
    out = cp.stdout + cp.stderr
    assert cp.returncode == 0, out[-6000:]
    for step in ("workload submitted", "plugins loaded rlsched.yaml", "typeless GPU jobs mapped",
                 "learned rank in sprio", "checkpoint-aware preemption"):
        assert re.search(rf"^  ok +{re.escape(step)}: ", out, re.M), f"step {step!r} not ok:\n{out[-4000:]}"
    assert "FAILED" not in out and "warning:" not in out, out[-4000:]


def test_slurmctld_loaded_the_shipped_model_and_no_plugin_refused_its_config(
        demo: tuple[subprocess.CompletedProcess, Path]) -> None:
    log = slurmctld_log(demo[1])
    assert f"site_factor/rlsched: loaded, mode enforce, scoring with model:{MODEL}," in log, log[-3000:]
    assert "loading the config failed" not in log
    for plugin in ("job_submit", "preempt"):
        assert re.search(rf"{plugin}/rlsched: loaded, config \S+/etc/rlsched.yaml", log), plugin


def test_the_three_typeless_gpu_jobs_were_mapped_with_a_reason(demo: tuple[subprocess.CompletedProcess, Path]) -> None:
    log = slurmctld_log(demo[1])
    # Each gets a type (gpu:a100:2) or a set of per-type partitions with a typeless GRES (gpu:2, "may also start in").
    mapped = re.findall(r"job_submit/rlsched: uid 0 job any-gpu-\S+: rlsched: gpu:(\d) -> gpu:(?:(?:h200|a100):)?(\d): "
                        r"gpu:(?:h200|a100) in partition (?:h200|a100)(.*)", log)
    assert len(mapped) == 3, log[-3000:]
    assert all(asked == got for asked, got, _ in mapped), mapped
    out = demo[0].stdout
    rows = re.findall(r"^ +\d+ any-gpu-\S+ +gpu:\d +(?:h200|a100|a100,h200|h200,a100) +gres:gpu:((?:h200|a100):)?\d +"
                      r"rlsched: gpu:\d -> (.*)$", out, re.M)
    assert len(rows) == 3, out
    for typed, why in rows:  # a typeless GRES is a set, and the reason names its other members
        assert (not typed) == ("may also start in" in why), (typed, why)


def test_site_factors_were_written_and_differ(demo: tuple[subprocess.CompletedProcess, Path]) -> None:
    log = slurmctld_log(demo[1])
    updates = re.findall(r"site_factor/rlsched: update scored (\d+) pending jobs in [\d.]+ ms \(copy [\d.]+ ms\) with "
                         r"model:\S+, (\d+) site factors changed", log)
    assert any(int(jobs) >= 2 and int(changed) >= 2 for jobs, changed in updates), updates
    shown = re.search(r"(\d+) pending jobs ranked by the model: (\d+) different SITE values", demo[0].stdout)
    assert shown and int(shown.group(2)) >= 2, demo[0].stdout[-3000:]


def test_the_checkpointable_job_was_preempted_and_resumed_from_its_checkpoint(
        demo: tuple[subprocess.CompletedProcess, Path]) -> None:
    cp, lab = demo
    log = slurmctld_log(lab)
    preempted = re.search(r"preempt/rlsched: preempting JobId=(\d+): grace (\d+) s", log)
    assert preempted, log[-3000:]
    victim = preempted.group(1)
    text = (lab / "jobs" / f"slurm-{victim}.out").read_text()
    signalled = re.search(r"^checkpoint at step (\d+) on the signal", text, re.M)
    resumed = re.search(r"^run 2: starting at step (\d+)", text, re.M)
    assert signalled and resumed and signalled.group(1) == resumed.group(1), text
    assert re.search(r"^done: \d+ steps", text, re.M), text


def test_the_demo_fails_and_names_the_step_when_the_plugins_refuse_a_relative_model_path() -> None:
    cli = os.environ.get("RLSCHED_CLI", str(REPO / "build/release/tools/rlsched"))
    dirs = [d for d in os.environ.get("RLSCHED_PLUGIN_DIR", "").split(":") if d]
    if not dirs:
        pytest.fail("RLSCHED_PLUGIN_DIR is not set (ctest sets it when the build has plugins)")
    folder = lab_folder()
    cmd = [sys.executable, str(REPO / "test/e2e/demo.py"), "--rlsched", cli, "--model",
           str(MODEL.relative_to(REPO)), "--dir", str(folder / "lab")]
    for d in dirs:
        cmd += ["--plugin-dir", d]
    try:
        cp = run(cmd, timeout=300)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    out = cp.stdout + cp.stderr
    assert cp.returncode == 1, out[-4000:]
    assert re.search(r"^  FAILED  plugins loaded rlsched.yaml: a plugin refused its configuration: .*model must be an "
                     r"absolute path \(got 'policy_models/default/policy.pt'\)", out, re.M), out[-4000:]
    assert not re.search(r"^  ok +(typeless GPU jobs mapped|learned rank in sprio)", out, re.M), out[-4000:]
