"""The live part of scripts/demo: a lab Slurm cluster (3 nodes: 4 H200, 4 A100, 8 Ascend 910B) with the three rlsched
plugins loaded, and what each of them does, checked as it is shown:

  1. the plugins load their configuration (rlsched.yaml with the shipped default model);
  2. job_submit/rlsched maps the typeless GPU requests of a mixed sbatch workload to a type and partition, with its
     reason (squeue, scontrol);
  3. site_factor/rlsched ranks the pending jobs: different SITE values in sprio;
  4. preempt/rlsched preempts a checkpointable low-QOS job for an urgent one; the victim checkpoints on the signal,
     is requeued and resumes from its checkpoint.

Every step checks what it shows and the demo exits 1, naming the step and why, when one did not work; a step that
did not work is never reported ok. Everything it starts is stopped on exit, also on Ctrl-C.

    python3 test/e2e/demo.py --rlsched build/release/tools/rlsched --plugin-dir DIR... --model /abs/policy.pt

The model path is written into rlsched.yaml as given: the plugins accept only absolute paths (slurmctld does not run
in your folder), so a relative one fails step 1, as it would in production.
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))

import rlsched_plugins  # noqa: E402
from lab import NODES, Lab, LabError  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CHECKPOINT_TEMPLATE = REPO / "slurm_conf_examples" / "checkpoint-job.sh"

# (job name, sbatch options): typed and typeless GPU jobs, NPU and CPU jobs of different sizes and time limits;
# more than the cluster holds, so that a queue forms and sprio has something to rank. Every job sleeps until the
# demo cancels it.
WORKLOAD: list[tuple[str, list[str]]] = [
    ("pretrain-h200x4", ["-p", "h200", "--gres=gpu:h200:4", "-t", "30"]),
    ("finetune-a100x4", ["-p", "a100", "--gres=gpu:a100:4", "-t", "20"]),
    ("bert-npu-x8", ["-p", "npu", "--gres=npu:8", "-t", "40"]),
    ("eval-h200x1", ["-p", "h200", "--gres=gpu:h200:1", "-t", "5"]),
    ("llm-h200x2", ["-p", "h200", "--gres=gpu:h200:2", "-t", "90"]),
    ("sweep-a100x1", ["-p", "a100", "--gres=gpu:a100:1", "-t", "3"]),
    ("any-gpu-x2-long", ["--gres=gpu:2", "-t", "60"]),
    ("any-gpu-x1-short", ["--gres=gpu:1", "-t", "4"]),
    ("any-gpu-x4", ["--gres=gpu:4", "-t", "15"]),
    ("npu-x2", ["-p", "npu", "--gres=npu:2", "-t", "10"]),
    ("resnet-npu-x4", ["-p", "npu", "--gres=npu:4", "-t", "25"]),
    ("cpu-prep-c4", ["-c", "4", "-t", "10"]),
    ("cpu-small-c2", ["-c", "2", "-t", "2"]),
    ("cpu-big-c8", ["-c", "8", "-t", "30"]),
]
TYPELESS = ("--gres=gpu:2", "--gres=gpu:1", "--gres=gpu:4")

# The preemption step: the victim checkpoints every INTERVAL seconds and on the signal; rlsched.yaml lets it be
# preempted once it has run MIN_RUN_TIME seconds, at most once an hour.
STEPS = 30
INTERVAL = 10
MIN_RUN_TIME = 10
PREEMPTION = {"min_run_time": MIN_RUN_TIME, "max_preemptions": 1, "window": "1h", "grace_margin": 5}
# sched_interval=2: the main scheduler, which preempts, tries the urgent job every 2 s rather than once a minute.
SETTINGS = {"PreemptType": "preempt/rlsched", "SchedulerParameters": "bf_interval=5,sched_interval=2",
            "SlurmctldDebug": "debug"}
SITE_TIMEOUT = 90  # PriorityCalcPeriod=1: the first decay cycle comes within a minute of slurmctld's start


class StepFailed(Exception):
    """A step did not show what it is there to show; the message says why."""


@dataclass
class Steps:
    """What each step showed: name -> (ok, detail), in order."""
    results: list[tuple[str, bool, str]] = field(default_factory=list)

    def ok(self, name: str, detail: str) -> None:
        self.results.append((name, True, detail))
        print(f"ok: {name}: {detail}", flush=True)

    def failed(self, name: str, why: str) -> None:
        self.results.append((name, False, why))
        print(f"FAILED: {name}: {why}", flush=True)

    def summary(self) -> bool:
        say("what the demo showed")
        for name, ok, detail in self.results:
            print(f"  {'ok    ' if ok else 'FAILED'}  {name}: {detail}")
        return bool(self.results) and all(ok for _, ok, _ in self.results)


def say(text: str) -> None:
    print(f"\n==> {text}", flush=True)


def show(lab: Lab, *cmd: str) -> None:
    print("$ " + " ".join(cmd))
    cp = lab.run(*cmd, check=False)
    print((cp.stdout + cp.stderr).rstrip(), flush=True)


def check_config_loaded(lab: Lab, model: Path) -> str:
    """Step 1: no plugin refused rlsched.yaml, and site_factor/rlsched scores with the model."""
    refused = lab.log_lines(r"(site_factor|job_submit|preempt)/rlsched: .*(loading the config failed|keeping the "
                            r"previous settings)")
    if refused:
        raise StepFailed("a plugin refused its configuration: " + refused[0].split("] ", 1)[-1])
    loaded = lab.log_lines(r"site_factor/rlsched: loaded, mode enforce, scoring with ")
    if not loaded:
        raise StepFailed("site_factor/rlsched did not log that it loaded (slurmctld.log: "
                         + "; ".join(lab.log_lines(r"rlsched")[-3:]) + ")")
    if str(model) not in loaded[-1]:
        raise StepFailed(f"site_factor/rlsched scores without the model {model}: " + loaded[-1].split("] ", 1)[-1])
    for plugin in ("job_submit", "preempt"):
        if not lab.log_lines(rf"{plugin}/rlsched: loaded"):
            raise StepFailed(f"{plugin}/rlsched did not log that it loaded")
    return "site_factor, job_submit and preempt/rlsched loaded rlsched.yaml; scoring with " + model.name


def submit_workload(lab: Lab) -> dict[int, tuple[str, list[str]]]:
    say(f"submitting {len(WORKLOAD)} jobs with sbatch")
    jobs: dict[int, tuple[str, list[str]]] = {}
    for name, opts in WORKLOAD:
        cmd = ["-J", name, *opts]
        try:
            job = lab.sbatch(*cmd, wrap="sleep 600")
        except LabError as e:
            raise StepFailed(f"sbatch {' '.join(cmd)} was refused: {e}") from e
        jobs[job] = (name, opts)
        print(f"  {job:>3}  sbatch {' '.join(cmd)}")
    return jobs


def show_mapping(lab: Lab, jobs: dict[int, tuple[str, list[str]]]) -> str:
    """Step 2: each typeless GPU request has a GPU type and a partition, or a set of per-type partitions (Slurm
    starts it in whichever frees first), and the plugin's reason."""
    say("where the typeless GPU requests went (job_submit/rlsched, at submit; the reason is in AdminComment)")
    print(f"{'job':>5} {'name':<17} {'asked':<13} {'partition':<9} {'got (TRES per node)':<20} why")
    mapped, unmapped = 0, []
    for job, (name, opts) in jobs.items():
        asked = next((o for o in opts if o in TYPELESS), None)
        if asked is None:
            continue
        info = lab.job(job)
        why = info.get("AdminComment", "")
        why = "" if why == "(null)" else why
        got = info.get("TresPerNode", "")
        print(f"{job:>5} {name:<17} {asked[len('--gres='):]:<13} {info.get('Partition', ''):<9} {got:<20} "
              f"{why or '(none)'}")
        typed = re.fullmatch(r"gres:gpu:[a-z0-9]+:\d+", got) is not None
        partitions = info.get("Partition", "").split(",")  # the set while pending; where it runs once started
        a_set = re.fullmatch(r"gres:gpu:\d+", got) is not None and "may also start in" in why
        if (typed or a_set) and why.startswith("rlsched: ") and "all" not in partitions:
            mapped += 1
        else:
            unmapped.append(f"job {job} ({name}): partition {info.get('Partition')}, {got}, reason {why or 'none'}")
    if unmapped:
        raise StepFailed("typeless GPU requests left unmapped: " + "; ".join(unmapped))
    return f"{mapped} typeless GPU jobs mapped to a type and partition or a set of them, each with its reason"


def show_site_factors(lab: Lab) -> str:
    """Step 3: after a decay cycle, the pending jobs' SITE values differ (the learned rank)."""
    say("waiting for the next priority recalculation (at most a minute: PriorityCalcPeriod=1), where "
        "site_factor/rlsched scores every pending job in one batch")

    def ranked() -> list[dict[str, str]] | None:
        rows = lab.sprio()
        sites = {int(r["site"] or 0) for r in rows}
        return rows if len(rows) >= 2 and len(sites) >= 2 and max(sites) > 0 else None
    try:
        rows = lab.wait_for(ranked, SITE_TIMEOUT, "different non-zero SITE factors in sprio")
    except LabError as e:
        rows = lab.sprio()
        updates = lab.log_lines(r"site_factor/rlsched: update scored")
        raise StepFailed(f"no learned rank within {SITE_TIMEOUT} s: SITE values "
                         f"{sorted({r['site'] for r in rows})} over {len(rows)} pending jobs; last update line: "
                         + (updates[-1].split("] ", 1)[-1] if updates else "none")) from e
    say("the queue")
    show(lab, "squeue", "-o", "%.5i %.17j %.9P %.18b %.9T %.6l %.10M %R")
    say(f"priorities of the pending jobs, highest first (SITE = rlsched's learned rank, "
        f"0..{rlsched_plugins.SCORE_SCALE})")
    show(lab, "sprio", "--sort=-y")
    sites = sorted({int(r["site"]) for r in rows})
    return (f"{len(rows)} pending jobs ranked by the model: {len(sites)} different SITE values from {sites[0]} to "
            f"{sites[-1]}")


def job_output(lab: Lab, job: int) -> str:
    path = lab.jobs_dir / f"slurm-{job}.out"
    return path.read_text() if path.exists() else ""


def wait_output(lab: Lab, job: int, pattern: str, timeout: float, what: str) -> re.Match:
    try:
        return lab.wait_for(lambda: re.search(pattern, job_output(lab, job), re.M), timeout, what)
    except LabError as e:
        raise StepFailed(f"{what} did not happen within {timeout:g} s (job {job}'s output: "
                         f"{job_output(lab, job)[-300:]!r})") from e


def show_preemption(lab: Lab) -> str:
    """Step 4: a checkpointable low-QOS job is preempted for an urgent one, checkpoints, requeues and resumes."""
    lab.run("scancel", "-u", "root", check=False)
    lab.wait_for(lambda: not [r for r in lab.squeue() if r["state"] in ("PENDING", "RUNNING", "COMPLETING")], 60,
                 "the workload's jobs to be cancelled")
    say(f"checkpoint-aware preemption: a low-QOS training job declares its checkpoint (slurm_conf_examples/"
        f"checkpoint-job.sh, --comment=checkpoint:interval={INTERVAL}s,cost=2s) and holds all four H200s")
    victim = lab.sbatch(f"--comment=checkpoint:interval={INTERVAL}s,cost=2s", "-p", "h200", "--gres=gpu:h200:4",
                        "--qos=low", f"--export=ALL,STEPS={STEPS},STEP_SECONDS=1,CHECKPOINT_EVERY={INTERVAL}",
                        script=CHECKPOINT_TEMPLATE.read_text())
    try:
        lab.wait_job_state(victim, "RUNNING")
    except LabError as e:
        raise StepFailed(f"the checkpointable job {victim} did not start") from e
    offset = lab.log_size()
    urgent = lab.sbatch("-J", "urgent", "-p", "h200", "--gres=gpu:h200:4", "--qos=high", "-t", "5", wrap="sleep 5")
    print(f"  job {victim}: checkpointable, QOS low, running; job {urgent}: urgent (QOS high), needs the same GPUs")
    signalled = wait_output(lab, victim, r"^checkpoint at step (\d+) on the signal", 60 + MIN_RUN_TIME,
                            "the victim's checkpoint on preempt/rlsched's signal")
    preempting = lab.log_lines_since(offset, rf"preempt/rlsched: preempting JobId={victim}\b")
    if not preempting:
        raise StepFailed(f"job {victim} checkpointed, but preempt/rlsched logged no preemption of it")
    try:
        lab.wait_job_state(urgent, "COMPLETED", timeout=90)
    except LabError as e:
        raise StepFailed(f"the urgent job {urgent} did not run to completion after the preemption") from e
    resumed = wait_output(lab, victim, r"^run 2: starting at step (\d+)", 90, "the victim's second run")
    if int(resumed.group(1)) != int(signalled.group(1)):
        raise StepFailed(f"the victim checkpointed at step {signalled.group(1)} but resumed at step "
                         f"{resumed.group(1)}")
    try:
        final = lab.wait_job_state(victim, "COMPLETED", timeout=STEPS + 60)
    except LabError as e:
        raise StepFailed(f"the resumed job {victim} did not complete") from e
    print("$ grep preempt/rlsched slurmctld.log")
    print("\n".join(line for line in lab.log_lines_since(offset, r"preempt/rlsched: ")[-4:]))
    print(f"$ cat slurm-{victim}.out   (its two runs, in one file: --open-mode=append)")
    text = job_output(lab, victim)
    lines = text.splitlines()
    keep = [ln for ln in lines if not re.fullmatch(r"step \d+", ln)]
    print("\n".join(keep))
    steps_run = len([ln for ln in lines if re.fullmatch(r"step \d+", ln)])
    return (f"job {victim} preempted by preempt/rlsched for job {urgent} ({preempting[0].split(': ', 2)[-1]}); "
            f"checkpointed at step {signalled.group(1)}, resumed there in run {int(final['Restarts']) + 1}, "
            f"completed {STEPS} steps running {steps_run} (lost {steps_run - STEPS})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rlsched", required=True, help="the rlsched CLI")
    parser.add_argument("--plugin-dir", action="append", default=[], required=True,
                        help="folder with the rlsched plugins (site_factor, job_submit and preempt)")
    parser.add_argument("--model", required=True, help="TorchScript policy for the site factor, as rlsched.yaml "
                        "holds it (an absolute path)")
    parser.add_argument("--dir", help="lab folder (default: a fresh one under /tmp, removed at the end)")
    parser.add_argument("--keep", action="store_true", help="keep the lab folder (logs) after the demo")
    args = parser.parse_args()

    steps = Steps()
    try:
        plugins = rlsched_plugins.find_plugins(args.plugin_dir,
                                               (*rlsched_plugins.PLUGIN_FILES, rlsched_plugins.PREEMPT_SO))
    except LabError as e:
        steps.failed("plugins built", str(e))
        steps.summary()
        return 1
    model = Path(args.model)
    lab = Lab(root=args.dir, plugin_dirs=args.plugin_dir, keep=args.keep)
    # Stop the lab on SIGTERM/SIGHUP too (Ctrl-C raises KeyboardInterrupt, which the finally below handles).
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(130))
    try:
        lab.etc.mkdir(parents=True, exist_ok=True)
        config = rlsched_plugins.write_config(
            lab.etc / "rlsched.yaml", rlsched_plugins.rlsched_config(mode="enforce", model=model, fallback="multifactor",
                                                                     preemption=PREEMPTION))
        lab.settings_override.update(rlsched_plugins.slurm_settings(config))
        lab.settings_override.update(SETTINGS)
        say(f"starting the lab cluster with {', '.join(p.name for p in plugins.values())} (model {model})")
        lab.start()
        phases = ", ".join(f"{k} {v:.1f}s" for k, v in lab.timings.items() if k != "total")
        print(f"up in {lab.timings['total']:.1f}s ({phases}); nodes: "
              + ", ".join(f"{n.name} ({n.gres})" for n in NODES))
        print(f"slurm.conf: {lab.conf_path}; rlsched.yaml: {config}")

        jobs: dict[int, tuple[str, list[str]]] = {}
        for name, run in (("workload submitted", lambda: submit_workload(lab)),
                          ("plugins loaded rlsched.yaml", lambda: check_config_loaded(lab, model)),
                          ("typeless GPU jobs mapped", lambda: show_mapping(lab, jobs)),
                          ("learned rank in sprio", lambda: show_site_factors(lab)),
                          ("checkpoint-aware preemption", lambda: show_preemption(lab))):
            try:
                result = run()
            except StepFailed as e:
                steps.failed(name, str(e))
                break  # the later steps build on this one
            if isinstance(result, dict):
                jobs = result
                steps.ok(name, f"{len(jobs)} jobs")
            else:
                steps.ok(name, result)
        lines = lab.log_lines(r"(site_factor|job_submit|preempt)/rlsched: ")
        say(f"rlsched in slurmctld's log ({len(lines)} lines; the last 8)")
        print("\n".join(lines[-8:]))
        say("stopping every process the demo started")
    except LabError as e:
        steps.failed("lab cluster", str(e).splitlines()[0])
    finally:
        ended = lab.stop()
        print(f"stopped {len(ended)} processes (by PID)" + (f"; logs kept in {lab.root}" if args.keep else ""))
    return 0 if steps.summary() else 1


if __name__ == "__main__":
    sys.exit(main())
