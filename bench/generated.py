"""Benchmark inputs written once under the system temp directory and reused by later runs.

Generating a big log costs more than some benchmarks themselves; a marker file written last says the directory is
complete, so an interrupted generation is started over instead of being measured half-written.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["generated_once"]

_MARKER = ".complete"


def generated_once(name: str, write: Callable[[Path], None]) -> Path:
    """``<temp dir>/<name>``, filled by ``write(directory)`` unless a complete earlier run left it there."""
    root = Path(tempfile.gettempdir()) / name
    if (root / _MARKER).exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    started = time.perf_counter()
    write(root)
    (root / _MARKER).write_text(f"written in {time.perf_counter() - started:.1f}s\n")
    return root
