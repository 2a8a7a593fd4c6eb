"""Child program for tests/durability/test_kill9_steps.py: append, roll and compact a log, SIGKILLing itself at the
N-th file-system step.

`python -m tests.durability.crash_steps DIR SCENARIO CRASH_AT` builds a partition log in DIR (small segments, so
every few appends roll), then counts every file-system step the storage layer takes (creating, renaming, deleting,
truncating or fsyncing a file) and sends itself SIGKILL right before step CRASH_AT (0: never; each step is then
described as `STEP <n> <operation> <file names>`). Each append that returned is printed as
`ACK <offset> <key> <value>` and flushed before the next step, so the parent knows exactly what was
acknowledged. Without a crash the last line is `STEPS <count>`.

Scenarios: `roll` (delete policy: appends only, each one may roll), `compact` (compact policy: appends, cleaner
passes swapping segments, more appends and another pass).
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from protocol.records import Record, RecordBatch, encode_batch
from storage.cleaner import CleanerConfig, clean
from storage.config import LogConfig
from storage.partition_log import PartitionLog

NOW_MS = 1_700_000_000_000
KEYS = 7
CONFIGS = {
    "roll": LogConfig(segment_bytes=600, index_interval_bytes=100),
    "compact": LogConfig(segment_bytes=600, index_interval_bytes=100, cleanup_policy=("compact",)),
}
CLEANER = CleanerConfig(min_cleanable_ratio=0.01)


class StepCounter:
    """Wraps the `os` functions storage uses to change files; SIGKILLs this process before step `crash_at`."""

    def __init__(self, crash_at: int) -> None:
        self.crash_at = crash_at
        self.steps = 0

    def install(self) -> None:
        for name in ("replace", "rename", "unlink", "ftruncate", "fsync"):
            setattr(os, name, self._counted(name, getattr(os, name)))
        real_open = os.open

        @functools.wraps(real_open)
        def open_counted(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if flags & os.O_CREAT:
                self._step("create", (path,))
            return real_open(path, flags, *args, **kwargs)

        os.open = open_counted

    def _counted(self, name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(real)
        def counted(*args: Any, **kwargs: Any) -> Any:
            self._step(name, args)
            return real(*args, **kwargs)

        return counted

    def _step(self, name: str, args: tuple[Any, ...]) -> None:
        """Count one step; in the counting run (crash_at 0) describe it as `STEP <n> <op> <file names>`."""
        self.steps += 1
        if self.crash_at == 0:
            print("STEP", self.steps, name, *(Path(a).name for a in args if isinstance(a, str | os.PathLike)))
        if self.steps == self.crash_at:
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)


def value_of(key: int, seq: int) -> bytes:
    return f"k{key}:{seq}:".encode() + b"x" * 40


def append(log: PartitionLog, seq: int) -> None:
    """One single-record batch for key `seq % KEYS`; prints the ACK line once the append returned."""
    key = seq % KEYS
    record = Record(offset_delta=0, timestamp_delta=0, key=f"k{key}".encode(), value=value_of(key, seq))
    result = log.append(encode_batch(RecordBatch.from_records([record], base_timestamp=NOW_MS)), now_ms=NOW_MS)
    print(f"ACK {result.base_offset} k{key} {value_of(key, seq).decode()}", flush=True)


def main(directory: Path, scenario: str, crash_at: int) -> None:
    config = CONFIGS[scenario]
    log = PartitionLog(directory, config, now_ms=NOW_MS)
    for seq in range(30):  # history before the crash window: several closed segments
        append(log, seq)
    counter = StepCounter(crash_at)
    counter.install()
    for first in (30, 45):
        for seq in range(first, first + 15):
            append(log, seq)
        if scenario == "compact":
            clean(log, NOW_MS, config=CLEANER)
    log.flush()
    log.close()
    print(f"STEPS {counter.steps}", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]))
