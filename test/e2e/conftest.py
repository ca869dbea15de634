"""pytest fixtures for the end-to-end tests: lab clusters, the rlsched CLI and the plugin build folder.

Environment (set by ctest, see test/CMakeLists.txt; set them yourself when running pytest by hand):
  RLSCHED_CLI          the rlsched binary (default: build/release/tools/rlsched)
  RLSCHED_WRITE_TEST_MODEL  test/plugin/write_test_model (default: build/release/test/write_test_model)
  RLSCHED_PLUGIN_DIR   folder(s), colon-separated, holding the plugin .so files (site_factor_rlsched.so, ...);
                       tests of the plugins fail without it
  RLSCHED_LAB_KEEP=1   keep every lab folder (logs) after the tests; by default a lab's folder is kept only when a
                       test using it failed, and its path is printed
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable

import pytest

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import Lab  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
_started: list[tuple[str, Lab]] = []  # (fixture name, lab) for the start-up time report


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):  # noqa: ANN001 - pytest hook
    outcome = yield
    if outcome.get_result().failed:
        item.config._rlsched_failed = True  # noqa: SLF001 - our own flag: keep the lab folders for their logs


def keep_logs(config: pytest.Config) -> bool:
    return os.environ.get("RLSCHED_LAB_KEEP") == "1" or getattr(config, "_rlsched_failed", False)


def start_lab(request: pytest.FixtureRequest, name: str, prepare: Callable[[Lab], None] | None = None,
              **kwargs) -> Lab:
    """Starts a lab for a fixture and registers its teardown, which keeps the folder when a test failed.
    prepare(lab) runs before the daemons start (to write files into lab.etc, add settings)."""
    lab = Lab(**kwargs)
    lab.keep = True  # decided at teardown

    def finish() -> None:
        keep = keep_logs(request.config)
        lab.keep = keep
        lab.stop()
        if keep:
            print(f"\nlab {name}: logs kept in {lab.root}")
    request.addfinalizer(finish)
    if prepare:
        lab.etc.mkdir(parents=True, exist_ok=True)
        prepare(lab)
    lab.start()
    _started.append((name, lab))
    return lab


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ANN001 - pytest hook
    if not _started:
        return
    terminalreporter.section("lab start-up times")
    for name, lab in _started:
        phases = ", ".join(f"{k} {v:.2f}s" for k, v in lab.timings.items() if k != "total")
        terminalreporter.write_line(f"{name}: {lab.timings.get('total', 0):.2f}s ({phases})")


@pytest.fixture(scope="module")
def lab(request: pytest.FixtureRequest) -> Lab:
    """A lab cluster without rlsched plugins, shared by the tests of one module."""
    return start_lab(request, f"{request.module.__name__}.lab")


@pytest.fixture(scope="session")
def rlsched_cli() -> Path:
    path = Path(os.environ.get("RLSCHED_CLI", REPO / "build/release/tools/rlsched"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"rlsched CLI not found at {path}: build it (cmake --build --preset release) or set RLSCHED_CLI")
    return path


@pytest.fixture(scope="session")
def write_test_model() -> Path:
    """The writer of hand-built model files (test/plugin/write_test_model.cpp)."""
    path = Path(os.environ.get("RLSCHED_WRITE_TEST_MODEL", REPO / "build/release/test/write_test_model"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"write_test_model not found at {path}: build it or set RLSCHED_WRITE_TEST_MODEL")
    return path


@pytest.fixture(scope="session")
def plugin_dirs() -> list[str]:
    """The folders holding the rlsched plugins. Fails (never skips) when they are not given or a plugin is missing:
    ctest registers the plugin tests only when the build has plugins."""
    value = os.environ.get("RLSCHED_PLUGIN_DIR", "")
    if not value:
        pytest.fail("RLSCHED_PLUGIN_DIR is not set: point it at the build folder(s) holding site_factor_rlsched.so "
                    "and job_submit_rlsched.so (ctest sets it when the build has plugins)")
    return list(dict.fromkeys(d for d in value.split(":") if d))  # without duplicates, in order
