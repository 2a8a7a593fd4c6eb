"""Drive sans-IO timers from the event loop with one `call_at` handle, re-armed only when the deadline moves.

The coordinator (and the fetch purgatory) only say when they next need attention (`next_deadline_ms`) and do the
work when called (`tick(now_ms)`). After every request and every firing the driver re-reads the earliest deadline;
this is aioquic's `_transmit`/`_handle_timer` pattern, without a periodic ticker's wake-ups and latency.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Protocol

import structlog

from broker.clock import BrokerClock

log = structlog.get_logger("broker.scheduler")


class Ticking(Protocol):
    def next_deadline_ms(self) -> int | None: ...

    def tick(self, now_ms: int) -> object: ...


class TimerDriver:
    def __init__(self, loop: asyncio.AbstractEventLoop, clock: BrokerClock, targets: list[Ticking]) -> None:
        self._loop = loop
        self._clock = clock
        self._targets = targets
        self._handle: asyncio.TimerHandle | None = None
        self._armed_ms: int | None = None
        self.after_tick: list[Callable[[], None]] = []

    def add(self, target: Ticking) -> None:
        self._targets.append(target)
        self.rearm()

    def rearm(self) -> None:
        deadlines = [d for d in (t.next_deadline_ms() for t in self._targets) if d is not None]
        deadline = min(deadlines) if deadlines else None
        if deadline == self._armed_ms:
            return
        if self._handle is not None and self._armed_ms is not None and (deadline is None or deadline > self._armed_ms):
            # The earliest deadline moved later (every heartbeat does that): keep the early handle, which fires,
            # finds little to do and re-arms, instead of cancelling and re-creating a loop timer per request.
            return
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._armed_ms = deadline
        when = None if deadline is None else self._clock.loop_time_for(deadline)
        if when is not None:
            # A fresh context: the loop would otherwise run the timer in the context of whatever armed it, and log
            # a member expiring as the connection (`conn_id`) whose request happened to arm the timer.
            self._handle = self._loop.call_at(when, self._fire, context=contextvars.Context())

    def fire_now(self) -> None:
        """Run everything due at the current time (used after virtual time moves), outside the caller's context as
        a timer firing on its own would be."""
        contextvars.Context().run(self._fire)

    def _fire(self) -> None:
        self._handle = None
        self._armed_ms = None
        now_ms = self._clock.monotonic_ms()
        for target in self._targets:
            try:
                target.tick(now_ms)
            except Exception:
                log.exception("timer.tick_failed", target=type(target).__name__)
        for callback in self.after_tick:
            callback()
        self.rearm()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
