"""The wall clock storage falls back on when its owner injects none: the only place in storage that reads time.

Every time-dependent decision in storage (segment.ms roll, retention.ms, flush.ms, the creation time of a segment,
the quarantine file names) takes the time from its caller: an explicit ``now_ms`` argument, or the ``clock``
callable a log or log manager was built with. The broker injects its `BrokerClock.wall_ms`, so a test that
advances virtual time moves all of them; standalone tools and unit tests get this function.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Clock", "wall_clock_ms"]

#: Milliseconds since the epoch, on whatever clock the owner chose.
Clock = Callable[[], int]


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000
