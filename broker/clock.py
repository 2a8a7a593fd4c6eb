"""The broker's real clock: the only place that reads time; the coordinator gets it as arguments."""

from __future__ import annotations

import asyncio
import time


class SystemClock:
    """Monotonic ms from the event loop (the same base `loop.call_at` uses) and wall ms from the OS."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def monotonic_ms(self) -> int:
        return int(self._loop.time() * 1000)

    def wall_ms(self) -> int:
        return int(time.time() * 1000)
