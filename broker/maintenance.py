"""Background upkeep of the log directory: time-based fsync, retention, recovery-point checkpoints.

Kafka runs these as scheduler tasks (`log.flush.scheduler.interval.ms`, `log.retention.check.interval.ms`,
the recovery-point checkpoint). Here one task wakes at the nearest due time; each job is short and runs on the
event loop, except work that may take long (compaction), which goes to a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from storage.log_manager import LogManager

log = structlog.get_logger("broker.maintenance")
CHECKPOINT_INTERVAL_MS = 60_000  # Kafka's log.flush.offset.checkpoint.interval.ms
FLUSH_CHECK_INTERVAL_MS = 1_000


@dataclass(slots=True)
class _Job:
    name: str
    interval_ms: int
    run: Callable[[int], object]
    due_ms: int = 0


class Maintenance:
    def __init__(self, logs: LogManager, wall_ms: Callable[[], int], retention_check_ms: int, flush_ms: int | None):
        self._wall_ms = wall_ms
        now = wall_ms()
        self._jobs = [
            _Job("retention", retention_check_ms, logs.apply_retention, now + retention_check_ms),
            _Job("checkpoint", CHECKPOINT_INTERVAL_MS, lambda _now: logs.checkpoint(), now + CHECKPOINT_INTERVAL_MS),
        ]
        if flush_ms is not None:
            interval = max(min(flush_ms, FLUSH_CHECK_INTERVAL_MS), 1)
            self._jobs.append(_Job("flush", interval, logs.flush_due, now + interval))

    def run_due(self) -> None:
        now = self._wall_ms()
        for job in self._jobs:
            if now >= job.due_ms:
                try:
                    job.run(now)
                except Exception:
                    log.exception("maintenance.job_failed", job=job.name)
                job.due_ms = now + job.interval_ms

    async def run_forever(self) -> None:
        while True:
            wait_ms = max(min(job.due_ms for job in self._jobs) - self._wall_ms(), 10)
            await asyncio.sleep(wait_ms / 1000)
            self.run_due()
