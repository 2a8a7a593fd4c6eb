"""The broker's real OffsetsLog over a real log manager, with the event loop's turns under the test's control.

`end_turn()` runs what the loop would run at the end of the current turn (the group-commit flush), so tests see
exactly which appends shared a batch. `records()` makes it usable as the coordinator harness's store; with
`immediate=True` each append is written and acknowledged at once (the flush a loop turn would run with nothing else
queued), so the harness's replies are ready as with the in-memory store.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from broker.offsets_log import OFFSETS_TOPIC, OffsetsLog
from coordinator.records import CoordinatorRecord
from protocol.errors import ErrorCode
from storage.log_manager import LogManager

WALL_MS = 1_000
"""The wall time every batch is written at."""


class LogStore(OffsetsLog):
    def __init__(
        self, directory: Path, partitions: int, configs: dict[str, str] | None = None, *, immediate: bool = False
    ) -> None:
        self.directory = directory
        self.manager = LogManager([directory], node_id=1, now_ms=0)
        self.manager.create_topic(OFFSETS_TOPIC, partitions, {"cleanup.policy": "compact", **(configs or {})})
        self.scheduled: list[Callable[[], None]] = []
        self.deliveries = 0
        schedule = (lambda flush: flush()) if immediate else self.scheduled.append
        super().__init__(self.manager, lambda: WALL_MS, schedule, self._deliver_all)

    def reopen(self) -> None:
        """Close the logs and open them again from disk, as a restarted broker does."""
        self.manager.close()
        self.manager = self._logs = LogManager([self.directory], node_id=1, now_ms=0)

    def _deliver_all(self, outcomes: list[tuple[Callable[[ErrorCode], None], ErrorCode]]) -> None:
        self.deliveries += 1
        for callback, error in outcomes:
            callback(error)

    def records(self, partition: int) -> list[CoordinatorRecord]:
        return self.read_all(partition)

    def end_turn(self) -> None:
        scheduled = list(self.scheduled)
        self.scheduled.clear()
        for callback in scheduled:
            callback()
