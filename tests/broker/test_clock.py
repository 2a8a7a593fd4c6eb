"""The broker clock and the timer driver under frozen time: a timer due at the current virtual instant fires
without anyone calling `advance` (issue #12: a frozen clock never fired the initial delay of 0)."""

from __future__ import annotations

import asyncio

import structlog

from broker.clock import BrokerClock
from broker.scheduler import TimerDriver


class _OneTimer:
    def __init__(self, deadline_ms: int) -> None:
        self.deadline_ms: int | None = deadline_ms
        self.fired = asyncio.Event()

    def next_deadline_ms(self) -> int | None:
        return self.deadline_ms

    def tick(self, now_ms: int) -> object:
        if self.deadline_ms is not None and self.deadline_ms <= now_ms:
            self.deadline_ms = None
            self.fired.set()
        return None


async def test_a_frozen_clock_fires_what_is_due_now_and_only_that() -> None:
    loop = asyncio.get_running_loop()
    clock = BrokerClock(loop)
    clock.freeze()
    now = clock.monotonic_ms()
    due, later = _OneTimer(now), _OneTimer(now + 1)
    driver = TimerDriver(loop, clock, [due, later])
    driver.rearm()
    await asyncio.wait_for(due.fired.wait(), timeout=5)
    assert not later.fired.is_set()
    assert clock.loop_time_for(now + 1) is None  # only advance gets there
    driver.close()


async def test_unfreeze_continues_both_clocks_from_the_virtual_instant() -> None:
    clock = BrokerClock(asyncio.get_running_loop())
    clock.freeze()
    mono, wall = clock.monotonic_ms(), clock.wall_ms()
    clock.advance(5_000)
    clock.unfreeze()
    assert not clock.frozen
    assert clock.monotonic_ms() >= mono + 5_000
    assert clock.wall_ms() >= wall + 5_000
    assert clock.loop_time_for(clock.monotonic_ms()) is not None


async def test_timer_work_does_not_run_in_the_context_of_the_request_that_armed_it() -> None:
    """The connection binds `conn_id` in its contextvars; a timer armed while a request is handled must not log
    what it does later (a member expiring) as that connection's."""
    loop = asyncio.get_running_loop()
    clock = BrokerClock(loop)
    seen: list[dict[str, object]] = []

    class _Recording(_OneTimer):
        def tick(self, now_ms: int) -> object:
            if self.deadline_ms is not None and self.deadline_ms <= now_ms:
                seen.append(structlog.contextvars.get_contextvars())
            return super().tick(now_ms)

    timer = _Recording(clock.monotonic_ms() + 1)
    driver = TimerDriver(loop, clock, [timer])
    with structlog.contextvars.bound_contextvars(conn_id=7):
        driver.rearm()
    await asyncio.wait_for(timer.fired.wait(), timeout=5)
    assert seen == [{}]
    driver.close()
