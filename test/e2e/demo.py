"""The live part of scripts/demo: a lab Slurm cluster (3 nodes: 4 H200, 4 A100, 8 Ascend 910B) with the rlsched
plugins loaded, a mixed workload submitted with sbatch, then squeue, sprio (the SITE column is the learned ranking)
and where typeless GPU requests were mapped. Everything it starts is stopped on exit, also on Ctrl-C.

    python3 test/e2e/demo.py --rlsched build/release/tools/rlsched [--plugin-dir DIR]... [--model FILE]

Without --plugin-dir the cluster runs without rlsched (plain multifactor priority) and says so.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))

import rlsched_plugins  # noqa: E402
from lab import NODES, Lab, LabError  # noqa: E402

# (job name, sbatch options): typed and typeless GPU jobs, NPU and CPU jobs of different sizes and time limits;
# more than the cluster holds, so that a queue forms and sprio has something to rank. Every job sleeps until the
# demo cancels it.
WORKLOAD: list[tuple[str, list[str]]] = [
    ("pretrain-h200x4", ["-p", "h200", "--gres=gpu:h200:4", "-t", "30"]),
    ("finetune-a100x4", ["-p", "a100", "--gres=gpu:a100:4", "-t", "20"]),
    ("bert-npu-x8", ["-p", "npu", "--gres=npu:8", "-t", "40"]),
    ("eval-h200x1", ["-p", "h200", "--gres=gpu:h200:1", "-t", "5"]),
    ("llm-h200x2", ["-p", "h200", "--gres=gpu:h200:2", "-t", "90"]),
    ("sweep-a100x1", ["-p", "a100", "--gres=gpu:a100:1", "-t", "3"]),
    ("any-gpu-x2-long", ["--gres=gpu:2", "-t", "60"]),
    ("any-gpu-x1-short", ["--gres=gpu:1", "-t", "4"]),
    ("any-gpu-x4", ["--gres=gpu:4", "-t", "15"]),
    ("npu-x2", ["-p", "npu", "--gres=npu:2", "-t", "10"]),
    ("resnet-npu-x4", ["-p", "npu", "--gres=npu:4", "-t", "25"]),
    ("cpu-prep-c4", ["-c", "4", "-t", "10"]),
    ("cpu-small-c2", ["-c", "2", "-t", "2"]),
    ("cpu-big-c8", ["-c", "8", "-t", "30"]),
]
TYPELESS = ("--gres=gpu:2", "--gres=gpu:1", "--gres=gpu:4")


def say(text: str) -> None:
    print(f"\n==> {text}", flush=True)


def show(lab: Lab, *cmd: str) -> None:
    print("$ " + " ".join(cmd))
    cp = lab.run(*cmd, check=False)
    print((cp.stdout + cp.stderr).rstrip(), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rlsched", required=True, help="the rlsched CLI (to train a small model when none given)")
    parser.add_argument("--plugin-dir", action="append", default=[], help="folder with the rlsched plugins")
    parser.add_argument("--model", help="TorchScript policy for the site factor (default: a tiny one trained now)")
    parser.add_argument("--dir", help="lab folder (default: a fresh one under /tmp, removed at the end)")
    args = parser.parse_args()

    with_plugins = bool(args.plugin_dir)
    lab = Lab(root=args.dir, plugin_dirs=args.plugin_dir, keep=False)
    # Stop the lab on SIGTERM/SIGHUP too (Ctrl-C raises KeyboardInterrupt, which the finally below handles).
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(130))
    try:
        if with_plugins:
            plugins = rlsched_plugins.find_plugins(args.plugin_dir)
            model = Path(args.model) if args.model else None
            if model is None:
                say("training a tiny policy to load into slurmctld (1 epoch on a synthetic workload; a real one: "
                    "rlsched train, docs/cli.md)")
                model = rlsched_plugins.train_model(args.rlsched, lab.root / "model")
            lab.etc.mkdir(parents=True, exist_ok=True)
            config = rlsched_plugins.write_config(
                lab.etc / "rlsched.yaml", rlsched_plugins.rlsched_config(mode="enforce", model=model,
                                                                         fallback="multifactor"))
            lab.settings_override.update(rlsched_plugins.slurm_settings(config))
            say(f"starting the lab cluster with {', '.join(p.name for p in plugins.values())} (model {model})")
        else:
            say("starting the lab cluster WITHOUT the rlsched plugins (this build has none): plain multifactor "
                "priority, typeless GPU requests go wherever Slurm puts them")
        lab.start()
        phases = ", ".join(f"{k} {v:.1f}s" for k, v in lab.timings.items() if k != "total")
        print(f"up in {lab.timings['total']:.1f}s ({phases}); nodes: "
              + ", ".join(f"{n.name} ({n.gres})" for n in NODES))
        print(f"slurm.conf: {lab.conf_path}")

        say(f"submitting {len(WORKLOAD)} jobs with sbatch")
        jobs: dict[int, tuple[str, list[str]]] = {}
        for name, opts in WORKLOAD:
            cmd = ["-J", name, *opts]
            try:
                job = lab.sbatch(*cmd, wrap="sleep 600")
                jobs[job] = (name, opts)
                print(f"  {job:>3}  sbatch {' '.join(cmd)}")
            except LabError as e:
                print(f"  refused: sbatch {' '.join(cmd)}: {e}")
        time.sleep(7)  # a main scheduling pass and a backfill pass (bf_interval=5)

        say("where the typeless GPU requests went" + (" (job_submit/rlsched, at submit)" if with_plugins else ""))
        print(f"{'job':>5} {'name':<17} {'asked':<14} {'partition':<9} {'got (TRES per node)':<26} why")
        for job, (name, opts) in jobs.items():
            if not any(o in TYPELESS for o in opts):  # typeless: no -p and no type
                continue
            info = lab.job(job)
            why = info.get("AdminComment") or info.get("Comment") or ""
            why = "" if why == "(null)" else why
            got = info.get("TresPerNode", "")
            if info.get("JobState") == "RUNNING":
                got += f" on {info.get('NodeList')}"
            print(f"{job:>5} {name:<17} {' '.join(opts[:1]):<14} {info.get('Partition', ''):<9} {got:<26} "
                  f"{why or ('(no rlsched: Slurm picks any GPU type)' if not with_plugins else '')}")

        if with_plugins:
            say("waiting for the next priority recalculation (at most a minute: PriorityCalcPeriod=1), where "
                "site_factor/rlsched scores every pending job in one batch")
            try:
                lab.wait_for(lambda: any(int(r["site"] or 0) > 0 for r in lab.sprio()), 90,
                             "a non-zero SITE factor in sprio")
            except LabError as e:
                print(f"warning: {str(e).splitlines()[0]}")

        say("the queue")
        show(lab, "squeue", "-o", "%.5i %.17j %.9P %.18b %.9T %.6l %.10M %R")
        say("priorities of the pending jobs, highest first" +
            (" (SITE = rlsched's learned rank, 0..10000)" if with_plugins else ""))
        show(lab, "sprio", "--sort=-y")

        if with_plugins:
            lines = lab.log_lines(r"(site_factor|job_submit)/rlsched: ")
            say(f"rlsched in slurmctld's log ({len(lines)} lines; the last 10)")
            print("\n".join(lines[-10:]))
        say("stopping every process the demo started")
        return 0
    except LabError as e:
        print(f"demo: {e}", file=sys.stderr)
        return 1
    finally:
        ended = lab.stop()
        print(f"stopped {len(ended)} processes (by PID); lab folder removed")


if __name__ == "__main__":
    sys.exit(main())
