"""Per-key logs under two bounds, as both timelines keep them: at most `max_keys` keys (the one whose last append
is oldest is dropped first, counted in `dropped_keys`), and each log capped by its own deque (`EventLog`: the oldest
entry dropped, counted in `dropped`). Always on, so every step is O(1)."""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
L = TypeVar("L")


class EventLog(Generic[T]):
    """At most `capacity` entries, oldest dropped first (and counted)."""

    __slots__ = ("dropped", "events")

    def __init__(self, capacity: int) -> None:
        self.events: deque[T] = deque(maxlen=capacity)
        self.dropped = 0

    def append(self, entry: T) -> None:
        self.dropped += len(self.events) == self.events.maxlen
        self.events.append(entry)


class BoundedLogs(Generic[L]):
    """One log per key (made by `make`), at most `max_keys` of them."""

    def __init__(self, max_keys: int, make: Callable[[], L]) -> None:
        self._max_keys = max_keys
        self._make = make
        self._logs: OrderedDict[str, L] = OrderedDict()
        self.dropped_keys = 0

    def touch(self, key: str) -> L:
        """The key's log, created (dropping the stalest key when full) or moved to the fresh end."""
        logs = self._logs
        log = logs.get(key)
        if log is None:
            if len(logs) >= self._max_keys:
                logs.popitem(last=False)
                self.dropped_keys += 1
            log = logs[key] = self._make()
        else:
            logs.move_to_end(key)
        return log

    def get(self, key: str) -> L | None:
        return self._logs.get(key)

    def items(self) -> list[tuple[str, L]]:
        return list(self._logs.items())

    def keys(self) -> list[str]:
        return list(self._logs)
