#!/usr/bin/env python3
"""Draws the figures of `rlsched evaluate --report DIR` and writes DIR/index.html.

Reads DIR/report.json (the evaluation's JSON, as --json writes it) and DIR/outcomes-<n>.csv (per-job outcomes of
results[n]); writes PNG figures with matplotlib (Debian's python3-matplotlib):
  wait_cdf.png          wait-time CDF per run
  queue_length.png      pending jobs over time per run
  utilisation.png       accelerators (or CPUs, for a workload without accelerators) in use over time, per type
  placements.png        jobs per accelerator type and run (the placement table as a chart)
  preemptions.png       preemptions and lost accelerator-hours per run (the preemption table as a chart)
  price_load.png        with --energy: the electricity price (step line) against the share of accelerators busy
                        (the cluster's draw in kW for a cluster without accelerators) over time, per run, from
                        results[n].energy.series
Usage: plot_report.py DIR

Also draws the learning curve of `rlsched train` (the CSV written beside the model card: epoch, seconds,
train_cost_ratio, validation_cost_ratio, best_validation_cost_ratio) as a PNG:
Usage: plot_report.py --learning-curve CSV PNG
"""

from __future__ import annotations

import csv
import html
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_runs(folder: Path) -> tuple[dict, list[tuple[str, list[dict]]]]:
    doc = json.loads((folder / "report.json").read_text())
    runs = []
    for n, result in enumerate(doc["results"]):
        label = result["policy"]
        if len({r.get("placement") for r in doc["results"]}) > 1:
            label += f" / {result.get('placement')}"
        if len({r.get("preemption") for r in doc["results"]}) > 1:
            label += f" / {result.get('preemption')}"
        if len({r.get("energy", {}).get("rule") for r in doc["results"]}) > 1:
            label += f" / {result.get('energy', {}).get('rule')}"
        with open(folder / f"outcomes-{n}.csv", newline="") as f:
            runs.append((label, list(csv.DictReader(f))))
    return doc, runs


T0 = [0.0]  # the first submit of the workload: times on the figures are hours since it


def hours(seconds: float) -> float:
    return seconds / 3600.0


def since_start(seconds: float) -> float:
    return (seconds - T0[0]) / 3600.0


def wait_cdf(runs, ax) -> None:
    for label, rows in runs:
        waits = sorted(hours(float(r["wait"])) for r in rows if r["wait"] != "")
        if not waits:
            continue
        ax.step(waits, [(i + 1) / len(waits) for i in range(len(waits))], where="post", label=label)
    ax.set_xscale("symlog", linthresh=0.01)
    ax.set_xlabel("wait (hours)")
    ax.set_ylabel("share of started jobs")
    ax.set_title("Wait-time CDF")


def steps(events: list[tuple[float, float]], gains_first: bool) -> tuple[list[float], list[float]]:
    """(time, delta) events -> the step curve of their running sum; at equal times gains count before losses
    (gains_first: a job submitted and started at once was pending, if only for an instant) or after them (a job
    that ends frees what the next one takes)."""
    xs, ys, level = [], [], 0.0
    for t, d in sorted(events, key=lambda e: (e[0], -e[1] if gains_first else e[1])):
        level += d
        xs.append(since_start(t))
        ys.append(level)
    return xs, ys


def queue_length(runs, ax) -> None:
    for label, rows in runs:
        events = [(float(r["submit"]), 1.0) for r in rows]
        events += [(float(r["start"]), -1.0) for r in rows if r["start"] != ""]
        xs, ys = steps(events, gains_first=True)
        ax.step(xs, ys, where="post", label=label)
    ax.set_xlabel("hours since the first submit")
    ax.set_ylabel("pending jobs")
    ax.set_title("Queue length")


def utilisation(runs, ax) -> None:
    accelerated = any(int(r["accelerators"] or 0) > 0 for _, rows in runs for r in rows)
    for label, rows in runs:
        by_type: dict[str, list[tuple[float, float]]] = {}
        for r in rows:
            if r["start"] == "":
                continue
            amount = float(r["accelerators"] or 0) if accelerated else float(r["cpus"] or 0)
            if amount <= 0:
                continue
            kind = (r["accelerator_type"] or "any") if accelerated else "cpus"
            end = float(r["end"]) if r["end"] != "" else None
            by_type.setdefault(kind, []).append((float(r["start"]), amount))
            if end is not None:
                by_type[kind].append((end, -amount))
        for kind, events in sorted(by_type.items()):
            xs, ys = steps(events, gains_first=False)
            ax.step(xs, ys, where="post", label=f"{label}: {kind}")
    ax.set_xlabel("hours since the first submit")
    ax.set_ylabel("accelerators in use" if accelerated else "CPUs in use")
    ax.set_title("Utilisation per type" if accelerated else "Utilisation (CPUs; no accelerators in this workload)")


def placements(runs, ax) -> None:
    types = sorted({r["accelerator_type"] or "none" for _, rows in runs for r in rows})
    width = 0.8 / max(1, len(runs))
    for i, (label, rows) in enumerate(runs):
        counts = [sum(1 for r in rows if (r["accelerator_type"] or "none") == t) for t in types]
        ax.bar([x + i * width for x in range(len(types))], counts, width, label=label)
    ax.set_xticks([x + width * (len(runs) - 1) / 2 for x in range(len(types))], types)
    ax.set_ylabel("jobs")
    ax.set_title("Placements: jobs per accelerator type")


def preemptions(doc, runs, ax) -> None:
    labels = [label for label, _ in runs]
    pre = [r.get("preemptions", 0) or 0 for r in doc["results"]]
    lost = [r.get("lost_accelerator_hours", 0) or 0 for r in doc["results"]]
    xs = range(len(labels))
    ax.bar([x - 0.2 for x in xs], pre, 0.4, label="preemptions")
    ax.bar([x + 0.2 for x in xs], lost, 0.4, label="lost accelerator-hours")
    ax.set_xticks(list(xs), labels, rotation=20, ha="right")
    ax.set_title("Preemption and lost work")


def price_load(doc, runs, ax) -> None:
    """The price step line on the left axis; each run's busy-accelerator share (or draw) on a twin axis."""

    def hourly(series, values):  # the last step drawn to its end, not only its start
        xs = [since_start(t) for t in series["start"]]
        return xs + [xs[-1] + hours(series["step"])], list(values) + [values[-1]]

    accelerated = bool(doc.get("cluster", {}).get("accelerators"))
    metered = [(label, r["energy"]["series"]) for (label, _), r in zip(runs, doc["results"]) if "energy" in r]
    longest = max((s for _, s in metered), key=lambda s: len(s["start"]), default=None)
    if longest is None or not longest["start"]:
        return
    currency = next(r["energy"]["currency"] for r in doc["results"] if "energy" in r)
    ax.step(*hourly(longest, longest["price"]), where="post", color="black", label=f"price ({currency}/kWh)")
    ax.set_xlabel("hours since the first submit")
    ax.set_ylabel(f"price ({currency}/kWh)")
    load = ax.twinx()
    for label, series in metered:
        if not series["start"]:
            continue
        values = series["busy_share"] if accelerated else [w / 1000.0 for w in series["watts"]]
        load.step(*hourly(series, values), where="post", alpha=0.7, label=label)
    load.set_ylabel("share of accelerators busy" if accelerated else "cluster draw (kW)")
    if accelerated:
        load.set_ylim(0, 1.05)
    handles, labels = load.get_legend_handles_labels()
    if handles:
        load.legend(handles, labels, fontsize="small", loc="upper right")
    ax.set_title("Price against load over time")


def figure(folder: Path, name: str, draw) -> str:
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    draw(ax)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(folder / name)
    plt.close(fig)
    return name


def index_html(doc, runs, figures: list[str]) -> str:
    keys = ["avg_wait", "p50_wait", "p95_wait", "avg_bsld", "utilization", "preemptions", "lost_accelerator_hours"]
    energy_keys = ["kwh", "cost", "co2_kg"] if any("energy" in r for r in doc["results"]) else []
    head = "".join(f"<th>{k}</th>" for k in ["run", *keys, *(f"energy_{k}" for k in energy_keys)])
    rows = ""
    for (label, _), r in zip(runs, doc["results"]):
        values = [r.get(k) for k in keys] + [r.get("energy", {}).get(k) for k in energy_keys]
        cells = "".join(f"<td>{html.escape(format(v, '.4g') if isinstance(v, float) else str(v))}</td>"
                        for v in values)
        rows += f"<tr><td>{html.escape(label)}</td>{cells}</tr>\n"
    imgs = "\n".join(f'<figure><img src="{f}" alt="{f}"><figcaption>{f}</figcaption></figure>' for f in figures)
    trace = html.escape(str(doc.get("trace", "")))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>rlsched evaluation</title>
<style>body{{font-family:sans-serif;margin:2em}} table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}} img{{max-width:100%}}</style></head>
<body><h1>rlsched evaluation</h1><p>trace: {trace} &mdash; <a href="report.json">report.json</a></p>
<table><tr>{head}</tr>
{rows}</table>
{imgs}
</body></html>
"""


def learning_curve(csv_path: Path, png: Path) -> None:
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    epochs = [int(r["epoch"]) for r in rows]
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    ax.plot(epochs, [float(r["train_cost_ratio"]) for r in rows], label="training episodes (exploring)", alpha=0.6)
    validated = [(e, float(r["validation_cost_ratio"])) for e, r in zip(epochs, rows)
                 if float(r["validation_cost_ratio"]) >= 0]
    if validated:
        ax.plot([e for e, _ in validated], [v for _, v in validated], marker=".", label="validation (greedy)")
    ax.plot(epochs, [float(r["best_validation_cost_ratio"]) for r in rows], linestyle="--", label="best validation")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xlabel("epoch")
    ax.set_ylabel("policy cost / reference cost (lower is better)")
    ax.set_title("learning curve")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[1] == "--learning-curve":
        learning_curve(Path(argv[2]), Path(argv[3]))
        return 0
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    folder = Path(argv[1])
    doc, runs = read_runs(folder)
    submits = [float(r["submit"]) for _, rows in runs for r in rows]
    T0[0] = min(submits) if submits else 0.0
    figures = [
        figure(folder, "wait_cdf.png", lambda ax: wait_cdf(runs, ax)),
        figure(folder, "queue_length.png", lambda ax: queue_length(runs, ax)),
        figure(folder, "utilisation.png", lambda ax: utilisation(runs, ax)),
        figure(folder, "placements.png", lambda ax: placements(runs, ax)),
        figure(folder, "preemptions.png", lambda ax: preemptions(doc, runs, ax)),
    ]
    if any("energy" in r for r in doc["results"]):
        figures.append(figure(folder, "price_load.png", lambda ax: price_load(doc, runs, ax)))
    (folder / "index.html").write_text(index_html(doc, runs, figures))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
