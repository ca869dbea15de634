"""The figures of test/e2e/fidelity.py on hand-made runs, without a cluster (ctest tools.fidelity_statistics).

Every expected value below is worked out by hand from the runs written here, not computed with fidelity.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import fidelity
from lab import Lab

HEADER = Lab.SACCT_FIELDS.replace(",", "|")
BEGIN = 1_700_000_000  # the first submit of a hand-made run, epoch seconds


def _stamp(epoch: int) -> str:
    import time
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch))


def write_run(folder: Path, waits: dict[str, int], workload: list[fidelity.WorkloadJob], first_id: int = 1,
              mode: str = "stock") -> Path:
    """A run folder as `fidelity.py run` leaves one: job i of the workload submitted at BEGIN + i, waiting
    waits[name], running 10 s; job ids from first_id."""
    folder.mkdir(parents=True)
    fidelity.save_workload(folder / "workload.json", workload, {"jobs": len(workload)})
    fields = HEADER.split("|")
    rows, ids = [HEADER], {}
    for k, job in enumerate(workload):
        job_id = first_id + k
        ids[job.name] = job_id
        submit = BEGIN + k
        start = submit + waits[job.name]
        row = dict.fromkeys(fields, "")
        row.update(JobIDRaw=str(job_id), JobID=str(job_id), JobName=job.name, Partition="all",
                   Submit=_stamp(submit), Start=_stamp(start), End=_stamp(start + 10), NodeList="a100-1")
        rows.append("|".join(row[f] for f in fields))
    (folder / "sacct.txt").write_text("\n".join(rows) + "\n")
    (folder / "run.json").write_text(json.dumps({"mode": mode, "job_ids": ids}))
    (folder / "slurm.conf").write_text("SchedulerParameters=bf_interval=2\n")
    return folder


def jobs(n: int) -> list[fidelity.WorkloadJob]:
    return [fidelity.WorkloadJob(f"fid-{k}", "cpu", float(k), "", 1, "", 10, 1) for k in range(n)]


def test_agreement_of_identical_and_reversed_orders() -> None:
    same = fidelity.agreement([0, 5, 9], [0, 5, 9], [1, 2, 3], [1, 2, 3])
    assert same["pair_order_share"] == 1.0
    assert same["spearman_wait"] == pytest.approx(1.0) and same["pearson_wait"] == pytest.approx(1.0)
    assert same["mean_abs_wait_error_s"] == 0
    # Reversed: every pair in the opposite order; waits 1,2,3 against 3,2,1: |2|+0+|2| / 3.
    reversed_ = fidelity.agreement([0, 5, 9], [9, 5, 0], [1, 2, 3], [3, 2, 1])
    assert reversed_["pair_order_share"] == 0.0
    assert reversed_["spearman_wait"] == pytest.approx(-1.0)
    assert reversed_["mean_abs_wait_error_s"] == pytest.approx(4 / 3)
    # One side starts two jobs together: that pair counts a half, the other two pairs agree: 2.5 / 3.
    tied = fidelity.agreement([0, 5, 9], [0, 5, 5], [0, 0, 0], [0, 0, 0])
    assert tied["pair_order_share"] == pytest.approx(2.5 / 3)
    assert math.isnan(tied["pearson_wait"])  # no spread: no correlation, not a perfect one


def test_repeat_matches_jobs_by_name_not_by_id(tmp_path: Path) -> None:
    work = jobs(4)
    # The second run's ids start at 101 and one pair of jobs swapped its waits.
    a = write_run(tmp_path / "a", {"fid-0": 0, "fid-1": 10, "fid-2": 20, "fid-3": 30}, work)
    b = write_run(tmp_path / "b", {"fid-0": 0, "fid-1": 10, "fid-2": 30, "fid-3": 20}, work, first_id=101)
    r = fidelity.repeat(a, b)
    assert r["jobs"] == 4
    # Starts (from the first submit): a 0, 11, 22, 33; b 0, 11, 32, 23: pairs (2,3) reversed, 5 of 6 agree.
    assert r["pair_order_share"] == pytest.approx(5 / 6)
    # Waits 0,10,20,30 against 0,10,30,20: ranks 1,2,3,4 and 1,2,4,3: Spearman 1 - 6*2/(4*15) = 0.8.
    assert r["spearman_wait"] == pytest.approx(0.8)
    assert r["mean_abs_wait_error_s"] == pytest.approx(5.0)
    assert r["mean_wait_real_s"] == pytest.approx(15.0) and r["mean_wait_sim_s"] == pytest.approx(15.0)


def test_repeat_refuses_runs_of_different_workloads(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", {"fid-0": 0, "fid-1": 1}, jobs(2))
    other = jobs(2)
    other[1].run = 99
    b = write_run(tmp_path / "b", {"fid-0": 0, "fid-1": 1}, other)
    with pytest.raises(SystemExit, match="different workloads"):
        fidelity.repeat(a, b)


def test_expected_averages_real_runs_and_replays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = jobs(3)
    a = write_run(tmp_path / "a", {"fid-0": 0, "fid-1": 10, "fid-2": 50}, work)
    b = write_run(tmp_path / "b", {"fid-0": 0, "fid-1": 30, "fid-2": 20}, work, first_id=11)
    # A stand-in replay: the same waits in every run, at phase 0 fid-1 waits 12 and at phase 1 it waits 18.
    calls = []

    def replay(run: Path, rlsched: Path, extra=()):
        phase = int(extra[extra.index("--bf-phase") + 1])
        calls.append((run.name, phase))
        ids = json.loads((run / "run.json").read_text())["job_ids"]
        waits = {"fid-0": 0, "fid-1": 12 if phase == 0 else 18, "fid-2": 30}
        out = {}
        for k, (name, i) in enumerate(sorted(ids.items())):
            out[str(i)] = fidelity.Outcome(str(i), BEGIN + k, BEGIN + k + waits[name], BEGIN + k + waits[name] + 10,
                                           "all")
        return out, run / "sim.csv"

    monkeypatch.setattr(fidelity, "simulate", replay)
    r = fidelity.expected([a, b], Path("/nonexistent/rlsched"))
    assert sorted(calls) == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]  # bf_interval=2: two phases per run
    assert r["replays"] == 4 and r["jobs"] == 3
    # Real mean waits: 0, 20, 35; simulated: 0, 15, 30. Mean absolute error 10/3; means 55/3 and 15.
    assert r["mean_wait_real_s"] == pytest.approx(55 / 3)
    assert r["mean_wait_sim_s"] == pytest.approx(15.0)
    assert r["mean_abs_wait_error_s"] == pytest.approx(10 / 3)
    assert r["spearman_wait"] == pytest.approx(1.0)  # the same order of mean waits
    assert r["by_kind"]["cpu"]["jobs"] == 3
    # Bounded slowdown (tau 10 s, every job runs 10 s): (wait + 10) / 10 per job and run, averaged per job.
    # Real: fid-0 1; fid-1 (2 + 4) / 2 = 3; fid-2 (6 + 3) / 2 = 4.5. Simulated: 1; (2.2 + 2.8) / 2 = 2.5; 4.
    assert r["mean_bsld_real"] == pytest.approx(8.5 / 3)
    assert r["mean_bsld_sim"] == pytest.approx(2.5)


def test_bounded_slowdown_is_at_least_one_and_bounded_below_tau() -> None:
    assert fidelity.bounded_slowdown(0, 100) == 1.0
    assert fidelity.bounded_slowdown(300, 100) == 4.0
    assert fidelity.bounded_slowdown(18, 2) == 2.0  # a 2 s job counts as 10 s: (18 + 2) / 10


def test_ranking_orders_modes_and_says_whether_the_simulator_agrees() -> None:
    def mode(wait_real: float, wait_sim: float, bsld_real: float, bsld_sim: float) -> dict:
        return {"mean_wait_real_s": wait_real, "mean_wait_sim_s": wait_sim, "mean_bsld_real": bsld_real,
                "mean_bsld_sim": bsld_sim}

    r = fidelity.ranking({"stock": mode(100, 90, 5.0, 4.0), "sjf": mode(70, 80, 3.0, 3.5),
                          "site": mode(60, 85, 2.5, 2.0)})
    assert r["wait_real_order"] == ["site", "sjf", "stock"]
    assert r["wait_sim_order"] == ["sjf", "site", "stock"]  # the simulator put SJF first: a wrong prediction
    assert not r["wait_sim_predicts_order"]
    assert r["wait_site_beats_both"]
    assert r["bsld_real_order"] == r["bsld_sim_order"] == ["site", "sjf", "stock"]
    assert r["bsld_sim_predicts_order"] and r["bsld_site_beats_both"]
    # The learned policy behind the plugin's SJF on the real cluster: it does not beat both.
    worse = fidelity.ranking({"stock": mode(100, 90, 5.0, 4.0), "sjf": mode(50, 80, 3.0, 3.5),
                              "site": mode(60, 85, 2.5, 2.0)})
    assert not worse["wait_site_beats_both"] and worse["bsld_site_beats_both"]
    # Without a site run there is nothing to beat with.
    assert not fidelity.ranking({"stock": mode(1, 1, 1, 1), "sjf": mode(2, 2, 2, 2)})["wait_site_beats_both"]


def test_predict_replays_every_mode_at_every_phase_and_says_which_model_beats_both(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # fid-0 runs 1000 s, fid-1 and fid-2 run 10 s (bounded slowdown: tau 10 s).
    work = [fidelity.WorkloadJob("fid-0", "cpu", 0.0, "", 1, "", 1000, 20),
            fidelity.WorkloadJob("fid-1", "cpu", 1.0, "", 1, "", 10, 1),
            fidelity.WorkloadJob("fid-2", "cpu", 2.0, "", 1, "", 10, 1)]
    a = write_run(tmp_path / "a", {"fid-0": 0, "fid-1": 0, "fid-2": 0}, work)
    b = write_run(tmp_path / "b", {"fid-0": 0, "fid-1": 0, "fid-2": 0}, work, first_id=11, mode="sjf")
    good, late, slow = tmp_path / "good.pt", tmp_path / "late.pt", tmp_path / "slow.pt"
    # Stand-in replays: each policy's waits of fid-0, fid-1, fid-2, the same at every phase.
    waits = {"multifactor": (0, 30, 30), "sjf": (20, 0, 5), f"model:{good}": (20, 0, 0),
             f"model:{late}": (0, 0, 10), f"model:{slow}": (40, 0, 0)}
    calls = []

    def replay(run: Path, rlsched: Path, extra=(), policy=None, mode=None):
        calls.append((run.name, int(extra[extra.index("--bf-phase") + 1]), policy, mode))
        assert extra[extra.index("--backfill") + 1] == "slurm"  # slurmctld's backfill, as the lab ran
        ids = json.loads((run / "run.json").read_text())["job_ids"]
        out = {}
        for name, i in ids.items():
            k = int(name.split("-")[1])
            out[str(i)] = fidelity.Outcome(str(i), BEGIN + k, BEGIN + k + waits[policy][k], None, "all")
        return out, run / "sim.csv"

    monkeypatch.setattr(fidelity, "simulate", replay)
    r = fidelity.predict([a, b], Path("/nonexistent/rlsched"), [good, late, slow])
    # Every mode replays both runs at both phases of bf_interval=2, each under its own policy and configuration.
    assert sorted(calls) == sorted((run, phase, policy, mode) for run in ("a", "b") for phase in (0, 1)
                                   for policy, mode in (("multifactor", "stock"), ("sjf", "sjf"),
                                                        (f"model:{good}", "site"), (f"model:{late}", "site"),
                                                        (f"model:{slow}", "site")))
    m = r["modes"]
    assert m["stock"]["replays"] == 4 and m["stock"]["jobs"] == 3
    # Mean waits: stock 20, sjf 25/3, good 20/3, late 10/3, slow 40/3. Bounded slowdown per job, then the mean:
    # stock (1 + 4 + 4) / 3 = 3; sjf (1.02 + 1 + 1.5) / 3; good (1.02 + 1 + 1) / 3; late (1 + 1 + 2) / 3;
    # slow (1.04 + 1 + 1) / 3.
    assert m["stock"]["mean_wait_s"] == pytest.approx(20) and m["sjf"]["mean_wait_s"] == pytest.approx(25 / 3)
    assert m[str(good)]["mean_wait_s"] == pytest.approx(20 / 3)
    assert m[str(late)]["mean_wait_s"] == pytest.approx(10 / 3)
    assert m[str(slow)]["mean_wait_s"] == pytest.approx(40 / 3)
    assert m["stock"]["mean_bsld"] == pytest.approx(3) and m["sjf"]["mean_bsld"] == pytest.approx(3.52 / 3)
    assert m[str(good)]["mean_bsld"] == pytest.approx(3.02 / 3)
    assert m[str(late)]["mean_bsld"] == pytest.approx(4 / 3)
    assert m[str(slow)]["mean_bsld"] == pytest.approx(3.04 / 3)
    # Below both on both figures: only the good model. The late one waits less than SJF on average but its short
    # job waits, so its slowdown is higher; the slow one has the lower slowdown and the longer mean wait.
    assert m[str(good)]["beats_stock_and_sjf"] is True
    assert m[str(late)]["beats_stock_and_sjf"] is False
    assert m[str(slow)]["beats_stock_and_sjf"] is False
    assert "beats_stock_and_sjf" not in m["sjf"]


def test_predict_says_which_job_a_replay_never_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = write_run(tmp_path / "a", {"fid-0": 0, "fid-1": 0}, jobs(2))

    def replay(run: Path, rlsched: Path, extra=(), policy=None, mode=None):
        ids = json.loads((run / "run.json").read_text())["job_ids"]
        return {str(ids["fid-0"]): fidelity.Outcome(str(ids["fid-0"]), BEGIN, BEGIN, BEGIN + 10, "all")}, run / "x"

    monkeypatch.setattr(fidelity, "simulate", replay)
    with pytest.raises(RuntimeError, match="never started fid-1"):
        fidelity.predict([a], Path("/nonexistent/rlsched"), [])
