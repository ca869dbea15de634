"""Simulator fidelity on the real cluster: how closely `rlsched simulate` replays what slurmctld did.

A seeded workload (CPU-only, typed GPU, NPU and multi-partition jobs; run times and time limits as users set them) is
submitted at its arrival times to a lab cluster (test/e2e/lab.py: real slurmctld, slurmd, slurmdbd, MariaDB), stock
multifactor + backfill or with site_factor/rlsched loaded, dumped with the sacct command of docs/sacct.md, and
replayed by `rlsched simulate` on the same slurm.conf. The comparison is per job and in aggregate (docs/fidelity.md).

    python3 test/e2e/fidelity.py run --mode stock --out build/fidelity/stock       # ~25 min of wall time
    python3 test/e2e/fidelity.py run --mode site --out build/fidelity/site --plugin-dir build/release/plugin
    python3 test/e2e/fidelity.py run --mode sjf --out build/fidelity/sjf --plugin-dir build/release/plugin
    python3 test/e2e/fidelity.py compare build/fidelity/stock                       # replay + report, seconds
    python3 test/e2e/fidelity.py effect build/fidelity/stock build/fidelity/site   # the policy's effect, real/sim
    python3 test/e2e/fidelity.py predict build/fidelity/stock --model M.pt          # M.pt against stock and SJF, sim

Modes: stock (multifactor), site (site_factor/rlsched serving a model), sjf (the plugin with no model: its fallback
SJF ranks, what an admin gets without the learned policy).
A run folder keeps what a replay needs (workload.json, sacct.txt, slurm.conf, gres.conf, rlsched.yaml and the model
for site runs, run.json) so the simulator can be changed and replayed many times without the cluster.
Only the Python standard library is used.
"""

from __future__ import annotations

import argparse
import calendar
import csv
import json
import re
import math
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))

REPO = Path(__file__).resolve().parents[2]
DEFAULT_MODEL = REPO / "policy_models" / "default" / "policy.pt"
LIMITS_MIN = (1, 2, 3, 5, 10, 15, 20, 30, 45, 60)  # time limits users pick, minutes


# ---- workload ------------------------------------------------------------------------------------------------------
@dataclass
class WorkloadJob:
    name: str
    kind: str          # cpu, h200, a100, npu, multi-gpu, multi-cpu
    offset: float      # seconds after the start of the run
    partitions: str    # -p value ("" = the default partition)
    cpus: int
    gres: str          # --gres value ("" = none)
    run: int           # seconds the job sleeps
    limit_min: int     # -t value, minutes

    def sbatch_args(self) -> list[str]:
        args = ["-J", self.name, "-c", str(self.cpus), "-t", str(self.limit_min), "-o", "/dev/null"]
        if self.partitions:
            args += ["-p", self.partitions]
        if self.gres:
            args.append(f"--gres={self.gres}")
        return args


KINDS = (("cpu", 0.34), ("h200", 0.14), ("a100", 0.14), ("npu", 0.14), ("multi-gpu", 0.12), ("multi-cpu", 0.12))


def generate(jobs: int = 200, seed: int = 1, run_range: tuple[int, int] = (20, 240), span: float = 1100.0) -> list[WorkloadJob]:
    """A seeded workload: Poisson arrivals over about `span` seconds, log-uniform run times in run_range, and the
    time limit a user would give (a round number of minutes, 1.2-5x the run time)."""
    rng = random.Random(seed)
    names, weights = zip(*KINDS)
    out: list[WorkloadJob] = []
    t = 0.0
    lo, hi = run_range
    for i in range(jobs):
        kind = rng.choices(names, weights)[0]
        run = int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
        wanted = run * rng.choice((1.2, 1.5, 2, 3, 5)) / 60
        limit = next((m for m in LIMITS_MIN if m >= wanted), LIMITS_MIN[-1])
        if kind == "cpu":
            partitions, cpus, gres = "", rng.choices((1, 2, 4, 8), (6, 3, 2, 1))[0], ""
        elif kind in ("h200", "a100"):
            partitions, cpus, gres = kind, rng.choice((1, 2)), f"gpu:{kind}:{rng.choices((1, 2, 4), (5, 3, 2))[0]}"
        elif kind == "npu":
            partitions, cpus, gres = "npu", rng.choice((1, 2)), f"npu:{rng.choices((1, 2, 4, 8), (4, 3, 2, 1))[0]}"
        elif kind == "multi-gpu":  # any GPU type, either GPU partition
            partitions, cpus, gres = "h200,a100", rng.choice((1, 2)), f"gpu:{rng.choices((1, 2), (3, 1))[0]}"
        else:  # multi-cpu: CPU work allowed on either accelerator partition
            partitions, cpus, gres = "npu,a100", rng.choice((1, 2)), ""
        out.append(WorkloadJob(f"fid-{i:03d}-{kind}", kind, round(t, 2), partitions, cpus, gres, run, limit))
        t += rng.expovariate(jobs / span)
    return out


def save_workload(path: Path, workload: Sequence[WorkloadJob], meta: dict) -> None:
    path.write_text(json.dumps({"meta": meta, "jobs": [asdict(j) for j in workload]}, indent=1) + "\n")


def load_workload(path: Path) -> list[WorkloadJob]:
    return [WorkloadJob(**j) for j in json.loads(path.read_text())["jobs"]]


# ---- the real run --------------------------------------------------------------------------------------------------
def _snapshot_priorities(lab, path: Path, stop: threading.Event, period: float = 5.0) -> None:
    """Appends sprio of the pending jobs every `period` seconds (what slurmctld ranked by), one JSON line each."""
    with path.open("a") as f:
        while not stop.wait(period):
            try:
                rows = lab.sprio()
            except Exception as e:  # noqa: BLE001 - a missed snapshot is not a failed run
                rows = [{"error": str(e)}]
            f.write(json.dumps({"t": time.time(), "sprio": rows}) + "\n")
            f.flush()


def run_real(out: Path, workload: Sequence[WorkloadJob], mode: str, plugin_dirs: Sequence[str] = (),
             model: Path = DEFAULT_MODEL, log=print, finish_timeout: float = 3600,
             debug_backfill: bool = False) -> dict:
    """Starts a lab (mode 'stock'; 'site', site_factor/rlsched in enforce mode serving `model`; or 'sjf', the plugin
    with no model, its fallback SJF ranking at the same score_scale), submits the
    workload at its arrival times, waits for every job to end, dumps it with docs/sacct.md's command and keeps, in
    `out`, what a replay needs, and slurmctld's log. With `debug_backfill`, slurmctld logs every backfill decision
    (DebugFlags=Backfill,BackfillMap: each job's planned start and the reserved nodes), to compare with the
    simulator's. Returns the run's record (also written to out/run.json)."""
    from lab import Lab  # noqa: E402 - the lab needs root and Slurm; compare does not
    import rlsched_plugins
    out.mkdir(parents=True, exist_ok=True)
    plugged = mode in ("site", "sjf")
    lab = Lab(plugin_dirs=plugin_dirs if plugged else (), daemon_env=_openblas_env())
    if plugged:
        rlsched_plugins.find_plugins(plugin_dirs, (rlsched_plugins.SITE_FACTOR_SO,))
        lab.etc.mkdir(parents=True, exist_ok=True)
        installed = None
        if mode == "site":
            installed = lab.root / "models" / "policy.pt"
            installed.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(model, installed)
            installed.chmod(0o600)
        config = rlsched_plugins.write_config(
            lab.etc / "rlsched.yaml", rlsched_plugins.rlsched_config(mode="enforce", model=installed, fallback="sjf"))
        lab.settings_override.update(rlsched_plugins.slurm_settings(config, site_factor=True, job_submit=False))
        lab.settings_override["SlurmctldDebug"] = "debug"  # the plugin's per-cycle update line
    if debug_backfill:
        lab.settings_override["DebugFlags"] = "Backfill,BackfillMap"
        lab.settings_override["SlurmctldDebug"] = "debug"
    record: dict = {"mode": mode, "jobs": len(workload), "debug_backfill": debug_backfill}
    try:
        lab.start()
        log(f"lab up in {lab.timings['total']:.1f}s at {lab.root}")
        stop = threading.Event()
        snapshots = threading.Thread(target=_snapshot_priorities, args=(lab, out / "sprio.jsonl", stop), daemon=True)
        (out / "sprio.jsonl").write_text("")
        begin = int(time.time()) + 2
        time.sleep(begin - time.time())
        record["start_utc"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(begin))
        snapshots.start()
        ids: dict[str, int] = {}
        late = 0.0
        for job in sorted(workload, key=lambda j: j.offset):
            delay = begin + job.offset - time.time()
            if delay > 0:
                time.sleep(delay)
            else:
                late = max(late, -delay)
            ids[job.name] = lab.sbatch(*job.sbatch_args(), wrap=f"sleep {job.run}")
        record["submitted_s"] = round(time.time() - begin, 1)
        record["latest_submission_s"] = round(late, 2)
        log(f"{len(ids)} jobs submitted in {record['submitted_s']}s (at most {late:.2f}s late)")

        def finished() -> bool:
            active = [r for r in lab.squeue(ids.values()) if r["state"] in ("PENDING", "RUNNING", "CONFIGURING",
                                                                               "COMPLETING")]
            return not active
        lab.wait_for(finished, finish_timeout, "every workload job to end")
        stop.set()
        record["ended_s"] = round(time.time() - begin, 1)
        lab.sacct_dump(out / "sacct.txt", starttime=record["start_utc"], expect=ids.values(), timeout=120)
        for name in ("slurm.conf", "gres.conf", "rlsched.yaml"):
            if (lab.etc / name).exists():
                shutil.copyfile(lab.etc / name, out / name)
        if mode == "site":
            shutil.copyfile(lab.root / "models" / "policy.pt", out / "policy.pt")
        if plugged:
            updates = lab.log_lines(r"site_factor/rlsched: update scored")
            record["site_updates"] = len(updates)
            (out / "site_updates.log").write_text("\n".join(updates) + "\n")
        shutil.copyfile(lab.slurmctld_log, out / "slurmctld.log")
        record["job_ids"] = ids
        log(f"all jobs ended {record['ended_s']}s after the start; dump in {out / 'sacct.txt'}")
    finally:
        lab.stop()
    (out / "run.json").write_text(json.dumps(record, indent=1) + "\n")
    return record


def _openblas_env() -> dict[str, str]:
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return {}
    return {"OPENBLAS_CORETYPE": "SkylakeX"} if "avx512f" in flags else (
        {"OPENBLAS_CORETYPE": "Haswell"} if "avx2" in flags else {})


# ---- reading both sides --------------------------------------------------------------------------------------------
def _epoch(stamp: str) -> int | None:
    if not stamp or stamp in ("Unknown", "None"):
        return None
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%S"))


@dataclass
class Outcome:
    id: str
    submit: int
    start: int | None
    end: int | None
    partition: str
    nodes: str = ""  # the nodes of its (last) run, comma-separated ("" when unknown)

    @property
    def wait(self) -> int | None:
        return None if self.start is None else self.start - self.submit


def read_real(dump: Path) -> dict[str, Outcome]:
    """The jobs of a sacct dump (steps left out): id -> submit, start, end, the partition it ran in."""
    lines = dump.read_text().splitlines()
    header = lines[0].split("|")
    out: dict[str, Outcome] = {}
    for line in lines[1:]:
        row = dict(zip(header, line.split("|")))
        if "." in row["JobIDRaw"]:
            continue
        out[row["JobIDRaw"]] = Outcome(row["JobIDRaw"], _epoch(row["Submit"]), _epoch(row["Start"]),
                                       _epoch(row["End"]), row["Partition"], row.get("NodeList", ""))
    return out


def replay_input(run: Path) -> Path:
    """The dump as the simulator reads it, with one correction: sacct records a job submitted to several partitions
    (-p npu,a100) under the partition it ran in, so the partitions it was submitted to are put back from the
    workload (matched by job name). Everything else is the dump as sacct wrote it."""
    workload = {j.name: j for j in load_workload(run / "workload.json")}
    lines = (run / "sacct.txt").read_text().splitlines()
    header = lines[0].split("|")
    name_at, part_at = header.index("JobName"), header.index("Partition")
    fixed = [lines[0]]
    for line in lines[1:]:
        fields = line.split("|")
        job = workload.get(fields[name_at])
        if job is not None and "," in job.partitions:
            fields[part_at] = job.partitions
        fixed.append("|".join(fields))
    path = run / "replay.txt"
    path.write_text("\n".join(fixed) + "\n")
    return path


def _bf_interval(conf: Path) -> int:
    """slurm.conf's bf_interval (SchedulerParameters), Slurm's 30 s without one."""
    for line in conf.read_text().splitlines():
        m = re.search(r"bf_interval=(\d+)", line)
        if line.startswith("SchedulerParameters=") and m:
            return int(m.group(1))
    return 30


def backfill_phase(run: Path) -> int | None:
    """Where slurmctld's backfill cycles fell on their bf_interval grid in this run, counted from the first submit
    in sacct's whole seconds (what `rlsched simulate --bf-phase` takes); None without a log of them
    (DebugFlags=Backfill: `--debug-backfill`)."""
    log = run / "slurmctld.log"
    if not log.exists():
        return None
    interval = _bf_interval(run / "slurm.conf")
    submits = [o.submit for o in read_real(run / "sacct.txt").values() if o.submit is not None]
    with log.open(errors="replace") as f:
        for line in f:
            if "_attempt_backfill: beginning" in line:
                cycle = _epoch(line[1:20])
                if cycle is not None and submits:
                    return (cycle - min(submits)) % interval
    return None


def simulate(run: Path, rlsched: Path, extra: Sequence[str] = (), policy: str | None = None,
             mode: str | None = None) -> tuple[dict[str, Outcome], Path]:
    """Replays the run with `rlsched simulate` on its slurm.conf; returns the simulated outcomes by job id. By
    default the replay serves what the run served (its mode); `policy` and `mode` replay the same arrivals as another
    mode would have served them (`predict`)."""
    record = json.loads((run / "run.json").read_text())
    mode = mode or record["mode"]
    policy = policy or {"stock": "multifactor", "sjf": "sjf"}.get(mode, f"model:{run / 'policy.pt'}")
    csv_path = run / "sim.csv"
    cmd = [str(rlsched), "simulate", "--trace", str(replay_input(run)), "--cluster", str(run / "slurm.conf"),
           "--policy", policy, "--outcomes", str(csv_path), "--json", str(run / "sim.json"), *extra]
    help_text = _simulate_help(rlsched)
    if "--config" in help_text:
        cmd += ["--config", str(replay_config(run, mode))]
    phase = backfill_phase(run)
    if phase is not None and "--bf-phase" in help_text and "--bf-phase" not in extra:
        cmd += ["--bf-phase", str(phase)]
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if cp.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({cp.returncode}):\n{cp.stdout}\n{cp.stderr}")
    out: dict[str, Outcome] = {}
    with csv_path.open() as f:
        for row in csv.DictReader(f):
            out[row["id"]] = Outcome(row["id"], int(row["submit"]), int(row["start"]) if row["start"] else None,
                                     int(row["end"]) if row["end"] else None, row["partition"],
                                     row.get("nodes", ""))
    return out, csv_path


SLEEP_CLASS = ('  - name: "sleep"\n    match:\n      job_name: "fid-*"\n    speeds:\n'
               + "".join(f'      {t}: 1.0\n' for t in ("h200", "a100", "910b")))


def replay_config(run: Path, mode: str) -> Path:
    """The rlsched.yaml the replay applies. The workload's jobs sleep, as long on every accelerator type, so the
    simulator must not rescale the run time of a typeless job it places on another type than slurmctld did. A site
    run: the lab's own file (score_scale is the site factor's weight) with one job class added, the workload's jobs
    at speed 1 on every type (a stock run replayed as a site or sjf run: the file the lab would have written). A
    stock run had no rlsched.yaml: every type at speed 1 (without --config the simulator would apply the shipped
    example's speeds). An sjf run is a site run without a model."""
    import rlsched_plugins
    if mode in ("site", "sjf"):
        lab_file = run / "rlsched.yaml"  # a stock run has none: the file the lab writes for the plugin
        text = (lab_file.read_text() if lab_file.exists() else "# written by test/e2e/fidelity.py: the lab's file\n"
                + rlsched_plugins.to_yaml(rlsched_plugins.rlsched_config()) + "\n")
        if SLEEP_CLASS in text and lab_file.exists():  # the lab's file already gave the jobs speed 1
            return lab_file
        if SLEEP_CLASS not in text:
            text = (text.replace("job_classes:\n", "job_classes:\n" + SLEEP_CLASS, 1) if "\njob_classes:\n" in text
                    else text + "job_classes:\n" + SLEEP_CLASS)
        path = run / "replay-site.yaml"
        path.write_text(text)
        return path
    path = run / "replay-stock.yaml"
    types = [{"name": t["name"], "gres": t["gres"], "speed": 1.0} for t in rlsched_plugins.LAB_ACCELERATOR_TYPES]
    path.write_text("# written by test/e2e/fidelity.py: stock Slurm, every type as fast (the jobs sleep)\n"
                    + rlsched_plugins.to_yaml({"mode": "shadow", "fallback": "sjf", "score_scale": 1,
                                               "accelerator_types": types}) + "\n")
    return path


_help_cache: dict[str, str] = {}


def _simulate_help(rlsched: Path) -> str:
    if str(rlsched) not in _help_cache:
        cp = subprocess.run([str(rlsched), "simulate", "--help"], capture_output=True, text=True, timeout=60)
        _help_cache[str(rlsched)] = cp.stdout
    return _help_cache[str(rlsched)]


# ---- statistics ----------------------------------------------------------------------------------------------------
def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, ties sharing their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    return pearson(ranks(x), ranks(y))


def pair_order_share(real: Sequence[float], sim: Sequence[float]) -> float:
    """Share of job pairs started in the same order: 1 when both say the same (a tie counts as an order, 'together'),
    0.5 when one has them together and the other not, 0 when the orders are opposite."""
    agree, pairs = 0.0, 0
    n = len(real)
    for i in range(n):
        for j in range(i + 1, n):
            a = (real[i] > real[j]) - (real[i] < real[j])
            b = (sim[i] > sim[j]) - (sim[i] < sim[j])
            agree += 1.0 if a == b else (0.5 if a == 0 or b == 0 else 0.0)
            pairs += 1
    return agree / pairs if pairs else float("nan")


# ---- comparison ----------------------------------------------------------------------------------------------------
def agreement(real_start: Sequence[float], sim_start: Sequence[float], real_wait: Sequence[float],
              sim_wait: Sequence[float]) -> dict:
    """The figures every comparison reports, job by job (the same jobs in the same order on both sides; start times
    on a common clock)."""
    n = len(real_wait)
    return {"pair_order_share": pair_order_share(real_start, sim_start),
            "spearman_wait": spearman(real_wait, sim_wait),
            "pearson_wait": pearson(real_wait, sim_wait),
            "mean_abs_wait_error_s": sum(abs(a - b) for a, b in zip(real_wait, sim_wait)) / n,
            "mean_wait_real_s": sum(real_wait) / n,
            "mean_wait_sim_s": sum(sim_wait) / n}


def compare(run: Path, rlsched: Path, extra: Sequence[str] = (), top: int = 10) -> dict:
    """Real against simulated, per job and in aggregate; the `top` biggest wait disagreements with what differed."""
    real = read_real(run / "sacct.txt")
    sim, _ = simulate(run, rlsched, extra)
    workload = {j.name: j for j in load_workload(run / "workload.json")}
    names = {str(v): k for k, v in json.loads((run / "run.json").read_text())["job_ids"].items()}
    cluster_cpus = _cluster_cpus(run / "slurm.conf")
    ids = [i for i in real if i in sim and real[i].start is not None and sim[i].start is not None]
    missing = sorted(set(real) - set(ids), key=int)
    rw = [real[i].wait for i in ids]
    sw = [sim[i].wait for i in ids]
    rs = [real[i].start for i in ids]
    ss = [sim[i].start for i in ids]

    def makespan(side: dict[str, Outcome]) -> int:
        return max(side[i].end for i in ids) - min(side[i].submit for i in ids)

    def utilisation(side: dict[str, Outcome]) -> float:
        used = sum(workload[names[i]].cpus * (side[i].end - side[i].start) for i in ids if i in names)
        return used / (cluster_cpus * makespan(side))

    report = {
        "run": str(run), "mode": json.loads((run / "run.json").read_text())["mode"], "jobs": len(ids),
        "missing": missing,
        **agreement(rs, ss, rw, sw),
        "makespan_real_s": makespan(real), "makespan_sim_s": makespan(sim),
        "cpu_utilisation_real": utilisation(real), "cpu_utilisation_sim": utilisation(sim),
        "partition_agreement": sum(real[i].partition == sim[i].partition for i in ids) / len(ids),
        "bf_phase": next((int(extra[k + 1]) for k in range(len(extra) - 1) if extra[k] == "--bf-phase"),
                         backfill_phase(run)),
    }
    # Which node: only where both sides name one (sacct's NodeList; the simulator's outcomes since it has them).
    named = [i for i in ids if real[i].nodes and sim[i].nodes and "[" not in real[i].nodes]
    if named:
        report["node_agreement"] = sum(real[i].nodes == sim[i].nodes for i in named) / len(named)
    report["mean_wait_ratio"] = report["mean_wait_sim_s"] / report["mean_wait_real_s"] if report[
        "mean_wait_real_s"] else float("nan")
    by_kind: dict[str, list[tuple[int, int]]] = {}
    for i in ids:
        kind = workload[names[i]].kind if i in names else "?"
        by_kind.setdefault(kind, []).append((real[i].wait, sim[i].wait))
    report["by_kind"] = {k: {"jobs": len(v), "mean_wait_real_s": sum(a for a, _ in v) / len(v),
                             "mean_wait_sim_s": sum(b for _, b in v) / len(v)} for k, v in sorted(by_kind.items())}
    rows = []
    for i in sorted(ids, key=lambda i: -abs(real[i].wait - sim[i].wait))[:top]:
        j = workload.get(names.get(i, ""))
        # Jobs started before this one in one run and after it in the other: who overtook whom.
        ahead_sim = sum(1 for k in ids if sim[k].start < sim[i].start and real[k].start > real[i].start)
        ahead_real = sum(1 for k in ids if real[k].start < real[i].start and sim[k].start > sim[i].start)
        rows.append({"id": i, "name": j.name if j else "?", "kind": j.kind if j else "?",
                     "cpus": j.cpus if j else 0, "gres": j.gres if j else "", "run": j.run if j else 0,
                     "limit_min": j.limit_min if j else 0, "partition_real": real[i].partition,
                     "partition_sim": sim[i].partition, "nodes_real": real[i].nodes, "nodes_sim": sim[i].nodes,
                     "wait_real": real[i].wait, "wait_sim": sim[i].wait,
                     "ahead_only_in_sim": ahead_sim, "ahead_only_in_real": ahead_real})
    report["biggest_disagreements"] = rows
    return report


def _by_name(run: Path) -> dict[str, Outcome]:
    """The run's real outcomes keyed by workload job name (job ids differ between runs)."""
    real = read_real(run / "sacct.txt")
    ids = json.loads((run / "run.json").read_text())["job_ids"]
    return {name: real[str(i)] for name, i in ids.items() if str(i) in real}


def _same_workload(runs: Sequence[Path]) -> list[WorkloadJob]:
    for run in runs:
        if not (run / "run.json").exists():
            sys.exit(f"{run}: not a run folder (no run.json)")
    workload = load_workload(runs[0] / "workload.json")
    for run in runs[1:]:
        if load_workload(run / "workload.json") != workload:
            sys.exit(f"{runs[0]} and {run} ran different workloads: nothing to compare")
    return workload


def repeat(first: Path, second: Path) -> dict:
    """Two real runs of the same workload against each other, with the figures `compare` gives a replay: how
    closely slurmctld repeats itself when only sub-second timing differs. No simulator can agree with one run
    better than another run of slurmctld does, so this is the ceiling of each figure on this workload."""
    _same_workload([first, second])
    a, b = _by_name(first), _by_name(second)
    names = sorted(n for n in a if n in b and a[n].start is not None and b[n].start is not None)
    begin_a, begin_b = min(a[n].submit for n in names), min(b[n].submit for n in names)
    return {"runs": [str(first), str(second)], "jobs": len(names),
            **agreement([a[n].start - begin_a for n in names], [b[n].start - begin_b for n in names],
                        [a[n].wait for n in names], [b[n].wait for n in names]),
            "same_node": sum(a[n].nodes == b[n].nodes for n in names) / len(names)}


def expected(runs: Sequence[Path], rlsched: Path, extra: Sequence[str] = ()) -> dict:
    """The simulator's expected waits against slurmctld's: each job's wait averaged over the real runs of the same
    workload, and over the replays of every run at every phase of the backfill grid (the sub-second timing that
    decides which of two jobs takes a freed node is in neither sacct's record nor anyone's control, so a job's
    wait in one run is one draw; `repeat` measures how much they scatter). Start times are counted from each run's
    first submit. Also the mean bounded slowdown, real and simulated (bounded_slowdown)."""
    workload = _same_workload(runs)
    interval = _bf_interval(runs[0] / "slurm.conf")
    real_start: dict[str, list[int]] = {}
    real_wait: dict[str, list[int]] = {}
    sim_start: dict[str, list[int]] = {}
    sim_wait: dict[str, list[int]] = {}
    for run in runs:
        real = _by_name(run)
        begin = min(o.submit for o in real.values())
        ids = json.loads((run / "run.json").read_text())["job_ids"]
        for name, o in real.items():
            if o.start is not None:
                real_start.setdefault(name, []).append(o.start - begin)
                real_wait.setdefault(name, []).append(o.wait)
        for phase in range(interval):
            sim, _ = simulate(run, rlsched, [*extra, "--bf-phase", str(phase)])
            for name, i in ids.items():
                o = sim.get(str(i))
                if o is not None and o.start is not None:
                    sim_start.setdefault(name, []).append(o.start - begin)
                    sim_wait.setdefault(name, []).append(o.wait)
    full = len(runs) * interval
    names = sorted(n for n in real_wait if len(real_wait[n]) == len(runs) and len(sim_wait.get(n, [])) == full)

    def mean(v: Sequence[float]) -> float:
        return sum(v) / len(v)

    run_time = {j.name: j.run for j in workload}
    kinds = {j.name: j.kind for j in workload}
    report = {"runs": [str(r) for r in runs], "mode": json.loads((runs[0] / "run.json").read_text())["mode"],
              "jobs": len(names), "replays": full,
              **agreement([mean(real_start[n]) for n in names], [mean(sim_start[n]) for n in names],
                          [mean(real_wait[n]) for n in names], [mean(sim_wait[n]) for n in names])}
    report["mean_wait_ratio"] = report["mean_wait_sim_s"] / report["mean_wait_real_s"]
    for side, waits in (("real", real_wait), ("sim", sim_wait)):
        report[f"mean_bsld_{side}"] = mean([mean([bounded_slowdown(w, run_time[n]) for w in waits[n]])
                                            for n in names])
    by_kind: dict[str, list[str]] = {}
    for n in names:
        by_kind.setdefault(kinds[n], []).append(n)
    report["by_kind"] = {k: {"jobs": len(v), "mean_wait_real_s": sum(mean(real_wait[n]) for n in v) / len(v),
                             "mean_wait_sim_s": sum(mean(sim_wait[n]) for n in v) / len(v)}
                         for k, v in sorted(by_kind.items())}
    return report


# How a lab run is replayed when judged or ranked: slurmctld's own backfill (sched/backfill), not EASY.
LAB_BACKFILL = ("--backfill", "slurm")


def predict(runs: Sequence[Path], rlsched: Path, models: Sequence[Path], extra: Sequence[str] = ()) -> dict:
    """What the simulator expects of each mode on the runs' workload, before the lab runs it: stock multifactor, the
    plugin's SJF with no model, and each model served by site_factor/rlsched, each replayed on every run's own
    arrivals at every phase of the backfill grid (as `expected` replays). Mean wait and mean bounded slowdown over
    every job of every replay. A candidate default must come out below stock and SJF on both before it is worth a
    lab run (docs/fidelity.md)."""
    run_time = {j.name: j.run for j in _same_workload(runs)}
    extra = [*LAB_BACKFILL, *extra]
    modes = {"stock": ("multifactor", "stock"), "sjf": ("sjf", "sjf")}
    modes.update({str(m): (f"model:{Path(m).resolve()}", "site") for m in models})
    figures: dict[str, dict] = {}
    for label, (policy, mode) in modes.items():
        waits, bslds, replays = [], [], 0
        for run in runs:
            ids = json.loads((run / "run.json").read_text())["job_ids"]
            for phase in range(_bf_interval(run / "slurm.conf")):
                sim, _ = simulate(run, rlsched, [*extra, "--bf-phase", str(phase)], policy=policy, mode=mode)
                replays += 1
                for name, i in ids.items():
                    o = sim.get(str(i))
                    if o is None or o.start is None:
                        raise RuntimeError(f"{run}: the replay under {policy} (phase {phase}) never started {name}")
                    waits.append(o.wait)
                    bslds.append(bounded_slowdown(o.wait, run_time[name]))
        figures[label] = {"policy": policy, "replays": replays, "jobs": len(waits) // replays,
                          "mean_wait_s": sum(waits) / len(waits), "mean_bsld": sum(bslds) / len(bslds)}
    for label in modes:
        if label not in ("stock", "sjf"):
            figures[label]["beats_stock_and_sjf"] = all(
                figures[label][k] < figures[m][k] for m in ("stock", "sjf") for k in ("mean_wait_s", "mean_bsld"))
    return {"runs": [str(r) for r in runs], "modes": figures}


def print_predict(r: dict) -> None:
    print(f"simulated on the arrivals of {', '.join(r['runs'])}:")
    print(f"  {'mode':<48} {'replays':>7} {'mean wait (s)':>14} {'mean bsld':>10}  below stock and sjf on both")
    for label, f in r["modes"].items():
        verdict = {True: "yes", False: "no"}.get(f.get("beats_stock_and_sjf"), "")
        print(f"  {label[-48:]:<48} {f['replays']:>7} {f['mean_wait_s']:>14.1f} {f['mean_bsld']:>10.2f}  {verdict}")


def bounded_slowdown(wait: float, run: float, tau: float = 10) -> float:
    """(wait + run) / max(run, tau), at least 1: the simulator's and the policy protocol's measure (tau 10 s)."""
    return max(1.0, (wait + run) / max(run, tau))


MODES = ("stock", "sjf", "site")


def ranking(expected_by_mode: dict[str, dict]) -> dict:
    """The modes ordered by mean wait and by mean bounded slowdown, real (over the runs) and simulated (over the
    replays), from `expected` of each mode: whether the learned policy (site) beats stock multifactor and the
    plugin's SJF fallback on the real cluster, and whether the simulator predicted the same order."""
    modes = [m for m in MODES if m in expected_by_mode]
    out: dict = {"modes": modes}
    for metric, key in (("wait", "mean_wait_{}_s"), ("bsld", "mean_bsld_{}")):
        for side in ("real", "sim"):
            values = {m: expected_by_mode[m][key.format(side)] for m in modes}
            out[f"{metric}_{side}"] = values
            out[f"{metric}_{side}_order"] = sorted(modes, key=lambda m: values[m])
        out[f"{metric}_sim_predicts_order"] = out[f"{metric}_real_order"] == out[f"{metric}_sim_order"]
        real = out[f"{metric}_real"]
        out[f"{metric}_site_beats_both"] = ("site" in real and len(modes) > 1
                                            and all(real["site"] < real[m] for m in modes if m != "site"))
    return out


def print_ranking(r: dict) -> None:
    for metric, label in (("wait", "mean wait (s)"), ("bsld", "mean bounded slowdown")):
        print(f"{label}, real / simulated: "
              + ", ".join(f"{m} {r[metric + '_real'][m]:.2f} / {r[metric + '_sim'][m]:.2f}" for m in r["modes"]))
        print(f"  order real: {' < '.join(r[metric + '_real_order'])}; simulated: "
              f"{' < '.join(r[metric + '_sim_order'])} ({'the same' if r[metric + '_sim_predicts_order'] else 'NOT the same'}); "
              f"site below every other mode on the real cluster: {'yes' if r[metric + '_site_beats_both'] else 'no'}")


def phase_sweep(run: Path, rlsched: Path, extra: Sequence[str] = ()) -> dict:
    """The replay at every phase of the backfill grid: how much of the agreement is the simulator and how much the
    second in which slurmctld's backfill thread happened to wake. Mean and range of each figure."""
    interval = _bf_interval(run / "slurm.conf")
    keys = ("pair_order_share", "spearman_wait", "pearson_wait", "mean_wait_ratio")
    rows = [compare(run, rlsched, [*extra, "--bf-phase", str(p)], top=0) for p in range(interval)]
    return {k: {"mean": sum(r[k] for r in rows) / len(rows), "min": min(r[k] for r in rows),
                "max": max(r[k] for r in rows)} for k in keys} | {"phases": interval}


def _cluster_cpus(conf: Path) -> int:
    total = 0
    for line in conf.read_text().splitlines():
        if line.startswith("NodeName="):
            for word in line.split():
                if word.startswith("CPUs="):
                    total += int(word[5:])
    return total


def print_report(r: dict) -> None:
    print(f"{r['run']} ({r['mode']}): {r['jobs']} jobs compared"
          + (f", {len(r['missing'])} not (never started on one side): {', '.join(r['missing'])}" if r["missing"] else ""))
    table = [("pairs started in the same order", f"{r['pair_order_share']:.3f}"),
             ("Spearman of waits", f"{r['spearman_wait']:.3f}"),
             ("Pearson of waits", f"{r['pearson_wait']:.3f}"),
             ("mean absolute wait error (s)", f"{r['mean_abs_wait_error_s']:.1f}"),
             ("mean wait real / sim (s)", f"{r['mean_wait_real_s']:.1f} / {r['mean_wait_sim_s']:.1f} "
                                          f"(x{r['mean_wait_ratio']:.2f})"),
             ("makespan real / sim (s)", f"{r['makespan_real_s']} / {r['makespan_sim_s']}"),
             ("CPU utilisation real / sim", f"{r['cpu_utilisation_real']:.2f} / {r['cpu_utilisation_sim']:.2f}"),
             ("same partition", f"{r['partition_agreement']:.3f}")]
    if "node_agreement" in r:
        table.append(("same node", f"{r['node_agreement']:.3f}"))
    table.append(("backfill phase (--bf-phase)", "default" if r.get("bf_phase") is None else str(r["bf_phase"])))
    width = max(len(a) for a, _ in table)
    for a, b in table:
        print(f"  {a:<{width}}  {b}")
    print("  mean wait by kind (real / sim, s):")
    for k, v in r["by_kind"].items():
        print(f"    {k:<10} {v['jobs']:>4} jobs  {v['mean_wait_real_s']:7.1f} / {v['mean_wait_sim_s']:7.1f}")
    print("  biggest disagreements:")
    print("    id     name              cpus gres          run lim  part real/sim    node real/sim    wait real/sim  "
          "overtaken by (sim only / real only)")
    for d in r["biggest_disagreements"]:
        print(f"    {d['id']:<6} {d['name']:<17} {d['cpus']:>4} {d['gres'] or '-':<12} {d['run']:>4} {d['limit_min']:>3}  "
              f"{d['partition_real']:>5}/{d['partition_sim']:<8} {d.get('nodes_real', ''):>7}/{d.get('nodes_sim', ''):<8} "
              f"{d['wait_real']:>6}/{d['wait_sim']:<6}  "
              f"{d['ahead_only_in_sim']:>3} / {d['ahead_only_in_real']}")


def print_repeat(r: dict) -> None:
    print(f"slurmctld against itself, {r['runs'][0]} / {r['runs'][1]}: {r['jobs']} jobs")
    print(f"  pairs {r['pair_order_share']:.3f}, Spearman {r['spearman_wait']:.3f}, Pearson {r['pearson_wait']:.3f}, "
          f"mean abs. wait difference {r['mean_abs_wait_error_s']:.1f} s, mean waits {r['mean_wait_real_s']:.1f} / "
          f"{r['mean_wait_sim_s']:.1f} s, same node {r['same_node']:.3f}")


def print_expected(r: dict) -> None:
    print(f"expected waits ({r['mode']}): the mean of {len(r['runs'])} real runs against the mean of {r['replays']} "
          f"replays (every run at every backfill phase), {r['jobs']} jobs")
    print(f"  pairs {r['pair_order_share']:.3f}, Spearman {r['spearman_wait']:.3f}, Pearson {r['pearson_wait']:.3f}, "
          f"mean abs. error {r['mean_abs_wait_error_s']:.1f} s, mean wait real / sim {r['mean_wait_real_s']:.1f} / "
          f"{r['mean_wait_sim_s']:.1f} s (x{r['mean_wait_ratio']:.2f})")
    for k, v in r["by_kind"].items():
        print(f"    {k:<10} {v['jobs']:>4} jobs  {v['mean_wait_real_s']:7.1f} / {v['mean_wait_sim_s']:7.1f}")


def full_report(stock: Sequence[Path], site: Sequence[Path], rlsched: Path, extra: Sequence[str] = (),
                sjf: Sequence[Path] = ()) -> dict:
    """What scripts/fidelity prints: every run's replay at slurmctld's phase, each mode's runs against each other,
    the expected waits of each mode, the learned policy's effect on mean wait, real (over the runs) and simulated
    (over the replays), and the modes' ranking (with sjf runs: the plugin's fallback without a model)."""
    extra = [*LAB_BACKFILL, *extra]
    result: dict = {"replays": [], "repeat": {}, "expected": {}}
    for run in [*stock, *sjf, *site]:
        r = compare(run, rlsched, extra)
        print_report(r)
        result["replays"].append(r)
    for mode, runs in (("stock", stock), ("sjf", sjf), ("site", site)):
        if not runs:
            continue
        if len(runs) >= 2:
            result["repeat"][mode] = repeat(runs[0], runs[1])
            print_repeat(result["repeat"][mode])
        result["expected"][mode] = expected(runs, rlsched, extra)
        print_expected(result["expected"][mode])
    result["effect"] = effect(result["expected"]["stock"], result["expected"]["site"])
    e = result["effect"]
    print(f"learned policy's effect on mean wait: real {e['real']:+.1%} (over the runs), simulated {e['sim']:+.1%} "
          f"(over the replays), sim/real {e['sim_over_real']:.2f}")
    result["ranking"] = ranking(result["expected"])
    print_ranking(result["ranking"])
    return result


def effect(stock: dict, site: dict) -> dict:
    """The learned policy's effect on mean wait, real and simulated: (site - stock) / stock."""
    real = (site["mean_wait_real_s"] - stock["mean_wait_real_s"]) / stock["mean_wait_real_s"]
    sim = (site["mean_wait_sim_s"] - stock["mean_wait_sim_s"]) / stock["mean_wait_sim_s"]
    return {"real": real, "sim": sim, "sim_over_real": sim / real if real else float("nan")}


# ---- command line --------------------------------------------------------------------------------------------------
def _rlsched(path: str | None) -> Path:
    p = Path(path or os.environ.get("RLSCHED_CLI", REPO / "build/release/tools/rlsched"))
    if not os.access(p, os.X_OK):
        sys.exit(f"rlsched not found at {p}: build it or pass --rlsched")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a seeded workload on a lab cluster and keep its dump")
    run.add_argument("--mode", choices=MODES, default="stock")
    run.add_argument("--out", type=Path, required=True)
    run.add_argument("--jobs", type=int, default=200)
    run.add_argument("--seed", type=int, default=1)
    run.add_argument("--run-times", default="20-240", help="LO-HI seconds")
    run.add_argument("--span", type=float, default=1100, help="arrivals spread over about this many seconds")
    run.add_argument("--plugin-dir", action="append", default=[], help="folder with site_factor_rlsched.so")
    run.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    run.add_argument("--debug-backfill", action="store_true",
                     help="log slurmctld's backfill plans (DebugFlags=Backfill,BackfillMap) into the run's slurmctld.log")
    for name in ("compare", "effect"):
        p = sub.add_parser(name, help="replay run folder(s) with rlsched simulate and compare with the real run"
                           if name == "compare" else "compare a stock and a site run: the policy's effect")
        p.add_argument("runs", type=Path, nargs="+")
        p.add_argument("--rlsched")
        p.add_argument("--json", type=Path, help="write the reports as JSON here")
        p.add_argument("--sim-arg", action="append", default=[], help="extra argument for rlsched simulate")
        p.add_argument("--sweep-phases", action="store_true",
                       help="also replay at every phase of the backfill grid and report mean and range")
    pred = sub.add_parser("predict", help="replay kept runs' arrivals under stock multifactor, the plugin's SJF and "
                          "each --model: which would the lab rank first (the check before a lab run)")
    pred.add_argument("runs", type=Path, nargs="+", help="run folders of the same workload (any mode)")
    pred.add_argument("--model", type=Path, action="append", default=[], help="a model to serve (repeat it)")
    pred.add_argument("--rlsched")
    pred.add_argument("--json", type=Path, help="write the figures as JSON here")
    pred.add_argument("--sim-arg", action="append", default=[], help="extra argument for rlsched simulate")
    rep = sub.add_parser("repeat", help="two real runs of the same workload against each other: how closely "
                         "slurmctld repeats itself (the ceiling of every fidelity figure)")
    rep.add_argument("runs", type=Path, nargs=2)
    rep.add_argument("--json", type=Path, help="write the figures as JSON here")
    rep_all = sub.add_parser("report", help="the whole report of repeated runs: each run's replay, slurmctld "
                             "against itself, the simulator's expected waits against the real runs' mean, and the "
                             "learned policy's effect")
    rep_all.add_argument("--stock", type=Path, nargs="+", required=True, help="stock run folders (the same workload)")
    rep_all.add_argument("--site", type=Path, nargs="+", required=True, help="site run folders (the same workload)")
    rep_all.add_argument("--sjf", type=Path, nargs="*", default=[],
                         help="sjf run folders (the plugin without a model; the same workload)")
    rep_all.add_argument("--rlsched")
    rep_all.add_argument("--json", type=Path, help="write the report as JSON here")
    rep_all.add_argument("--sim-arg", action="append", default=[], help="extra argument for rlsched simulate")
    args = ap.parse_args(argv)
    if args.command == "repeat":
        r = repeat(*args.runs)
        print_repeat(r)
        if args.json:
            args.json.write_text(json.dumps(r, indent=1) + "\n")
        return 0
    if args.command == "predict":
        missing = [m for m in args.model if not m.is_file()]
        if missing:
            sys.exit(f"no model file at {', '.join(map(str, missing))}")
        result = predict(args.runs, _rlsched(args.rlsched), args.model, args.sim_arg)
        print_predict(result)
        if args.json:
            args.json.write_text(json.dumps(result, indent=1) + "\n")
        return 0
    if args.command == "report":
        result = full_report(args.stock, args.site, _rlsched(args.rlsched), args.sim_arg, args.sjf)
        if args.json:
            args.json.write_text(json.dumps(result, indent=1) + "\n")
        return 0
    if args.command == "run":
        lo, hi = (int(x) for x in args.run_times.split("-"))
        workload = generate(args.jobs, args.seed, (lo, hi), args.span)
        args.out.mkdir(parents=True, exist_ok=True)
        save_workload(args.out / "workload.json", workload, {"jobs": args.jobs, "seed": args.seed,
                                                             "run_times": [lo, hi], "span": args.span})
        run_real(args.out, workload, args.mode, args.plugin_dir, args.model.resolve(),
                 debug_backfill=args.debug_backfill)
        return 0
    cli = _rlsched(args.rlsched)
    reports = [compare(r, cli, args.sim_arg) for r in args.runs]
    for r in reports:
        print_report(r)
    if args.sweep_phases:
        for run, r in zip(args.runs, reports):
            r["phase_sweep"] = phase_sweep(run, cli, args.sim_arg)
            w = r["phase_sweep"]
            print(f"{run}: over the {w['phases']} backfill phases, mean (min-max): "
                  + ", ".join(f"{k} {v['mean']:.3f} ({v['min']:.3f}-{v['max']:.3f})"
                              for k, v in w.items() if isinstance(v, dict)))
    result: dict = {"reports": reports}
    if args.command == "effect":
        if len(reports) != 2:
            sys.exit("effect takes two run folders: stock, then site")
        result["effect"] = effect(reports[0], reports[1])
        e = result["effect"]
        print(f"learned policy's effect on mean wait: real {e['real']:+.1%}, simulated {e['sim']:+.1%} "
              f"(sim/real {e['sim_over_real']:.2f})")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
