"""Settings of one analysis: Burrow's evaluator/storage options plus the time grid, with Burrow's defaults."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = ["AnalysisConfig", "BurrowConfig", "parse_as_of", "parse_duration_ms"]


@dataclass(frozen=True)
class BurrowConfig:
    """Burrow's knobs, named and defaulted as in its code (``burrow.toml`` names in the comments)."""

    intervals: int = 10  # storage.intervals: commits kept per partition
    min_distance_s: int = 0  # storage.min-distance: closer commits replace the previous one
    expire_group_s: int = 604_800  # storage.expire-group: a group silent this long is forgotten (NOTFOUND)
    allowed_lag: int = 0  # evaluator.allowed-lag
    minimum_complete: float = 0.0  # evaluator.minimum-complete
    offset_refresh_s: int = 10  # cluster.offset-refresh: spacing of the broker-offset ring

    def __post_init__(self) -> None:
        if self.intervals < 1:
            raise ValueError("intervals must be at least 1")
        if self.offset_refresh_s < 1:
            raise ValueError("offset-refresh must be at least 1 s")


@dataclass(frozen=True)
class AnalysisConfig:
    burrow: BurrowConfig = BurrowConfig()
    tick_ms: int = 60_000  # status is evaluated at every multiple of this (and at the as-of time)
    rate_window_ms: int = 60_000  # width of the commit/produce rate windows
    as_of: str = "max"  # max | now | ISO-8601 time
    groups: str | None = None  # only groups matching this regex (Burrow's group-allowlist)
    exclude_groups: str | None = None  # drop groups matching this regex (group-denylist)

    def __post_init__(self) -> None:
        if self.tick_ms < 1 or self.rate_window_ms < 1:
            raise ValueError("tick and rate window must be positive")
        for pattern in (self.groups, self.exclude_groups):
            if pattern is not None:
                re.compile(pattern)


_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|h|d)?\s*$")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, None: 1000}


def parse_duration_ms(text: str) -> int:
    """``60s``, ``5m``, ``250ms``, ``1h``; a bare number is seconds."""
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"not a duration: {text!r} (use e.g. 60s, 5m, 250ms)")
    return int(match.group(1)) * _UNIT_MS[match.group(2)]


def parse_as_of(text: str, latest_ms: int) -> int:
    """``max`` = the latest time in the logs (deterministic, replayable); ``now`` = wall clock; or an ISO time."""
    if text == "max":
        return latest_ms
    if text == "now":
        return time.time_ns() // 1_000_000
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return int(value.timestamp() * 1000)
