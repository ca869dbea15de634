"""`rlsched explain` and `rlsched estimate` against a real slurmctld (docs/estimates.md): explain names the real
blocker of three staged jobs, read through libslurm, with the plugins loaded (the SITE factor is site_factor/rlsched's):

- a job behind a higher-ranked one (reason Priority): the job ahead is listed by id;
- a job waiting for a busy accelerator type (reason Resources): the busy type is named, and the other type that is
  free now;
- a job held by a QOS limit (reason QOSMaxJobsPerUserLimit): the QOS and the limit are named.

Also: `explain --json` parses and carries the same facts, `estimate --json` gives a start for a small request, a job
waiting behind a job its user's history says ends long before its time limit gets an estimate within 30 s of its
real start and closer than `squeue --start`'s (bench/estimate_lab.py measures that over a workload), and bad input
(an unknown job, a running job) fails with one line and a non-zero exit. Depends on the plugin build
(RLSCHED_PLUGIN_DIR) and the rlsched CLI built with libslurm; fails, never skips, without them. About a minute.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest

import plugin_helpers as ph
from lab import Lab, free_port


@pytest.fixture(scope="module")
def lab(request: pytest.FixtureRequest, plugin_dirs: list[str]) -> Lab:
    return ph.plugin_lab(request, plugin_dirs, "test_explain.lab")


@pytest.fixture(scope="module")
def staged(lab: Lab) -> dict[str, int]:
    """The three blocked jobs and what blocks them, once their reasons are Slurm's final ones."""
    # (a) npu-1's 8 CPUs busy; a QOS high job (and shorter, so sjf's SITE agrees) ranks above a normal one.
    npu_blocker = lab.sbatch("-J", "blocker-npu", "-p", "npu", "-c", "8", "-t", "30", wrap="sleep 3000")
    lab.wait_job_state(npu_blocker, "RUNNING")
    ahead = lab.sbatch("-J", "ahead", "-p", "npu", "-c", "8", "--qos=high", "-t", "5", wrap="sleep 60")
    behind = lab.sbatch("-J", "behind", "-p", "npu", "-c", "8", "--qos=normal", "-t", "10", wrap="sleep 60")
    # (b) every h200 busy while the a100s are idle.
    h200_blocker = ph.occupy(lab, "h200", "gpu:h200:4")
    wants_h200 = lab.sbatch("-J", "wants-h200", "-p", "h200", "--gres=gpu:h200:2", "-t", "10", wrap="sleep 60")
    # (c) QOS low allows one running job per user.
    lab.run("sacctmgr", "-i", "modify", "qos", "low", "set", "MaxJobsPerUser=1")
    first_low = lab.sbatch("-J", "low-1", "-p", "a100", "-c", "1", "--qos=low", "-t", "30", wrap="sleep 3000")
    lab.wait_job_state(first_low, "RUNNING")
    second_low = lab.sbatch("-J", "low-2", "-p", "a100", "-c", "1", "--qos=low", "-t", "30", wrap="sleep 60")

    # (d) a typeless GPU job, held: job_submit/rlsched places it and records why in its AdminComment.
    held = lab.sbatch("-J", "held", "--hold", "--gres=gpu:2", "-t", "5", wrap="sleep 60")

    want = {behind: "Priority", wants_h200: "Resources", second_low: "QOSMaxJobsPerUserLimit", held: "JobHeldUser"}
    lab.wait_for(lambda: all(r["reason"] == want[int(r["id"])] for r in lab.squeue(want)), 40,
                 f"the reasons {want}")
    return {"ahead": ahead, "behind": behind, "npu_blocker": npu_blocker, "h200_blocker": h200_blocker,
            "wants_h200": wants_h200, "second_low": second_low, "held": held}


def rlsched(lab: Lab, cli: Path, *args: str) -> subprocess.CompletedProcess:
    return lab.run(str(cli), *args, "--config", str(ph.config_path(lab)), check=False, timeout=60)


def explain(lab: Lab, cli: Path, job: int) -> str:
    cp = rlsched(lab, cli, "explain", str(job))
    assert cp.returncode == 0, cp.stderr
    print(cp.stdout)  # the sample output, in the test log
    return cp.stdout


def test_a_job_behind_a_higher_ranked_one_lists_it(lab: Lab, rlsched_cli: Path, staged: dict[str, int]) -> None:
    out = explain(lab, rlsched_cli, staged["behind"])
    assert f"job {staged['behind']} (" in out and "reason Priority" in out, out
    assert "jobs with a higher priority are ahead of it" in out, out
    assert "rank in npu: 2 of 2 pending" in out, out
    assert f"ahead: job {staged['ahead']} (" in out and "8 cpus" in out, out
    assert "site factor, policy sjf" in out, out

    cp = rlsched(lab, rlsched_cli, "explain", str(staged["behind"]), "--json")
    assert cp.returncode == 0, cp.stderr
    x = json.loads(cp.stdout)
    assert x["job_id"] == staged["behind"] and x["reason"]["code"] == "Priority", x
    npu = next(r for r in x["ranks"] if r["partition"] == "npu")
    assert [a["job_id"] for a in npu["ahead"]] == [staged["ahead"]], npu
    assert x["priority"]["factors"]["qos"] > 0, x["priority"]
    # npu-1 is held for 30 minutes by its blocker, then the job ahead runs: not before 20 minutes from now.
    assert x["rlsched_estimate"]["available"], x["rlsched_estimate"]
    assert x["rlsched_estimate"]["start"] >= x["now"] + 20 * 60, x["rlsched_estimate"]
    assert x["rlsched_estimate"]["partition"] == "npu", x["rlsched_estimate"]
    # sjf scores -time_limit: the job ahead asks for 5 minutes against the queue's median of 10 (limits 5, 10, 10
    # and 30 minutes), so its time limit alone pushes it up by 300 and nothing else moves it.
    cp = rlsched(lab, rlsched_cli, "explain", str(staged["ahead"]), "--json")
    assert cp.returncode == 0, cp.stderr
    effects = {e["input"]: e for e in json.loads(cp.stdout)["site"]["inputs"]}
    assert (effects["time_limit"]["value"], effects["time_limit"]["median"]) == (300, 600), effects["time_limit"]
    assert effects["time_limit"]["delta"] == 300, effects["time_limit"]
    assert all(e["delta"] == 0 for name, e in effects.items() if name != "time_limit"), effects


def test_a_job_waiting_for_a_busy_type_names_it_and_the_free_one(lab: Lab, rlsched_cli: Path,
                                                                  staged: dict[str, int]) -> None:
    out = explain(lab, rlsched_cli, staged["wants_h200"])
    assert "reason Resources" in out, out
    assert "gpu:h200 in h200: 0 of 4 idle (its request allows it; busy)" in out, out
    assert "gpu:a100 in a100: 4 of 4 idle (free now, but its request does not allow it)" in out, out
    assert "asks for: gpu:h200:2" in out, out
    assert "blocked by: gpu:h200 in h200 (0 idle) busy" in out, out
    assert "free now: gpu:a100 in a100 (4 idle)" in out, out


def test_a_job_held_by_a_qos_limit_names_the_qos_and_the_limit(lab: Lab, rlsched_cli: Path,
                                                              staged: dict[str, int]) -> None:
    out = explain(lab, rlsched_cli, staged["second_low"])
    assert "reason QOSMaxJobsPerUserLimit" in out, out
    assert "its QOS 'low' has reached its MaxJobsPerUser limit" in out, out
    assert "rlsched's estimate: not available (it waits for 'QOSMaxJobsPerUserLimit' to be lifted" in out, out


def test_a_held_job_shows_how_to_release_it_and_its_placement(lab: Lab, rlsched_cli: Path,
                                                             staged: dict[str, int]) -> None:
    out = explain(lab, rlsched_cli, staged["held"])
    assert "reason JobHeldUser" in out and "what you can do: scontrol release <id>" in out, out
    assert "placement: rlsched: gpu:2 -> " in out, out  # job_submit/rlsched's record, as the AdminComment has it
    assert lab.job(staged["held"])["AdminComment"] in out, out


def test_estimate_json_gives_a_start_for_a_small_request(lab: Lab, rlsched_cli: Path, staged: dict[str, int]) -> None:
    now = int(time.time())
    cp = rlsched(lab, rlsched_cli, "estimate", "--gres", "gpu:1", "-t", "10", "--json")
    assert cp.returncode == 0, cp.stderr
    x = json.loads(cp.stdout)
    by_type = {e["accelerator_type"]: e["estimate"] for e in x["estimates"]}
    assert set(by_type) == {"h200", "a100"}, x
    a100 = by_type["a100"]
    assert a100["available"], a100
    # The a100s are idle: it starts about now; every h200 is held for 30 minutes by the blocker.
    assert now - 5 <= a100["start"] <= now + 120, (now, a100)
    assert by_type["h200"]["start"] > a100["start"], by_type

    cp = rlsched(lab, rlsched_cli, "estimate", "--gres", "gpu:1", "-t", "10")
    assert cp.returncode == 0, cp.stderr
    print(cp.stdout)
    assert cp.stdout.startswith("gpu:1, 1 cpu, 1 node, for 10m now:\n"), cp.stdout
    assert "\n  on a100: " in cp.stdout and "in partition all" in cp.stdout, cp.stdout
    assert "\n  on h200: " in cp.stdout and "between" in cp.stdout, cp.stdout


def test_bad_input_fails_with_one_line(lab: Lab, rlsched_cli: Path, staged: dict[str, int]) -> None:
    cp = rlsched(lab, rlsched_cli, "explain", "999999")
    assert cp.returncode != 0 and "job 999999: slurmctld knows no such job" in cp.stderr, cp
    assert len(cp.stderr.strip().splitlines()) == 1, cp.stderr
    cp = rlsched(lab, rlsched_cli, "explain", str(staged["h200_blocker"]))
    assert cp.returncode != 0, cp
    assert f"job {staged['h200_blocker']} is not pending: RUNNING since" in cp.stderr, cp.stderr
    assert "expected to end by" in cp.stderr, cp.stderr

    # slurmctld unreachable: the lab's slurm.conf with a port nobody listens on.
    conf = lab.root / "unreachable.conf"
    conf.write_text(re.sub(r"(?m)^SlurmctldPort=.*$", f"SlurmctldPort={free_port()}", lab.conf_path.read_text()))
    cp = lab.run(str(rlsched_cli), "explain", str(staged["behind"]), "--config", str(ph.config_path(lab)),
                 check=False, timeout=60, env={"SLURM_CONF": str(conf)})
    assert cp.returncode != 0 and "cannot reach slurmctld" in cp.stderr, cp
    assert len(cp.stderr.strip().splitlines()) == 1, cp.stderr


def test_the_estimate_uses_the_users_run_times_and_beats_squeue_start(lab: Lab, rlsched_cli: Path,
                                                                        staged: dict[str, int]) -> None:
    """A job waiting for every A100, held by a job whose time limit is far above what its user's jobs really run:
    Slurm plans its start at the holder's time limit (10 minutes), rlsched at the run time the user's history gives
    (a 24th of the limit: 25 s). Runs last: its jobs would change the queues the tests above read. About 40 s."""
    # History: root's only completed jobs in this lab, each using 5 s of a 2-minute limit.
    history = [lab.sbatch("-J", "history", "-p", "a100", "-c", "1", "-t", "2", wrap="sleep 5") for _ in range(2)]
    lab.wait_for(lambda: all(lab.job(j)["JobState"] == "COMPLETED" for j in history), 40, "the history jobs to end")
    holder = lab.sbatch("-J", "holder", "-p", "a100", "--gres=gpu:a100:4", "-t", "10", wrap="sleep 25")
    lab.wait_job_state(holder, "RUNNING")
    waiting = lab.sbatch("-J", "waiting", "-p", "a100", "--gres=gpu:a100:1", "-t", "5", wrap="sleep 1")

    def slurm_start() -> int | None:
        out = lab.run("squeue", "-h", "-j", str(waiting), "--start", "-o", "%S").stdout.strip()
        try:
            return int(datetime.strptime(out, "%Y-%m-%dT%H:%M:%S").timestamp())
        except ValueError:  # N/A until the backfill plan reaches it
            return None
    slurm = lab.wait_for(slurm_start, 20, f"squeue --start to give job {waiting} a start")
    cp = rlsched(lab, rlsched_cli, "explain", str(waiting), "--json")
    assert cp.returncode == 0, cp.stderr
    x = json.loads(cp.stdout)
    assert lab.job(holder)["JobState"] == "RUNNING", "the holder ended before the estimates were taken"
    # Resources, or Priority when a job of the tests above still waits ahead of it in a100 on a busy machine: either
    # way Slurm gives it a start and rlsched must estimate one.
    assert x["reason"]["code"] in ("Resources", "Priority") and x["rlsched_estimate"]["available"], json.dumps(x)
    rlsched_start = x["rlsched_estimate"]["start"]
    # Its own run time as rlsched takes it: the history's 5 to 8 s of 2 minutes, of its 5-minute limit.
    run_time = x["run_time"]
    assert run_time["limit"] == 300 and run_time["ended_jobs"] >= 2 and 10 <= run_time["predicted"] <= 20, run_time
    text = rlsched(lab, rlsched_cli, "explain", str(waiting)).stdout
    assert re.search(r"\n  run time: about \d+s of its 5m limit \([\d.]+%: the share its user's last \d+ ended jobs "
                     r"used\)\n", text), text

    info = lab.wait_job_state(waiting, {"RUNNING", "COMPLETED"}, timeout=60)
    real = int(datetime.strptime(info["StartTime"], "%Y-%m-%dT%H:%M:%S").timestamp())
    print(f"\njob {waiting}: real start {real}, squeue --start {slurm} ({slurm - real:+d} s), "
          f"rlsched {rlsched_start} ({rlsched_start - real:+d} s)")
    assert abs(rlsched_start - real) <= 30, (rlsched_start, real, x["rlsched_estimate"])
    assert abs(slurm - real) >= 300, (slurm, real)  # the holder's time limit: the plan Slurm itself makes
    assert abs(rlsched_start - real) < abs(slurm - real), (rlsched_start, slurm, real)
