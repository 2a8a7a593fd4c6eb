"""Timer keys of consumer-group members (Kafka's `consumerGroupSessionTimeoutKey` / `...RebalanceTimeoutKey`)."""

from __future__ import annotations

from collections.abc import Hashable


def session_key(group_id: str, member_id: str) -> Hashable:
    """The member's session: re-armed by every heartbeat, fences the member when it fires."""
    return ("consumer-session", group_id, member_id)


def revocation_key(group_id: str, member_id: str) -> Hashable:
    """The member's rebalance timeout while it owes revocations: fences it if they are not confirmed in time."""
    return ("consumer-revocation", group_id, member_id)
