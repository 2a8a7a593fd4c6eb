"""`RequestContext`: what the coordinator needs to know about a request besides its body.

Kafka's managers receive a `RequestContext` with the client id, the client address and the API version; the
coordinator needs the version wherever behaviour changed between versions (JoinGroup v0 rebalance timeout, v4+
MEMBER_ID_REQUIRED, v9 SkipAssignment; LeaveGroup v0-2 vs v3+; OffsetCommit v9 GROUP_ID_NOT_FOUND; SyncGroup v5
protocol checks; OffsetFetch v8 groups). `wall_ms` is the broker's wall-clock reading when the request was
handled, for the timestamps Kafka persists (commit timestamps, the group's state timestamp); deadlines use the
separate monotonic `now_ms` argument.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RequestContext:
    """Per-request facts from the broker: who is asking, with which API version, and when (wall clock)."""

    api_version: int
    """The request's API version (the coordinator's inputs are version-independent dataclasses)."""
    client_id: str = ""
    """The request header's client id (dynamic member ids start with it)."""
    client_host: str = ""
    """The peer address as the broker wants it shown (Kafka shows "/127.0.0.1")."""
    wall_ms: int | None = None
    """Wall-clock milliseconds when the broker handled the request; None: extrapolate from the last reading."""
