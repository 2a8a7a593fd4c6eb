"""``make test-artifacts``: the pictures of a fixture run, kept in ``test-artifacts/pipeline/`` to look at.

Runs the CLI's ``analyze`` on the known-answer log of the test suite (``tests/pipeline/scenarios.py``, with the
suite's settings) and keeps its ``lag.png`` and ``rebalances.png`` (the PNGs come out byte for byte the same on
every run; ``report.txt`` names the temporary log directory, so it is not kept); then draws the 100-generation
rebalance picture and the lag picture of the picture tests' frames (:mod:`tests.pipeline.picture_frames`),
which use a 2025 date so the UTC date on the axis is a real one. The synthetic log's clock starts at 1970-01-01.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

from pipeline.cli import main as pipeline_main
from pipeline.plots import lag_figure
from pipeline.rebalance_plot import rebalance_figure
from tests.pipeline.picture_frames import AS_OF_MS, START_MS, churn_generations, lag_frames
from tests.pipeline.scenarios import TEST_CONFIG, build

OUT = Path(__file__).resolve().parents[2] / "test-artifacts" / "pipeline"


def _fixture_run(work: Path) -> None:
    data, out = work / "log", work / "out"
    build(data)
    b = TEST_CONFIG.burrow
    code = pipeline_main(
        [
            "analyze",
            "--data-dir", str(data),
            "--out", str(out),
            "--master", "local[2]",
            "--intervals", str(b.intervals),
            "--offset-refresh", str(b.offset_refresh_s),
            "--expire-group", str(b.expire_group_s),
            "--tick", f"{TEST_CONFIG.tick_ms // 1000}s",
            "--rate-window", f"{TEST_CONFIG.rate_window_ms // 1000}s",
        ]
    )  # fmt: skip
    if code != 0:
        raise SystemExit(code)
    for name in ("lag.png", "rebalances.png"):
        shutil.copyfile(out / name, OUT / f"fixture-{name}")


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pipeline-artifacts-") as work:
        _fixture_run(Path(work))
    for name, fig in (
        ("rebalances-100-generations.png", rebalance_figure(churn_generations(100), START_MS + 101 * 30_000)),
        ("lag-all-statuses.png", lag_figure(*lag_frames(), AS_OF_MS)),
    ):
        fig.savefig(OUT / name, dpi=100)
        plt.close(fig)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
