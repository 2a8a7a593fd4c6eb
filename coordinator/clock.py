"""Time for the coordinator's callers: a `Clock` protocol and the `ManualClock` used by tests and the simulator.

The coordinator itself never reads a clock. Every entry point receives `now_ms` (monotonic milliseconds, the base
that deadlines are measured on) and, where a value is stored or sent, wall-clock milliseconds (`wall_ms`, for
commit timestamps and the group's state timestamp). Only the broker owns a real clock; it lives outside this
package because reading the system time is I/O as far as a sans-IO state machine is concerned.
"""

from __future__ import annotations

from typing import Protocol


class Clock(Protocol):
    """The two readings a driver passes into the coordinator."""

    def monotonic_ms(self) -> int:
        """Milliseconds on a clock that never goes backwards; deadlines live on this axis."""
        ...

    def wall_ms(self) -> int:
        """Milliseconds since the Unix epoch; goes into persisted timestamps."""
        ...


class ManualClock:
    """A clock that moves only when told to, so tests and simulations are exactly reproducible.

    Both readings advance together; the wall clock starts at an arbitrary but fixed epoch so timestamps that end
    up in records and golden files do not depend on when the test ran.
    """

    __slots__ = ("_mono_ms", "_wall_offset_ms")

    DEFAULT_WALL_START_MS = 1_700_000_000_000

    def __init__(self, start_ms: int = 0, wall_start_ms: int = DEFAULT_WALL_START_MS) -> None:
        self._mono_ms = start_ms
        self._wall_offset_ms = wall_start_ms - start_ms

    def monotonic_ms(self) -> int:
        return self._mono_ms

    def wall_ms(self) -> int:
        return self._mono_ms + self._wall_offset_ms

    def advance(self, ms: int) -> int:
        """Move both readings forward by `ms` (never backwards) and return the new monotonic time."""
        if ms < 0:
            raise ValueError(f"a clock cannot go backwards ({ms} ms)")
        self._mono_ms += ms
        return self._mono_ms
