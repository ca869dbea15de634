"""A real Slurm cluster on this machine, for end-to-end tests and for people (scripts/lab, lab_cli.py): Debian's
Slurm (22.05 on Debian 12), or the one installed under RLSCHED_SLURM_PREFIX (e.g. 24.11 built by scripts/slurm-build).

`Lab` starts, in a scratch folder it owns, munged (its own key and socket), MariaDB (own data dir, socket and port on
127.0.0.1), slurmdbd, slurmctld and one slurmd per node (`slurmd -N`), for a heterogeneous cluster: h200-1 with
4 H200 GPUs, a100-1 with 4 A100 GPUs, npu-1 with 8 Ascend 910B NPUs (fake device files: symlinks to /dev/null),
partitions h200, a100, npu and all (default), multifactor priority, backfill, QOS preemption with requeue, and GRES in
the accounting TRES. The recipes are those of shared/design/SLURM_LAB.md.

It stops only processes it started, by PID: the daemons it spawned, and what they spawned in turn (slurmstepd, job
processes), which it recognises by a marker variable in their environment that only this lab sets. It writes nothing
outside its folder. Ports are picked free at start. Slurm 22.05 has no listen-address option, so slurmctld, slurmd
and slurmdbd listen on all addresses, but every address in the configuration is 127.0.0.1 and MariaDB binds
127.0.0.1 only.

    with Lab(plugin_dirs=["build/release/plugin"], settings={"JobSubmitPlugins": "rlsched"}) as lab:
        job = lab.sbatch("--gres=gpu:h200:1", wrap="sleep 5")
        lab.wait_job_state(job, "RUNNING")

Only the Python standard library is used.
"""

from __future__ import annotations

import glob
import json
import os
import random
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence, TypeVar

T = TypeVar("T")

CLUSTER_NAME = "lab"
# Environment variable whose value marks every process this lab started (and, through inheritance, what they start).
MARKER_VAR = "RLSCHED_LAB_ID"
STATE_FILE = "lab.json"


class LabError(RuntimeError):
    """The lab could not do what was asked; the message says what, and quotes the relevant log lines."""


class DaemonDied(LabError):
    """A daemon the lab started has exited: waiting longer is pointless."""


@dataclass(frozen=True)
class Node:
    name: str
    gres: str  # slurm.conf Gres=
    gres_conf: str  # gres.conf line after NodeName=; {fakedev} is the lab's fake device folder
    cpus: int = 8
    memory_mb: int = 8000


NODES: tuple[Node, ...] = (
    Node("h200-1", "gpu:h200:4", "Name=gpu Type=h200 File={fakedev}/nvidia[0-3]"),
    Node("a100-1", "gpu:a100:4", "Name=gpu Type=a100 File={fakedev}/nvidia[4-7]"),
    Node("npu-1", "npu:910b:8", "Name=npu Type=910b Count=8"),
)
FAKE_DEVICES = 8  # nvidia0 .. nvidia7

# Partition name -> nodes; "all" is the default partition.
PARTITIONS: dict[str, tuple[str, ...]] = {
    "h200": ("h200-1",),
    "a100": ("a100-1",),
    "npu": ("npu-1",),
    "all": tuple(n.name for n in NODES),
}
DEFAULT_PARTITION = "all"


SLURM_PROGRAMS = ("slurmdbd", "slurmctld", "slurmd", "sacctmgr", "scontrol", "sinfo", "squeue", "sbatch", "sprio",
                  "sacct", "scancel", "srun")


def slurm_prefix() -> Path | None:
    """RLSCHED_SLURM_PREFIX: a Slurm installed under a prefix (e.g. one scripts/slurm-build made from another Debian
    version's source) whose daemons, commands and plugins the lab uses instead of the system's; None for those."""
    value = os.environ.get("RLSCHED_SLURM_PREFIX")
    if not value:
        return None
    prefix = Path(value)
    if not (prefix / "sbin" / "slurmctld").is_file():
        raise LabError(f"RLSCHED_SLURM_PREFIX={value}: no sbin/slurmctld there (build one with scripts/slurm-build)")
    return prefix


def system_plugin_dir() -> str:
    """Slurm's own plugin folder (Debian: /usr/lib/<multiarch>/slurm-wlm; <prefix>/lib/slurm for
    RLSCHED_SLURM_PREFIX)."""
    prefix = slurm_prefix()
    if prefix:
        if not (prefix / "lib" / "slurm" / "select_cons_tres.so").is_file():
            raise LabError(f"RLSCHED_SLURM_PREFIX={prefix}: no lib/slurm/select_cons_tres.so there")
        return str(prefix / "lib" / "slurm")
    for pattern in ("/usr/lib/*/slurm-wlm/select_cons_tres.so", "/usr/lib/slurm/select_cons_tres.so",
                    "/usr/lib64/slurm/select_cons_tres.so", "/usr/local/lib/slurm/select_cons_tres.so"):
        found = sorted(glob.glob(pattern))
        if found:
            return os.path.dirname(found[0])
    raise LabError("Slurm's plugins (select_cons_tres.so) were not found: install Slurm with scripts/setup")


def require_programs() -> dict[str, str]:
    """Absolute paths of the programs the lab runs; raises LabError naming the missing ones."""
    names = ["munged", "mariadb-install-db", "mariadbd", "mariadb", *SLURM_PROGRAMS]
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/bin", "/sbin", "/bin"])
    found = {n: shutil.which(n, path=search) for n in names}
    prefix = slurm_prefix()
    if prefix:  # Slurm's programs from there only, never a mix with the system's
        slurm_search = os.pathsep.join([str(prefix / "sbin"), str(prefix / "bin")])
        found.update({n: shutil.which(n, path=slurm_search) for n in SLURM_PROGRAMS})
    missing = [n for n, p in found.items() if not p]
    if missing:
        raise LabError(f"missing programs: {', '.join(missing)}: run scripts/setup (installs slurmctld, slurmd, "
                       "slurmdbd, slurm-client, munge, mariadb-server)")
    return {n: str(p) for n, p in found.items()}


EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST_LAB_PORT = 10000  # below it sit well-known services; the lab keeps out of their way


def ephemeral_ports() -> range:
    """The ports the kernel hands to outgoing connections (Linux's default range if the file cannot be read)."""
    try:
        low, high = (int(v) for v in EPHEMERAL_RANGE_FILE.read_text().split())
        return range(low, high + 1)
    except (OSError, ValueError):
        return range(32768, 61000)


def free_port() -> int:
    """A TCP port nobody listens on now, on any address (Slurm daemons bind the wildcard address), chosen outside
    the ephemeral range. A port from that range, free when chosen, can be taken by any client's connect() before
    the daemon binds it: slurmd then exits with "Unable to bind listen port (N): Address already in use". That
    happened in CI, when sacctmgr's and MariaDB's clients connected between the choice and slurmd's start."""
    ephemeral = ephemeral_ports()
    candidates = [*range(LOWEST_LAB_PORT, max(LOWEST_LAB_PORT, ephemeral.start)),
                  *range(max(LOWEST_LAB_PORT, ephemeral.stop), 65536)]
    if not candidates:
        raise LabError(f"no TCP port from {LOWEST_LAB_PORT} up lies outside the ephemeral range "
                       f"{ephemeral.start}-{ephemeral.stop - 1} ({EPHEMERAL_RANGE_FILE})")
    chooser = random.SystemRandom()
    for _ in range(200):
        port = chooser.choice(candidates)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("", port))
            except OSError:
                continue
            return port
    raise LabError("200 random TCP ports outside the ephemeral range were all in use")


def tail(path: Path | str, lines: int = 30) -> str:
    """The last lines of a file, or a note that it does not exist."""
    p = Path(path)
    if not p.exists():
        return f"({p} does not exist)"
    text = p.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:]) if text else f"({p} is empty)"


def wait_for(predicate: Callable[[], T], timeout: float, what: str, interval: float = 0.2,
             on_timeout: Callable[[], str] | None = None) -> T:
    """Polls predicate until it returns a true value, which is returned. After timeout seconds raises LabError
    "timed out after Ns waiting for <what>", followed by on_timeout()'s text (log tails) if given. Exceptions from
    predicate count as "not yet"; the last one is quoted on timeout."""
    deadline = time.monotonic() + timeout
    last_error = ""
    while True:
        try:
            value = predicate()
            if value:
                return value
        except DaemonDied:
            raise
        except Exception as e:  # noqa: BLE001 - any failure of a probe means "not ready yet"
            last_error = f"{type(e).__name__}: {e}"
        if time.monotonic() >= deadline:
            msg = f"timed out after {timeout:g}s waiting for {what}"
            if last_error:
                msg += f"\nlast error: {last_error}"
            if on_timeout:
                msg += "\n" + on_timeout()
            raise LabError(msg)
        time.sleep(interval)


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def has_marker(pid: int, marker: str) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            if f"{MARKER_VAR}={marker}".encode() in f.read().split(b"\0"):
                return True
    except OSError:
        return False
    return _is_lab_slurmstepd(pid, marker.rsplit(":", 1)[0])


def _is_lab_slurmstepd(pid: int, root: str) -> bool:
    """A slurmstepd of the lab in `root`. Slurm 24.11's slurmstepd writes its process title over its environment, so
    its marker cannot be read; it keeps its slurmd's log in the lab's folder open, which no other lab's does."""
    try:
        if os.path.basename(os.readlink(f"/proc/{pid}/exe")) != "slurmstepd":
            return False
        return any(os.readlink(f"/proc/{pid}/fd/{fd}").startswith(root + "/") for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


def marked_pids(marker: str) -> list[int]:
    """PIDs of live processes whose environment carries this lab's marker: what the lab started, directly or not."""
    me = os.getpid()
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != me and has_marker(int(entry), marker) and pid_alive(int(entry)):
            pids.append(int(entry))
    return sorted(pids)


def process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def _parse_table(text: str, sep: str = "|") -> list[dict[str, str]]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return []
    header = lines[0].split(sep)
    return [dict(zip(header, ln.split(sep))) for ln in lines[1:]]


_SCONTROL_KEY = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_:/]*)=")


def parse_scontrol(text: str) -> dict[str, str]:
    """Parses `scontrol show job -o` output (Key=Value pairs separated by spaces; values may contain spaces, so a
    value runs until the next ' Key=')."""
    out: dict[str, str] = {}
    matches = list(_SCONTROL_KEY.finditer(text.strip()))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text.strip())
        out[m.group(1)] = text.strip()[m.end():end].strip()
    return out


class Lab:
    """One lab cluster. Use as a context manager, or call start() and stop().

    root:        scratch folder (created; a fresh one under /tmp when None). Everything the lab writes is inside it.
    plugin_dirs: folders added to Slurm's PluginDir after the system one (e.g. where site_factor_rlsched.so is).
    settings:    slurm.conf keys to set or override (e.g. {"JobSubmitPlugins": "rlsched"}); a value None
                 removes a key.
    extra_conf:  lines appended to slurm.conf verbatim.
    keep:        leave the folder (logs) behind after stop(); the default removes it only if the lab created it.
    daemon_env:  extra environment of the daemons (e.g. OPENBLAS_CORETYPE for slurmctld, as an admin would set it).
    """

    def __init__(self, root: str | Path | None = None, plugin_dirs: Sequence[str] = (),
                 settings: Mapping[str, str | None] | None = None, extra_conf: Sequence[str] = (),
                 keep: bool | None = None, max_job_count: int = 50000,
                 daemon_env: Mapping[str, str] | None = None):
        if os.geteuid() != 0:
            raise LabError("the lab runs slurmctld, slurmd and slurmdbd as root (SlurmUser=root): run as root")
        self.programs = require_programs()
        self.created_root = root is None
        self.root = Path(root or tempfile.mkdtemp(prefix="rlsched-lab-")).resolve()
        self.keep = (not self.created_root) if keep is None else keep
        self.plugin_dirs = [str(Path(d).resolve()) for d in plugin_dirs]
        self.settings_override: dict[str, str | None] = dict(settings or {})
        self.extra_conf = list(extra_conf)
        self.max_job_count = max_job_count
        self.daemon_env = dict(daemon_env or {})
        self.marker = f"{self.root}:{secrets.token_hex(8)}"
        self.hostname = socket.gethostname().split(".")[0]
        self.pids: dict[str, int] = {}  # daemon name -> PID
        self._procs: dict[str, subprocess.Popen] = {}
        self.timings: dict[str, float] = {}  # start-up phase -> seconds
        self.database_restarts = 0  # times MariaDB crashed during start() and was started afresh
        self.ports: dict[str, int] = {}
        self.started = False

    # ---- the Slurm version ---------------------------------------------------------------------------------------
    @property
    def slurm_version(self) -> tuple[int, int, int]:
        """The lab's Slurm (slurmctld -V), e.g. (24, 11, 5)."""
        if not hasattr(self, "_slurm_version"):
            out = subprocess.run([self.programs["slurmctld"], "-V"], capture_output=True, text=True,
                                 timeout=30).stdout
            m = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
            if not m:
                raise LabError(f"cannot read the version from `slurmctld -V`: {out!r}")
            self._slurm_version = tuple(int(x) for x in m.groups())
        return self._slurm_version

    def tres(self, request: str) -> str:
        """A GRES request as slurmctld shows it in TresPerNode/TresPerJob: "gres:gpu:2" before 23.02, "gres/gpu:2"
        since."""
        return ("gres:" if self.slurm_version < (23, 2, 0) else "gres/") + request

    # ---- paths -------------------------------------------------------------------------------------------------
    @property
    def etc(self) -> Path:
        return self.root / "etc"

    @property
    def conf_path(self) -> Path:
        """slurm.conf (gres.conf and slurmdbd.conf are beside it)."""
        return self.etc / "slurm.conf"

    @property
    def log_dir(self) -> Path:
        return self.root / "log"

    @property
    def jobs_dir(self) -> Path:
        """Working folder of submitted jobs (their slurm-N.out files land here)."""
        return self.root / "jobs"

    @property
    def slurmctld_log(self) -> Path:
        return self.log_dir / "slurmctld.log"

    def slurmd_log(self, node: str) -> Path:
        return self.log_dir / f"slurmd-{node}.log"

    @property
    def slurmdbd_log(self) -> Path:
        return self.log_dir / "slurmdbd.log"

    @property
    def munged_log(self) -> Path:
        return self.root / "munge" / "munged.log"

    @property
    def mariadb_log(self) -> Path:
        return self.root / "mysql" / "err.log"

    def log_of(self, daemon: str) -> Path:
        """Log file of a daemon by the name it has in self.pids (slurmctld, slurmd-h200-1, slurmdbd, ...)."""
        if daemon.startswith("slurmd-"):
            return self.slurmd_log(daemon[len("slurmd-"):])
        return {"slurmctld": self.slurmctld_log, "slurmdbd": self.slurmdbd_log, "munged": self.munged_log,
                "mariadbd": self.mariadb_log}[daemon]

    def log_tails(self, *daemons: str, lines: int = 25) -> str:
        """Tails of the named daemons' logs (all of them when none is named), each under a header."""
        names = daemons or ("munged", "mariadbd", "slurmdbd", "slurmctld", *[f"slurmd-{n.name}" for n in NODES])
        parts = []
        for d in names:
            path = self.log_of(d)
            parts.append(f"--- {path} (last {lines} lines) ---\n{tail(path, lines)}")
            stderr = self.log_dir / f"{d}.stderr"
            if stderr.exists() and stderr.stat().st_size:
                parts.append(f"--- {stderr} ---\n{tail(stderr, 10)}")
        return "\n".join(parts)

    # ---- environment and commands ------------------------------------------------------------------------------
    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """Environment for Slurm commands and daemons of this lab: SLURM_CONF, the marker, no inherited SLURM_*."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_",
                                                                           "SQUEUE_", "SACCT_", "SPRIO_"))}
        env["SLURM_CONF"] = str(self.conf_path)
        env[MARKER_VAR] = self.marker
        prefix = slurm_prefix()
        if prefix:  # jobs inherit it from sbatch: their srun must be the lab's Slurm too
            env["PATH"] = os.pathsep.join([str(prefix / "bin"), str(prefix / "sbin"), env.get("PATH", "")])
        env.update(extra or {})
        return env

    def run(self, *args: str, check: bool = True, timeout: float = 60, input: str | None = None,
            env: Mapping[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
        """Runs a command against this lab (SLURM_CONF set). With check, a non-zero exit raises LabError quoting
        stdout and stderr."""
        cmd = [self.programs.get(args[0], args[0]), *args[1:]]
        try:
            cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, input=input,
                                env=self.env(env), cwd=str(cwd or self.root))
        except subprocess.TimeoutExpired as e:
            raise LabError(f"`{' '.join(args)}` did not finish within {timeout:g}s\n"
                           + self.log_tails("slurmctld", lines=15)) from e
        if check and cp.returncode != 0:
            raise LabError(f"`{' '.join(args)}` exited {cp.returncode}\nstdout: {cp.stdout.strip()}\n"
                           f"stderr: {cp.stderr.strip()}")
        return cp

    # ---- configuration -----------------------------------------------------------------------------------------
    def slurm_settings(self) -> dict[str, str]:
        """slurm.conf keys (without nodes and partitions) after the overrides."""
        lab = self.root
        sock = lab / "munge" / "munge.socket.2"
        s = {
            "ClusterName": CLUSTER_NAME,
            "SlurmctldHost": "localhost(127.0.0.1)",
            "SlurmUser": "root",
            "SlurmdUser": "root",
            "AuthType": "auth/munge",
            "CredType": "cred/munge",
            "AuthInfo": f"socket={sock},cred_expire=10",
            "StateSaveLocation": f"{lab}/state/ctld",
            "SlurmdSpoolDir": f"{lab}/state/d-%n",
            "SlurmctldPidFile": f"{lab}/run/slurmctld.pid",
            "SlurmdPidFile": f"{lab}/run/slurmd-%n.pid",
            "SlurmctldLogFile": str(self.slurmctld_log),
            "SlurmdLogFile": f"{self.log_dir}/slurmd-%n.log",
            "SlurmctldPort": str(self.ports["slurmctld"]),
            "SlurmdPort": str(self.ports["slurmd-" + NODES[0].name]),
            "ProctrackType": "proctrack/linuxproc",
            "TaskPlugin": "task/none",
            "SelectType": "select/cons_tres",
            "SelectTypeParameters": "CR_Core",
            "SlurmdParameters": "config_overrides",
            "MpiDefault": "none",
            "SwitchType": "switch/none",
            "ReturnToService": "2",
            "MailProg": "/bin/true",
            "KillWait": "5",
            "MaxJobCount": str(self.max_job_count),
            "GresTypes": "gpu,npu",
            "AccountingStorageType": "accounting_storage/slurmdbd",
            "AccountingStorageHost": "localhost",
            "AccountingStoragePort": str(self.ports["slurmdbd"]),
            "AccountingStoragePass": str(sock),
            "AccountingStorageEnforce": "associations,limits,qos",
            "AccountingStorageTRES": "gres/gpu,gres/gpu:h200,gres/gpu:a100,gres/npu",
            "JobAcctGatherType": "jobacct_gather/none",
            "SchedulerType": "sched/backfill",
            "SchedulerParameters": "bf_interval=5",
            "PriorityType": "priority/multifactor",
            "PriorityCalcPeriod": "1",
            "PriorityWeightAge": "1000",
            "PriorityMaxAge": "1-0",
            "PriorityWeightFairshare": "100",
            "PriorityWeightQOS": "10000",
            "PriorityWeightPartition": "1000",
            "PriorityWeightJobSize": "100",
            "PreemptType": "preempt/qos",
            "PreemptMode": "REQUEUE",
            "SlurmctldParameters": "preempt_send_user_signal",
            "PluginDir": ":".join([system_plugin_dir(), *self.plugin_dirs]),
        }
        for key, value in self.settings_override.items():
            if value is None:
                s.pop(key, None)
            else:
                s[key] = value
        return s

    def slurm_conf_text(self) -> str:
        lines = ["# Written by test/e2e/lab.py for the lab cluster in " + str(self.root)]
        lines += [f"{k}={v}" for k, v in self.slurm_settings().items()]
        for node in NODES:
            lines.append(f"NodeName={node.name} NodeHostname={self.hostname} NodeAddr=127.0.0.1 "
                         f"Port={self.ports['slurmd-' + node.name]} CPUs={node.cpus} RealMemory={node.memory_mb} "
                         f"Gres={node.gres} State=UNKNOWN")
        for part, nodes in PARTITIONS.items():
            default = " Default=YES" if part == DEFAULT_PARTITION else ""
            lines.append(f"PartitionName={part} Nodes={','.join(nodes)} MaxTime=INFINITE State=UP GraceTime=20"
                         f"{default}")
        lines += self.extra_conf
        return "\n".join(lines) + "\n"

    def gres_conf_text(self) -> str:
        fakedev = self.root / "fakedev"
        return "".join(f"NodeName={n.name} {n.gres_conf.format(fakedev=fakedev)}\n" for n in NODES)

    def slurmdbd_conf_text(self) -> str:
        sock = self.root / "munge" / "munge.socket.2"
        return "\n".join([
            "AuthType=auth/munge",
            f"AuthInfo=socket={sock}",
            "DbdHost=localhost",
            "DbdAddr=127.0.0.1",
            f"DbdPort={self.ports['slurmdbd']}",
            "SlurmUser=root",
            f"LogFile={self.slurmdbd_log}",
            f"PidFile={self.root}/run/slurmdbd.pid",
            "StorageType=accounting_storage/mysql",
            "StorageHost=127.0.0.1",
            f"StoragePort={self.ports['mariadb']}",
            "StorageUser=slurm",
            "StoragePass=slurmpw",
            "StorageLoc=slurm_acct_db",
        ]) + "\n"

    def write_config(self) -> None:
        """(Re)writes slurm.conf and gres.conf from the current settings."""
        self.conf_path.write_text(self.slurm_conf_text())
        (self.etc / "gres.conf").write_text(self.gres_conf_text())

    # ---- processes ---------------------------------------------------------------------------------------------
    def _spawn(self, name: str, cmd: Sequence[str]) -> subprocess.Popen:
        """Starts a daemon in the foreground in its own session (so a terminal's signals do not reach it)."""
        out = open(self.log_dir / f"{name}.stderr", "ab")
        proc = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                env=self.env(self.daemon_env), cwd=str(self.root), start_new_session=True)
        out.close()
        self._procs[name] = proc
        self.pids[name] = proc.pid
        self._save_state()
        return proc

    def _check_alive(self, name: str) -> None:
        proc = self._procs.get(name)
        if proc is not None and proc.poll() is not None:
            raise DaemonDied(f"{name} exited with status {proc.returncode}\n" + self.log_tails(name))

    def _save_state(self) -> None:
        state = {"root": str(self.root), "marker": self.marker, "pids": self.pids, "ports": self.ports,
                 "conf": str(self.conf_path)}
        (self.root / STATE_FILE).write_text(json.dumps(state, indent=1) + "\n")

    def _phase(self, name: str, fn: Callable[[], None]) -> None:
        t0 = time.monotonic()
        fn()
        self.timings[name] = time.monotonic() - t0

    def start(self) -> "Lab":
        """Starts every daemon and waits until the three nodes are idle. Raises LabError (with log tails) on failure,
        after stopping what it had started."""
        t0 = time.monotonic()
        try:
            self._phase("files", self._make_files)
            self._phase("munged", self._start_munged)
            self._start_database()
            self._phase("sacctmgr", self._setup_accounts)
            self._phase("slurmctld", self._start_slurmctld)
            self._phase("slurmd", self._start_slurmds)
        except BaseException:
            self.stop()
            raise
        self.timings["total"] = time.monotonic() - t0
        self.started = True
        return self

    def _start_database(self) -> None:
        """MariaDB, then slurmdbd. MariaDB 10.11 has been seen to crash (signal 11 in Create_tmp_table's failure
        path) under slurmdbd's first schema queries on a loaded machine. That is MariaDB's fault, not ours, so a
        crash of mariadbd itself is reported on stderr and both are started once more on a fresh data folder. Any
        other failure, and a second crash, raises as before."""
        for attempt in (1, 2):
            try:
                self._phase("mariadb", self._start_mariadb)
                self._phase("slurmdbd", self._start_slurmdbd)
                return
            except DaemonDied:
                crashed = self._procs.get("mariadbd")
                if attempt == 2 or crashed is None or crashed.poll() is None:
                    raise
                note = (f"lab {self.root}: mariadbd exited with status {crashed.returncode} while slurmdbd set up "
                        f"its schema; starting MariaDB and slurmdbd once more on a fresh data folder\n"
                        + self.log_tails("mariadbd", "slurmdbd", lines=8))
                print(note, file=sys.stderr, flush=True)
                self.database_restarts += 1
                self._stop_daemon("slurmdbd")
                self._stop_daemon("mariadbd")
                if self.mariadb_log.exists():
                    self.mariadb_log.replace(self.mariadb_log.with_name("err.crashed.log"))
                shutil.rmtree(self.root / "mysql" / "data", ignore_errors=True)

    def _make_files(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o711)
        # munged refuses a socket below a folder that not everybody may traverse (mkdtemp's and pytest's are 0700).
        for parent in self.root.parents:
            if not parent.stat().st_mode & 0o001:
                raise LabError(f"munged needs execute permission for all on every folder above its socket, and "
                               f"{parent} lacks it: put the lab elsewhere (the default is a fresh folder in "
                               f"{tempfile.gettempdir()})")
        for sub in ("etc", "log", "run", "state/ctld", "fakedev", "jobs", "mysql"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        for node in NODES:
            (self.root / "state" / f"d-{node.name}").mkdir(exist_ok=True)
        for i in range(FAKE_DEVICES):
            link = self.root / "fakedev" / f"nvidia{i}"
            if not link.is_symlink():
                link.symlink_to("/dev/null")
        munge = self.root / "munge"
        munge.mkdir(exist_ok=True)
        munge.chmod(0o711)
        key = munge / "munge.key"
        if not key.exists():
            key.write_bytes(secrets.token_bytes(128))  # this lab's own key: no dependence on /etc/munge
        key.chmod(0o600)
        taken: set[int] = set()
        for name in ["slurmctld", "slurmdbd", "mariadb", *[f"slurmd-{n.name}" for n in NODES]]:
            port = free_port()
            while port in taken:
                port = free_port()
            taken.add(port)
            self.ports[name] = port
        self.write_config()
        dbd = self.etc / "slurmdbd.conf"
        dbd.write_text(self.slurmdbd_conf_text())
        dbd.chmod(0o600)  # slurmdbd refuses a readable-by-others config holding the DB password
        self._save_state()

    def _start_munged(self) -> None:
        m = self.root / "munge"
        self._spawn("munged", [self.programs["munged"], "--foreground", f"--socket={m}/munge.socket.2",
                               f"--key-file={m}/munge.key", f"--log-file={m}/munged.log",
                               f"--pid-file={m}/munged.pid", f"--seed-file={m}/munged.seed"])
        sock = m / "munge.socket.2"

        def ready() -> bool:
            self._check_alive("munged")
            return sock.exists()
        wait_for(ready, 15, "munged's socket", interval=0.02, on_timeout=lambda: self.log_tails("munged"))

    def _start_mariadb(self) -> None:
        d = self.root / "mysql"
        # MariaDB's own temporary tables go in the lab's folder, not the shared /tmp: a CI run once lost one there
        # while two labs bootstrapped at once ("Could not remove temporary table '/tmp/#sql-temptable-...'").
        tmp = d / "tmp"
        tmp.mkdir(exist_ok=True)
        if not (d / "data" / "mysql").exists():
            cp = subprocess.run([self.programs["mariadb-install-db"], "--no-defaults", f"--datadir={d}/data",
                                 f"--tmpdir={tmp}", "--user=root", "--auth-root-authentication-method=normal",
                                 "--skip-test-db"],
                                capture_output=True, text=True, timeout=120, env=self.env())
            if cp.returncode != 0:
                raise LabError(f"mariadb-install-db failed ({cp.returncode}):\n{cp.stdout[-2000:]}{cp.stderr[-2000:]}")
        self._spawn("mariadbd", [self.programs["mariadbd"], "--no-defaults", f"--datadir={d}/data", "--user=root",
                                 f"--tmpdir={tmp}", f"--socket={d}/mysqld.sock", f"--port={self.ports['mariadb']}",
                                 "--bind-address=127.0.0.1", f"--pid-file={d}/mysqld.pid",
                                 f"--log-error={d}/err.log", "--skip-name-resolve",
                                 "--innodb-buffer-pool-size=32M", "--innodb-flush-log-at-trx-commit=0",
                                 "--skip-log-bin"])

        def sql(statement: str) -> subprocess.CompletedProcess:
            return subprocess.run([self.programs["mariadb"], "--no-defaults", "-S", f"{d}/mysqld.sock", "-uroot",
                                   "-e", statement], capture_output=True, text=True, timeout=30, env=self.env())

        def ready() -> bool:
            self._check_alive("mariadbd")
            return sql("select 1").returncode == 0
        wait_for(ready, 60, "MariaDB to accept connections", interval=0.05,
                 on_timeout=lambda: self.log_tails("mariadbd"))
        cp = sql("create user if not exists 'slurm'@'127.0.0.1' identified by 'slurmpw'; "
                 "grant all on slurm_acct_db.* to 'slurm'@'127.0.0.1';")
        if cp.returncode != 0:
            raise LabError(f"creating MariaDB user slurm failed: {cp.stderr.strip()}")

    def _start_slurmdbd(self) -> None:
        self._spawn("slurmdbd", [self.programs["slurmdbd"], "-D"])

        def ready() -> bool:
            self._check_alive("slurmdbd")
            return self.run("sacctmgr", "-n", "-P", "show", "cluster", check=False, timeout=20).returncode == 0
        wait_for(ready, 60, "slurmdbd to answer sacctmgr", interval=0.1,
                 on_timeout=lambda: self.log_tails("slurmdbd", "mariadbd"))

    def _setup_accounts(self) -> None:
        """Cluster, QOS low/high (high preempts low, requeue after a grace time) and root's access to them, in one
        sacctmgr run (each run costs ~0.4 s). A lab folder used before already has them."""
        existing = self.run("sacctmgr", "-n", "-P", "show", "cluster", "format=cluster").stdout.split()
        if CLUSTER_NAME in existing:
            return
        # Two runs: sacctmgr reads the QOS list once at its start, so it cannot grant a QOS it added itself.
        for commands in ([f"add cluster {CLUSTER_NAME}", "add qos low priority=0 GraceTime=20 PreemptMode=requeue",
                          "add qos high priority=1000 Preempt=low", "modify qos normal set priority=100"],
                         ["modify user root set qos=normal,low,high"]):
            cp = self.run("sacctmgr", "-i", input="\n".join(commands) + "\n", check=False)
            if cp.returncode != 0 or "error" in cp.stderr.lower():
                raise LabError(f"sacctmgr set-up failed ({cp.returncode}):\n{cp.stdout}\n{cp.stderr}\n"
                               + self.log_tails("slurmdbd"))

    def _start_slurmctld(self) -> None:
        self._spawn("slurmctld", [self.programs["slurmctld"], "-D", "-i"])

        def ready() -> bool:
            self._check_alive("slurmctld")
            cp = self.run("scontrol", "ping", check=False, timeout=10)
            return cp.returncode == 0 and "UP" in cp.stdout
        wait_for(ready, 60, "slurmctld to answer `scontrol ping`", interval=0.05,
                 on_timeout=lambda: self.log_tails("slurmctld", "slurmdbd"))

    def _start_slurmds(self) -> None:
        for node in NODES:
            self._spawn(f"slurmd-{node.name}", [self.programs["slurmd"], "-D", "-N", node.name])
        self.wait_nodes_idle()

    def node_states(self) -> dict[str, str]:
        """Node name -> state as sinfo prints it in long form (idle, mixed, allocated, drained, ...)."""
        out = self.run("sinfo", "-h", "-N", "-o", "%N|%T").stdout
        return dict(line.split("|", 1) for line in sorted(set(out.split())) if "|" in line)

    def wait_nodes_idle(self, timeout: float = 60) -> None:
        """Waits until every node is idle, resuming drained ones (a node drains if its slurmd came up late)."""
        resumed: set[str] = set()

        def ready() -> bool:
            for name, proc in self._procs.items():
                if name.startswith("slurmd-"):
                    self._check_alive(name)
            states = self.node_states()
            for node, state in states.items():
                if state.startswith(("drain", "down")) and node not in resumed and self._ready_to_resume(node):
                    self.run("scontrol", "update", f"nodename={node}", "state=resume", check=False)
                    resumed.add(node)
            return len(states) == len(NODES) and all(s == "idle" for s in states.values())
        wait_for(ready, timeout, f"nodes {', '.join(n.name for n in NODES)} to be idle", interval=0.05,
                 on_timeout=lambda: f"sinfo: {self._safe(self.node_states)}\n" + self.log_tails(
                     "slurmctld", *[f"slurmd-{n.name}" for n in NODES]))

    def wait_nodes_responding(self, timeout: float = 60) -> None:
        """Waits until every node's slurmd has registered (whatever jobs run on it), e.g. after a slurmctld restart."""
        def ready() -> bool:
            states = self.node_states()
            return len(states) == len(NODES) and not any(
                s.endswith("*") or s.startswith(("down", "unknown")) for s in states.values())
        wait_for(ready, timeout, "every node to respond", interval=0.1,
                 on_timeout=lambda: f"sinfo: {self._safe(self.node_states)}\n" + self.log_tails("slurmctld"))

    def _ready_to_resume(self, node: str) -> bool:
        reason = self.run("sinfo", "-h", "-n", node, "-o", "%E", check=False).stdout.strip()
        # A node whose slurmd has not registered yet is "not responding"; resume only real drains.
        return "Not responding" not in reason

    @staticmethod
    def _safe(fn: Callable[[], object]) -> object:
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - diagnostics only
            return f"({e})"

    def restart_slurmctld(self, settings: Mapping[str, str | None] | None = None,
                          extra_conf: Sequence[str] | None = None, plugin_dirs: Sequence[str] | None = None,
                          wait_nodes: bool = True) -> float:
        """Stops slurmctld, rewrites slurm.conf with new settings/extra lines/plugin dirs (None keeps the current
        ones; settings given here are merged into the current overrides) and starts it again, keeping its state
        (jobs survive), then (wait_nodes) waits until every slurmd has registered again. Only slurmctld loads the rlsched
        plugins, so slurmd keep running (they log that their slurm.conf differs). Returns the seconds it took."""
        t0 = time.monotonic()
        if settings is not None:
            self.settings_override.update(settings)
        if extra_conf is not None:
            self.extra_conf = list(extra_conf)
        if plugin_dirs is not None:
            self.plugin_dirs = [str(Path(d).resolve()) for d in plugin_dirs]
        self._stop_daemon("slurmctld")
        self.write_config()
        self._start_slurmctld()
        if wait_nodes:
            self.wait_nodes_responding()
        return time.monotonic() - t0

    def stop_slurmctld(self) -> None:
        """Stops slurmctld only (slurmd, slurmdbd and its state stay), e.g. to see what a client does without it."""
        self._stop_daemon("slurmctld")

    def start_slurmctld(self, wait_nodes: bool = True) -> None:
        """Starts slurmctld again after stop_slurmctld(), with the same configuration and its saved state."""
        self._start_slurmctld()
        if wait_nodes:
            self.wait_nodes_responding()

    def _stop_daemon(self, name: str, timeout: float = 30) -> None:
        pid = self.pids.get(name)
        proc = self._procs.get(name)
        if pid is None:
            return
        if proc is not None:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(10)
            del self._procs[name]
        elif pid_alive(pid) and has_marker(pid, self.marker):
            terminate_pids([pid], timeout)
        del self.pids[name]
        self._save_state()

    def stop(self) -> list[int]:
        """Cancels jobs, stops every daemon it started (by PID), then every remaining process carrying this lab's
        marker (slurmstepd, job processes). Returns the PIDs it had to end. Removes the folder unless keep."""
        ended = list(self.pids.values())
        if "slurmctld" in self.pids and pid_alive(self.pids["slurmctld"]):
            self.run("scancel", "--full", "-u", "root", check=False, timeout=15)
        order = [*[f"slurmd-{n.name}" for n in NODES], "slurmctld", "slurmdbd", "mariadbd", "munged"]
        for name in order + [n for n in list(self.pids) if n not in order]:
            try:
                self._stop_daemon(name)
            except Exception:  # noqa: BLE001 - keep stopping the others
                pass
        leftovers = marked_pids(self.marker)
        if leftovers:
            terminate_pids(leftovers, 10)
            ended += leftovers
        self.started = False
        if not self.keep and self.root.exists():
            shutil.rmtree(self.root, ignore_errors=True)
        return ended

    def __enter__(self) -> "Lab":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- Slurm commands, parsed ------------------------------------------------------------------------------
    def sbatch(self, *args: str, wrap: str | None = None, script: str | None = None) -> int:
        """Submits a job (command line options as for sbatch, plus --wrap or a script text) and returns its id.
        Raises LabError with sbatch's message when it is refused; see sbatch_refused()."""
        cp = self._sbatch(args, wrap, script)
        if cp.returncode != 0:
            raise LabError(f"sbatch {' '.join(args)} was refused ({cp.returncode}): {cp.stderr.strip()}")
        return int(cp.stdout.strip().split(";")[0])

    def sbatch_refused(self, *args: str, wrap: str | None = None, script: str | None = None) -> str:
        """Submits a job that must be refused and returns sbatch's error text; raises LabError if it was accepted."""
        cp = self._sbatch(args, wrap, script)
        if cp.returncode == 0:
            raise LabError(f"sbatch {' '.join(args)} was accepted as job {cp.stdout.strip()}, expected a refusal")
        return cp.stderr.strip()

    def _sbatch(self, args: Sequence[str], wrap: str | None, script: str | None) -> subprocess.CompletedProcess:
        cmd = ["sbatch", "--parsable", *args]
        if wrap is not None:
            cmd.append(f"--wrap={wrap}")
        elif script is None:
            raise ValueError("sbatch needs wrap= or script=")
        return self.run(*cmd, check=False, input=script, cwd=self.jobs_dir)

    def squeue(self, jobs: Iterable[int] | None = None) -> list[dict[str, str]]:
        """Jobs slurmctld knows (all states): id, array (5_1 for array tasks), name, state, partition, nodes, reason,
        priority, tres_per_node, comment."""
        fields = {"id": "%A", "array": "%i", "name": "%j", "state": "%T", "partition": "%P", "nodes": "%N",
                  "reason": "%r", "priority": "%Q", "tres_per_node": "%b", "comment": "%k"}
        sep = "\x1f"
        cmd = ["squeue", "-h", "-t", "all", "-o", sep.join(fields.values())]
        if jobs is not None:
            cmd += ["-j", ",".join(str(j) for j in jobs)]
        out = self.run(*cmd).stdout
        return [dict(zip(fields, line.split(sep))) for line in out.splitlines() if line]

    def job(self, job_id: int) -> dict[str, str]:
        """`scontrol show job` of one job, as Key -> Value (JobState, Partition, NodeList, TresPerNode, Comment,
        AdminComment, Priority, Reason, ...)."""
        return parse_scontrol(self.run("scontrol", "show", "job", "-o", str(job_id)).stdout)

    def sprio(self) -> list[dict[str, str]]:
        """sprio of every pending job: id, partition, priority, site, age, fairshare, jobsize, partition_prio, qos,
        tres (weighted values, as sprio prints them)."""
        fields = {"id": "%i", "partition": "%r", "priority": "%Y", "site": "%S", "age": "%A", "fairshare": "%F",
                  "jobsize": "%J", "partition_prio": "%P", "qos": "%Q", "nice": "%N"}
        sep = "|"
        out = self.run("sprio", "-h", "-o", sep.join(fields.values())).stdout
        return [dict(zip(fields, (v.strip() for v in line.split(sep)))) for line in out.splitlines() if line]

    def sacct(self, *args: str) -> list[dict[str, str]]:
        """`sacct -P` rows as dicts keyed by the header (pass -a, --format=..., -j ... as needed)."""
        return _parse_table(self.run("sacct", "-P", *args).stdout)

    FINAL_STATES = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "PREEMPTED", "NODE_FAIL", "OUT_OF_MEMORY")
    SACCT_FIELDS = ("JobIDRaw,JobID,JobName,User,Account,Partition,QOS,Submit,Eligible,Start,End,Elapsed,TimelimitRaw,"
                    "ReqTRES,AllocTRES,NNodes,NCPUS,State,ExitCode,Reason,Flags,Priority,ReqMem,NodeList")

    def sacct_dump(self, path: Path | str, starttime: str = "now-1hour", expect: Iterable[int | str] = (),
                   timeout: float = 30) -> Path:
        """Writes the sacct dump rlsched reads, made with the command of docs/sacct.md for the window from starttime
        to now, and returns its path. It waits until every job in expect (job ids as sacct prints them: 12, or 5_1
        for an array task) appears finished in the dump: a job that ended a second ago is not in a window that ends
        now yet."""
        wanted = {str(j) for j in expect}

        def dump() -> str | None:
            cp = self.run("sacct", "-a", "-P", "-D", f"--starttime={starttime}", "--endtime=now",
                          f"--format={self.SACCT_FIELDS}", env={"TZ": "UTC", "SLURM_TIME_FORMAT": "standard"})
            rows = _parse_table(cp.stdout)
            final = {r["JobID"] for r in rows if r["State"].startswith(self.FINAL_STATES)}
            final |= {r["JobIDRaw"] for r in rows if r["State"].startswith(self.FINAL_STATES)}
            return cp.stdout if wanted <= final else None
        text = self.wait_for(dump, timeout, f"sacct's dump to show jobs {', '.join(sorted(wanted))} finished",
                             logs=("slurmctld", "slurmdbd"))
        Path(path).write_text(text)
        return Path(path)

    def wait_for(self, predicate: Callable[[], T], timeout: float, what: str,
                 logs: Sequence[str] = ("slurmctld",)) -> T:
        """wait_for() whose timeout message ends with the tails of these daemons' logs."""
        return wait_for(predicate, timeout, what, on_timeout=lambda: self.log_tails(*logs))

    def wait_job_state(self, job_id: int, states: str | Iterable[str], timeout: float = 60) -> dict[str, str]:
        """Waits until the job is in one of the states (e.g. "RUNNING", {"COMPLETED", "FAILED"}); returns its
        `scontrol show job` record."""
        wanted = {states} if isinstance(states, str) else set(states)

        def check() -> dict[str, str] | None:
            info = self.job(job_id)
            return info if info.get("JobState") in wanted else None
        return self.wait_for(check, timeout, f"job {job_id} to be {'/'.join(sorted(wanted))} "
                             f"(now: {self._safe(lambda: self.job(job_id).get('JobState'))})")

    def wait_accounted(self, job_ids: Iterable[int | str], timeout: float = 60) -> None:
        """Waits until sacct shows every job in a final state (slurmctld sends records to slurmdbd asynchronously).
        Job ids as sacct takes them: 12, or 5_1 for an array task (`-j 5` alone is only the task whose raw id is 5)."""
        ids = [str(j) for j in job_ids]

        def done() -> bool:
            rows = self.sacct("-a", "-X", "-j", ",".join(ids), "--format=JobIDRaw,JobID,State")
            final = {r["JobID"] for r in rows if r["State"].startswith(self.FINAL_STATES)}
            final |= {r["JobIDRaw"] for r in rows if r["State"].startswith(self.FINAL_STATES)}
            return set(ids) <= final
        self.wait_for(done, timeout, f"sacct to show jobs {', '.join(ids)} finished", logs=("slurmctld", "slurmdbd"))

    def log_lines(self, pattern: str, daemon: str = "slurmctld") -> list[str]:
        """Lines of a daemon's log matching a regular expression."""
        path = self.log_of(daemon)
        if not path.exists():
            return []
        rx = re.compile(pattern)
        return [ln for ln in path.read_text(errors="replace").splitlines() if rx.search(ln)]

    def log_size(self, daemon: str = "slurmctld") -> int:
        """Current size of a daemon's log, to read only what comes after with log_lines_since()."""
        path = self.log_of(daemon)
        return path.stat().st_size if path.exists() else 0

    def log_lines_since(self, offset: int, pattern: str = "", daemon: str = "slurmctld") -> list[str]:
        path = self.log_of(daemon)
        with open(path, "rb") as f:
            f.seek(offset)
            text = f.read().decode(errors="replace")
        rx = re.compile(pattern)
        return [ln for ln in text.splitlines() if rx.search(ln)]


def terminate_pids(pids: Iterable[int], timeout: float) -> None:
    """SIGTERM, then SIGKILL after timeout, to each PID (never to a group or by name)."""
    pids = [p for p in pids if pid_alive(p)]
    for p in pids:
        try:
            os.kill(p, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
        time.sleep(0.05)
    for p in pids:
        if pid_alive(p):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
