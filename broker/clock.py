"""The broker's clocks: the only place that reads time; the coordinator gets it as arguments.

`BrokerClock` follows the event loop's monotonic time and the OS wall clock, and tests can move it: `advance(ms)`
jumps forward (time keeps flowing from there), `freeze()` stops it so it moves only by `advance` (virtual time
alone), `unfreeze()` lets it flow again from the virtual instant reached. Whatever drives timers asks
`loop_time_for(deadline)` where a deadline lies on the loop's own clock. A frozen clock answers "now" for a deadline
it has already reached (so what is due at once, an initial rebalance delay of 0, still happens without an
`advance`) and None for a later one: only `advance` gets there.
"""

from __future__ import annotations

import asyncio
import time


class BrokerClock:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._skew_ms = 0
        self._wall_skew_ms = 0  # equal to `_skew_ms` until an unfreeze: each clock resumes where it stood
        self._frozen_mono_ms: int | None = None
        self._frozen_wall_ms = 0

    def monotonic_ms(self) -> int:
        if self._frozen_mono_ms is not None:
            return self._frozen_mono_ms
        return int(self._loop.time() * 1000) + self._skew_ms

    def wall_ms(self) -> int:
        if self._frozen_mono_ms is not None:
            return self._frozen_wall_ms
        return int(time.time() * 1000) + self._wall_skew_ms

    @property
    def frozen(self) -> bool:
        return self._frozen_mono_ms is not None

    def advance(self, ms: int) -> None:
        if ms < 0:
            raise ValueError("time only moves forward")
        if self._frozen_mono_ms is not None:
            self._frozen_mono_ms += ms
            self._frozen_wall_ms += ms
        else:
            self._skew_ms += ms
            self._wall_skew_ms += ms

    def freeze(self) -> None:
        """From now on time moves only by `advance` (the broker runs on virtual time alone)."""
        if self._frozen_mono_ms is None:
            self._frozen_wall_ms = self.wall_ms()
            self._frozen_mono_ms = self.monotonic_ms()

    def unfreeze(self) -> None:
        """Time flows again, from the virtual instant reached (monotonic time never goes back)."""
        if self._frozen_mono_ms is not None:
            self._skew_ms = self._frozen_mono_ms - int(self._loop.time() * 1000)
            self._wall_skew_ms = self._frozen_wall_ms - int(time.time() * 1000)
            self._frozen_mono_ms = None

    def loop_time_for(self, deadline_ms: int) -> float | None:
        """When, on the event loop's clock, this clock reaches `deadline_ms` (None: only `advance` gets there)."""
        if self._frozen_mono_ms is not None:
            return self._loop.time() if deadline_ms <= self._frozen_mono_ms else None
        return (deadline_ms - self._skew_ms) / 1000
