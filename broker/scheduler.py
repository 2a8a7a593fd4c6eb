"""Drive sans-IO timers from the event loop with one `call_at` handle, re-armed only when the deadline moves earlier.

The coordinator (and the fetch purgatory) only say when they next need attention (`next_deadline_ms`) and do the
work when called (`tick(now_ms)`). This is aioquic's `_transmit`/`_handle_timer` pattern, without a periodic
ticker's wake-ups and latency.

Two ways a target's earliest deadline reaches the driver:

* a target that can report it (`watch_deadlines`, the coordinators: every deadline they have goes through their one
  keyed `Timer`) calls `notify(deadline)` whenever it may have moved earlier, so nobody asks it after a request:
  a heartbeat, which only postpones its session deadline, costs the driver nothing;
* `rearm()` asks every target (the others change their deadlines only where the broker calls `rearm()` right after:
  a parked fetch, the first idle connection, a toolkit sleeper) and after every firing the driver asks them all.

Either way the invariant is the same: while a handle is armed, no target has a deadline before it, and without a
handle no target has one the loop could reach (a frozen clock's later deadlines wait for `advance`). A deadline
that moves later keeps the early handle, which fires, finds little to do and re-arms, instead of cancelling and
re-creating a loop timer per request.
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
        #: The deadline the armed handle fires at; None exactly when no handle is armed.
        self._armed_ms: int | None = None
        self.after_tick: list[Callable[[], None]] = []
        for target in targets:
            self._watch(target)

    @property
    def armed_ms(self) -> int | None:
        """The deadline the armed loop handle fires at, None when none is armed."""
        return self._armed_ms

    def add(self, target: Ticking) -> None:
        self._targets.append(target)
        self._watch(target)
        self.rearm()

    def _watch(self, target: Ticking) -> None:
        watch = getattr(target, "watch_deadlines", None)
        if watch is not None:
            watch(self.notify)

    def notify(self, deadline_ms: int) -> None:
        """A target's earliest deadline may have moved earlier, to `deadline_ms`: arm for it if it comes first."""
        armed = self._armed_ms
        if armed is None or deadline_ms < armed:
            self._arm(deadline_ms)

    def rearm(self) -> None:
        """Ask every target for its next deadline and arm for the earliest, unless an earlier handle is armed."""
        deadline: int | None = None
        for target in self._targets:
            d = target.next_deadline_ms()
            if d is not None and (deadline is None or d < deadline):
                deadline = d
        armed = self._armed_ms
        if deadline is None or (armed is not None and deadline >= armed):
            # Nothing due, or the earliest deadline moved later (every heartbeat does that): keep the early handle.
            return
        self._arm(deadline)

    def _arm(self, deadline_ms: int) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
            self._armed_ms = None
        when = self._clock.loop_time_for(deadline_ms)
        if when is not None:
            # A fresh context: the loop would otherwise run the timer in the context of whatever armed it, and log
            # a member expiring as the connection (`conn_id`) whose request happened to arm the timer.
            self._handle = self._loop.call_at(when, self._fire, context=contextvars.Context())
            self._armed_ms = deadline_ms

    def fire_now(self) -> None:
        """Run everything due at the current time (used after virtual time moves), outside the caller's context as
        a timer firing on its own would be. An armed handle is cancelled: it would only fire for nothing, and
        forget a newer handle when it did."""
        if self._handle is not None:
            self._handle.cancel()
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
            self._armed_ms = None
