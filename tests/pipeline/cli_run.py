"""Run ``pipeline.cli.main`` in a fresh interpreter and report whether pyspark was ever imported.

A fresh process is the only place where "pyspark was not imported" can be observed: the answer is printed on stdout
after the command's own output (``pyspark imported: False``), so a test can assert it and the check can fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_RUN = (
    "import sys\n"
    "from pipeline.cli import main\n"
    "rc = main(sys.argv[1:])\n"
    "print('pyspark imported:', 'pyspark' in sys.modules)\n"
    "sys.exit(rc)\n"
)


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", _RUN, *args], capture_output=True, text=True, env=environment, timeout=120, check=False
    )
