"""A real Prometheus server for end-to-end tests (Debian's `prometheus`, installed by scripts/setup): started on
loopback on a free port, with its own storage in a folder the caller owns, scraping the given targets every second;
queried through its HTTP API (/api/v1/query). Stopped by PID. Only the Python standard library is used.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

from lab import LabError, free_port, tail, wait_for


class Prometheus:
    def __init__(self, root: Path, targets: list[str], scrape_interval: str = "1s",
                 rule_files: list[Path] = ()) -> None:
        binary = shutil.which("prometheus")
        if not binary:
            raise LabError("prometheus not found: run scripts/setup (installs Debian's prometheus)")
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = root / "prometheus.log"
        rules = "".join(f"  - {r}\n" for r in rule_files)
        config = root / "prometheus.yml"
        config.write_text(
            f"global:\n  scrape_interval: {scrape_interval}\n  evaluation_interval: {scrape_interval}\n"
            + (f"rule_files:\n{rules}" if rules else "")
            + "scrape_configs:\n  - job_name: rlsched\n    static_configs:\n"
            + f"      - targets: [{', '.join(repr(t) for t in targets)}]\n")
        self.cmd = [binary, f"--config.file={config}", f"--storage.tsdb.path={root / 'data'}",
                    f"--web.listen-address=127.0.0.1:{self.port}", "--storage.tsdb.retention.time=1h"]
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Prometheus":
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(self.cmd, stdout=log, stderr=subprocess.STDOUT, cwd=self.root)
        wait_for(self._ready, 60, "prometheus to be ready", on_timeout=lambda: tail(self.log))
        return self

    def _ready(self) -> bool:
        if self.proc.poll() is not None:
            raise LabError(f"prometheus exited {self.proc.returncode}\n{tail(self.log)}")
        with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as r:
            return r.status == 200

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def query(self, promql: str) -> list[dict]:
        """The result vector of an instant query (each item {"metric": {...}, "value": [t, "v"]})."""
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.load(r)
        if body.get("status") != "success":
            raise LabError(f"PromQL {promql!r} failed: {body}")
        return body["data"]["result"]

    def value(self, promql: str) -> float | None:
        """The single value of a query that returns one series; None when it returns none."""
        result = self.query(promql)
        if not result:
            return None
        if len(result) != 1:
            raise LabError(f"PromQL {promql!r} returned {len(result)} series, expected one: {result}")
        return float(result[0]["value"][1])
