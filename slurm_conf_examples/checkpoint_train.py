#!/usr/bin/env python3
"""A checkpointable training loop (docs/preemption.md): submit it with

    sbatch --comment=checkpoint:interval=10m,cost=30s --qos=low checkpoint_train.py

(or with the #SBATCH lines below). job_submit/rlsched adds --requeue, --signal=B:USR1@<cost + margin> and
--open-mode=append. The loop saves its state every CHECKPOINT_EVERY seconds and on USR1 (preemption, or the time
limit coming), then requeues itself and exits; a requeued run (SLURM_RESTART_COUNT > 0) resumes from the state.

Replace `train_step` and the contents of `state` with your model, optimiser and data position (torch.save to the
temporary path, then os.replace, keeps the checkpoint whole if the job is killed while writing).
"""
#SBATCH --job-name=ckpt-train
#SBATCH --comment=checkpoint:interval=10m,cost=30s
#SBATCH --time=4:00:00
#SBATCH --qos=low

import json
import os
import signal
import subprocess
import sys
import time

STEPS = int(os.environ.get("STEPS", "1000"))
STEP_SECONDS = float(os.environ.get("STEP_SECONDS", "5"))
CHECKPOINT_EVERY = float(os.environ.get("CHECKPOINT_EVERY", "600"))  # the declared interval, in seconds
JOB_ID = os.environ.get("SLURM_JOB_ID", "local")
STATE = os.path.join(os.environ.get("CHECKPOINT_DIR", os.environ.get("SLURM_SUBMIT_DIR", ".")),
                     f"checkpoint-{JOB_ID}.json")

signalled = False


def on_signal(signum, frame):  # noqa: ARG001 - signal handler signature
    global signalled
    signalled = True


def load_state() -> dict:
    try:
        with open(STATE) as f:
            return json.load(f)
    except FileNotFoundError:
        return {"step": 0, "loss": 1.0}


def save_state(state: dict) -> None:
    tmp = STATE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, STATE)


def train_step(state: dict) -> None:
    time.sleep(STEP_SECONDS)  # the real work: one optimiser step
    state["step"] += 1
    state["loss"] *= 0.99


def main() -> int:
    signal.signal(signal.SIGUSR1, on_signal)
    state = load_state()
    restarts = int(os.environ.get("SLURM_RESTART_COUNT", "0"))
    print(f"run {restarts + 1}: starting at step {state['step']} of {STEPS}", flush=True)
    last_checkpoint = time.monotonic()
    while state["step"] < STEPS:
        train_step(state)
        print(f"step {state['step']}", flush=True)
        if signalled:
            save_state(state)
            print(f"checkpoint at step {state['step']} on the signal; requeueing", flush=True)
            subprocess.run(["scontrol", "requeue", JOB_ID], check=False)
            return 0
        if time.monotonic() - last_checkpoint >= CHECKPOINT_EVERY:
            save_state(state)
            print(f"checkpoint at step {state['step']}", flush=True)
            last_checkpoint = time.monotonic()
    print(f"done: {STEPS} steps, loss {state['loss']:.4f}", flush=True)
    if os.path.exists(STATE):
        os.remove(STATE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
