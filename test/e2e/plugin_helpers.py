"""Helpers shared by the plugin tests (test_plugins.py, test_overhead.py): a lab with the rlsched plugins loaded,
switching rlsched.yaml, and reading the plugins' log lines (docs/plugins.md)."""

from __future__ import annotations

import re
import shutil
import time
import zipfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import rlsched_plugins
from conftest import start_lab
from lab import Lab, LabError

# site_factor/rlsched's line for each decay cycle (info when slow or in shadow mode, debug otherwise; the plugin
# labs run SlurmctldDebug=debug so every cycle shows).
UPDATE_LINE = re.compile(r"site_factor/rlsched: update scored (\d+) pending jobs in ([\d.]+) ms \(copy ([\d.]+) ms\) "
                         r"with (.+), (\d+) site factors (changed|would change)")


@dataclass
class Update:
    jobs: int
    ms: float
    copy_ms: float
    scorer: str
    changed: int
    shadow: bool
    line: str


def parse_update(line: str) -> Update | None:
    m = UPDATE_LINE.search(line)
    if not m:
        return None
    return Update(int(m.group(1)), float(m.group(2)), float(m.group(3)), m.group(4), int(m.group(5)),
                  m.group(6) == "would change", line)


def plugin_settings(config: Path) -> dict[str, str]:
    """slurm.conf settings of a plugin lab: both plugins, and debug logging for the per-cycle update line."""
    settings = rlsched_plugins.slurm_settings(config)
    settings["SlurmctldDebug"] = "debug"
    return settings


def openblas_env() -> dict[str, str]:
    """OPENBLAS_CORETYPE for this CPU, as docs/admin-guide.md tells admins to set in slurmctld's environment (a
    virtual CPU that hides its model otherwise gets OpenBLAS's slowest kernels)."""
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return {}
    if "avx512f" in flags:
        return {"OPENBLAS_CORETYPE": "SkylakeX"}
    if "avx2" in flags:
        return {"OPENBLAS_CORETYPE": "Haswell"}
    return {}


def plugin_lab(request: pytest.FixtureRequest, plugin_dirs: list[str], name: str, model: Path | None = None,
               settings: dict[str, str] | None = None, extra_conf: tuple[str, ...] = (), **config: object) -> Lab:
    """A lab with both plugins loaded, these extra slurm.conf settings and this rlsched.yaml (enforce mode and
    fallback sjf unless given); a model is installed as <lab>/models/policy.pt. extra_conf: slurm.conf lines."""
    rlsched_plugins.find_plugins(plugin_dirs)

    def prepare(lab: Lab) -> None:
        if model is not None:
            config["model"] = installed_model(lab, model)
        write_config(lab, **config)
        lab.settings_override.update(plugin_settings(config_path(lab)))
        lab.settings_override.update(settings or {})
    return start_lab(request, name, prepare=prepare, plugin_dirs=plugin_dirs, extra_conf=extra_conf)


def installed_model(lab: Lab, model: Path) -> Path:
    return copy_model(model, lab.root / "models" / "policy.pt")


def config_path(lab: Lab) -> Path:
    return lab.etc / "rlsched.yaml"


def write_config(lab: Lab, **keys: Any) -> Path:
    """Writes the lab's rlsched.yaml (rlsched_plugins.rlsched_config with these keys)."""
    model = keys.pop("model", None)
    mode = keys.pop("mode", "enforce")
    fallback = keys.pop("fallback", "sjf")
    return rlsched_plugins.write_config(config_path(lab),
                                        rlsched_plugins.rlsched_config(mode=mode, model=model, fallback=fallback,
                                                                       **keys))


def wait_for_update(lab: Lab, since: int, jobs: int, timeout: float = 80, after: Update | None = None) -> Update:
    """Waits for the first decay cycle after log offset `since` (and after the cycle `after`, when given) that scored
    exactly `jobs` pending jobs (a cycle that caught another test's short-lived pending job is skipped).
    PriorityCalcPeriod is 1 minute, Slurm's least."""
    def find() -> Update | None:
        lines = lab.log_lines_since(since, r"site_factor/rlsched: update scored")
        if after is not None:
            lines = lines[lines.index(after.line) + 1:] if after.line in lines else []
        for line in lines:
            u = parse_update(line)
            if u and u.jobs == jobs:
                return u
        return None
    return lab.wait_for(find, timeout, f"a site_factor/rlsched update of {jobs} pending jobs")


def age_of(line: str) -> float:
    """Seconds since a slurmctld log line's timestamp ([2026-01-31T12:00:00.123], local time)."""
    stamp = datetime.strptime(line[1:line.index("]")], "%Y-%m-%dT%H:%M:%S.%f")
    return (datetime.now() - stamp).total_seconds()


def recent_update(lab: Lab, since: int, update: Update, max_age: float = 20) -> Update:
    """`update`, or the next cycle's when `update` is older than max_age seconds: a test that acts on the site
    factors right after this returns has at least PriorityCalcPeriod - max_age seconds before they change again."""
    if age_of(update.line) <= max_age:
        return update
    return wait_for_update(lab, since, update.jobs, after=update)


def occupy(lab: Lab, partition: str, gres: str, minutes: int = 30) -> int:
    """Starts a job holding every accelerator of a one-node partition; returns its id once it runs."""
    job = lab.sbatch("-J", f"blocker-{partition}", "-p", partition, f"--gres={gres}", "-t", str(minutes),
                     wrap="sleep 3000")
    lab.wait_job_state(job, "RUNNING")
    return job


def cancel_all(lab: Lab, timeout: float = 30) -> None:
    """Cancels every job and waits until none is pending or running."""
    lab.run("scancel", "-u", "root", check=False)
    lab.wait_for(lambda: not [r for r in lab.squeue() if r["state"] in ("PENDING", "RUNNING", "COMPLETING",
                                                                          "CONFIGURING")],
                 timeout, "every job to be gone")


def copy_model(model: Path, dest: Path) -> Path:
    """Installs a model file by rename (as an admin should: the reload thread never sees half a file), mode 0600."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.copyfile(model, tmp)
    tmp.chmod(0o600)
    tmp.replace(dest)
    return dest


def flip_weight_byte(model: Path, out: Path) -> Path:
    """A copy of a TorchScript model with one byte of a tensor's storage flipped: it still loads in libtorch, and only
    rlsched's sha256 check of the weights catches it."""
    data = bytearray(model.read_bytes())
    with zipfile.ZipFile(model) as z:
        entries = [i for i in z.infolist() if re.search(r"/data/\d+$", i.filename) and i.file_size >= 16
                   and i.compress_type == zipfile.ZIP_STORED]
        if not entries:
            raise LabError(f"{model}: no stored tensor data to corrupt")
        info = max(entries, key=lambda i: i.file_size)
    # Local header: 30 bytes + file name + extra field, then the stored bytes.
    header = info.header_offset
    name_len = int.from_bytes(data[header + 26:header + 28], "little")
    extra_len = int.from_bytes(data[header + 28:header + 30], "little")
    start = header + 30 + name_len + extra_len
    data[start + info.file_size // 2] ^= 0x40
    out.write_bytes(bytes(data))
    out.chmod(0o600)
    return out


def slurmctld_alive(lab: Lab) -> bool:
    cp = lab.run("scontrol", "ping", check=False, timeout=15)
    return cp.returncode == 0 and "UP" in cp.stdout


def elapsed(t0: float) -> float:
    return time.monotonic() - t0
