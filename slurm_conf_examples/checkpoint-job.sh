#!/bin/bash
# A checkpointable batch job in bash (docs/preemption.md): it declares its checkpoint in the comment, saves its
# state every CHECKPOINT_EVERY seconds and when Slurm sends the checkpoint signal (preemption, or the time limit
# coming), and resumes from the saved state when it runs again after a requeue.
#
# job_submit/rlsched reads the declaration and adds what the job would otherwise have to ask for itself:
#   --requeue                       (a preempted or failed job goes back to the queue)
#   --signal=B:USR1@<cost + margin> (the batch shell gets USR1 at preemption and that long before the time limit)
#   --open-mode=append              (the output of every run stays in one file)
#
#SBATCH --job-name=ckpt-bash
#SBATCH --comment=checkpoint:interval=10m,cost=30s
#SBATCH --time=4:00:00
#SBATCH --qos=low
#
# The work here is a loop of STEPS steps of STEP_SECONDS each; put yours in do_step and save what you need in
# save_state / load_state. CHECKPOINT_EVERY must match the declared interval (10m = 600 s).
set -euo pipefail

STEPS=${STEPS:-1000}
STEP_SECONDS=${STEP_SECONDS:-5}
CHECKPOINT_EVERY=${CHECKPOINT_EVERY:-600}
STATE=${CHECKPOINT_DIR:-${SLURM_SUBMIT_DIR:-.}}/checkpoint-${SLURM_JOB_ID:-local}.state

step=0
load_state() { [[ -f $STATE ]] && step=$(<"$STATE") || true; }
save_state() { # atomic: a kill while writing leaves the previous checkpoint intact
  echo "$step" >"$STATE.tmp"
  mv -f "$STATE.tmp" "$STATE"
}
do_step() { sleep "$STEP_SECONDS"; }

signalled=0
trap 'signalled=1' USR1

load_state
echo "run $((${SLURM_RESTART_COUNT:-0} + 1)): starting at step $step of $STEPS"
last_checkpoint=$SECONDS
while ((step < STEPS)); do
  do_step &
  wait $! || true # USR1 interrupts the wait; the step itself finishes first below
  wait $! 2>/dev/null || true
  step=$((step + 1))
  echo "step $step"
  if ((signalled)); then
    save_state
    echo "checkpoint at step $step on the signal; requeueing"
    # Back to the queue now instead of waiting for the grace time to run out; the next run resumes here.
    scontrol requeue "$SLURM_JOB_ID"
    exit 0
  fi
  if ((SECONDS - last_checkpoint >= CHECKPOINT_EVERY)); then
    save_state
    echo "checkpoint at step $step"
    last_checkpoint=$SECONDS
  fi
done
echo "done: $STEPS steps"
rm -f "$STATE"
