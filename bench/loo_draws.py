#!/usr/bin/env python3
"""Leave one out over several draws: compare training recipes on the runs `policy_protocol.py --protocol loo
--keep DIR` kept, one folder per draw (one `--seed`), without training or simulating anything again.

    python3 bench/loo_draws.py RECIPE=DIR[,DIR...] [RECIPE=DIR[,DIR...] ...] [--backfill easy] [--out FILE.md]

One draw of a recipe cannot rank recipes that differ by 10%: the same recipe's fold ratios move by up to 0.5 from
one seed to the next (policy_models/README.md, stop 56). This reads each folder's `loo-<site>-<backfill>.json`
(what `rlsched evaluate --json` wrote for the model and every heuristic of the same run) and its protocol.log
(the training seed), and prints, for each recipe, each fold's ratio to the best heuristic of its run at every draw
and over the draws, then one line per recipe: the geometric mean over every fold of every draw, and the folds won
over the draws. A fold's ratio in one draw is the geometric mean over its sites (a generated family's five, a
shared trace's one), as the protocol computes it; over the draws it is the geometric mean of the draws' ratios,
the slowdown and the p99 wait apart. A fold is won, as the issue's bar counts it, when its slowdown ratio is below 1
and its p99 ratio at most 1. Every draw of every recipe must have been judged on the same sites.
"""
import argparse
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import policy_protocol as pp  # noqa: E402


class DrawError(Exception):
    """A folder that is not a kept leave-one-out run, or draws that cannot be compared; the message says which."""


def draw_seed(folder):
    """The `--seed` of the first `rlsched train` the folder's protocol.log records (a run that judged kept models
    again, policy_protocol.py --fold-models, records the train line that made them)."""
    log = os.path.join(folder, "protocol.log")
    try:
        with open(log) as f:
            for line in f:
                if line.startswith(("$ ", "# fold models of ")) and " train " in line:
                    found = re.search(r" --seed (\d+)", line)
                    if not found:
                        raise DrawError(f"{log}: its first `rlsched train` line has no --seed")
                    return int(found.group(1))
    except OSError as e:
        raise DrawError(f"{folder}: no protocol.log to read the draw's seed from ({e.strerror})") from None
    raise DrawError(f"{log}: no `rlsched train` line: not a leave-one-out run")


def site_ratios(folder, backfill):
    """{judged site: (slowdown ratio, p99 ratio)} of one kept run."""
    pattern = os.path.join(folder, f"loo-*-{backfill}.json")
    out = {}
    for path in sorted(glob.glob(pattern)):
        site = os.path.basename(path)[len("loo-"):-len(f"-{backfill}.json")]
        try:
            with open(path) as f:
                results = json.load(f)["results"]
            ratio, p99, _ = pp.summary(results)
        except (OSError, ValueError, KeyError, TypeError, StopIteration) as e:
            raise DrawError(f"{path}: not a leave-one-out result of `rlsched evaluate --json` "
                            f"({type(e).__name__}: {e})") from None
        out[site] = (ratio, p99)
    if not out:
        raise DrawError(f"{folder}: no {os.path.basename(pattern)} (not a --keep folder of --protocol loo with "
                        f"--backfill {backfill})")
    return out


def fold_ratios(sites):
    """{fold: (slowdown ratio, p99 ratio)} from one draw's sites, folds in the order of their sites' names."""
    return {fold: pp.fold_means([sites[m] for m in members]) for fold, members in pp.loo_folds(list(sites))}


def over_draws(draws):
    """A fold's (slowdown, p99) ratio over the draws: the geometric means of the draws' ratios."""
    return pp.geometric_mean([b for b, _ in draws]), pp.geometric_mean([p for _, p in draws])


def read_recipes(specs, backfill):
    """[(recipe, [(seed, {fold: ratios})])] from RECIPE=DIR[,DIR...] arguments; every draw on the same sites."""
    recipes, sites_seen = [], None
    for spec in specs:
        name, sep, dirs = spec.partition("=")
        if not sep or not name or not dirs:
            raise DrawError(f"'{spec}': expected RECIPE=DIR[,DIR...]")
        draws = []
        for folder in dirs.split(","):
            sites = site_ratios(folder, backfill)
            if sites_seen is None:
                sites_seen = (folder, sorted(sites))
            elif sorted(sites) != sites_seen[1]:
                raise DrawError(f"{folder} was judged on other sites than {sites_seen[0]} "
                                f"({', '.join(sorted(sites))} against {', '.join(sites_seen[1])}): "
                                "draws compare only on the same sites (--judged-seed, --sites, --workloads)")
            draws.append((draw_seed(folder), fold_ratios(sites)))
        recipes.append((name, draws))
    return recipes


def cell(ratio, p99):
    text = f"{ratio:.3f} / {p99:.3f}"
    return f"**{text}**" if pp.won(ratio, p99) else text


def summarise(draws):
    """(geometric mean over every fold of every draw, the results counted, folds won over the draws, folds)."""
    folds = list(draws[0][1])
    every = [ratios[fold][0] for _, ratios in draws for fold in folds]
    won = sum(pp.won(*over_draws([ratios[fold] for _, ratios in draws])) for fold in folds)
    return pp.geometric_mean(every), len(every), won, len(folds)


def report(recipes, backfill):
    lines = [f"Leave one out, {backfill} backfill: the model's average bounded slowdown / p99 wait over the best "
             "heuristic's of the same run (**bold**: won, slowdown below 1 and p99 at most 1).", ""]
    for name, draws in recipes:
        lines += [f"### {name}", "",
                  "| fold | " + " | ".join(f"seed {seed}" for seed, _ in draws) + " | over the draws |",
                  "|---|" + "---|" * (len(draws) + 1)]
        for fold in draws[0][1]:
            per_draw = [ratios[fold] for _, ratios in draws]
            cells = [cell(*r) for r in per_draw] + [cell(*over_draws(per_draw))]
            lines.append(f"| {fold} | " + " | ".join(cells) + " |")
        lines.append("")
    first, first_draws = recipes[0]
    lines += ["| recipe | draws | geometric mean over every fold of every draw | folds won over the draws | "
              f"{first} on the same seeds | each draw: geometric mean, folds won |", "|---|---|---|---|---|---|"]
    for i, (name, draws) in enumerate(recipes):
        mean, results, won, folds = summarise(draws)
        seeds = {seed for seed, _ in draws}
        paired = [d for d in first_draws if d[0] in seeds]
        if i == 0:
            against = ""
        elif not paired:
            against = "no seed in common"
        else:
            p_mean, p_results, p_won, _ = summarise(paired)
            against = (f"{p_mean:.4f} over {p_results}, {p_won} won (seeds "
                       f"{', '.join(str(s) for s, _ in paired)})")
        # One draw alone: its geometric mean over the folds and the folds it won.
        each = "; ".join(f"seed {draw[0]}: {one[0]:.4f}, {one[2]}" for draw in draws for one in [summarise([draw])])
        lines.append(f"| {name} | {len(draws)} | {mean:.4f} over {results} | {won} of {folds} | {against} | {each} |")
    return lines + [""]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("recipes", nargs="+", metavar="RECIPE=DIR[,DIR...]",
                   help="a recipe's name and its draws' --keep folders")
    p.add_argument("--backfill", default="easy", help="which of the runs' backfills to read (default: easy)")
    p.add_argument("--out", help="write the Markdown report here too")
    args = p.parse_args(argv)
    try:
        text = "\n".join(report(read_recipes(args.recipes, args.backfill), args.backfill))
    except DrawError as e:
        sys.exit(f"loo_draws: {e}")
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
