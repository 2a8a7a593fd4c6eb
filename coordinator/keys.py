"""The timer keys of the coordinator's delayed operations (Kafka's `classicGroupJoinKey`, `...SyncKey`, ...).

One keyed timer drives every delayed operation (architecture.md Decision 5); a key names what a deadline is for, so
scheduling under it replaces the previous deadline and tests (and the broker's timeline) can read it back.
"""

from __future__ import annotations

from collections.abc import Hashable

RETENTION_KEY: Hashable = ("retention",)


def heartbeat_key(group_id: str, member_id: str) -> Hashable:
    """Session expiry of a member, or expiry of a pending (MEMBER_ID_REQUIRED) member id."""
    return ("heartbeat", group_id, member_id)


def join_key(group_id: str) -> Hashable:
    """The delayed join: rebalance timeout, or the initial rebalance delay of an Empty group."""
    return ("join", group_id)


def sync_key(group_id: str) -> Hashable:
    """The pending-sync timeout: members that got a JoinGroup response must send SyncGroup in time (#24)."""
    return ("sync", group_id)


def append_key(token: int) -> Hashable:
    """The `offsets.commit.timeout.ms` guard of one in-flight append (owned by the runtime)."""
    return ("append", token)
