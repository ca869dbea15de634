#!/usr/bin/env python3
"""Placement generalisation study (docs/placement.md, issue 16): predictive placement against type-blind first fit
on several heterogeneous workloads, loads and policies, with the slack tuned on some workloads and judged on others.

    python3 bench/placement_study.py [--rlsched build/release/tools/rlsched] [--jobs 2000] [--out FILE.md]

Workloads: Gavel's jobs and arrival times (gavel-throughputs/msr_seed0) with Alibaba's type constraints, under three
sources of per-type speeds, each written as a Gavel-format folder under a temporary directory (never in the repo):
  gavel      Gavel's measured throughputs on K80, P100, V100 (the workload of docs/placement.md)
  alibaba    the three disclosed GPU models of Alibaba's openb nodes, T4, P100 and V100, in the K80, P100 and V100
             slots, with per-model speeds from public data-sheet figures by workload kind (ALIBABA_SPEEDS below)
  random-S   random speed matrices, seed S: per model a kind drawn at random: compute (the newer types 1.3-4.5x
             faster), memory bound (the fastest type at most 1.2x faster) or inverted (the newer types slower)
The slack is chosen on TUNING workloads under the heuristics (sjf, fcfs, multifactor) and then reported on every
workload and policy, the learned one included; the table marks which workloads were used for tuning.
"""
import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time

# The shared traces: $RLSCHED_TRACES, or ../shared/traces beside the repository (as scripts/lib.sh finds them).
TRACES = os.environ.get("RLSCHED_TRACES") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                          "shared", "traces")
GAVEL = os.path.join(TRACES, "gavel-throughputs")
ANY_OF = os.path.join(TRACES, "alibaba-openb-gpu-v2023", "openb_pod_list_gpuspec33.csv")
SLOTS = ["k80", "p100", "v100"]  # the Gavel loader's three type slots (core/src/io/gavel_workload.cpp)
LOADS = [0.5, 0.7, 0.9, 1.1]
POLICIES = ["model:policy_models/default/policy.pt", "sjf", "fcfs", "multifactor"]
TUNING_POLICIES = ["sjf", "fcfs", "multifactor"]
SLACKS = [1.0, 1.1, 1.2, 1.3, 1.5, 2.0]
TUNING = ["gavel", "random-1"]
HELD_OUT = ["alibaba", "random-2"]

# Alibaba's openb GPU models (openb_node_list_gpu_node.csv: 404 T4 nodes, 134 P100, 85 V100M16/M32; G1-G3 are not
# disclosed) in the slots k80 <- T4, p100 <- P100, v100 <- V100. Relative speed by what bounds a model, from NVIDIA's
# data sheets: FP32 TFLOPS (T4 8.1, P100 PCIe 9.3, V100 SXM2 15.7) for the CNNs trained in FP32; mixed-precision
# tensor TFLOPS (T4 65, P100 18.7 as it has no tensor cores, V100 125) for the Transformers; memory bandwidth (T4 320,
# P100 732, V100 900 GB/s) for the recurrent language models and the recommendation models; and nearly flat for
# A3C (reinforcement learning, bound by its CPU simulators). The T4 is faster than the P100 on mixed precision.
ALIBABA_KIND = {"ResNet-18": "fp32", "ResNet-50": "fp32", "CycleGAN": "fp32", "Transformer": "tensor",
                "LM": "bandwidth", "Recommendation": "bandwidth", "A3C": "flat"}
ALIBABA_SPEEDS = {"fp32": [8.1, 9.3, 15.7], "tensor": [65.0, 18.7, 125.0], "bandwidth": [320.0, 732.0, 900.0],
                  "flat": [1.0, 1.05, 1.1]}


def model_of(key):
    """"('ResNet-18 (batch size 16)', 1)" -> ("ResNet-18 (batch size 16)", 1)."""
    m = re.match(r"\('(.*)', (\d+)\)$", key)
    return m.group(1), int(m.group(2))


def family(model):
    return model.split(" (")[0]


def gavel_base():
    with open(os.path.join(GAVEL, "simulation_throughputs.json")) as f:
        doc = json.load(f)
    return {slot: {k: v["null"] for k, v in doc[slot].items()} for slot in SLOTS}


def write_workload(root, name, speeds_of):
    """A Gavel-format folder: msr_seed0 linked, throughputs = Gavel's P100 throughput x speed(slot) / speed(p100)."""
    base = gavel_base()
    folder = os.path.join(root, name)
    os.makedirs(folder, exist_ok=True)
    link = os.path.join(folder, "msr_seed0")
    if not os.path.exists(link):
        os.symlink(os.path.join(GAVEL, "msr_seed0"), link)
    doc = {slot: {} for slot in SLOTS}
    for key, p100 in base["p100"].items():
        speeds = speeds_of(model_of(key)[0])
        for t, slot in enumerate(SLOTS):
            doc[slot][key] = {"null": p100 * speeds[t] / speeds[1]}
    with open(os.path.join(folder, "simulation_throughputs.json"), "w") as f:
        json.dump(doc, f)
    return folder


def random_speeds(seed):
    rng = random.Random(seed)
    table = {}

    def speeds_of(model):
        if model not in table:
            kind = rng.choices(["compute", "memory", "inverted"], weights=[0.5, 0.3, 0.2])[0]
            if kind == "compute":
                mid = math.exp(rng.uniform(0.25, 1.0))
                table[model] = [1.0, mid, mid * math.exp(rng.uniform(0.0, 0.5))]
            elif kind == "memory":  # the fastest type at most 1.2x faster
                mid = rng.uniform(1.0, 1.1)
                table[model] = [1.0, mid, rng.uniform(mid, 1.2)]
            else:  # the newer types slower
                mid = rng.uniform(0.6, 0.95)
                table[model] = [1.0, mid, mid * rng.uniform(0.7, 1.0)]
        return table[model]

    return speeds_of


def workloads(root):
    return {
        "gavel": GAVEL,
        "alibaba": write_workload(root, "alibaba", lambda m: ALIBABA_SPEEDS[ALIBABA_KIND[family(m)]]),
        "random-1": write_workload(root, "random-1", random_speeds(1)),
        "random-2": write_workload(root, "random-2", random_speeds(2)),
    }


def evaluate(args, trace, load, policies, placement, slack=None):
    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    cmd = [args.rlsched, "evaluate", "--trace", trace, "--any-of", ANY_OF, "--cluster",
           "slurm_conf_examples/gavel-cluster.yaml", "--load", str(load), "--jobs", f"0:{args.jobs}",
           "--policies", ",".join(policies), "--placement", placement, "--placement-partitions", "k80,p100,v100",
           "--json", out]
    if slack is not None:
        cmd += ["--placement-slack", str(slack)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        doc = json.load(f)
    os.unlink(out)
    return {r["policy"]: r for r in doc["results"]}


def label(policy):
    return "learned" if policy.startswith("model:") else policy


def ratio(first_fit, predictive, key):
    return first_fit[key] / predictive[key] if predictive[key] > 0 else float("inf")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rlsched", default="build/release/tools/rlsched")
    ap.add_argument("--jobs", type=int, default=2000, help="first jobs of the trace (file order)")
    ap.add_argument("--slack", type=float, help="skip tuning, judge this slack")
    ap.add_argument("--out", help="also write the tables (markdown) here")
    args = ap.parse_args()
    started = time.time()
    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    with tempfile.TemporaryDirectory(prefix="rlsched-study-") as root:
        wl = workloads(root)
        first_fit = {}  # (workload, load) -> policy -> result
        for name, trace in wl.items():
            for load in LOADS:
                first_fit[name, load] = evaluate(args, trace, load, POLICIES, "first-fit")

        slack = args.slack
        if slack is None:
            say(f"## Tuning the slack on {', '.join(TUNING)} (policies {', '.join(TUNING_POLICIES)}; "
                f"{args.jobs} jobs each)")
            say()
            say("| slack | worst avg-jct ratio | worst p95 ratio | geometric mean avg-jct ratio |")
            say("|---|---|---|---|")
            best = None
            for s in SLACKS:
                ratios = []
                for name in TUNING:
                    for load in LOADS:
                        pred = evaluate(args, wl[name], load, TUNING_POLICIES, "predictive", s)
                        for p in TUNING_POLICIES:
                            ff = first_fit[name, load][p]
                            ratios.append((ratio(ff, pred[p], "avg_completion"), ratio(ff, pred[p], "p95_completion")))
                worst_avg = min(r[0] for r in ratios)
                worst_p95 = min(r[1] for r in ratios)
                geo = math.exp(sum(math.log(r[0]) for r in ratios) / len(ratios))
                say(f"| {s} | {worst_avg:.2f} | {worst_p95:.2f} | {geo:.2f} |")
                score = (min(worst_avg, worst_p95), geo)
                if best is None or score > best[0]:
                    best = (score, s)
            slack = best[1]
            say()
            say(f"Chosen slack: {slack} (the best worst-case ratio over the tuning cells, then the best geometric "
                f"mean).")
            say()

        say(f"## First fit / predictive (slack {slack}), {args.jobs} jobs per run; tuning workloads marked *")
        say()
        say("| workload | load | " + " | ".join(f"{label(p)} avg | {label(p)} p95" for p in POLICIES) + " |")
        say("|---|---|" + "---|---|" * len(POLICIES))
        errors = []
        worst = (float("inf"), None)
        for name, trace in wl.items():
            for load in LOADS:
                pred = evaluate(args, trace, load, POLICIES, "predictive", slack)
                cells = []
                for p in POLICIES:
                    ff = first_fit[name, load][p]
                    a, q = ratio(ff, pred[p], "avg_completion"), ratio(ff, pred[p], "p95_completion")
                    worst = min(worst, (min(a, q), f"{name} {load} {label(p)}"))
                    cells += [f"{a:.2f}", f"{q:.2f}"]
                    for t in pred[p]["per_type"]:
                        if t["predicted"]:
                            errors.append((name, load, label(p), t))
                mark = "*" if name in TUNING and args.slack is None else ""
                say(f"| {name}{mark} | {load} | " + " | ".join(cells) + " |")
        say()
        say(f"Worst cell: {worst[0]:.2f} ({worst[1]}).")
        say()
        say("## Prediction error of the wait, per type and load (learned policy; actual - predicted, hours)")
        say()
        say("| workload | load | type | jobs | bias | mean abs | median abs |")
        say("|---|---|---|---|---|---|---|")
        for name, load, policy, t in errors:
            if policy != "learned":
                continue
            say(f"| {name} | {load} | {t['name']} | {t['predicted']} | {t['wait_error_bias'] / 3600:.2f} | "
                f"{t['wait_error_mean_abs'] / 3600:.2f} | {t['wait_error_median_abs'] / 3600:.2f} |")
        say()
        say(f"Study time: {time.time() - started:.0f} s on this machine.")
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
