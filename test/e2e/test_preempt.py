"""Checkpoint-aware preemption in a real slurmctld (docs/preemption.md): job_submit/rlsched reads the checkpoint
declaration, preempt/rlsched chooses the victims, and the job templates of slurm_conf_examples/ checkpoint on the
signal, requeue themselves and resume.

The lab's QOS: `high` may preempt `low` (PreemptMode=REQUEUE, preempt_send_user_signal), PreemptType=preempt/rlsched. rlsched.yaml's preemption
section here: a minimum run time of 20 s, at most one preemption per job and hour, a grace margin of 5 s. A requeued
job may start again 11 s after its requeue (the lab's AuthInfo cred_expire=10; Slurm's default is 20 minutes).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

import plugin_helpers as ph
import rlsched_plugins
from lab import Lab

REPO = Path(__file__).resolve().parents[2]
BASH_TEMPLATE = REPO / "slurm_conf_examples" / "checkpoint-job.sh"
PYTHON_TEMPLATE = REPO / "slurm_conf_examples" / "checkpoint_train.py"
MIN_RUN_TIME = 20
INTERVAL = 10  # seconds between periodic checkpoints of the test jobs
PREEMPTION = {"min_run_time": MIN_RUN_TIME, "max_preemptions": 1, "window": "1h", "grace_margin": 5}


@pytest.fixture(scope="module")
def lab(request: pytest.FixtureRequest, plugin_dirs: list[str]) -> Lab:
    rlsched_plugins.find_plugins(plugin_dirs, (*rlsched_plugins.PLUGIN_FILES, rlsched_plugins.PREEMPT_SO))
    # sched_interval: the main scheduler (which preempts) tries the pending urgent job every 2 s rather than once a
    # minute, so that the minimum run time is what delays the preemption. ReturnToService=1: a node set DOWN by the
    # admin stays down (with 2 it returns as soon as its slurmd answers).
    settings = {"PreemptType": "preempt/rlsched", "SchedulerParameters": "bf_interval=5,sched_interval=2",
                "ReturnToService": "1"}
    return ph.plugin_lab(request, plugin_dirs, "test_preempt.lab", settings=settings, preemption=PREEMPTION)


def output(lab: Lab, job: int) -> str:
    path = lab.jobs_dir / f"slurm-{job}.out"
    return path.read_text() if path.exists() else ""


def wait_output(lab: Lab, job: int, pattern: str, timeout: float) -> re.Match:
    return lab.wait_for(lambda: re.search(pattern, output(lab, job), re.M), timeout,
                        f"job {job}'s output to show /{pattern}/ (output so far: {output(lab, job)[-400:]!r})")


def submit_template(lab: Lab, template: Path, *args: str, steps: int, comment: str | None = None) -> int:
    comment = comment or f"checkpoint:interval={INTERVAL}s,cost=2s"
    return lab.sbatch(f"--comment={comment}", f"--export=ALL,STEPS={steps},STEP_SECONDS=1,CHECKPOINT_EVERY={INTERVAL}",
                      *args, script=template.read_text())


def test_a_malformed_declaration_is_refused_with_the_parsers_message(lab: Lab) -> None:
    message = lab.sbatch_refused("--comment=checkpoint:interval=10m", "-t", "5", wrap="true")
    assert "rlsched: --comment checkpoint:interval=10m: cost= is missing" in message, message


def test_a_declaration_makes_the_job_requeueable_with_the_checkpoint_signal(lab: Lab) -> None:
    job = lab.sbatch("--comment=checkpoint:interval=30m,cost=90s", "-t", "5", "--hold", wrap="true")
    info = lab.job(job)
    assert info["Requeue"] == "1", info
    # --signal=B:USR1@<cost 90 + margin 5>
    assert lab.log_lines(rf"job_submit/rlsched: .*checkpointable \(interval 1800 s, cost 90 s\): requeue, "
                         rf"signal 10@95, append"), lab.log_tails("slurmctld")
    lab.run("scancel", str(job))


def test_checkpointable_job_is_preempted_after_its_minimum_run_time_resumes_and_is_not_preempted_twice(
        lab: Lab) -> None:
    steps = 45
    victim = submit_template(lab, BASH_TEMPLATE, "-p", "h200", "--gres=gpu:h200:4", "--qos=low", steps=steps)
    lab.wait_job_state(victim, "RUNNING")
    offset = lab.log_size()
    urgent = lab.sbatch("-J", "urgent", "-p", "h200", "--gres=gpu:h200:4", "--qos=high", "-t", "5",
                        wrap="sleep 5")
    # The victim gets USR1 once it has run the minimum run time, checkpoints and requeues itself.
    signalled = wait_output(lab, victim, r"^checkpoint at step (\d+) on the signal", 60)
    checkpointed_step = int(signalled.group(1))
    preempting = lab.log_lines_since(offset, rf"preempt/rlsched: preempting JobId={victim}\b")
    assert preempting and "grace 7 s" in preempting[0], lab.log_lines_since(offset, "preempt")
    lab.wait_job_state(urgent, "COMPLETED", timeout=60)

    # It resumes from the checkpointed step and completes: at most one interval of work lost.
    resumed = wait_output(lab, victim, r"^run 2: starting at step (\d+)", 60)
    assert int(resumed.group(1)) == checkpointed_step, output(lab, victim)
    # A second urgent job may not preempt it again (cap: once an hour): it waits for the victim to finish.
    offset = lab.log_size()
    second = lab.sbatch("-J", "urgent2", "-p", "h200", "--gres=gpu:h200:4", "--qos=high", "-t", "5", wrap="true")
    lab.wait_job_state(victim, "COMPLETED", timeout=120)
    lab.wait_job_state(second, "COMPLETED", timeout=60)
    assert not lab.log_lines_since(offset, rf"preempting JobId={victim}\b"), "preempted twice within the cap's window"
    assert lab.log_lines_since(offset, rf"JobId={victim} is no victim for JobId={second}: already preempted"), \
        lab.log_lines_since(offset, "preempt")
    text = output(lab, victim)
    done_steps = [int(s) for s in re.findall(r"^step (\d+)$", text, re.M)]
    assert done_steps[-1] == steps and re.search(rf"^done: {steps} steps", text, re.M), text
    lost = len(done_steps) - steps  # steps run twice
    assert 0 <= lost <= INTERVAL, f"{lost} steps were lost:\n{text}"
    assert lab.job(victim)["Restarts"] == "1"

    # The minimum run time held: the signal came no sooner than MIN_RUN_TIME after the first start.
    first_start = lab.sacct("-D", "-j", str(victim), "--format=JobIDRaw,Start,State")
    runs = sorted(r["Start"] for r in first_start if r["JobIDRaw"] == str(victim))
    assert len(runs) == 2, first_start
    first = time.mktime(time.strptime(runs[0], "%Y-%m-%dT%H:%M:%S"))
    signal_time = time.mktime(time.strptime(preempting[0][1:20], "%Y-%m-%dT%H:%M:%S"))
    assert signal_time - first >= MIN_RUN_TIME, (runs, preempting[0])


def test_a_job_without_a_checkpoint_is_never_chosen(lab: Lab) -> None:
    plain = lab.sbatch("-J", "plain", "-p", "a100", "--gres=gpu:a100:4", "--qos=low", "-t", "10",
                       wrap="sleep 300")
    lab.wait_job_state(plain, "RUNNING")
    time.sleep(MIN_RUN_TIME)
    offset = lab.log_size()
    urgent = lab.sbatch("-J", "urgent", "-p", "a100", "--gres=gpu:a100:4", "--qos=high", "-t", "5", wrap="true")
    lab.wait_for(lambda: lab.log_lines_since(offset, rf"JobId={plain} is no victim for JobId={urgent}: "
                                                     r"not checkpointable"), 30, "the plugin to refuse the victim")
    time.sleep(5)
    assert lab.job(plain)["JobState"] == "RUNNING" and lab.job(urgent)["JobState"] == "PENDING"
    assert not lab.log_lines_since(offset, rf"preempting JobId={plain}\b")
    lab.run("scancel", str(plain), str(urgent))


def test_a_checkpointable_job_on_a_node_marked_down_is_requeued_and_resumes_elsewhere(lab: Lab) -> None:
    job = submit_template(lab, PYTHON_TEMPLATE, "-p", "all", "-c", "8", "--qos=normal", steps=30)
    info = lab.wait_job_state(job, "RUNNING")
    node = info["NodeList"]
    checkpoint = wait_output(lab, job, r"^checkpoint at step (\d+)$", 60)
    saved = int(checkpoint.group(1))
    lab.run("scontrol", "update", f"nodename={node}", "state=down", "reason=rlsched-test")
    try:
        resumed = wait_output(lab, job, r"^run 2: starting at step (\d+)", 90)
        assert int(resumed.group(1)) >= saved, output(lab, job)
        final = lab.wait_job_state(job, "COMPLETED", timeout=120)
        assert final["NodeList"] != node and final["Restarts"] == "1", final
    finally:
        lab.run("scontrol", "update", f"nodename={node}", "state=resume", check=False)
    text = output(lab, job)
    lost = len(re.findall(r"^step \d+$", text, re.M)) - 30
    assert 0 <= lost <= INTERVAL + 1, f"{lost} steps lost:\n{text}"


def test_the_preemption_cap_survives_a_slurmctld_restart(lab: Lab) -> None:
    # preempt/rlsched keeps its history in StateSaveLocation (core/src/capi/preemption_history.h): a restarted
    # slurmctld still knows the victim was preempted once this hour, the cap.
    victim = submit_template(lab, BASH_TEMPLATE, "-p", "h200", "--gres=gpu:h200:4", "--qos=low", steps=300)
    lab.wait_job_state(victim, "RUNNING")
    offset = lab.log_size()
    urgent = lab.sbatch("-J", "urgent", "-p", "h200", "--gres=gpu:h200:4", "--qos=high", "-t", "5", wrap="true")
    wait_output(lab, victim, r"^run 2: starting at step \d+", 120)
    assert lab.log_lines_since(offset, rf"preempt/rlsched: preempting JobId={victim}\b")
    lab.wait_job_state(urgent, "COMPLETED", timeout=60)
    history = lab.root / "state" / "ctld" / "rlsched_preemptions.json"
    lab.wait_for(lambda: history.exists() and f"[{victim}, " in history.read_text(), 15,
                 f"{history} to record job {victim}")

    offset = lab.log_size()
    lab.restart_slurmctld()
    second = lab.sbatch("-J", "urgent2", "-p", "h200", "--gres=gpu:h200:4", "--qos=high", "-t", "5", wrap="true")
    try:
        # Once its new run is past the minimum run time, the cap is the reason it is spared.
        lab.wait_for(lambda: lab.log_lines_since(offset, rf"JobId={victim} is no victim for JobId={second}: "
                                                         r"already preempted"), 90,
                     "the restarted plugin to refuse the victim by the cap")
        loaded = r"preempt/rlsched: preemption history .*rlsched_preemptions\.json: [1-9][0-9]* jobs preempted"
        assert lab.log_lines_since(offset, loaded), lab.log_lines_since(offset, "preempt")
        assert not lab.log_lines_since(offset, rf"preempting JobId={victim}\b"), "preempted again after the restart"
        assert lab.job(victim)["JobState"] == "RUNNING" and lab.job(second)["JobState"] == "PENDING"
    finally:
        lab.run("scancel", str(victim), str(second), check=False)
