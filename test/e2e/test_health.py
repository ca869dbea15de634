"""The plugins' health records (rlsched.yaml health_dir) inside a real slurmctld, read by rlsched-exporter: the model
the site_factor plugin serves (its sha256 as slurmctld's log names it), its update durations, and job_submit's
placements appear as rlsched_* metrics with a plugin label.

Depends on the plugin build (RLSCHED_PLUGIN_DIR), like test_plugins.py; fails, never skips, without it. One decay
cycle (at most a minute, PriorityCalcPeriod=1) is awaited for the update histogram.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import plugin_helpers as ph
import rlsched_plugins
from lab import Lab, wait_for
from test_exporter import running_exporter, scrape


@pytest.fixture(scope="module")
def health_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("health")


@pytest.fixture(scope="module")
def lab(request: pytest.FixtureRequest, plugin_dirs: list[str], rlsched_cli: Path, health_dir: Path,
        tmp_path_factory: pytest.TempPathFactory) -> Lab:
    model = rlsched_plugins.train_model(rlsched_cli, tmp_path_factory.mktemp("model"))
    return ph.plugin_lab(request, plugin_dirs, "test_health.lab", model=model, health_dir=str(health_dir))


@pytest.fixture(scope="module")
def exporter(lab: Lab, health_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    with running_exporter(lab, tmp_path_factory.mktemp("exporter"), health_dir) as address:
        yield address


def sample(text: str, name: str, **labels: str) -> float | None:
    """The value of the series `name` whose labels include `labels`, from /metrics text."""
    for line in text.splitlines():
        m = re.match(r"^([a-z_]+)\{([^}]*)\} (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        if all(have.get(k) == v for k, v in labels.items()):
            return float(m.group(3))
    return None


def test_site_factor_record_names_the_model_slurmctld_loaded(lab: Lab, exporter: str) -> None:
    loaded = lab.wait_for(lambda: lab.log_lines(r"site_factor/rlsched: .*loaded model .*weights sha256 [0-9a-f]+"),
                          30, "the model's load line")
    prefix = re.search(r"weights sha256 ([0-9a-f]+)", loaded[-1]).group(1)

    def model_info() -> str | None:
        for line in scrape(exporter).splitlines():
            m = re.match(r'^rlsched_model_info\{plugin="site_factor",sha256="([0-9a-f]+)"', line)
            if m:
                return m.group(1)
        return None
    sha = wait_for(model_info, 30, "rlsched_model_info of the site_factor plugin")
    assert sha.startswith(prefix) and len(sha) == 64, (sha, loaded[-1])
    assert sample(scrape(exporter), "rlsched_model_fallback_active", plugin="site_factor") == 0


def test_job_submit_placements_and_site_factor_updates_are_counted(lab: Lab, exporter: str) -> None:
    # A typeless request: job_submit/rlsched chooses its type (and partition).
    job = lab.sbatch("--gres=gpu:1", "-t", "1", wrap="true")
    placed_type = lab.job(job)["TresPerNode"].split(":")[-2]  # gres:gpu:<type>:1
    wait_for(lambda: (sample(scrape(exporter), "rlsched_placements_total", plugin="job_submit",
                             accelerator_type=placed_type) or 0) >= 1, 30, f"a placement on {placed_type} counted")
    # A held job stays pending, so every decay cycle scores it; wait for one cycle's duration in the histogram.
    held = lab.sbatch("--hold", "-t", "1", wrap="true")
    try:
        wait_for(lambda: (sample(scrape(exporter), "rlsched_site_factor_update_duration_seconds_count",
                                 plugin="site_factor") or 0) >= 1, 90, "a site_factor update in the histogram",
                 interval=1)
        # The batch that update scored is compared with Slurm's own order (its size at least the held job).
        wait_for(lambda: (sample(scrape(exporter), "rlsched_rank_disagreement_jobs", plugin="site_factor")
                          or 0) >= 1, 30, "the rank disagreement of a scored batch", interval=1)
        share = sample(scrape(exporter), "rlsched_rank_disagreement_ratio", plugin="site_factor")
        assert share is not None and 0 <= share <= 1, share
    finally:
        lab.run("scancel", str(held))
    text = scrape(exporter)
    assert sample(text, "rlsched_health_file_ok", plugin="site_factor") == 1, text
    assert sample(text, "rlsched_health_file_ok", plugin="job_submit") == 1, text
