"""The coordinator's reading of the caller's clocks, shared by its managers as Kafka's managers share `Time`.

The façade stores each call's `now_ms` (monotonic) and wall-clock reading here before delegating, and managers read
them for deadlines and persisted timestamps. `now_ms` must never go backwards. Wall-clock time is only used for what
Kafka persists (commit and state timestamps) and for retention.
"""

from __future__ import annotations


class TimeRegister:
    """The last monotonic and wall-clock readings the coordinator was given."""

    __slots__ = ("_wall_offset_ms", "now_ms", "wall_ms")

    def __init__(self) -> None:
        self.now_ms = 0
        self.wall_ms = 0
        self._wall_offset_ms = 0

    def advance(self, now_ms: int, wall_ms: int | None) -> None:
        """Record the caller's readings; without a wall reading, extrapolate from the last one."""
        assert now_ms >= self.now_ms, f"monotonic time went backwards: {now_ms} < {self.now_ms}"
        self.now_ms = now_ms
        if wall_ms is None:
            self.wall_ms = now_ms + self._wall_offset_ms
        else:
            self.wall_ms = wall_ms
            self._wall_offset_ms = wall_ms - now_ms
