#!/usr/bin/env python3
"""Start-time estimate replay study (docs/estimates.md, issue 18): `rlsched estimate-replay` on every shared trace.

    python3 bench/estimate_study.py [--rlsched build/release/tools/rlsched] [--sample 2000] [--only LIST] [--out FILE.md]

The workloads are energy_study.py's (the same traces, windows, clusters and configurations): the CPU traces with
their own arrivals, the GPU workloads (Gavel's jobs with Alibaba's type constraints on the Gavel cluster, and the
Alibaba-speeds variant) scaled to offered load 0.9 so that jobs wait. Each row: --sample jobs drawn evenly (seed 1),
each estimated at its submit from the reference run's state, once with predicted run times (the forecast with its
interval) and once with every run at its time limit (Slurm's own kind of estimate). TUNING marks the workload the
predictor's settings were chosen on; the others are out of sample.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import energy_study as es  # noqa: E402  (the workloads)

TUNING = {"gavel"}
GPU_LOAD = 0.9


def replay(args, w):
    cmd = [args.rlsched, "estimate-replay", "--trace", w["trace"], "--config", w["config"], "--policy", args.policy,
           "--backfill", "easy", "--sample", str(args.sample)] + args.extra
    if w["any_of"]:
        cmd += ["--any-of", w["any_of"]]
    if w["cluster"]:
        cmd += ["--cluster", w["cluster"], "--placement", "first-fit", "--load", str(GPU_LOAD)]
    if w["jobs"]:
        cmd += ["--jobs", w["jobs"]]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"forecast, (predicted runs|time limits)\s+(.*)", line)
        if m:
            rows[m.group(1)] = m.group(2).split()
        m = re.search(r"(\d+\.\d)% started at once", line)
        if m:
            rows["at once"] = m.group(1)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rlsched", default=os.path.join(es.ROOT, "build", "release", "tools", "rlsched"))
    ap.add_argument("--sample", type=int, default=2000)
    ap.add_argument("--policy", default="multifactor")
    ap.add_argument("--only", help="comma list of workloads (default: all)")
    ap.add_argument("--out", help="also write the table (markdown) here")
    ap.add_argument("extra", nargs="*", help="more estimate-replay options (after --)")
    args = ap.parse_args()
    lines = []

    def say(text):
        print(text, flush=True)
        lines.append(text)

    with tempfile.TemporaryDirectory() as root:
        ws = es.workloads(root)
        names = args.only.split(",") if args.only else list(ws)
        say(f"policy {args.policy}, backfill easy, {args.sample} jobs per workload (seed 1); * tuning workload")
        say("")
        say("| workload | started at once | estimate | within 10 min | within 1 h | median ratio | within x2 "
            "| within x2, jobs that waited | interval coverage | mean ms |")
        say("|---|---|---|---|---|---|---|---|---|---|")
        for name in names:
            rows = replay(args, ws[name])
            for kind, label in (("predicted runs", "forecast, predicted runs"), ("time limits", "all at time limits")):
                r = rows[kind]
                say(f"| {name}{'*' if name in TUNING else ''} | {rows['at once']}% | {label} | {r[0]} | {r[1]} | "
                    f"{r[2]} | {r[3]} | {r[4]} | {r[5]} | {r[6]} |")
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
