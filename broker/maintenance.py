"""Background upkeep of the log directory: time-based fsync, retention, recovery-point checkpoints.

Kafka runs these as scheduler tasks (`log.flush.scheduler.interval.ms`, `log.retention.check.interval.ms`, the
recovery-point checkpoint). Here they are one more target of the broker's timer driver, so they follow the broker
clock: a test that advances virtual time past `log.retention.check.interval.ms` runs retention at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import structlog

log = structlog.get_logger("broker.maintenance")
CHECKPOINT_INTERVAL_MS = 60_000  # Kafka's log.flush.offset.checkpoint.interval.ms
FLUSH_CHECK_INTERVAL_MS = 1_000


class _Clock(Protocol):
    def monotonic_ms(self) -> int: ...

    def wall_ms(self) -> int: ...


class _Logs(Protocol):
    def apply_retention(self, now_ms: int) -> int: ...

    def flush_due(self, now_ms: int) -> int: ...

    def checkpoint(self) -> None: ...


@dataclass(slots=True)
class _Job:
    name: str
    interval_ms: int
    run: Callable[[int], object]
    due_ms: int


class Maintenance:
    def __init__(self, logs: _Logs, clock: _Clock, retention_check_ms: int, flush_ms: int | None) -> None:
        self._clock = clock
        now = clock.monotonic_ms()
        self._jobs = [
            _Job("retention", retention_check_ms, logs.apply_retention, now + retention_check_ms),
            _Job("checkpoint", CHECKPOINT_INTERVAL_MS, lambda _wall: logs.checkpoint(), now + CHECKPOINT_INTERVAL_MS),
        ]
        # Always checked: a topic's flush.ms, or a log.flush.interval.ms set at runtime, may ask for time-based
        # flushes even when the static setting does not (each check only looks at the logs' last flush times).
        interval = max(min(flush_ms if flush_ms is not None else FLUSH_CHECK_INTERVAL_MS, FLUSH_CHECK_INTERVAL_MS), 1)
        self._jobs.append(_Job("flush", interval, logs.flush_due, now + interval))

    def next_deadline_ms(self) -> int | None:
        return min(job.due_ms for job in self._jobs)

    def tick(self, now_ms: int) -> None:
        wall_ms = self._clock.wall_ms()
        for job in self._jobs:
            if now_ms >= job.due_ms:
                try:
                    job.run(wall_ms)
                except Exception:
                    log.exception("maintenance.job_failed", job=job.name)
                job.due_ms = now_ms + job.interval_ms
