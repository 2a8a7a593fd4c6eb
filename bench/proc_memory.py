"""Peak resident memory of this process's descendants (the Spark JVM and its Python workers), read from ``/proc``.

Spark's own task metrics count only the JVM's execution memory; the Python workers that decode the log are
separate processes. Linux keeps each process's high-water mark (``VmHWM``), so polling it now and then misses
nothing of a process still alive at the next poll; a worker that exits between polls is seen at its last poll.
A pyspark worker runs one task at a time, so its peak bounds what any one of its tasks held.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PeakMemory"]

_PROC = Path("/proc")


def _parent_of(pid: int) -> int | None:
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])  # the name in parentheses may hold spaces


def _peak_kib(pid: int) -> int | None:
    try:
        status = (_PROC / str(pid) / "status").read_text()
    except OSError:
        return None
    return next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), None)


def _command(pid: int) -> str:
    try:
        return (_PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@dataclass
class PeakMemory:
    """Polls every ``interval_s`` in a thread while in the ``with`` block; ``peaks`` is ``{pid: (kind, KiB)}``."""

    interval_s: float = 0.2
    peaks: dict[int, tuple[str, int]] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> PeakMemory:
        self._thread = threading.Thread(target=self._run, name="peak-memory", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.poll()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.poll()

    def poll(self) -> None:
        parents = {pid: _parent_of(pid) for pid in (int(p.name) for p in _PROC.iterdir() if p.name.isdigit())}
        mine = {os.getpid()}
        for _ in range(8):  # python -> spark-submit -> java -> pyspark.daemon -> worker
            mine |= {pid for pid, parent in parents.items() if parent in mine}
        for pid in mine - {os.getpid()}:
            peak = _peak_kib(pid)
            if peak is None:
                continue
            kind = self.peaks[pid][0] if pid in self.peaks else self._kind(pid, parents)
            self.peaks[pid] = (kind, max(peak, self.peaks.get(pid, (kind, 0))[1]))

    @staticmethod
    def _kind(pid: int, parents: dict[int, int | None]) -> str:
        command = _command(pid)
        if "pyspark.daemon" in command:
            return "python-daemon" if "pyspark.daemon" not in _command(parents.get(pid) or 0) else "python-worker"
        return "jvm" if "java" in command.split(" ", 1)[0] else "other"

    def max_kib(self, kind: str) -> int:
        return max((kib for k, kib in self.peaks.values() if k == kind), default=0)

    def count(self, kind: str) -> int:
        return sum(1 for k, _ in self.peaks.values() if k == kind)
