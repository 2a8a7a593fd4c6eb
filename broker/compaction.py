"""Run the log cleaner (compaction of `cleanup.policy=compact` topics such as `__consumer_offsets`) in the
background, in a worker thread, so request handling never waits for it.

Every `log.cleaner.backoff.ms` one pass cleans the dirtiest compacted logs; segment swaps are atomic and the
partition log's lock keeps readers and the appender safe while a pass runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import structlog

from storage.cleaner import CleanerConfig, CleanResult, LogCleaner
from storage.log_manager import LogManager

log = structlog.get_logger("broker.compaction")


class Compaction:
    def __init__(self, logs: LogManager, config: CleanerConfig, backoff_ms: int, wall_ms: Callable[[], int]) -> None:
        self._logs = logs
        self._cleaner = LogCleaner(config)
        self._backoff_s = max(backoff_ms, 1) / 1000
        self._wall_ms = wall_ms
        self._pass: asyncio.Future[dict[tuple[str, int], CleanResult]] | None = None
        self.passes = 0

    def reconfigure(self, config: CleanerConfig, backoff_ms: int) -> None:
        """New broker cleaner settings (dynamic ``log.cleaner.*``), taken from the next pass on."""
        self._cleaner.config = config
        self._backoff_s = max(backoff_ms, 1) / 1000

    async def run_once(self) -> None:
        running = self._pass = asyncio.ensure_future(
            asyncio.to_thread(self._cleaner.clean_all, self._logs, self._wall_ms())
        )
        try:
            results = await running
        finally:
            self._pass = None
        self.passes += 1
        if results:
            log.info("compaction.pass", logs=len(results))

    async def run_forever(self) -> None:
        while True:
            await asyncio.sleep(self._backoff_s)
            try:
                await self.run_once()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("compaction.failed")

    async def stop(self) -> None:
        """Ask a running pass to stop and wait for its thread: cancelling a task does not stop a thread."""
        self._cleaner.stop()
        if self._pass is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.shield(self._pass)
