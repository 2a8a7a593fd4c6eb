"""What both coordinator façades share with the broker's timer driver: time comes in, due timers fire.

The group coordinator and its sibling the transaction coordinator are sans-IO: they never read a clock. The broker's
`TimerDriver` calls `tick(now_ms, wall_ms)` when `next_deadline_ms()` says something is due, and that is the only
way their timers (sessions, rebalances, transaction timeouts, marker retries, write timeouts) run.
"""

from __future__ import annotations

from collections.abc import Callable

from coordinator.time_register import TimeRegister
from coordinator.timer import Timer


class TimerDriven:
    """A façade with injected time (`_time`) and its own timers (`_timer`), set by the subclass."""

    _time: TimeRegister
    _timer: Timer

    def tick(self, now_ms: int, wall_ms: int | None = None) -> int:
        """Fire every timer due at `now_ms`; returns how many fired. `wall_ms` defaults to an extrapolation from
        the last wall-clock reading the coordinator was given."""
        self._time.advance(now_ms, wall_ms)
        return self._timer.poll(now_ms)

    def next_deadline_ms(self) -> int | None:
        """When `tick` next has work to do, or None if nothing is scheduled."""
        return self._timer.next_deadline_ms()

    def watch_deadlines(self, on_sooner: Callable[[int], None]) -> None:
        """Call `on_sooner(deadline_ms)` whenever `next_deadline_ms()` may have moved earlier (every timer this
        façade schedules goes through its one `Timer`), so a driver need not ask after every call."""
        self._timer.on_sooner = on_sooner

    @property
    def reports_deadlines(self) -> bool:
        """Whether a driver watches the deadlines (`watch_deadlines`): then nobody needs to re-arm after a call."""
        return self._timer.on_sooner is not None

    @property
    def timer(self) -> Timer:
        """The purgatory, for inspection (tests assert deadlines by key); only the coordinator schedules."""
        return self._timer

    @property
    def now_ms(self) -> int:
        return self._time.now_ms
