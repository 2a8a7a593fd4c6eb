"""Progress on stderr: one line per stage with its elapsed time, and a summary at the end.

Spark jobs take seconds to minutes with nothing to show, so each stage says what it is doing when it starts and
how long it took when it ends. stdout stays for the command's real output (``describe``'s table, ``wrote ...``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """``with progress.stage("decoding 12 segments"):`` prints ``decoding 12 segments ...`` on stderr when it starts
    and ``decoding 12 segments: 3.1 s`` when it ends: two whole lines, because Spark's own log lines (e.g. its
    start-up warnings) may come in between.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._started = time.monotonic()

    @contextmanager
    def stage(self, label: str) -> Iterator[None]:
        print(f"{label} ...", file=self._stream, flush=True)
        began = time.monotonic()
        try:
            yield
        except BaseException:
            print(f"{label}: stopped after {time.monotonic() - began:.1f} s", file=self._stream, flush=True)
            raise
        print(f"{label}: {time.monotonic() - began:.1f} s", file=self._stream, flush=True)

    def note(self, text: str) -> None:
        """A line of its own (a summary, or why nothing was done)."""
        print(text, file=self._stream, flush=True)

    def summary(self, tables: int, rows: int | None = None) -> None:
        rows_text = "" if rows is None else f", {rows} rows"
        self.note(f"done: {tables} tables written{rows_text} in {time.monotonic() - self._started:.1f} s")
