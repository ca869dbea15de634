"""`rlsched evaluate --report DIR` opened in headless Chromium: every figure index.html references exists and is a
PNG, every figure written is referenced, each run's outcomes have one row per job of the workload, and the page's
screenshot is a non-blank image. Needs Debian's chromium and python3-matplotlib (scripts/setup); fails without them.

Usage: check_report.py RLSCHED_CLI TRACE CLUSTER
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PNG = b"\x89PNG\r\n\x1a\n"
FIGURES = {"wait_cdf.png", "queue_length.png", "utilisation.png", "placements.png", "preemptions.png"}


def fail(message: str) -> None:
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def main(cli: str, trace: str, cluster: str) -> None:
    chromium = shutil.which("chromium")
    if not chromium:
        fail("chromium not found: run scripts/setup")
    with tempfile.TemporaryDirectory(prefix="rlsched-report-") as tmp:
        out = Path(tmp) / "report"
        cp = subprocess.run([cli, "evaluate", "--trace", trace, "--cluster", cluster, "--policies", "fcfs,sjf",
                             "--report", str(out)], capture_output=True, text=True, timeout=120)
        if cp.returncode != 0:
            fail(f"rlsched evaluate --report exited {cp.returncode}: {cp.stderr}")
        page = (out / "index.html").read_text()
        referenced = set(re.findall(r'<img src="([^"]+)"', page))
        if referenced != FIGURES:
            fail(f"index.html shows {sorted(referenced)}, expected {sorted(FIGURES)}")
        written = {p.name for p in out.glob("*.png")}
        if written != referenced:
            fail(f"figures written {sorted(written)} but index.html references {sorted(referenced)}")
        for name in referenced:
            data = (out / name).read_bytes()
            if not data.startswith(PNG) or len(data) < 5000:
                fail(f"{name} is not a drawn PNG ({len(data)} bytes)")
        doc = json.loads((out / "report.json").read_text())
        if [r["policy"] for r in doc["results"]] != ["fcfs", "sjf"]:
            fail(f"report.json results: {[r['policy'] for r in doc['results']]}")
        for n, result in enumerate(doc["results"]):
            rows = (out / f"outcomes-{n}.csv").read_text().splitlines()[1:]
            if len(rows) != result["jobs"]:
                fail(f"outcomes-{n}.csv has {len(rows)} rows for {result['jobs']} jobs")

        shot = Path(tmp) / "screenshot.png"
        cp = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                             "--window-size=1200,2400", f"--screenshot={shot}", (out / "index.html").as_uri()],
                            capture_output=True, text=True, timeout=120)
        if cp.returncode != 0 or not shot.is_file():
            fail(f"chromium --screenshot failed ({cp.returncode}): {cp.stderr[-2000:]}")
        import matplotlib.image  # Debian's python3-matplotlib, which the report needs anyway

        pixels = matplotlib.image.imread(str(shot))
        if pixels.shape[0] != 2400 or pixels.shape[1] != 1200:
            fail(f"screenshot is {pixels.shape[1]}x{pixels.shape[0]}, expected 1200x2400")
        # Blank (one colour) would mean nothing rendered; the figures' lines and text make it vary.
        if float(pixels[..., :3].std()) < 0.05:
            fail(f"screenshot looks blank (pixel std {float(pixels[..., :3].std()):.4f})")
        print(f"ok: {len(referenced)} figures, screenshot {shot.stat().st_size} bytes, pixel std "
              f"{float(pixels[..., :3].std()):.3f}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(*sys.argv[1:])
