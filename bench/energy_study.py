#!/usr/bin/env python3
"""Energy study (docs/energy.md, issue 19): deferrable work shifted to cheap electricity by rlsched's least-cost rule,
against no shifting and against the simple rule (start at the beginning of the cheapest window within the budget),
on GPU and CPU workloads, in the Slurm model with the configuration the plugins run (--config).

    python3 bench/energy_study.py [--rlsched build/release/tools/rlsched] [--seeds 16] [--only LIST] [--out FILE.md]
                                  [--gpu-config YAML] [--cpu-config YAML]

Tariff: a real time-of-use tariff (table 1 of PMC9744089, CNY/kWh, UTC+8): 0.308 off-peak 00-07, 0.594 regular 07-09
and 11-19, 0.880 peak 09-11 and 19-24 (bench/energy/*-rlsched.yaml, with the power figures and their sources, and a
carbon intensity shaped like Great Britain's, reported alongside).

Deferrable work: exploratory runs (sweeps, ablations) are short, so 15% of each workload's jobs are made deferrable
(QOS sweep, budget 12 h), drawn at random among the jobs whose time limit is at most 6 h: each of those with
probability 0.15 x jobs / short jobs (at most 1), drawn per job with seed 1..SEEDS (rlsched --deferrable SHARE:SEED
--deferrable-max-limit 21600). Every figure is the mean over the seeds.

Workloads (traces read from $RLSCHED_TRACES or ../shared/traces, never copied):
  gavel      Gavel's first 2,000 jobs (msr_seed0) with Alibaba's type constraints on the Gavel cluster (K80, P100,
             V100), as in bench/placement_study.py (TUNING: the rule was chosen here)
  alibaba    the same jobs with the per-model speeds of Alibaba's T4/P100/V100 (bench/placement_study.py) (TUNING)
  gavel-b    Gavel's jobs 2,000-3,999 on the same cluster (held out: other jobs)
  random-2   Gavel's jobs 4,000-5,999 with random per-model speeds (bench/placement_study.py's random-2) (held out)
  lublin     Lublin-Feitelson model, 256 nodes, 10,000 jobs (held out)
  coare      COARE Saliksik 2020 (Slurm, 1,728 CPUs), 19,760 jobs (held out)
  ricc       RICC 2010, the first 20,000 jobs (held out)
Every workload's arrivals are scaled to offered loads 0.7 and 0.9 (rlsched --load).
Policy: multifactor (Slurm's own, what the plugins fall back to), EASY backfill.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import placement_study as ps  # noqa: E402  (the derived Gavel workloads and the traces folder)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
RULES = ["none", "cheapest-window", "least-cost"]
DEFERRABLE, MAX_LIMIT = 0.15, 6 * 3600  # the share of each workload's jobs made deferrable, among the short ones
GPU_CONFIG = os.path.join(ROOT, "bench", "energy", "gavel-rlsched.yaml")
CPU_CONFIG = os.path.join(ROOT, "bench", "energy", "cpu-rlsched.yaml")
TUNING = {"gavel", "alibaba"}


def workloads(root, gpu_config=GPU_CONFIG, cpu_config=CPU_CONFIG):
    gpu = {"any_of": ps.ANY_OF, "cluster": os.path.join(ROOT, "slurm_conf_examples", "gavel-cluster.yaml"),
           "config": gpu_config, "loads": [0.7, 0.9], "jobs": "0:2000", "gpu": True}
    alibaba = ps.write_workload(root, "alibaba", lambda m: ps.ALIBABA_SPEEDS[ps.ALIBABA_KIND[ps.family(m)]])
    random2 = ps.write_workload(root, "random-2", ps.random_speeds(2))
    cpu = {"any_of": None, "cluster": None, "config": cpu_config, "loads": [0.7, 0.9], "jobs": None, "gpu": False}
    return {
        "gavel": dict(gpu, trace=ps.GAVEL),
        "alibaba": dict(gpu, trace=alibaba),
        "gavel-b": dict(gpu, trace=ps.GAVEL, jobs="2000:4000"),
        "random-2": dict(gpu, trace=random2, jobs="4000:6000"),
        "lublin": dict(cpu, trace=os.path.join(ps.TRACES, "lublin", "lublin_256.swf")),
        "coare": dict(cpu, trace=os.path.join(ps.TRACES, "coare-saliksik-slurm", "DOST-ASTI_COARE-Saliksik-2020-cln.swf")),
        "ricc": dict(cpu, trace=os.path.join(ps.TRACES, "ricc", "RICC-2010-2.swf.gz"), jobs="0:20000"),
    }


def evaluate(args, w, load, seed, share, rules=RULES):
    """{rule: result} and the document's top-level energy settings."""
    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    cmd = [args.rlsched, "evaluate", "--trace", w["trace"], "--policies", "multifactor", "--backfill", "easy",
           "--config", w["config"], "--energy", "--energy-rule", ",".join(rules),
           "--deferrable", f"{share}:{seed}", "--deferrable-max-limit", str(MAX_LIMIT), "--json", out]
    if w["any_of"]:
        cmd += ["--any-of", w["any_of"]]
    if w["cluster"]:
        cmd += ["--cluster", w["cluster"], "--placement", "first-fit"]
    if load:
        cmd += ["--load", str(load)]
    if w["jobs"]:
        cmd += ["--jobs", w["jobs"]]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        doc = json.load(f)
    os.unlink(out)
    return {r["energy"]["rule"]: r for r in doc["results"]}, doc


def share_for(args, w):
    """The draw probability that makes DEFERRABLE of the jobs deferrable: every short job counted at share 1."""
    results, doc = evaluate(args, w, None, 1, 1.0, ["none"])
    short = doc["energy"]["deferrable_jobs"]
    jobs = results["none"]["jobs"]
    return min(1.0, round(DEFERRABLE * jobs / short, 4)) if short else 0.0


def utilization(result, gpu):
    """The busy share of the accelerators (GPU workloads: over every type while jobs arrive) or of the CPUs."""
    if not gpu:
        return result["utilization"]
    types = result["per_type"]
    total = sum(t.get("utilization_arriving", 0) for t in types)
    return total / len(types) if types else 0.0


def figures(result, gpu):
    e = result["energy"]
    return {"defer_cost": e["deferrable"]["cost"], "defer_co2": e["deferrable"]["co2_kg"],
            "defer_wait": e["deferrable"]["avg_wait"] / 3600, "other_wait": e["other"]["avg_wait"] / 3600,
            "all_wait": result["avg_wait"] / 3600, "util": utilization(result, gpu), "cost": e["cost"],
            "defer_jobs": e["deferrable"]["jobs"]}


def mean(rows, key):
    return sum(r[key] for r in rows) / len(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rlsched", default=os.path.join(ROOT, "build", "release", "tools", "rlsched"))
    ap.add_argument("--seeds", type=int, default=16)
    ap.add_argument("--only", help="comma list of workloads to run (default: all)")
    ap.add_argument("--out", help="also write the tables (markdown) here")
    ap.add_argument("--gpu-config", default=GPU_CONFIG, help="rlsched.yaml of the GPU workloads (a variant to try)")
    ap.add_argument("--cpu-config", default=CPU_CONFIG, help="rlsched.yaml of the CPU traces")
    args = ap.parse_args()
    started = time.time()
    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    failures = []
    with tempfile.TemporaryDirectory(prefix="rlsched-energy-") as root:
        wl = workloads(root, args.gpu_config, args.cpu_config)
        names = args.only.split(",") if args.only else list(wl)
        say(f"## Deferrable work under the time-of-use tariff: multifactor, EASY backfill, mean of {args.seeds} "
            f"draws; * tuning workload")
        say()
        say("| workload | load | rule | deferrable jobs | their cost (CNY) | vs none | their CO2 vs none | "
            "their wait (h) | other jobs' wait (h) | vs none | per draw, 90% interval | all jobs' wait (h) | "
            "utilisation | vs none (points) |")
        say("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for name in names:
            w = wl[name]
            share = share_for(args, w)
            for load in w["loads"]:
                runs = [evaluate(args, w, load, seed, share)[0] for seed in range(1, args.seeds + 1)]
                by_rule = {rule: [figures(r[rule], w["gpu"]) for r in runs] for rule in RULES}
                m = {rule: {k: mean(rows, k) for k in rows[0]} for rule, rows in by_rule.items()}
                base = m["none"]
                for rule in RULES:
                    f = m[rule]
                    # The other jobs' wait against no shifting, draw by draw: its mean and 90% interval.
                    paired = [a["other_wait"] / b["other_wait"] - 1 for a, b in zip(by_rule[rule], by_rule["none"])
                              if b["other_wait"] > 0]
                    say(f"| {name}{'*' if name in TUNING else ''} | {load or 'trace'} | {rule} | {f['defer_jobs']:.0f} "
                        f"| {f['defer_cost']:.1f} | {pct(f['defer_cost'], base['defer_cost'])} "
                        f"| {pct(f['defer_co2'], base['defer_co2'])} | {f['defer_wait']:.2f} "
                        f"| {f['other_wait']:.2f} | {pct(f['other_wait'], base['other_wait'])} | {interval(paired)} "
                        f"| {f['all_wait']:.2f} | {f['util']:.3f} | {100 * (f['util'] - base['util']):+.2f} |")
                lc, cw = m["least-cost"], m["cheapest-window"]
                cell = f"{name} {load or 'trace'}"
                if lc["defer_cost"] > 0.8 * base["defer_cost"]:
                    failures.append(f"{cell}: deferrable cost only {pct(lc['defer_cost'], base['defer_cost'])}")
                if lc["other_wait"] > 1.05 * base["other_wait"]:
                    failures.append(f"{cell}: other jobs wait {pct(lc['other_wait'], base['other_wait'])}")
                if 100 * (base["util"] - lc["util"]) > 2:
                    failures.append(f"{cell}: utilisation {100 * (lc['util'] - base['util']):+.2f} points")
                if lc["defer_cost"] >= cw["defer_cost"]:
                    failures.append(f"{cell}: least-cost {lc['defer_cost']:.1f} not below cheapest-window "
                                    f"{cw['defer_cost']:.1f}")
                if lc["all_wait"] > cw["all_wait"]:
                    # Draw by draw, as the other jobs' wait: a mean above the simple rule's may still be noise.
                    paired = [a["all_wait"] / b["all_wait"] - 1
                              for a, b in zip(by_rule["least-cost"], by_rule["cheapest-window"]) if b["all_wait"] > 0]
                    failures.append(f"{cell}: least-cost waits {lc['all_wait']:.2f} h against cheapest-window "
                                    f"{cw['all_wait']:.2f} h (per draw {interval(paired)})")
        say()
        say("Floors (least-cost against none): deferrable work's cost at least 20% lower, other jobs' average wait at "
            "most 5% higher, utilisation at most 2 points lower; against cheapest-window: lower cost at an equal or "
            "shorter average wait of all jobs.")
        say()
        say("Cells below a floor: " + ("none." if not failures else "; ".join(failures) + "."))
        say()
        say(f"Study time: {time.time() - started:.0f} s on this machine.")
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 1 if failures else 0


def interval(ratios):
    """"+2.1% [-1.0, +5.2]": the mean of per-draw changes and a normal 90% interval of that mean."""
    if len(ratios) < 2:
        return "-"
    m = sum(ratios) / len(ratios)
    sd = (sum((r - m) ** 2 for r in ratios) / (len(ratios) - 1)) ** 0.5
    half = 1.645 * sd / len(ratios) ** 0.5
    return f"{100 * m:+.1f}% [{100 * (m - half):+.1f}, {100 * (m + half):+.1f}]"


def pct(value, base):
    return f"{100 * (value / base - 1):+.1f}%" if base > 0 else "-"


if __name__ == "__main__":
    sys.exit(main())
