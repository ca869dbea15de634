#!/usr/bin/env bash
# Helpers shared by scripts/setup, scripts/test and scripts/demo. Source it; running it does nothing.
set -euo pipefail

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  echo "scripts/lib.sh is a library: run scripts/setup, scripts/test or scripts/demo" >&2
  exit 2
fi

# Repository root, whatever the caller's current directory.
RLSCHED_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export RLSCHED_ROOT

rl_say() { printf '\n==> %s\n' "$*"; }
rl_warn() { printf 'warning: %s\n' "$*" >&2; }
rl_die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

# Prints the shared workload traces folder: $RLSCHED_TRACES if set, else <repo>/../shared/traces, else
# /work/shared/traces. Returns 1 (printing nothing) when none of them is a directory.
rl_find_traces() {
  local dir
  if [[ -n ${RLSCHED_TRACES:-} ]]; then
    # An explicit choice is not second-guessed: if it is wrong, say so rather than silently use another folder.
    [[ -d $RLSCHED_TRACES ]] || return 1
    (cd "$RLSCHED_TRACES" && pwd)
    return 0
  fi
  for dir in "$RLSCHED_ROOT/../shared/traces" /work/shared/traces; do
    if [[ -d $dir ]]; then
      (cd "$dir" && pwd)
      return 0
    fi
  done
  return 1
}

rl_traces_help() {
  if [[ -n ${RLSCHED_TRACES:-} ]]; then
    echo "error: RLSCHED_TRACES=$RLSCHED_TRACES is not a directory: point it at the shared workload traces" >&2
    return 0
  fi
  cat >&2 <<MSG
error: shared workload traces not found at $RLSCHED_ROOT/../shared/traces nor /work/shared/traces.
Some tests read the real traces (e.g. lublin/lublin_256.swf) and fail without them: put the shared traces folder next
to the repository (../shared/traces) or set RLSCHED_TRACES to it.
MSG
}

# Extra CMake configure arguments: the shared Slurm tree, and ccache as compiler launcher when it is installed (it is
# never installed for you).
rl_cmake_extra_args() {
  # One configured Slurm tree for every preset (fetching and configuring it costs about 30 s a preset); its
  # configure does not see the preset's compiler flags, and concurrent configures take turns on its lock.
  RL_CMAKE_EXTRA=(-DRLSCHED_SLURM_CACHE="$RLSCHED_ROOT/build/_slurm")
  if command -v ccache >/dev/null 2>&1; then
    RL_CMAKE_EXTRA+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
}

# Wall clock in milliseconds.
rl_now_ms() {
  local t=${EPOCHREALTIME/[.,]/}
  echo $((t / 1000))
}

RL_START_MS=$(rl_now_ms)

# rl_step NAME COMMAND...: runs COMMAND, records its name, duration and exit status for rl_summary, and returns its
# exit status.
RL_STEP_NAMES=()
RL_STEP_MS=()
RL_STEP_RC=()
rl_step() {
  local name=$1 start rc=0
  shift
  rl_say "$name: $*"
  start=$(rl_now_ms)
  "$@" || rc=$?
  rl_record "$name" $(($(rl_now_ms) - start)) "$rc"
  return "$rc"
}

# rl_record NAME MS RC: records a step that ran in the background.
rl_record() {
  RL_STEP_NAMES+=("$1")
  RL_STEP_MS+=("$2")
  RL_STEP_RC+=("$3")
}

rl_fmt_ms() { printf '%d.%01d s' $(($1 / 1000)) $((($1 % 1000) / 100)); }

# Prints one line per recorded step and the total; returns 1 if any step failed.
rl_summary() {
  local i total=0 failed=0 verdict
  rl_say "summary"
  for i in "${!RL_STEP_NAMES[@]}"; do
    total=$((total + RL_STEP_MS[i]))
    if [[ ${RL_STEP_RC[i]} == 0 ]]; then
      verdict=ok
    else
      verdict="FAILED (exit ${RL_STEP_RC[i]})"
      failed=1
    fi
    printf '  %-24s %10s  %s\n' "${RL_STEP_NAMES[i]}" "$(rl_fmt_ms "${RL_STEP_MS[i]}")" "$verdict"
  done
  printf '  %-24s %10s  %s\n' "sum of the steps" "$(rl_fmt_ms "$total")" "$([[ $failed == 0 ]] && echo ok || echo FAILED)"
  printf '  %-24s %10s  (steps in the background overlap the others)\n' "wall clock" \
    "$(rl_fmt_ms $(($(rl_now_ms) - RL_START_MS)))"
  return "$failed"
}
