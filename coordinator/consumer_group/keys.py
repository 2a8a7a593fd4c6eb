"""Timer keys of consumer-group members (Kafka's `consumerGroupSessionTimeoutKey` / `...RebalanceTimeoutKey`)."""

from __future__ import annotations

from collections.abc import Hashable


def session_key(group_id: str, member_id: str) -> Hashable:
    """The member's session: re-armed by every heartbeat, fences the member when it fires."""
    return ("consumer-session", group_id, member_id)


def revocation_key(group_id: str, member_id: str) -> Hashable:
    """The member's rebalance timeout while it owes revocations: fences it if they are not confirmed in time."""
    return ("consumer-revocation", group_id, member_id)


def classic_join_key(group_id: str, member_id: str) -> Hashable:
    """A classic member told to rejoin (REBALANCE_IN_PROGRESS) has its rebalance timeout to send JoinGroup (M18)."""
    return ("consumer-classic-join", group_id, member_id)


def classic_sync_key(group_id: str, member_id: str) -> Hashable:
    """A classic member answered a JoinGroup has its rebalance timeout to send SyncGroup (M18)."""
    return ("consumer-classic-sync", group_id, member_id)
