#!/usr/bin/env python3
"""Start estimates on the lab cluster (docs/estimates.md, issue 18): `rlsched explain`'s forward simulation against
Slurm's own backfill plan (`squeue --start`), both taken at the same moment for the same queued jobs, compared with
the starts the jobs then really got (`sacct`).

    python3 bench/estimate_lab.py [--rlsched build/release/tools/rlsched] [--plugins build/release/plugin]
                                  [--seed 1] [--jobs 24] [--keep] [--json FILE]

It starts test/e2e/lab.py's cluster (munged, MariaDB, slurmdbd, slurmctld, three slurmd: h200-1 with 4 H200s, a100-1
with 4 A100s, npu-1 with 8 NPUs, 8 CPUs each) with both rlsched plugins loaded (enforce mode, fallback policy sjf, as
test/e2e/test_explain.py), then:

1. history: each of three users (root, daemon, nobody; the last two are submitted with sbatch --uid, as root may)
   runs HISTORY_JOBS short CPU jobs that use a user-specific share of their time limit (RATIOS), as real users'
   jobs do; all have ended before the workload is submitted. rlsched's run-time predictor reads them from the
   completed jobs slurmctld still holds (MinJobAge, 300 s by default: the whole run stays within it);
2. workload: --jobs jobs in one burst (GPU jobs typed or typeless, some over two partitions, NPU jobs, CPU-only jobs),
   limits of 2 to 4 minutes, each sleeping its user's share of its limit (with +-10% jitter), so most of it pends;
3. after WAIT_FOR_PLAN seconds (several backfill cycles, bf_interval=5), at one moment: `squeue --start` for every
   pending job, and `rlsched explain --json` for each of them; the pending jobs that started while the explains ran
   are left out;
4. every job's real start from sacct, once all have ended.

Prints, for both estimators over the jobs both estimated: the share within 1 and 5 minutes of the real start, the
median and mean absolute error and the mean signed error (positive: the estimate was late), and the share of jobs
where rlsched was closer; and the share of pending jobs each gave no estimate for. Needs root and the packages of
scripts/setup; about 10 minutes.
"""

from __future__ import annotations

import argparse
import json
import pwd
import random
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test" / "e2e"))
sys.dont_write_bytecode = True

import rlsched_plugins  # noqa: E402
from lab import Lab, LabError  # noqa: E402

# Share of its time limit each user's jobs really run (history and workload alike).
RATIOS = {"root": 0.75, "daemon": 0.30, "nobody": 0.50}
JITTER = 0.10  # each run time is the user's share of the limit times a factor in [1 - JITTER, 1 + JITTER]
HISTORY_JOBS = 4  # per user, limits of 1 and 2 minutes
EXPLAIN_WORKERS = 2  # explains at once (the machine has 2 cores)
WAIT_FOR_PLAN = 20  # seconds after the last submission before the capture: four backfill cycles
# Job shapes: sbatch options, chosen in turn (with a seeded shuffle).
SHAPES = [
    ["-p", "h200", "--gres=gpu:h200:1"],
    ["-p", "h200", "--gres=gpu:h200:2"],
    ["-p", "a100", "--gres=gpu:a100:1"],
    ["-p", "a100", "--gres=gpu:a100:2"],
    ["-p", "a100", "--gres=gpu:a100:4"],
    ["-p", "h200,a100", "--gres=gpu:1"],  # typeless, either partition
    ["-p", "h200,a100", "--gres=gpu:2"],
    ["-p", "npu", "--gres=npu:4"],
    ["-p", "npu", "--gres=npu:8"],
    ["-p", "all", "-c", "4"],  # CPU-only
    ["-p", "npu,a100", "-c", "6"],
    ["-p", "all", "-c", "8"],
]


def user_args(user: str) -> list[str]:
    pw = pwd.getpwnam(user)
    extra = [] if pw.pw_uid == 0 else [f"--uid={pw.pw_uid}", f"--gid={pw.pw_gid}"]
    return [*extra, "--chdir=/tmp", "-o", "/dev/null", "-e", "/dev/null"]


def run_seconds(rng: random.Random, user: str, limit_min: int) -> int:
    return max(5, round(RATIOS[user] * limit_min * 60 * rng.uniform(1 - JITTER, 1 + JITTER)))


def epoch(text: str) -> int | None:
    """Slurm's local time stamp (2026-12-02T07:12:00) as epoch seconds; None for N/A, Unknown, None."""
    try:
        return int(datetime.strptime(text.strip(), "%Y-%m-%dT%H:%M:%S").timestamp())
    except ValueError:
        return None


def add_users(lab: Lab) -> None:
    others = [u for u in RATIOS if u != "root"]
    lab.run("sacctmgr", "-i", "add", "user", f"name={','.join(others)}", "defaultaccount=root")
    # slurmdbd pushes the new associations to slurmctld: wait until a --test-only submission of each is accepted.
    for u in others:
        lab.wait_for(lambda u=u: lab.run("sbatch", "--test-only", *user_args(u), "-t", "1", "--wrap=true",
                                         check=False).returncode == 0, 30, f"slurmctld to know user {u}")


def live_jobs(lab: Lab, ids: list[int]) -> set[int]:
    """The jobs of ids not ended yet (squeue -j would fail on a job slurmctld has forgotten: MinJobAge)."""
    out = lab.run("squeue", "-h", "-t", "PD,R,CF,CG", "-o", "%i").stdout
    return set(ids) & {int(j) for j in out.split()}


def history(lab: Lab, rng: random.Random) -> list[int]:
    ids = []
    for user in RATIOS:
        for k in range(HISTORY_JOBS):
            limit = 1 + k % 2
            ids.append(lab.sbatch(*user_args(user), "-J", f"hist-{user}", "-p", "all", "-c", "1", "-t", str(limit),
                                  wrap=f"sleep {run_seconds(rng, user, limit)}"))
    lab.wait_for(lambda: not live_jobs(lab, ids), 240, "the history jobs to end")
    return ids


def workload(lab: Lab, rng: random.Random, count: int) -> dict[int, dict]:
    users = list(RATIOS)
    plan = []
    for i in range(count):
        user = users[i % len(users)]
        limit = rng.randint(2, 4)
        plan.append({"user": user, "shape": SHAPES[i % len(SHAPES)], "limit": limit,
                     "run": run_seconds(rng, user, limit)})
    rng.shuffle(plan)
    jobs = {}
    for p in plan:
        job = lab.sbatch(*user_args(p["user"]), "-J", f"w-{p['user']}", *p["shape"], "-t", str(p["limit"]),
                         wrap=f"sleep {p['run']}")
        jobs[job] = {**p, "shape": " ".join(p["shape"])}
    return jobs


def capture(lab: Lab, cli: Path, config: Path) -> tuple[dict[int, dict], dict]:
    """squeue --start for every pending job, then rlsched explain --json for each: job -> estimates."""
    t0 = time.time()
    out = lab.run("squeue", "-h", "-t", "PD", "--start", "-o", "%i|%S|%r").stdout
    est: dict[int, dict] = {}
    for line in out.splitlines():
        job, start, reason = line.split("|")
        est[int(job)] = {"slurm": epoch(start), "reason": reason}
    t_squeue = time.time()
    started_meanwhile = []

    def explain(job: int) -> subprocess.CompletedProcess:
        return lab.run(str(cli), "explain", str(job), "--json", "--config", str(config), check=False, timeout=60)
    with ThreadPoolExecutor(max_workers=EXPLAIN_WORKERS) as pool:  # a shorter capture window
        answers = dict(zip(est, pool.map(explain, est)))
    for job, e in est.items():
        cp = answers[job]
        if cp.returncode != 0:
            if "is not pending" in cp.stderr:
                started_meanwhile.append(job)
                continue
            raise LabError(f"rlsched explain {job} failed: {cp.stderr.strip()}")
        x = json.loads(cp.stdout)
        r = x["rlsched_estimate"]
        e["rlsched"] = r["start"] if r["available"] and r["start"] >= 0 else None
        e["rlsched_why"] = r.get("why", "")
        e["explain_now"] = x["now"]
        e["explain_slurm"] = x["slurm_estimate"]  # Slurm's plan as explain read it (the same field squeue prints)
    for job in started_meanwhile:
        del est[job]
    meta = {"squeue_at": t0, "squeue_took": t_squeue - t0, "explains_took": time.time() - t_squeue,
            "started_meanwhile": started_meanwhile}
    return est, meta


def summarize(rows: list[dict], pending: int, slurm_na: int, rlsched_na: int) -> str:
    def stats(key: str) -> dict:
        err = [abs(r[key] - r["real"]) for r in rows]
        signed = [r[key] - r["real"] for r in rows]
        return {"1min": sum(e <= 60 for e in err) / len(err), "5min": sum(e <= 300 for e in err) / len(err),
                "median": statistics.median(err), "mean": statistics.mean(err), "bias": statistics.mean(signed)}
    if not rows:
        return "no job was estimated by both"
    closer = sum(abs(x["rlsched"] - x["real"]) < abs(x["slurm"] - x["real"]) for x in rows)
    tie = sum(abs(x["rlsched"] - x["real"]) == abs(x["slurm"] - x["real"]) for x in rows)
    lines = [f"pending at the capture: {pending}; Slurm gave no estimate (N/A) for {slurm_na} "
             f"({slurm_na / pending:.0%}), rlsched for {rlsched_na} ({rlsched_na / pending:.0%})",
             f"jobs compared (both estimated): {len(rows)}",
             "",
             "| estimator | within 1 min | within 5 min | median abs. error | mean abs. error | mean signed error |",
             "|---|---|---|---|---|---|"]
    estimators = [("squeue --start (Slurm's backfill plan)", "slurm"), ("rlsched explain", "rlsched")]
    if all(r.get("explain_slurm") is not None for r in rows):
        estimators.insert(1, ("Slurm's plan in explain's own snapshot", "explain_slurm"))
    for name, key in estimators:
        x = stats(key)
        lines.append(f"| {name} | {x['1min']:.0%} | {x['5min']:.0%} | {x['median']:.0f} s | {x['mean']:.0f} s | "
                     f"{x['bias']:+.0f} s |")
    lines.append("")
    lines.append(f"rlsched closer than squeue --start: {closer} of {len(rows)} ({closer / len(rows):.0%}); "
                 f"as close: {tie}; Slurm closer: {len(rows) - closer - tie}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rlsched", default=str(REPO / "build/release/tools/rlsched"))
    ap.add_argument("--plugins", default=str(REPO / "build/release/plugin"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=24)
    ap.add_argument("--keep", action="store_true", help="keep the lab folder (logs)")
    ap.add_argument("--json", help="write every job's estimates and real start here")
    args = ap.parse_args()
    cli = Path(args.rlsched).resolve()
    rlsched_plugins.find_plugins([args.plugins])
    rng = random.Random(args.seed)

    lab = Lab(plugin_dirs=[args.plugins], keep=args.keep)
    config = lab.etc / "rlsched.yaml"
    lab.etc.mkdir(parents=True, exist_ok=True)
    rlsched_plugins.write_config(config, rlsched_plugins.rlsched_config(mode="enforce", fallback="sjf"))
    lab.settings_override.update(rlsched_plugins.slurm_settings(config))
    t_start = time.monotonic()
    with lab:
        print(f"lab in {lab.root}: started in {lab.timings['total']:.1f} s", flush=True)
        add_users(lab)
        hist = history(lab, rng)
        print(f"history: {len(hist)} jobs ended ({time.monotonic() - t_start:.0f} s)", flush=True)
        jobs = workload(lab, rng, args.jobs)
        time.sleep(WAIT_FOR_PLAN)
        est, meta = capture(lab, cli, config)
        seen = lab.run("squeue", "-h", "-t", "CD", "-o", "%i").stdout.split()
        print(f"capture at {datetime.fromtimestamp(meta['squeue_at']).isoformat(timespec='seconds')}: "
              f"{len(est)} pending jobs; squeue --start took {meta['squeue_took']:.2f} s, the explains "
              f"{meta['explains_took']:.1f} s; {len(meta['started_meanwhile'])} started meanwhile (left out); "
              f"completed jobs slurmctld held (the predictor's history): {len(seen)}", flush=True)
        ids = list(jobs)
        lab.wait_for(lambda: not live_jobs(lab, ids), 1200, "every workload job to end")
        lab.wait_accounted(ids, timeout=60)
        real = {int(r["JobIDRaw"]): (epoch(r["Start"]), r["State"])
                for r in lab.sacct("-a", "-X", "-j", ",".join(map(str, ids)), "--format=JobIDRaw,Start,State")}
        print(f"workload ended ({time.monotonic() - t_start:.0f} s in all)", flush=True)

    rows, table = [], []
    for job, e in sorted(est.items()):
        start, state = real.get(job, (None, "?"))
        row = {"job": job, **jobs.get(job, {}), **e, "real": start, "state": state}
        table.append(row)
        if e["slurm"] is not None and e.get("rlsched") is not None and start is not None:
            rows.append(row)
    print("\njob   user    shape                           limit  run  reason      real     squeue--start  rlsched")
    for r in table:
        def rel(v: int | None) -> str:
            return "N/A" if v is None or r["real"] is None else f"{v - r['real']:+d}"
        print(f"{r['job']:<5} {r.get('user', '?'):<7} {r.get('shape', '?'):<31} {r.get('limit', 0):>4}m "
              f"{r.get('run', 0):>4}  {r['reason'][:11]:<11} +{(r['real'] or 0) - int(meta['squeue_at']):>5}s  "
              f"{rel(r['slurm']):>8}  {rel(r.get('rlsched')):>8}")
    print("\n(real: seconds after the capture; estimators: estimate - real start, in seconds)\n")
    print(summarize(rows, len(est), sum(e["slurm"] is None for e in est.values()),
                    sum(e.get("rlsched") is None for e in est.values())))
    if args.json:
        Path(args.json).write_text(json.dumps({"meta": meta, "jobs": table, "ratios": RATIOS}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
