#!/usr/bin/env python3
"""Out-of-sample protocol for learned policies (issue 15; docs/policy-protocol.md): is a model better than Slurm's
rules of thumb on workloads it never saw?

    python3 bench/policy_protocol.py [--protocol loo,time-split,default,shipped] [--workloads lublin,ricc,...]
        [--train-minutes 10] [--seed 1] [--train-arg=ARG ...] [--rlsched build/release/tools/rlsched]
        [--out FILE.md] [--keep DIR] [--default-out policy_models/default/policy.pt] [--judged-seed 1001]
        [--sites N] [--models A.pt,B.pt] [--config rlsched.yaml] [--card policy_models/default/policy.md]
        [--shared-weight N] [--weight WORKLOAD=N ...] [--validation-sites N] [--validation-seed S]
        [--load-factors 0.97,0.985,1,1.015,1.03] [--fold-models DIR]
    python3 bench/policy_protocol.py --protocol ceiling [--workloads ...] [--backfill easy]
    python3 bench/policy_protocol.py --protocol self-tuning [--workloads ...] [--judged-seed 6001]

Three protocols, one step that trains, and two studies that judge no model (ceiling, self-tuning). Each judges in
the Slurm model with the configuration the plugins run (`--config slurm_conf_examples/rlsched.yaml`: multifactor
with the example weights plus the policy's rank as site factor at score_scale), beside every heuristic of the same
run:
  loo         leave one out: for each workload, train on all the others (and the generator's training seeds), then
              evaluate on it with EASY backfill and with none; a generated family is left out whole (no site of it
              in training) and judged on each of its --sites; with --load-factors, each judged workload at each of
              those multiples of its load (a fold's ratio: the geometric mean over its runs); with --fold-models,
              the models a kept run trained, judged again without training;
  time-split  on each workload named, `rlsched train` with default options (it reads the first 80% by submit time:
              trains on the first 64%, selects on the next 16%), then the verdict of `rlsched evaluate --candidate` on
              the last 20%, which training never read (the candidate against the best heuristic);
  default     not a judgement: trains the default model the way leave one out trains each of its models, on every
              workload but the judged generated seeds, with train's default held-back share (--default-out: where
              the model and its card go; default: the folder of --keep);
  shipped     the shipped default model (or the one `default` just trained) on every workload, marked in-sample
              where it was trained on that trace; with --models, those models too, in the same runs, and a table
              of every model's ratios with their geometric means and wins over the workloads out of sample;
  ceiling     not a judgement of a model: every rule of the teacher's area family (`area:A/B/G/C/relative`, wider
              than the trainer's grid) on every workload, chosen with hindsight. If no one rule beats the best
              heuristic on every workload, no model that starts as one rule and stays near it can.
  self-tuning not a model: the `self-tuning` policy (docs/cli.md), which trains nothing and re-chooses among
              rules on each workload's own past as the run goes, beside the heuristics with each --backfill.
The table of each workload gives average bounded slowdown, average / p99 / max wait and utilisation; a summary
gives the model's average bounded slowdown over the best heuristic's (below 1.00 means the model wins) and its p99
wait over that heuristic's.

Workloads: the shared traces (Lublin-1, RICC-2010-2, COARE-Saliksik), the GPU workload of the placement study
(Gavel's jobs and speeds at load 0.9, typed and typeless GPU requests over three partitions) and two generated
families (`rlsched generate`) whose seeds are kept out of every training run. Traces are read from $RLSCHED_TRACES or
../shared/traces; nothing is written into the repository (temporary folder, or --keep DIR) but the model and card
that --default-out names.
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACES = os.environ.get("RLSCHED_TRACES") or os.path.join(ROOT, "..", "shared", "traces")
# Relative to where the script runs, so that the commands it logs (and model cards record) carry no machine's paths.
CONFIG = os.path.relpath(os.path.join(ROOT, "slurm_conf_examples", "rlsched.yaml"))
SHIPPED = os.path.join(ROOT, "policy_models", "default", "policy.pt")
HEURISTICS = ["fcfs", "sjf", "wfp3", "unicep", "f1", "multifactor"]
VALIDATION_JOBS = 5000  # jobs of each validation site (--validation-sites; policy_models/README.md, rule P18)
SELF_TUNING = "self-tuning"
# The shipped default was trained on the first 80% of these traces and of the generated sites of these seeds, both
# families (policy_models/README.md): `shipped` never judges it on them.
SHIPPED_TRAINED_ON = {"lublin", "ricc", "coare", "gavel"}
SHIPPED_GENERATED_SEEDS = "1-12"
# Generated training seeds (--training-seeds); the judged families use seeds from --judged-seed up (default 1001) and
# are never trained on.
GENERATED_TRAINING_SEEDS = "1-4"


def seeds_trained_on(protocols, training_seeds):
    """The generated seeds no judged site may have: those loo and default train on (--training-seeds) and, when the
    shipped default is judged (`shipped` without `default`), those it was trained on."""
    seeds = set(training_seeds)
    if "shipped" in protocols and "default" not in protocols:
        seeds |= set(seed_list(SHIPPED_GENERATED_SEEDS))
    return seeds


def seed_list(text):
    """'1-4,9' -> [1, 2, 3, 4, 9]; ValueError on anything else."""
    seeds = []
    for part in text.split(","):
        lo, dash, hi = part.partition("-")
        first, last = int(lo), int(hi if dash else lo)
        if first < 0 or last < first:
            raise ValueError(part)
        seeds += range(first, last + 1)
    return sorted(set(seeds))


def trace(*parts):
    return os.path.join(TRACES, *parts)


def shared_workloads():
    """name -> how evaluate and train read it. eval_jobs: the window judged (None: all jobs)."""
    return {
        "lublin": {"trace": trace("lublin", "lublin_256.swf"), "eval_jobs": None},
        # The RICC window of policy_models/README.md, inside the trace's last 20%.
        "ricc": {"trace": trace("ricc", "RICC-2010-2.swf.gz"), "eval_jobs": "380000:50000"},
        "coare": {"trace": trace("coare-saliksik-slurm", "DOST-ASTI_COARE-Saliksik-2020-cln.swf"), "eval_jobs": None},
        # Gavel's jobs and measured per-type speeds on three single-type partitions, Alibaba's type constraints:
        # the placement study's workload (docs/placement.md), at load 0.9.
        # Trained on as the folder is (its own arrivals), judged at load 0.9 with the type constraints.
        "gavel": {"trace": trace("gavel-throughputs"), "eval_jobs": "0:6000",
                  "cluster": os.path.relpath(os.path.join(ROOT, "slurm_conf_examples", "gavel-cluster.yaml")),
                  "eval_extra": ["--any-of", trace("alibaba-openb-gpu-v2023", "openb_pod_list_gpuspec33.csv"),
                                 "--load", "0.9"]},
    }


def generate(args, family, seed, jobs, folder, short_share_widest=None, label="gen"):
    """`rlsched generate` (docs/workload-generator.md): the workload's evaluate/train arguments. short_share_widest:
    the generator's --short-share-widest (None: drawn from the seed). label: the files' first word."""
    prefix, extra = os.path.join(folder, f"{label}-{family}-{seed}"), []
    if short_share_widest is not None:
        prefix += f"-w{short_share_widest:g}"
        extra = ["--short-share-widest", str(short_share_widest)]
    subprocess.run([args.rlsched, "generate", "--family", family, "--seed", str(seed), "--jobs", str(jobs),
                    "--out", prefix] + extra, check=True, stdout=subprocess.DEVNULL)
    if family == "cpu":
        return {"trace": prefix + ".swf", "eval_jobs": None}
    return {"trace": prefix + ".sacct", "eval_jobs": None, "cluster": prefix + ".cluster.yaml"}


def training_site(args, family, seed, folder):
    """A generated training site of `family` (what loo and default train on): --gpu-short-widest applies to the gpu
    family's, never to a judged site."""
    widest = args.gpu_short_widest if family == "gpu" else None
    return generate(args, family, seed, args.generated_jobs, folder, widest)


def run(cmd, log):
    log.write("$ " + " ".join(cmd) + "\n")
    log.flush()
    started = time.time()
    subprocess.run(cmd, check=True, stdout=log, stderr=subprocess.STDOUT)
    return time.time() - started


def validation_sites(args, pool_names, folder):
    """The generated sites a model trained on `pool_names` is chosen on (train's --validation-trace): --validation-sites
    of each generated family in the pool, seeds --validation-seed up, VALIDATION_JOBS jobs each. A family that is not
    in the pool (left out of a fold) has none: choosing on its sites would tune the model to it."""
    families = sorted({family_of(n).split("-")[1] for n in pool_names if family_of(n)})
    return [generate(args, family, args.validation_seed + i, VALIDATION_JOBS, folder, label="validation")
            for family in families for i in range(args.validation_sites)]


def train(args, name, sources, folder, log, held_back=None, model=None, weights=None, validation=()):
    """Trains on `sources` (workload specs) with the default options; returns the model path and seconds.
    held_back: the share of each source's last jobs train leaves unread (None: its default, the part `evaluate
    --candidate` judges). model: where the model goes (default: FOLDER/NAME.pt). weights: how many workloads each
    source counts as (train's --trace-weight; None: once each). validation: workload specs the model is chosen on
    and never trained on (train's --validation-trace)."""
    model = model or os.path.join(folder, f"{name}.pt")
    cmd = [args.rlsched, "train", "--config", args.config, "--output", model, "--threads", str(args.threads),
           "--time-budget", str(args.train_minutes), "--seed", str(args.seed)] + args.train_arg
    if held_back is not None:
        cmd += ["--held-back", str(held_back)]
    for spec in sources:  # one --cluster per --trace ("implied": the SWF header's machine)
        cmd += ["--trace", spec["trace"], "--cluster", spec.get("cluster", "implied")]
    if weights and any(w != 1 for w in weights):
        for w in weights:
            cmd += ["--trace-weight", str(w)]
    for spec in validation:
        cmd += ["--validation-trace", spec["trace"], "--validation-cluster", spec.get("cluster", "implied")]
    return model, run(cmd, log)


def blas_kernels(rlsched):
    """The BLAS kernels rlsched's matrix products run on ("OpenBLAS Haswell kernels"), which a trained model's
    weights, and so every figure here, depend on: OpenBLAS picks them by CPU unless OPENBLAS_CORETYPE says
    (policy_models/README.md, stop 48)."""
    try:
        out = subprocess.run([rlsched, "--version"], env=dict(os.environ, OPENBLAS_VERBOSE="2"), capture_output=True,
                             text=True)
    except OSError:
        return "BLAS kernels unknown (no rlsched to ask)"
    core = re.search(r"^Core: (\S+)", out.stdout + out.stderr, re.MULTILINE)
    return f"OpenBLAS {core.group(1)} kernels" if core else "BLAS kernels unknown (not OpenBLAS)"


def pool_weights(args, names):
    """How many workloads each training workload named counts as: its --weight (a generated site: its family's),
    else --shared-weight for a shared trace and 1 for a generated site (a pool of a few real traces among dozens
    of generated sites)."""
    return [args.weight.get(family_of(name) or name, 1 if family_of(name) else args.shared_weight)
            for name in names]


def parse_weights(texts, names):
    """['gen-gpu=2', ...] -> {'gen-gpu': 2}: a workload of --workloads (a generated family: each of its training
    sites) and how many workloads it counts as in training. ValueError says which and why."""
    weights = {}
    for text in texts:
        name, eq, count = text.partition("=")
        if not eq or not count.isdigit():
            raise ValueError(f"'{text}': expected WORKLOAD=N, e.g. gen-gpu=2")
        if name not in names:
            raise ValueError(f"'{text}': {name} is not one of --workloads ({','.join(names)})")
        if int(count) < 1:
            raise ValueError(f"'{text}': a workload counts at least once")
        weights[name] = int(count)
    return weights


def evaluate(args, spec, policies, backfill, folder, tag, log, extra=()):
    out = os.path.join(folder, f"{tag}.json")
    cmd = [args.rlsched, "evaluate", "--trace", spec["trace"], "--config", args.config, "--backfill", backfill,
           "--json", out] + spec.get("eval_extra", []) + list(extra)
    if spec.get("cluster"):
        cmd += ["--cluster", spec["cluster"]]
    if policies:
        cmd += ["--policies", ",".join(policies)]
    if spec.get("eval_jobs"):
        cmd += ["--jobs", spec["eval_jobs"]]
    run(cmd, log)
    with open(out) as f:
        return json.load(f)


# The ceiling protocol's grid: the trainer's family (train/src/teacher.cpp) and beyond it on every side.
CEILING_A = [0, 0.25, 0.5, 1, 2]
CEILING_B = [0, 0.25, 0.5, 1, 1.5, 2, 3]
CEILING_G = [0, 0.25, 0.5, 1, 2]
CEILING_C = [0, 3, 10, 30]


def ceiling_rules():
    """The distinct cluster-relative area rules of the grid: without ageing, rules whose weights are proportional
    rank alike, so one of them stands for all."""
    rules, seen = [], set()
    for a in CEILING_A:
        for b in CEILING_B:
            for c in CEILING_C:
                for g in CEILING_G:
                    total = a + b + c
                    if total == 0:
                        continue
                    key = (round(a / total, 6), round(b / total, 6), round(c / total, 6)) if g == 0 else (a, b, c, g)
                    if key not in seen:
                        seen.add(key)
                        # As the rule names itself (rlsched/area_rule.h: AreaRule::spec), C only when not 0.
                        share = f"/{c:g}" if c else ""
                        rules.append(f"area:{a:g}/{b:g}/{g:g}{share}/relative")
    return rules


def ceiling(args, judged, backfill, folder):
    """Report lines: per workload, the best heuristic and the best rule; then the rules best over all of them."""
    rules = ceiling_rules()

    def one(item):
        name, spec = item
        with open(os.path.join(folder, f"ceiling-{name}-{backfill}.log"), "w") as log:
            return name, evaluate(args, spec, HEURISTICS + rules, backfill, folder, f"ceiling-{name}-{backfill}",
                                  log)["results"]

    workers = args.threads if args.threads > 0 else (os.cpu_count() or 1)
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        found = dict(pool.map(one, judged.items()))
    return ceiling_report(list(judged), found, rules, backfill)


def self_tuning(args, judged, backfill, folder):
    """(workload, evaluate results) with the self-tuning policy beside the heuristics, the workloads at once."""
    def one(item):
        name, spec = item
        with open(os.path.join(folder, f"self-tuning-{name}-{backfill}.log"), "w") as log:
            return name, evaluate(args, spec, HEURISTICS + [SELF_TUNING], backfill, folder,
                                  f"self-tuning-{name}-{backfill}", log)["results"]

    workers = args.threads if args.threads > 0 else (os.cpu_count() or 1)
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, judged.items()))


def ceiling_report(names, found, rules, backfill):
    """The ceiling's report lines from each workload's evaluate results (name -> results, in `names` order)."""
    # (bsld ratio, p99 ratio) of every rule to the best heuristic, per workload in --workloads order.
    ratios = {rule: [] for rule in rules}
    lines = [f"## Ceiling of one rule: {len(rules)} area rules, {backfill} backfill, chosen with hindsight", "",
             "| workload | best heuristic | best rule | its bsld / p99 ratio | rules that win (p99 included) |",
             "|---|---|---|---|---|"]
    for name in names:
        by_policy = {r["policy"]: r for r in found[name]}
        best = best_heuristic(found[name])
        for rule in rules:
            r = by_policy[rule]
            ratios[rule].append((r["avg_bsld"] / best["avg_bsld"], r["p99_wait"] / max(best["p99_wait"], 1.0)))
        top = min(rules, key=lambda rule: ratios[rule][-1][0])
        wins = sum(1 for rule in rules if won(*ratios[rule][-1]))
        lines.append(f"| {name} | {best['policy']} {best['avg_bsld']:.2f} | `{top}` | "
                     f"{ratios[top][-1][0]:.2f} / {ratios[top][-1][1]:.2f} | {wins} |")

    def geo(rule):
        return math.exp(sum(math.log(b) for b, _ in ratios[rule]) / len(ratios[rule]))

    def worst(rule):
        return max(b for b, _ in ratios[rule])

    everywhere = [rule for rule in rules if all(won(b, p) for b, p in ratios[rule])]
    lines += ["", f"Rules that beat the best heuristic on every workload, p99 included: **{len(everywhere)}**"
              + (f" ({', '.join(f'`{r}`' for r in everywhere)})" if everywhere else "") + ".", "",
              "| rule | chosen by | " + " | ".join(names) + " | geometric mean |",
              "|---|---|" + "---|" * len(names) + "---|"]
    for label, rule in (("lowest worst ratio", min(rules, key=worst)), ("lowest geometric mean", min(rules, key=geo))):
        cells = " | ".join(f"{b:.2f} / {p:.2f}" for b, p in ratios[rule])
        lines.append(f"| `{rule}` | {label} | {cells} | {geo(rule):.2f} |")
    return lines + [""]


def judged_policy(name):
    """Whether a result is the policy judged (a model, or the self-tuning policy) rather than a heuristic."""
    return name.startswith("model:") or name.startswith(SELF_TUNING)


def best_heuristic(results):
    return min((r for r in results if r["policy"] in HEURISTICS), key=lambda r: r["avg_bsld"])


def table(results, model_label):
    """model_label: the name of the judged policy in the table, or a dict of names by policy when several are."""
    rows = ["| policy | avg bsld | avg wait (s) | p99 wait (s) | max wait (s) | utilisation |",
            "|---|---|---|---|---|---|"]
    best = best_heuristic(results)
    for r in results:
        name = r["policy"]
        if judged_policy(name):
            name = model_label.get(name, name) if isinstance(model_label, dict) else model_label
        if r is best:
            name = f"**{name}** (best heuristic)"
        rows.append(f"| {name} | {r['avg_bsld']:.2f} | {r['avg_wait']:.0f} | {r['p99_wait']:.0f} | "
                    f"{r['max_wait']:.0f} | {100 * r['utilization']:.1f}% |")
    return rows


def ratios(result, best):
    """(result's average bounded slowdown / best's, its p99 wait / best's); nan where best's is 0."""
    ratio = result["avg_bsld"] / best["avg_bsld"] if best["avg_bsld"] > 0 else float("nan")
    p99 = result["p99_wait"] / best["p99_wait"] if best["p99_wait"] > 0 else float("nan")
    return ratio, p99


def models_report(compared, labels):
    """Report lines: every model's ratios on every workload (compared: (name, out of sample, evaluate results)),
    then each model's geometric means, wins (both ratios at most 1, slowdown below) and worst slowdown ratio over
    the workloads out of sample. A comparison of models needs the same workloads for all of them: --sites."""
    lines = ["## The models side by side: average bounded slowdown / p99 wait over the best heuristic's", "",
             "| workload | best heuristic | " + " | ".join(labels.values()) + " |",
             "|---|---|" + "---|" * len(labels)]
    out = {policy: [] for policy in labels}
    for name, out_of_sample, results in compared:
        by_policy = {r["policy"]: r for r in results}
        best = best_heuristic(results)
        cells = []
        for policy in labels:
            ratio, p99 = ratios(by_policy[policy], best)
            if out_of_sample:
                out[policy].append((ratio, p99))
            cells.append(f"**{ratio:.2f} / {p99:.2f}**" if won(ratio, p99) else f"{ratio:.2f} / {p99:.2f}")
        where = "" if out_of_sample else " (in sample)"
        lines.append(f"| {name}{where} | {best['policy']} {best['avg_bsld']:.2f} | " + " | ".join(cells) + " |")

    count = len(next(iter(out.values()), []))
    lines += ["", f"Over the {count} workloads out of sample (**bold**: the model wins, p99 included):", "",
              "| model | geometric mean | wins | worst slowdown ratio |", "|---|---|---|---|"]
    for policy, label in labels.items():
        values = out[policy]
        if not values:
            continue
        wins = sum(1 for b, p in values if won(b, p))
        lines.append(f"| {label} | {geometric_mean([b for b, _ in values]):.2f} / "
                     f"{geometric_mean([p for _, p in values]):.2f} | "
                     f"{wins} of {len(values)} | {max(b for b, _ in values):.2f} |")
    return lines + [""]


def judged_sites(names, first_seed, sites):
    """(judged name, generator seed or None) for --workloads: a generated family gets `sites` seeds, the i-th name
    of the list first_seed + i and then every len(names) up (with one site: `gen-cpu`, as before; with more,
    `gen-cpu-SEED`), so that no two names share a seed."""
    out = []
    for i, name in enumerate(names):
        if not name.startswith("gen-"):
            out.append((name, None))
            continue
        seeds = [first_seed + i + k * len(names) for k in range(sites)]
        out += [(name if sites == 1 else f"{name}-{seed}", seed) for seed in seeds]
    return out


def loo_folds(judged_names):
    """Leave one out's folds, in order: (fold, the judged names its model is judged on). A shared trace is a fold of
    its own; a generated family is one fold judged on each of its sites (--sites); a name judged at another load
    (`coare@x0.97`, --load-factors) belongs to its workload's fold."""
    folds = {}
    for name in judged_names:
        folds.setdefault(family_of(name) or workload_of(name), []).append(name)
    return list(folds.items())


def workload_of(name):
    """'coare' for 'coare@x0.97': the workload a judged run at another load (--load-factors) is of."""
    return name.split("@")[0]


def at_load(name, factor):
    """The judged name of a workload's run at `factor` times its load (the name itself at its own load)."""
    return name if factor == 1 else f"{name}@x{factor:g}"


def load_factor_list(text):
    """'0.97,1,1.03' -> [0.97, 1.0, 1.03]; ValueError says which entry is not a positive number or is repeated."""
    factors = []
    for part in text.split(","):
        try:
            factor = float(part)
        except ValueError:
            raise ValueError(f"'{part}' is not a number") from None
        if not factor > 0 or not math.isfinite(factor):
            raise ValueError(f"'{part}' is not a positive number")
        if factor in factors:
            raise ValueError(f"'{part}' is listed twice")
        factors.append(factor)
    return factors


def kept_fold_model(folder, fold):
    """The model a kept leave-one-out run (--keep FOLDER) trained without `fold`."""
    return os.path.join(folder, f"loo-without-{fold}.pt")


def kept_train_line(folder):
    """The first `rlsched train` command a kept run's protocol.log records (it names the recipe and --seed)."""
    with open(os.path.join(folder, "protocol.log")) as f:
        return next((line[2:].strip() for line in f if line.startswith("$ ") and " train " in line), None)


def family_of(name):
    """'gen-cpu' for a generated site of the cpu family, judged (gen-cpu, gen-cpu-SEED) or trained on
    (train-cpu-SEED); None for a shared trace."""
    parts = name.split("-")
    return f"gen-{parts[1]}" if parts[0] in ("gen", "train") and len(parts) > 1 else None


def fold_sources(pool_names, fold):
    """What a fold's model trains on: every workload of the pool but the fold's own. A generated family left out
    is not used in training at all: neither its judged sites nor its training seeds."""
    return [name for name in pool_names if name != fold and family_of(name) != fold]


def won(ratio, p99):
    """The bar's win against the best heuristic: a lower average bounded slowdown, a p99 wait no higher."""
    return ratio < 1 and p99 <= 1


def geometric_mean(values):
    finite = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, finite)) / len(finite)) if finite else float("nan")


def fold_means(site_ratios):
    """A fold's (slowdown ratio, p99 ratio) from its sites' (the geometric means; a shared trace's own)."""
    return geometric_mean([b for b, _ in site_ratios]), geometric_mean([p for _, p in site_ratios])


def family_line(fold, backfill, site_ratios, runs=None):
    """One line for a fold judged more than once (a generated family's sites, a workload's loads): the geometric
    means of its runs' ratios, the runs won (both ratios at most 1, slowdown below) and the worst slowdown ratio.
    runs: what the runs are (default: "N sites")."""
    wins = sum(1 for b, p in site_ratios if won(b, p))
    ratio, p99 = fold_means(site_ratios)
    return (f"**{fold} left out, {backfill} backfill, over its {runs or f'{len(site_ratios)} sites'}**: geometric "
            f"mean {ratio:.2f} / {p99:.2f}, {wins} of {len(site_ratios)} won, "
            f"worst {max(b for b, _ in site_ratios):.2f}")


def folds_line(backfill, fold_ratios):
    """Leave one out over all its folds with one backfill (fold_ratios: (fold, slowdown ratio, p99 ratio); a family
    by the geometric means of its sites): the folds won and the geometric means over the folds."""
    wins = sum(1 for _, b, p in fold_ratios if won(b, p))
    return (f"**Leave one out, {backfill} backfill: {wins} of {len(fold_ratios)} folds won**, geometric mean "
            f"{geometric_mean([b for _, b, _ in fold_ratios]):.2f} / {geometric_mean([p for _, _, p in fold_ratios]):.2f}"
            " over the folds (issue 15's bar: every fold won, 10% below on average)")


def summary(results):
    """(model bsld / best heuristic bsld, model p99 / that heuristic's p99, best heuristic's name)."""
    model = next(r for r in results if judged_policy(r["policy"]))
    best = best_heuristic(results)
    return (*ratios(model, best), best["policy"])


# What a model card says of each protocol it can show (--card): its section's title.
CARD_SECTIONS = {"loo": "## Out of sample: leave one out (the same recipe, trained without the workload)",
                 "time-split": "## Out of sample: the time split (`rlsched train` on a trace's first 80%)"}


def card_section(proto, command, when, summaries, notes=()):
    """A model card's section for one protocol: how it was measured and the summary rows of that protocol
    (summaries: (protocol, workload, backfill, ratio, p99, best heuristic)), then notes (a family's line). Runs of
    a workload at several loads (--load-factors) make one row of it: its own load's figures beside those over the
    loads (geometric means), which decide its win."""
    rows = [row for row in summaries if row[0] == proto]
    lines = [CARD_SECTIONS[proto], "",
             f"Measured {when} by `{command}` (docs/policy-protocol.md). Ratio: the model's average bounded slowdown "
             "and p99 wait over those of the best heuristic of the same run; it wins with a lower slowdown and a p99 "
             "no higher.", ""]
    if not any("@" in name for _, name, *_ in rows):
        lines += ["| workload | backfill | best heuristic | bsld ratio | p99 ratio | model wins |",
                  "|---|---|---|---|---|---|"]
        return lines + [f"| {name} | {backfill} | {best} | {ratio:.2f} | {p99:.2f} | "
                        f"{'yes' if won(ratio, p99) else 'no'} |" for _, name, backfill, ratio, p99, best in rows] + \
            ([""] + list(notes) if notes else [])
    groups = {}  # (workload, backfill) -> its runs, in order
    for _, name, backfill, ratio, p99, best in rows:
        groups.setdefault((workload_of(name), backfill), []).append((name, ratio, p99, best))
    loads = max(len(runs) for runs in groups.values())
    lines += [f"Each workload at {loads} loads: its own, and the others of `--load-factors` (a fold's ratio is the "
              "geometric mean over its runs: one run of a workload is one trajectory of a chaotic system).", "",
              "| workload | backfill | best heuristic, runs | bsld ratio at its load | p99 ratio at its load | "
              "bsld ratio over the loads | p99 ratio over the loads | runs won | model wins |",
              "|---|---|---|---|---|---|---|---|---|"]
    for (workload, backfill), runs in groups.items():
        own = next(((r, p) for name, r, p, _ in runs if name == workload), None)
        bests = {}
        for *_, best in runs:
            bests[best] = bests.get(best, 0) + 1
        ratio, p99 = fold_means([(r, p) for _, r, p, _ in runs])
        lines.append(f"| {workload} | {backfill} | {', '.join(f'{b} {n}' for b, n in bests.items())} | "
                     + (f"{own[0]:.2f} | {own[1]:.2f}" if own else "- | -")
                     + f" | {ratio:.2f} | {p99:.2f} | {sum(won(r, p) for _, r, p, _ in runs)} of {len(runs)} | "
                     f"{'yes' if won(ratio, p99) else 'no'} |")
    return lines + ([""] + list(notes) if notes else [])


def put_section(text, section):
    """text with the section titled section[0] replaced by the lines of section (appended when it has none): a
    section runs from its title to the next '## ' title or the end."""
    lines = text.rstrip("\n").split("\n")
    title = section[0]
    if title in lines:
        start = lines.index(title)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        lines[start:end] = list(section) + ([""] if end < len(lines) else [])
    else:
        lines += [""] + list(section)
    return "\n".join(lines).rstrip("\n") + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rlsched", default=os.path.join(ROOT, "build", "release", "tools", "rlsched"))
    p.add_argument("--protocol", default="loo,time-split,shipped")
    p.add_argument("--workloads", default="lublin,ricc,coare,gavel,gen-cpu,gen-gpu",
                   help="names to judge; gen-cpu / gen-gpu are generated families with held-out seeds")
    p.add_argument("--generated-jobs", type=int, default=20000)
    p.add_argument("--training-seeds", default=GENERATED_TRAINING_SEEDS,
                   help="generated sites of each judged gen-* family that loo and default train on, e.g. 1-12")
    p.add_argument("--judged-seed", type=int, default=1001,
                   help="the generated workloads judged draw seeds from here up (the i-th name of --workloads: "
                        "this + i); a design already judged on the defaults is judged afresh on others, e.g. 2001")
    p.add_argument("--sites", type=int, default=1,
                   help="generated sites per gen-* workload (seeds: see --judged-seed, then every len(--workloads) up)")
    p.add_argument("--models", default="",
                   help="--protocol shipped: more models (comma-separated .pt paths) judged beside the default")
    p.add_argument("--train-minutes", type=float, default=10, help="each training run's --time-budget")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--shared-weight", type=int, default=1,
                   help="loo and default: how many workloads each shared trace counts as in training (train's "
                        "--trace-weight; generated sites count once)")
    p.add_argument("--weight", action="append", default=[], metavar="WORKLOAD=N",
                   help="loo and default: how many workloads one of --workloads counts as in training, over "
                        "--shared-weight (a generated family: each of its training sites; repeat it: "
                        "--weight gen-gpu=2)")
    p.add_argument("--gpu-short-widest", type=float, metavar="X",
                   help="loo and default: generate the gpu family's training sites (not the judged ones) with "
                        "`generate --short-share-widest X`; 0.75, about the smallest jobs' share, makes run time "
                        "independent of width, as in Gavel's jobs (default: drawn, wider jobs run longer)")
    p.add_argument("--seed", type=int, default=1, help="each training run's --seed (one seed is one draw: run several)")
    p.add_argument("--validation-sites", type=int, default=0, metavar="N",
                   help="loo and default: choose each model on N generated sites of each family it trains on "
                        f"(train's --validation-trace; {VALIDATION_JOBS} jobs each), never on a family a fold leaves "
                        "out; 0: on the training traces' own validation jobs")
    p.add_argument("--validation-seed", type=int, default=20001,
                   help="the validation sites' first seed (each family: this and up)")
    p.add_argument("--train-arg", action="append", default=[],
                   help="one more argument for every `rlsched train` run (repeat it: --train-arg=--patience --train-arg=20)")
    p.add_argument("--backfill", default="easy,none")
    p.add_argument("--load-factors", default="1", metavar="LIST",
                   help="loo: judge each workload at each of these multiples of its load (evaluate's --load-factor), "
                        "e.g. 0.97,0.985,1,1.015,1.03: one run of a workload is one draw of a chaotic system "
                        "(policy_models/README.md, stop 65); a fold's ratio is the geometric mean over its runs")
    p.add_argument("--fold-models", metavar="DIR",
                   help="loo: judge the models a kept leave-one-out run (its --keep DIR) trained, without training")
    p.add_argument("--out", help="write the Markdown report here too")
    p.add_argument("--keep", help="keep models, JSON and the log in this folder (default: a temporary one)")
    p.add_argument("--default-out", help="--protocol default: write the model (and its card beside it) here")
    p.add_argument("--card", help="the model card (.md) to put this run's leave-one-out and time-split summaries "
                                  "in, each as a section of its own that a later run replaces")
    p.add_argument("--config", default=CONFIG,
                   help="the rlsched.yaml every train and evaluate run applies (a variant to try, e.g. another "
                        "score_scale; default: the shipped example)")
    args = p.parse_args()
    if not os.path.isfile(args.config):
        sys.exit(f"policy_protocol: --config: no such file '{args.config}'")
    if args.card and not os.path.isfile(args.card):
        sys.exit(f"policy_protocol: --card: no such model card '{args.card}'")
    if args.card and not set(args.protocol.split(",")) & set(CARD_SECTIONS):
        sys.exit(f"policy_protocol: --card: --protocol {args.protocol} writes no section of a model card "
                 f"(only {' and '.join(CARD_SECTIONS)} do)")
    args.models = [m for m in args.models.split(",") if m]
    try:
        args.load_factors = load_factor_list(args.load_factors)
    except ValueError as e:
        sys.exit(f"policy_protocol: --load-factors {e}")
    training_seeds = args.training_seeds
    try:
        args.training_seeds = seed_list(training_seeds)
    except ValueError:
        sys.exit(f"policy_protocol: --training-seeds '{training_seeds}': expected seeds and ranges, e.g. 1-4,9")
    if args.sites < 1:
        sys.exit("policy_protocol: --sites must be at least 1")
    if args.gpu_short_widest is not None and not 0 <= args.gpu_short_widest <= 1:
        sys.exit(f"policy_protocol: --gpu-short-widest {args.gpu_short_widest:g}: a share, in [0, 1]")
    if args.shared_weight < 1:
        sys.exit("policy_protocol: --shared-weight must be at least 1 (a trace counts at least once)")
    if args.validation_sites < 0:
        sys.exit("policy_protocol: --validation-sites must be at least 0")
    try:
        args.weight = parse_weights(args.weight, args.workloads.split(","))
    except ValueError as e:
        sys.exit(f"policy_protocol: --weight {e}")
    for m in args.models:
        if not os.path.isfile(m):
            sys.exit(f"policy_protocol: --models: no such model file '{m}'")
    protocols = args.protocol.split(",")
    names = args.workloads.split(",")
    if args.fold_models:
        if protocols != ["loo"]:
            sys.exit(f"policy_protocol: --fold-models judges kept leave-one-out models: --protocol loo alone, "
                     f"not {args.protocol}")
        folds = [fold for fold, _ in loo_folds([name for name, _ in judged_sites(names, args.judged_seed, 1)])]
        missing = [kept_fold_model(args.fold_models, f) for f in folds
                   if not os.path.isfile(kept_fold_model(args.fold_models, f))]
        if missing:
            sys.exit(f"policy_protocol: --fold-models {args.fold_models}: no {', '.join(missing)} (a --keep folder "
                     "of --protocol loo over the same --workloads)")
        if not os.path.isfile(os.path.join(args.fold_models, "protocol.log")) or \
                kept_train_line(args.fold_models) is None:
            sys.exit(f"policy_protocol: --fold-models {args.fold_models}: no protocol.log with the `rlsched train` "
                     "line that made its models")
        # --seed and --train-arg say, in the command the report and card show, how the models were trained: they
        # must be what the kept run trained with.
        recipe = " ".join([f"--seed {args.seed}"] + args.train_arg)
        if f" {recipe} " not in kept_train_line(args.fold_models) + " ":
            sys.exit(f"policy_protocol: --fold-models {args.fold_models}: its models were not trained with "
                     f"`{recipe}` (its protocol.log: `{kept_train_line(args.fold_models)}`); give the --seed and "
                     "--train-arg it ran")
    for proto in protocols:
        if proto not in ("loo", "time-split", "default", "shipped", "ceiling", SELF_TUNING):
            sys.exit(f"policy_protocol: unknown protocol '{proto}' (loo, time-split, default, shipped, ceiling, "
                     f"{SELF_TUNING})")

    trained = seeds_trained_on(protocols, args.training_seeds)
    chosen_on = set(range(args.validation_seed, args.validation_seed + args.validation_sites))
    judged_seeds = {seed for _, seed in judged_sites(names, args.judged_seed, args.sites) if seed is not None}
    if chosen_on & (judged_seeds | trained):
        sys.exit(f"policy_protocol: --validation-seed {args.validation_seed}: the validation sites' seeds "
                 f"{args.validation_seed}-{args.validation_seed + args.validation_sites - 1} meet the judged or "
                 "training seeds; choose another")
    clash = [seed for _, seed in judged_sites(names, args.judged_seed, args.sites) if seed in trained]
    if clash:
        sys.exit(f"policy_protocol: --judged-seed {args.judged_seed} would judge on training seed(s) "
                 f"{', '.join(map(str, clash))} (--training-seeds {training_seeds}"
                 + (f"; the shipped default's {SHIPPED_GENERATED_SEEDS}" if trained != set(args.training_seeds)
                    else "") + "); choose another")

    folder = args.keep or tempfile.mkdtemp(prefix="rlsched-protocol-")
    os.makedirs(folder, exist_ok=True)
    log_path = os.path.join(folder, "protocol.log")
    when = f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with {blas_kernels(args.rlsched)}"
    command = (f"python3 bench/policy_protocol.py --protocol {args.protocol} --workloads {args.workloads} "
               f"--train-minutes {args.train_minutes:g} --judged-seed {args.judged_seed}"
               + (f" --sites {args.sites}" if args.sites > 1 else "")
               + (f" --models {','.join(args.models)}" if args.models else "")
               + (f" --training-seeds {training_seeds}" if training_seeds != GENERATED_TRAINING_SEEDS else "")
               + (f" --gpu-short-widest {args.gpu_short_widest:g}" if args.gpu_short_widest is not None else "")
               + (f" --seed {args.seed}" if args.seed != 1 else "")
               + (f" --shared-weight {args.shared_weight}" if args.shared_weight != 1 else "")
               + "".join(f" --weight {name}={count}" for name, count in args.weight.items())
               + (f" --backfill {args.backfill}" if args.backfill != "easy,none" else "")
               + "".join(f" --train-arg={a}" for a in args.train_arg)
               + (f" --validation-sites {args.validation_sites} --validation-seed {args.validation_seed}"
                  if args.validation_sites else "")
               + (f" --config {args.config}" if args.config != CONFIG else "")
               + (f" --load-factors {','.join(f'{f:g}' for f in args.load_factors)}"
                  if args.load_factors != [1] else "")
               + (f" --fold-models {args.fold_models}" if args.fold_models else ""))
    report = [f"# Out-of-sample protocol ({when})", "", f"`{command}`; judged with `--config {args.config}`.", ""]
    loo_notes, fold_ratios = [], {}
    with open(log_path, "w") as log:
        workloads = shared_workloads()
        judged = {}
        for name, seed in judged_sites(names, args.judged_seed, args.sites):
            if seed is not None:
                judged[name] = generate(args, name.split("-")[1], seed, args.generated_jobs, folder)
            elif name in workloads:
                judged[name] = workloads[name]
            else:
                sys.exit(f"policy_protocol: unknown workload '{name}' (known: {', '.join(workloads)}, gen-cpu, gen-gpu)")
        training_pool = dict(judged)
        trains_on_pool = ("loo" in protocols and not args.fold_models) or "default" in protocols
        for family in sorted({n.split("-")[1] for n in names if n.startswith("gen-") and trains_on_pool}):
            for seed in args.training_seeds:
                training_pool[f"train-{family}-{seed}"] = training_site(args, family, seed, folder)

        summaries = []
        shipped, trained_on = SHIPPED, SHIPPED_TRAINED_ON
        if "default" in protocols:
            # Every workload but the judged generated seeds, which stay out of sample for `shipped`.
            pool = [n for n in training_pool if not n.startswith("gen-")]
            sources = [training_pool[n] for n in pool]
            shipped, seconds = train(args, "default", sources, folder, log, model=args.default_out,
                                     weights=pool_weights(args, pool),
                                     validation=validation_sites(args, pool, folder))
            trained_on = {n for n in training_pool if not n.startswith("gen-")}
            report += [f"## The default model, trained {seconds / 60:.1f} min on {len(sources)} workloads: {shipped}",
                       ""]
        if "shipped" in protocols:
            report += ["## The shipped default model", ""]
            # The default first: summary() and the summary table are about it; --models are judged in the same runs.
            labels = {"model:" + shipped: "default"}
            for path in args.models:
                labels.setdefault("model:" + path, path)
            compared = []  # (workload, out of sample, results)
            for name, spec in judged.items():
                results = evaluate(args, spec, HEURISTICS + list(labels), "easy", folder, f"shipped-{name}",
                                   log)["results"]
                ratio, p99, best = summary(results)
                where = "in sample (trained on its first 80%)" if name in trained_on else "out of sample"
                report += [f"### {name}, EASY backfill, {where}", ""] + table(results, labels) + [""]
                summaries.append(("shipped", name, "easy", ratio, p99, best))
                compared.append((name, name not in trained_on, results))
            if args.models:
                report += models_report(compared, labels)

        if "loo" in protocols:
            report += ["## Leave one out", ""]
            if args.fold_models:
                # Read by bench/loo_draws.py for the draw's seed, as a trained run's own train lines are.
                log.write(f"# fold models of {args.fold_models}, trained by: {kept_train_line(args.fold_models)}\n")
            for fold, members in loo_folds(judged):
                pool = fold_sources(training_pool, fold)
                sources = [training_pool[n] for n in pool]
                if args.fold_models:
                    model = kept_fold_model(args.fold_models, fold)
                    trained_how = f"the model {model}, kept from the run that trained it"
                else:
                    # Judged on the workload left out: every job of the others may be read.
                    model, seconds = train(args, f"loo-without-{fold}", sources, folder, log, held_back=0,
                                           weights=pool_weights(args, pool),
                                           validation=validation_sites(args, pool, folder))
                    trained_how = f"trained {seconds / 60:.1f} min on the {len(sources)} others"
                for backfill in args.backfill.split(","):
                    site_ratios = []
                    for name in members:
                        for factor in args.load_factors:
                            run_name = at_load(name, factor)
                            extra = [] if factor == 1 else ["--load-factor", f"{factor:g}"]
                            results = evaluate(args, judged[name], HEURISTICS + ["model:" + model], backfill,
                                               folder, f"loo-{run_name}-{backfill}", log, extra)["results"]
                            ratio, p99, best = summary(results)
                            what = f"{run_name} left out" if name == fold else f"{run_name} ({fold} left out)"
                            report += [f"### {what}, {backfill} backfill ({trained_how})", ""] + \
                                table(results, "model") + [""]
                            summaries.append(("loo", run_name, backfill, ratio, p99, best))
                            site_ratios.append((ratio, p99))
                    if len(site_ratios) > 1:
                        loads = len(args.load_factors)
                        runs = (f"{len(members)} sites" if loads == 1
                                else f"{len(members)} site{'s' if len(members) > 1 else ''} at {loads} loads")
                        loo_notes.append(family_line(fold, backfill, site_ratios, runs))
                        report += [loo_notes[-1], ""]
                    fold_ratios.setdefault(backfill, []).append((fold, *fold_means(site_ratios)))
            for backfill, folds in fold_ratios.items():
                loo_notes.append(folds_line(backfill, folds))
                report += [loo_notes[-1], ""]

        if SELF_TUNING in protocols:
            report += ["## Self-tuning: no training; it chooses among its candidates on the site's own past", ""]
            for backfill in args.backfill.split(","):
                for name, results in self_tuning(args, judged, backfill, folder):
                    ratio, p99, best = summary(results)
                    report += [f"### {name}, {backfill} backfill", ""] + table(results, SELF_TUNING) + [""]
                    summaries.append((SELF_TUNING, name, backfill, ratio, p99, best))

        if "ceiling" in protocols:
            for backfill in args.backfill.split(","):
                report += ceiling(args, judged, backfill, folder)

        if "time-split" in protocols:
            report += ["## Time split: trained on the first 80%, judged on the last 20%", ""]
            # A generated workload's judged seed is never trained on by the other protocols; here its own first 80%
            # is, as a site's history would be.
            for name, spec in judged.items():
                model, seconds = train(args, f"split-{name}", [spec], folder, log)
                # Judged as training read it: a site's next jobs as they came (Gavel's own arrivals, any type), not
                # the load and type constraints the other protocols put on its first jobs.
                heldback = {key: spec[key] for key in ("trace", "cluster") if key in spec}
                doc = evaluate(args, heldback, HEURISTICS, "easy", folder, f"split-{name}", log,
                               extra=["--candidate", model])
                results = doc["results"]
                ratio, p99, best = summary(results)
                report += [f"### {name} (trained {seconds / 60:.1f} min)", ""] + table(results, "model") + [
                    "", "`" + doc["verdict"]["text"].split("\n")[0] + "`", ""]
                summaries.append(("time-split", name, "easy", ratio, p99, best))

    if summaries:
        report += ["## Summary: the model's average bounded slowdown and p99 wait over the best heuristic's", "",
                   "| protocol | workload | backfill | best heuristic | bsld ratio | p99 ratio | model wins |",
                   "|---|---|---|---|---|---|---|"]
    for proto, name, backfill, ratio, p99, best in summaries:
        wins = "yes" if won(ratio, p99) else "no"
        report.append(f"| {proto} | {name} | {backfill} | {best} | {ratio:.2f} | {p99:.2f} | {wins} |")
    text = "\n".join(report) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    if args.card:
        with open(args.card) as f:
            card = f.read()
        for proto in ("loo", "time-split"):
            if proto in protocols:
                notes = [f"- {line}" for line in loo_notes] if proto == "loo" else []
                card = put_section(card, card_section(proto, command, when, summaries, notes))
        with open(args.card, "w") as f:
            f.write(card)
    print(f"models, JSON and the log: {folder}", file=sys.stderr)


if __name__ == "__main__":
    main()
