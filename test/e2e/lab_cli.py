"""`scripts/lab`: start, inspect or stop a lab Slurm cluster (test/e2e/lab.py) by hand, from one shell command to
the next. The PIDs of what `up` started are recorded in <DIR>/lab.json; `down` ends exactly those (and the processes
carrying the lab's marker), by PID.

    python3 test/e2e/lab_cli.py up [DIR] | status [DIR] | down [DIR] [--purge]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Sequence

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import (MARKER_VAR, NODES, STATE_FILE, Lab, LabError, has_marker, marked_pids, pid_alive,  # noqa: E402
                 terminate_pids)


def stop_recorded(root: str | Path) -> list[int]:
    """Stops a lab started by another process (scripts/lab up) from the PIDs recorded in its folder; a PID is
    signalled only if that process still carries the lab's marker. Returns the PIDs it ended."""
    state = json.loads((Path(root) / STATE_FILE).read_text())
    marker = state["marker"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.update({"SLURM_CONF": state["conf"], MARKER_VAR: marker})
    ctld = state["pids"].get("slurmctld")
    if ctld and pid_alive(ctld) and has_marker(ctld, marker) and shutil.which("scancel"):
        subprocess.run(["scancel", "--full", "-u", "root"], env=env, capture_output=True, timeout=15)
    ended = []
    order = [f"slurmd-{n.name}" for n in NODES] + ["slurmctld", "slurmdbd", "mariadbd", "munged"]
    for name in order:
        pid = state["pids"].get(name)
        if pid and pid_alive(pid) and has_marker(pid, marker):
            terminate_pids([pid], 30)
            ended.append(pid)
    leftovers = marked_pids(marker)
    terminate_pids(leftovers, 10)
    return ended + leftovers


DEFAULT_DIR = os.environ.get("RLSCHED_LAB_DIR", "/tmp/rlsched-lab")


def _recorded_alive(root: Path) -> dict[str, int]:
    """Daemons recorded in a lab folder that are still running (and still carry its marker)."""
    state_file = root / STATE_FILE
    if not state_file.exists():
        return {}
    state = json.loads(state_file.read_text())
    return {name: pid for name, pid in state["pids"].items() if pid_alive(pid) and has_marker(pid, state["marker"])}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/lab", description=(
        "Start, inspect or stop a lab Slurm cluster on this machine (3 nodes: h200-1 with 4 H200, a100-1 with "
        "4 A100, npu-1 with 8 Ascend 910B; fake devices), for trying rlsched by hand. Needs root and scripts/setup."))
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start a lab cluster in DIR and leave it running")
    up.add_argument("dir", nargs="?", default=DEFAULT_DIR, help=f"lab folder (default {DEFAULT_DIR})")
    up.add_argument("--plugin-dir", action="append", default=[],
                    help="folder added to PluginDir (e.g. the build folder with site_factor_rlsched.so); repeatable")
    up.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="slurm.conf setting to add or override, e.g. PrioritySiteFactorPlugin=rlsched; repeatable")
    up.add_argument("--conf", action="append", default=[], metavar="LINE", help="line appended to slurm.conf")
    down = sub.add_parser("down", help="stop the lab cluster in DIR (only the processes it started)")
    down.add_argument("dir", nargs="?", default=DEFAULT_DIR)
    down.add_argument("--purge", action="store_true", help="also remove DIR (logs, accounting database)")
    status = sub.add_parser("status", help="show the daemons, nodes and jobs of the lab cluster in DIR")
    status.add_argument("dir", nargs="?", default=DEFAULT_DIR)
    args = parser.parse_args(argv)
    root = Path(args.dir).resolve()

    if args.command == "up":
        alive = _recorded_alive(root)
        if alive:
            print(f"a lab is already running in {root} ({', '.join(alive)}): `scripts/lab down {args.dir}` first",
                  file=sys.stderr)
            return 1
        if root.exists() and any(root.iterdir()) and not (root / STATE_FILE).exists():
            print(f"{root} exists and is not a lab folder: choose an empty or new folder", file=sys.stderr)
            return 1
        settings = {}
        for item in args.set:
            key, sep, value = item.partition("=")
            if not sep:
                print(f"--set {item}: expected KEY=VALUE", file=sys.stderr)
                return 2
            settings[key] = value
        lab = Lab(root=root, plugin_dirs=args.plugin_dir, settings=settings, extra_conf=args.conf, keep=True)
        try:
            lab.start()
        except LabError as e:
            print(f"scripts/lab up: {e}", file=sys.stderr)
            return 1
        phases = ", ".join(f"{k} {v:.2f}s" for k, v in lab.timings.items() if k != "total")
        print(f"lab cluster up in {lab.timings['total']:.1f}s ({phases})")
        print(f"  folder:   {root}   (logs in {lab.log_dir})")
        print(f"  nodes:    {', '.join(f'{n.name} ({n.gres})' for n in NODES)}")
        print(f"  use it:   export SLURM_CONF={lab.conf_path}; sinfo; sbatch --gres=gpu:h200:1 --wrap='sleep 60'")
        print(f"  stop it:  scripts/lab down {args.dir}")
        return 0

    if args.command == "down":
        if not (root / STATE_FILE).exists():
            print(f"no lab in {root}", file=sys.stderr)
            return 1
        ended = stop_recorded(root)
        print(f"stopped {len(ended)} process(es) of the lab in {root}" + (f": {sorted(ended)}" if ended else ""))
        if args.purge:
            shutil.rmtree(root, ignore_errors=True)
            print(f"removed {root}")
        else:
            print(f"logs kept in {root}/log (`scripts/lab down --purge {args.dir}` removes the folder)")
        return 0

    # status
    if not (root / STATE_FILE).exists():
        print(f"no lab in {root}")
        return 1
    state = json.loads((root / STATE_FILE).read_text())
    alive = _recorded_alive(root)
    for name, pid in state["pids"].items():
        print(f"  {name:<16} pid {pid:<8} {'running' if name in alive else 'not running'}")
    if "slurmctld" in alive:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        env["SLURM_CONF"] = state["conf"]
        for cmd in (["sinfo", "-N", "-o", "%N %P %T %G"], ["squeue"]):
            print("\n$ " + " ".join(cmd))
            cp = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30)
            print((cp.stdout + cp.stderr).rstrip())
        print(f"\nexport SLURM_CONF={state['conf']}")
    return 0 if len(alive) == len(state["pids"]) else 1


if __name__ == "__main__":
    sys.exit(main())
