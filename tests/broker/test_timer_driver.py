"""The timer driver re-arms only when a deadline moves earlier, and still fires every timer at its deadline.

The coordinators tell the driver when their earliest deadline may have moved earlier (`watch_deadlines`), so the
bridge no longer asks them after every request. These tests run the driver on a virtual event loop whose handles run
exactly at their time, against the coordinator's own `Timer`: whatever mix of schedules, postponements (the
heartbeat), earlier reschedules and cancels happens, every operation fires at exactly its deadline, and never twice.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from broker.handlers.bridge import bridge
from broker.scheduler import TimerDriver
from coordinator.context import RequestContext as CoordinatorContext
from coordinator.driven import TimerDriven
from coordinator.time_register import TimeRegister
from coordinator.timer import Timer


class _Handle:
    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class _VirtualLoop:
    """`call_at` and `time` on a clock in milliseconds that moves only by `run_until`, running handles at their
    exact time (the broker clock is this clock: `loop_time_for(deadline) == deadline`)."""

    def __init__(self) -> None:
        self.now_ms = 0
        self.handles: list[_Handle] = []

    def time(self) -> float:
        return self.now_ms

    def call_at(self, when: float, callback: Callable[[], None], *, context: contextvars.Context) -> _Handle:
        handle = _Handle(when, callback)
        self.handles.append(handle)
        return handle

    def monotonic_ms(self) -> int:
        return self.now_ms

    def loop_time_for(self, deadline_ms: int) -> float:
        return max(deadline_ms, self.now_ms)

    def run_until(self, until_ms: int) -> None:
        while True:
            live = [h for h in self.handles if not h.cancelled and h.when <= until_ms]
            if not live:
                break
            handle = min(live, key=lambda h: h.when)
            self.handles.remove(handle)
            self.now_ms = max(self.now_ms, int(handle.when))
            handle.callback()
        self.now_ms = until_ms


class _Driven(TimerDriven):
    def __init__(self) -> None:
        self._timer = Timer()
        self._time = TimeRegister()


def _driver(loop: _VirtualLoop, *targets: Any) -> TimerDriver:
    return TimerDriver(loop, loop, list(targets))  # type: ignore[arg-type]  # the virtual loop is also the clock


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("schedule"), st.integers(0, 4), st.integers(0, 60)),
        st.tuples(st.just("cancel"), st.integers(0, 4), st.just(0)),
        st.tuples(st.just("advance"), st.just(0), st.integers(0, 40)),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(_OPS)
def test_every_operation_fires_at_its_deadline_without_a_rearm_per_call(ops: list[tuple[str, int, int]]) -> None:
    loop = _VirtualLoop()
    target = _Driven()
    driver = _driver(loop, target)
    fired: list[tuple[int, int]] = []
    expected: list[tuple[int, int]] = []
    pending: dict[int, int] = {}  # key -> deadline, the model

    def op(key: int) -> Callable[[], None]:
        return lambda: fired.append((key, loop.now_ms))

    for kind, key, amount in ops:
        if kind == "schedule":
            deadline = loop.now_ms + amount
            target.timer.schedule(key, deadline, op(key))  # a later deadline for a key is a heartbeat
            pending[key] = deadline
        elif kind == "cancel":
            target.timer.cancel(key)
            pending.pop(key, None)
        else:
            until = loop.now_ms + amount
            for k, deadline in sorted(pending.items(), key=lambda item: item[1]):
                if deadline <= until:
                    expected.append((k, deadline))
                    del pending[k]
            loop.run_until(until)
        # The invariant: an armed handle never lies after the earliest deadline.
        earliest = target.next_deadline_ms()
        if earliest is not None:
            assert driver.armed_ms is not None and driver.armed_ms <= earliest
    assert sorted(fired, key=lambda f: (f[1], f[0])) == sorted(expected, key=lambda f: (f[1], f[0]))


def test_a_postponed_deadline_tells_the_driver_nothing_an_earlier_one_does() -> None:
    timer = Timer()
    told: list[int] = []
    timer.on_sooner = told.append
    timer.schedule("session", 1_000, lambda: None)
    timer.schedule("session", 2_000, lambda: None)  # a heartbeat: postponed in place
    timer.schedule("session", 3_000, lambda: None)
    assert told == [1_000]
    timer.schedule("session", 500, lambda: None)  # earlier: a new heap item
    timer.schedule("rebalance", 4_000, lambda: None)  # a new key
    assert told == [1_000, 500, 4_000]


def test_the_driver_keeps_an_earlier_handle_and_rearms_for_an_earlier_deadline() -> None:
    loop = _VirtualLoop()
    target = _Driven()
    driver = _driver(loop, target)
    assert driver.armed_ms is None
    target.timer.schedule("a", 100, lambda: None)
    assert driver.armed_ms == 100
    target.timer.schedule("b", 300, lambda: None)
    target.timer.schedule("a", 200, lambda: None)  # postponed: the handle at 100 stays, fires early, re-arms
    assert driver.armed_ms == 100
    target.timer.schedule("c", 50, lambda: None)
    assert driver.armed_ms == 50
    assert len([h for h in loop.handles if not h.cancelled]) == 1
    loop.run_until(50)
    assert driver.armed_ms == 200


class _Counting:
    """A target that cannot report its deadlines: the driver asks it on `rearm()`."""

    def __init__(self) -> None:
        self.deadline: int | None = None

    def next_deadline_ms(self) -> int | None:
        return self.deadline

    def tick(self, now_ms: int) -> None:
        if self.deadline is not None and self.deadline <= now_ms:
            self.deadline = None


def test_rearm_still_asks_targets_that_do_not_report() -> None:
    loop = _VirtualLoop()
    other = _Counting()
    driver = _driver(loop, _Driven(), other)
    other.deadline = 70
    driver.rearm()
    assert driver.armed_ms == 70
    loop.run_until(70)
    assert other.deadline is None and driver.armed_ms is None


class _Answering(_Driven):
    def answer(self, ctx: CoordinatorContext, request: str, now_ms: int) -> str:
        return request.upper()


async def test_the_bridge_rearms_only_for_a_coordinator_nobody_watches() -> None:
    rearms: list[None] = []
    watched, unwatched = _Answering(), _Answering()
    _driver(_VirtualLoop(), watched)

    class _Clock:
        def wall_ms(self) -> int:
            return 0

        def monotonic_ms(self) -> int:
            return 0

    class _Session:
        peer_host = "127.0.0.1"

    class _Ctx:
        api_version = 0
        client_id = "c"
        session = _Session()
        client_host = "/127.0.0.1"

    for coordinator in (watched, unwatched):
        handle = bridge(coordinator.answer, _Clock(), lambda: rearms.append(None))  # type: ignore[arg-type]
        assert await handle(_Ctx(), "hb") == "HB"  # type: ignore[arg-type]
    assert len(rearms) == 1
