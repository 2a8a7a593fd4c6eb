"""Burrow's partition and group evaluation, rule for rule as its code does it (not as its older wiki says).

Source: linkedin/Burrow ``core/internal/evaluator/caching.go`` on master (with #290 STOP-before-zero-lag, #303/#338
recent broker offsets, #591 ``allowed-lag``, #716 recovered rewinds). This pure-Python version is the reference the
tests check against Burrow's own 16 vectors; :mod:`pipeline.rules_sql` is the same logic as one Spark SQL
expression, checked against the same vectors, which is what the pipeline runs at scale.

Order of evaluation (``calculatePartitionStatus``), only when the current lag exceeds ``allowed-lag``:

1. STOP: no commit for longer than the window spans (strictly), unless a recent broker offset shows the consumer
   was caught up (some ring entry <= the last committed offset);
2. REWIND: the committed offset went down at some step and never climbed back to where it was;
3. if the window holds a lag <= ``allowed-lag`` anywhere: OK; otherwise STALL when every commit has the same
   offset, WARN when the (non-nil) lags never decrease, else OK.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

__all__ = [
    "PartitionResult",
    "Status",
    "WindowEntry",
    "calculate_partition_status",
    "evaluate_partition",
    "group_status",
]


class Status(IntEnum):
    """Burrow's ``StatusConstant``: the numeric order is the severity order the group roll-up takes the max of."""

    NOTFOUND = 0
    OK = 1
    WARN = 2
    ERR = 3
    STOP = 4
    STALL = 5
    REWIND = 6


@dataclass(frozen=True, slots=True)
class WindowEntry:
    """One stored commit: ``timestamp`` in ms; ``lag`` is None for commits Burrow stored without one (backfills)."""

    offset: int
    timestamp: int
    lag: int | None


@dataclass(frozen=True, slots=True)
class PartitionResult:
    status: Status
    complete: float
    #: Which rule decided, for the report: ``current-lag``, ``incomplete``, ``stop``, ``rewind``, ``zero-lag``,
    #: ``stall``, ``warn``, ``ok``, ``empty``.
    rule: str


def lag_always_not_zero(window: Sequence[WindowEntry], allowed_lag: int) -> bool:
    """Rule 1: no stored lag (non-nil) is within ``allowed-lag``."""
    return not any(e.lag is not None and e.lag <= allowed_lag for e in window)


def rewind_index(window: Sequence[WindowEntry]) -> int:
    """Rule 2: index of the first commit whose offset is below its predecessor's, -1 if none."""
    for i in range(1, len(window)):
        if window[i].offset < window[i - 1].offset:
            return i
    return -1


def rewind_recovered(window: Sequence[WindowEntry], index: int) -> bool:
    """Rule 2b (#716): some commit from ``index`` on is back at or past the offset before the rewind."""
    before = window[index - 1].offset
    return any(e.offset >= before for e in window[index:])


def stopped(window: Sequence[WindowEntry], now_ms: int) -> bool:
    """Rule 3: time since the last commit is strictly greater than the span of the window."""
    first, last = window[0].timestamp, window[-1].timestamp
    return (now_ms - last) > (last - first)


def stalled(window: Sequence[WindowEntry]) -> bool:
    """Rule 4: every commit has the same offset (vacuously true for one commit)."""
    return all(window[i].offset == window[i - 1].offset for i in range(1, len(window)))


def lag_not_decreasing(window: Sequence[WindowEntry]) -> bool:
    """Rule 5: the non-nil lags never go down from one to the next."""
    lags = [e.lag for e in window if e.lag is not None]
    return all(lags[i] >= lags[i - 1] for i in range(1, len(lags)))


def recent_lag_zero(window: Sequence[WindowEntry], broker_offsets: Sequence[int]) -> bool:
    """#303: some recently fetched broker offset is at or below the last commit, i.e. it was caught up lately."""
    last = window[-1].offset
    return any(b <= last for b in broker_offsets)


def calculate_partition_status(
    window: Sequence[WindowEntry],
    broker_offsets: Sequence[int],
    current_lag: int,
    now_ms: int,
    allowed_lag: int = 0,
) -> tuple[Status, str]:
    """``calculatePartitionStatus`` over a non-empty window (oldest first); returns the status and the rule."""
    if current_lag <= allowed_lag:
        return Status.OK, "current-lag"
    if stopped(window, now_ms) and not recent_lag_zero(window, broker_offsets):
        return Status.STOP, "stop"
    index = rewind_index(window)
    if index > 0 and not rewind_recovered(window, index):
        return Status.REWIND, "rewind"
    if not lag_always_not_zero(window, allowed_lag):
        return Status.OK, "zero-lag"
    if stalled(window):
        return Status.STALL, "stall"
    if lag_not_decreasing(window):
        return Status.WARN, "warn"
    return Status.OK, "ok"


def evaluate_partition(
    ring: Sequence[WindowEntry | None],
    broker_offsets: Sequence[int],
    current_lag: int,
    now_ms: int,
    *,
    allowed_lag: int = 0,
    minimum_complete: float = 0.0,
) -> PartitionResult:
    """``evaluatePartitionStatus``: ``ring`` is the whole offset ring, oldest first, None for empty slots.

    Empty slots only ever lead (the ring fills from the end), so the window is the suffix from the first filled
    slot, and ``complete`` is its share of the ring. A partition below ``minimum-complete`` is OK unevaluated.
    """
    if not ring:
        return PartitionResult(Status.OK, 0.0, "empty")
    first = next((i for i, e in enumerate(ring) if e is not None), len(ring) - 1)
    window = [e for e in ring[first:] if e is not None]
    complete = len(ring[first:]) / len(ring) if first > 0 else 1.0
    if not window:
        return PartitionResult(Status.OK, complete, "empty")
    if complete < minimum_complete:
        return PartitionResult(Status.OK, complete, "incomplete")
    status, rule = calculate_partition_status(window, broker_offsets, current_lag, now_ms, allowed_lag)
    return PartitionResult(status, complete, rule)


def group_status(partition_statuses: Sequence[Status]) -> Status:
    """``evaluateConsumerStatus``: the worst partition status, with STOP/STALL/REWIND reported as ERR."""
    worst = max(partition_statuses, default=Status.OK)
    return Status.ERR if worst > Status.ERR else worst
