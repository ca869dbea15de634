"""site_factor/rlsched with `run_time: predicted` (docs/plugins.md) inside a real slurmctld: the policy sees a pending
job as asking for the run time its user's ended jobs predict, not for its time limit.

The lab's policy is the fallback SJF (no model), whose score is minus the run time it is shown, and `debug: true`
makes the plugin log each job's score. A job of root asking for 10 minutes runs about a second and ends; slurmctld
keeps it (MinJobAge), and the next decay cycle hears of it. A job root then queues behind a blocker, asking for 20
minutes, must be scored at the next cycle at about a second's share of 10 minutes times 20 minutes, far below the
1,200 s of its limit; with `run_time: limit` (hot reload of the same file) it is scored at its limit again. Then a
model of feature schema v2 that scores the predicted run time it is shown (predicted_log, write_test_model
--predicted) replaces the fallback, still under `run_time: limit`: the plugin must pass it ended jobs again, and it
must score the job on its prediction, beside a limit it leaves as it is; and score it the same after slurmctld
restarts, from what it kept in StateSaveLocation, without learning again from the ended jobs Slurm still keeps; and
`rlsched explain` must show it that score, from the same file (read, never written) and the same kept jobs. The
exact figures, job by job, are the C ABI parity test's (test/capi/feature_parity_test.cpp). About five minutes:
decay cycles come once a minute (PriorityCalcPeriod=1, Slurm's least). Fails, never skips, without the plugins.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

import pytest

import plugin_helpers as ph
from lab import Lab

LIMIT_S = 20 * 60  # the queued job's time limit
WEEK_LOG = math.log1p(7 * 86400)  # predicted_log = log1p(predicted run time) / log1p(7 d)


@pytest.fixture(scope="module")
def lab(request: pytest.FixtureRequest, plugin_dirs: list[str]) -> Lab:
    return ph.plugin_lab(request, plugin_dirs, "test_predicted_run_times.lab", run_time="predicted", debug=True)


def scores_of(lab: Lab, since: int, job: int, pattern: str) -> list[float]:
    """The scores the plugin logged for a job since a log offset, in lines matching `pattern` after its id."""
    rx = re.compile(rf"site_factor/rlsched: JobId={job}{pattern} score (-?[\d.e+]+)")
    return [float(m.group(1)) for line in lab.log_lines_since(since) if (m := rx.search(line))]


def test_a_job_is_scored_on_the_run_time_its_users_ended_jobs_predict(lab: Lab, write_test_model: Path,
                                                                      rlsched_cli: Path, tmp_path: Path) -> None:
    assert lab.log_lines(r"site_factor/rlsched: loaded, mode enforce, scoring with sjf, .*, run_time: predicted"), \
        lab.log_tails("slurmctld")
    since = lab.log_size()
    short = lab.sbatch("-p", "npu", "-c", "1", "-t", "10", wrap="sleep 1")
    lab.wait_job_state(short, {"COMPLETED"})
    blocker = ph.occupy(lab, "npu", "npu:8")
    queued = lab.sbatch("-p", "npu", "--gres=npu:8", "-t", str(LIMIT_S // 60), wrap="sleep 3")
    # The next cycle hears of the ended job (slurmctld keeps it) before it scores the queue.
    at_cycle = lab.wait_for(lambda: scores_of(lab, since, queued, ""), 80, f"a cycle's score of job {queued}")
    assert lab.log_lines_since(since, r"site_factor/rlsched: heard of [1-9]\d* ended jobs \([1-9]\d* kept by Slurm\); "
                                      r"run_time: predicted"), lab.log_tails("slurmctld")
    # sjf scores minus the run time it is shown: about (1 to 3 s / 600 s) x 1200 s, not the 1200 s limit.
    assert -60 < at_cycle[0] < 0, (at_cycle, lab.log_tails("slurmctld"))

    # The same file on time limits (hot reload, read again at the next cycle): the job is shown its limit again.
    since = lab.log_size()
    ph.write_config(lab, run_time="limit", debug=True)
    on_limit = lab.wait_for(lambda: scores_of(lab, since, queued, ""), 80, f"the next cycle's score of job {queued}")
    assert on_limit[0] == -LIMIT_S, (on_limit, lab.log_tails("slurmctld"))

    # A model that reads the predicted run time beside the limit, under run_time: limit: scored on the prediction.
    model = tmp_path / "predicted.pt"
    subprocess.run([str(write_test_model), "--predicted", str(model)], check=True, timeout=120)
    since = lab.log_size()
    ph.write_config(lab, model=ph.installed_model(lab, model), run_time="limit", debug=True)
    lab.wait_for(lambda: lab.log_lines_since(since, r"site_factor/rlsched: loaded model .*: mlp 1-1-1 relu"), 80,
                 "the predicted_log model loaded")
    # Another job of root ends: the plugin passes it to the engine although run_time is limit (the model asks). The
    # cycles counted from here begin after it ended (the one that loaded the model may have logged since).
    another = lab.sbatch("-p", "a100", "-c", "1", "-t", "10", wrap="sleep 1")
    lab.wait_job_state(another, {"COMPLETED"})
    since = lab.log_size()
    lab.wait_for(lambda: lab.log_lines_since(since, r"site_factor/rlsched: heard of [1-9]\d* ended jobs "
                                                    r"\([1-9]\d* kept by Slurm\); run_time: limit"),
                 80, "a cycle that heard of the ended job under run_time: limit")
    on_model = lab.wait_for(lambda: scores_of(lab, since, queued, ""), 80, f"the model's score of job {queued}")
    # About (1 to 3 s / 600 s) x 1200 s predicted: log1p(2 to 6 s) / log1p(7 d) = 0.08 to 0.15; its limit would be
    # log1p(1200) / log1p(7 d) = 0.53.
    assert 0 < on_model[0] < math.log1p(60) / WEEK_LOG, (on_model, lab.log_tails("slurmctld"))

    # slurmctld restarts. What root's ended jobs taught is kept in StateSaveLocation and read back, with the ended
    # jobs Slurm still keeps (MinJobAge), which the restarted plugin passes again and must not teach twice.
    history = lab.root / "state" / "ctld" / "rlsched_run_times.json"
    lab.wait_for(lambda: history.exists() and f"[{another}, " in history.read_text(), 30,
                 f"{history} to record job {another}")
    # Each of root's ended jobs taught once (the lab runs none before this test): the cycles under run_time: limit
    # with the fallback, which reads no ended job, must not make the engine forget the first job and learn it again.
    assert len(json.loads(history.read_text())["users"]["0"]) == 2, history.read_text()
    since = lab.log_size()
    lab.restart_slurmctld()
    loaded = (r"site_factor/rlsched: run-time history .*rlsched_run_times\.json: the ended jobs of 1 user, "
              r"[1-9]\d* still kept by Slurm")
    lab.wait_for(lambda: lab.log_lines_since(since, loaded), 60, "the restarted plugin to read the history back")
    after = lab.wait_for(lambda: scores_of(lab, since, queued, ""), 80, f"the restarted plugin's score of job {queued}")
    assert after[0] == pytest.approx(on_model[-1]), (after, on_model, lab.log_tails("slurmctld"))
    assert not lab.log_lines_since(since, r"site_factor/rlsched: heard of [1-9]\d* ended jobs"), \
        "the restarted plugin learned again from jobs it had heard of"
    # `rlsched explain` shows the job as the plugin scores it: the same history, read and left as it is, and the same
    # ended jobs slurmctld keeps.
    kept = history.read_bytes()
    cp = lab.run(str(rlsched_cli), "explain", str(queued), "--json", "--config", str(ph.config_path(lab)),
                 check=False, timeout=60)
    assert cp.returncode == 0 and not cp.stderr.strip(), cp.stderr
    x = json.loads(cp.stdout)
    assert x["site"]["score"] == pytest.approx(after[0], rel=1e-5), (x["site"], after)  # logged to 6 digits
    # The run time it shows: root's ended jobs (the two above, and any the lab ran at its start) ran a few seconds of
    # their limits; the job asks for 20 minutes.
    assert x["run_time"]["limit"] == LIMIT_S and x["run_time"]["ended_jobs"] >= 2, x["run_time"]
    assert 1 <= x["run_time"]["predicted"] <= 12, x["run_time"]
    assert history.read_bytes() == kept
    lab.run("scancel", str(queued), str(blocker))
