"""Kafka's idle-connection expiry (`connections.max.idle.ms`): close connections with no bytes read or written.

Kafka's Selector keeps its channels in least-recently-active order and closes the oldest once it has been quiet for
`connections.max.idle.ms`. The same here, on the broker clock and driven by the broker's `TimerDriver`, so tests
move virtual time instead of sleeping. A connection stalled mid-frame (a size prefix and a few bytes, then
nothing: slowloris) is idle like any other. A connection whose request the broker is holding (a JoinGroup parked
until the rebalance completes, a long-poll Fetch) is waiting on us, not idle: it leaves the order while its handler
runs and comes back, freshly active, when the answer is being written.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol


class Expirable(Protocol):
    def close_idle(self, idle_ms: int) -> None: ...


class IdleConnections:
    def __init__(self, max_idle_ms: int, now_ms: Callable[[], int]) -> None:
        self.max_idle_ms = max_idle_ms
        self._now_ms = now_ms
        self._last_active: OrderedDict[Expirable, int] = OrderedDict()  # least recently active first
        self.on_first: Callable[[], None] = lambda: None  # re-arm the driver: a deadline now exists

    @property
    def enabled(self) -> bool:
        return self.max_idle_ms >= 0  # Kafka: a negative value turns expiry off

    def touch(self, connection: Expirable) -> None:
        """Bytes were read or written: the connection's idle time starts again."""
        if not self.enabled:
            return
        was_empty = not self._last_active
        self._last_active[connection] = self._now_ms()
        self._last_active.move_to_end(connection)
        if was_empty:
            self.on_first()

    def hold(self, connection: Expirable) -> None:
        """A request is being handled (possibly parked for minutes): not idle until its answer goes out."""
        self._last_active.pop(connection, None)

    forget = hold  # a closed connection simply leaves the order

    def __len__(self) -> int:
        return len(self._last_active)

    # Ticking protocol for the TimerDriver
    def next_deadline_ms(self) -> int | None:
        if not self._last_active:
            return None
        return next(iter(self._last_active.values())) + self.max_idle_ms

    def tick(self, now_ms: int) -> int:
        closed = 0
        while self._last_active:
            connection, last_active_ms = next(iter(self._last_active.items()))
            if now_ms - last_active_ms < self.max_idle_ms:
                break
            del self._last_active[connection]
            connection.close_idle(now_ms - last_active_ms)
            closed += 1
        return closed
