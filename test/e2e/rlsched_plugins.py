"""What the end-to-end tests and the live demo need to run rlsched's Slurm plugins in a lab cluster: finding the
built plugins, writing the plugins' config (rlsched.yaml, keys of docs/plugins.md), the slurm.conf lines that load
them, and a small trained model. Standard library only.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
from pathlib import Path
from typing import Any, Mapping, Sequence

from lab import LabError

# The plugin files slurmctld loads (Slurm's <type>_<name>.so naming).
SITE_FACTOR_SO = "site_factor_rlsched.so"
JOB_SUBMIT_SO = "job_submit_rlsched.so"
PLUGIN_FILES = (SITE_FACTOR_SO, JOB_SUBMIT_SO)
PREEMPT_SO = "preempt_rlsched.so"  # loaded by the preemption tests (PreemptType=preempt/rlsched)

EXAMPLE_CONFIG = Path(__file__).resolve().parents[2] / "slurm_conf_examples" / "rlsched.yaml"


def example_score_scale() -> int:
    """The shipped example's score_scale: the lab serves the policy at the weight admins are given (and the plugin's
    built-in default), so what the lab measures is what the protocol's figures were measured under."""
    found = re.search(r"^score_scale:\s*(\d+)\s*$", EXAMPLE_CONFIG.read_text(), re.M)
    if found is None:
        raise LabError(f"{EXAMPLE_CONFIG}: no 'score_scale: N' line")
    return int(found.group(1))


SCORE_SCALE = example_score_scale()

# Relative speeds of the lab's accelerator types, as in slurm_conf_examples/cluster.yaml.
LAB_ACCELERATOR_TYPES = [
    {"name": "h200", "gres": "gpu", "speed": 2.0},
    {"name": "a100", "gres": "gpu", "speed": 1.0},
    {"name": "910b", "gres": "npu", "speed": 0.8},
]
# A class that gains nothing from the H200 (memory bound): placed on an idle A100 rather than an idle H200.
LAB_JOB_CLASSES = [
    {"name": "membound", "match": {"job_name": "membound-*"}, "speeds": {"h200": 0.9, "a100": 1.0, "910b": 0.5}},
]


def plugin_dirs_from_env() -> list[str]:
    """RLSCHED_PLUGIN_DIR split at ':' (empty when unset)."""
    return [d for d in os.environ.get("RLSCHED_PLUGIN_DIR", "").split(":") if d]


def find_plugins(dirs: Sequence[str], names: Sequence[str] = PLUGIN_FILES) -> dict[str, Path]:
    """Plugin file name -> path, searching dirs in order. Raises LabError naming what is missing and where it looked
    (a plugin test must fail, not skip, when the build lacks a plugin)."""
    found: dict[str, Path] = {}
    for name in names:
        for d in dirs:
            if (Path(d) / name).is_file():
                found[name] = Path(d) / name
                break
    missing = [n for n in names if n not in found]
    if missing:
        raise LabError(f"plugin(s) {', '.join(missing)} not found in {':'.join(dirs) or '(no folder given)'}: "
                       "build them (cmake --build --preset release) or point RLSCHED_PLUGIN_DIR at their folder")
    return found


def slurm_settings(config_path: Path | str, site_factor: bool = True, job_submit: bool = True) -> dict[str, str]:
    """slurm.conf settings that load the plugins with this rlsched.yaml (docs/plugins.md)."""
    settings: dict[str, str] = {}
    if site_factor:
        settings["PrioritySiteFactorPlugin"] = "site_factor/rlsched"
        settings["PrioritySiteFactorParameters"] = str(config_path)
    if job_submit:
        settings["JobSubmitPlugins"] = "rlsched"
    return settings


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_yaml(value: Any, indent: int = 0) -> str:
    """A small YAML writer for dicts, lists and scalars (enough for rlsched.yaml)."""
    pad = "  " * indent
    if isinstance(value, Mapping):
        out = []
        for k, v in value.items():
            if isinstance(v, (Mapping, list)) and v:
                out.append(f"{pad}{k}:\n{to_yaml(v, indent + 1)}")
            elif isinstance(v, (Mapping, list)):
                out.append(f"{pad}{k}: {'[]' if isinstance(v, list) else '{}'}")
            else:
                out.append(f"{pad}{k}: {_yaml_scalar(v)}")
        return "\n".join(out)
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, Mapping):
                inner = to_yaml(item, indent + 1).splitlines()
                out.append(f"{pad}- {inner[0].strip()}")
                out += inner[1:]
            elif isinstance(item, list):
                out.append(f"{pad}- [{', '.join(_yaml_scalar(x) for x in item)}]")
            else:
                out.append(f"{pad}- {_yaml_scalar(item)}")
        return "\n".join(out)
    return pad + _yaml_scalar(value)


def rlsched_config(mode: str = "enforce", model: str | Path | None = None, fallback: str = "sjf",
                   **overrides: Any) -> dict[str, Any]:
    """The content of an rlsched.yaml for the lab (keys of docs/plugins.md); overrides replace top-level keys."""
    config: dict[str, Any] = {
        "mode": mode,
        "fallback": fallback,
        "score_scale": SCORE_SCALE,
        "reload_check_interval": 2,
        "accelerator_types": LAB_ACCELERATOR_TYPES,
        "job_classes": LAB_JOB_CLASSES,
        "placement": {"enabled": True, "map_typeless": True, "reject_impossible": True, "record": "admin_comment"},
    }
    if model is not None:
        config["model"] = str(model)
    config.update(overrides)
    return config


def write_config(path: Path | str, config: Mapping[str, Any], mode: int = 0o600) -> Path:
    """Writes rlsched.yaml; the plugins refuse a config writable by group or others, so 0600 by default."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("# rlsched plugin config written by the end-to-end tests\n" + to_yaml(config) + "\n")
    tmp.chmod(mode)
    tmp.replace(path)  # rename: the reload thread never sees half a file
    return path


def write_swf(path: Path | str, jobs: int = 400, seed: int = 1, procs: int = 64) -> Path:
    """A small synthetic SWF workload (enough for `rlsched train` to produce a model in about a second)."""
    rng = random.Random(seed)
    lines = [f"; MaxNodes: {procs}", f"; MaxProcs: {procs}"]
    t = 0
    for i in range(1, jobs + 1):
        t += rng.randint(1, 120)
        run = rng.randint(10, 3600)
        p = rng.choice([1, 2, 4, 8, 16, 32])
        lines.append(f"{i} {t} 0 {run} {p} -1 -1 {p} {run * 2} -1 1 1 1 -1 1 -1 -1 -1")
    Path(path).write_text("\n".join(lines) + "\n")
    return Path(path)


def train_model(rlsched_cli: Path | str, folder: Path | str, seed: int = 1, teacher: str = "search") -> Path:
    """Trains a tiny policy with `rlsched train` (about a second), imitating `teacher` first, and returns the model
    file (0600, as the plugin refuses a model others could replace)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    trace = write_swf(folder / f"train-{seed}.swf", seed=seed)
    model = folder / f"model-{seed}.pt"
    cp = subprocess.run([str(rlsched_cli), "train", "--trace", str(trace), "--output", str(model), "--epochs", "1",
                         "--episodes", "2", "--imitation-epochs", "1", "--sequence-length", "64",
                         "--validation-sequences", "1", "--threads", "1", "--seed", str(seed), "--teacher", teacher],
                        capture_output=True, text=True, timeout=300)
    if cp.returncode != 0 or not model.is_file():
        raise LabError(f"rlsched train failed ({cp.returncode}):\n{cp.stdout[-2000:]}\n{cp.stderr[-2000:]}")
    model.chmod(0o600)
    return model
