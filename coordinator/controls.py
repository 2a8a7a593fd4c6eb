"""Operator and test controls: make things happen now that would otherwise need waiting or a failure.

A test of consumer-group code wants to say "this member's session expired" or "rebalance now" without waiting
45 seconds or killing a process. These controls reuse the exact paths Kafka takes (session expiry, a rebalance
with a reason), so what clients see is what they would see in production, only sooner. They also expose what a
rebalance is waiting for, which the broker's timeline shows.
"""

from __future__ import annotations

from dataclasses import dataclass

from coordinator.rebalance import RebalanceMixin
from coordinator.state import GroupState


@dataclass(frozen=True, slots=True)
class MemberView:
    """One member as an operator sees it: what it is doing and when its session timer fires."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    awaiting_join: bool
    awaiting_sync: bool
    session_deadline_ms: int | None


class ControlsMixin(RebalanceMixin):
    """Public controls; each returns False when the group or member does not exist (nothing happens)."""

    def expire_member_now(self, group_id: str, member_id: str) -> bool:
        """Treat the member as if its session timed out this instant (it is removed, as Kafka removes it)."""
        group = self._groups.get(group_id)
        if group is None or group.is_in(GroupState.DEAD):
            return False
        member = group.members.get(member_id)
        if member is None:
            return False
        self._events.member_expired(group_id, member_id, member.group_instance_id, "expired by operator")
        self._remove_member_and_update_group(group, member, f"removing member {member_id}: expired by operator")
        return True

    def force_rebalance(self, group_id: str, reason: str = "forced by operator") -> bool:
        """Start a rebalance of a Stable or CompletingRebalance group; members learn it on their next heartbeat."""
        group = self._groups.get(group_id)
        if group is None or not group.members:
            return False
        if group.state not in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            return False
        self._prepare_rebalance(group, reason)
        return True

    def member_views(self, group_id: str) -> list[MemberView]:
        group = self._groups.get(group_id)
        if group is None:
            return []
        return [
            MemberView(
                member_id=member.member_id,
                group_instance_id=member.group_instance_id,
                client_id=member.client_id,
                client_host=member.client_host,
                awaiting_join=member.is_awaiting_join,
                awaiting_sync=member.is_awaiting_sync,
                session_deadline_ms=self._timer.deadline(member.heartbeat_key),
            )
            for member in group.members.values()
        ]

    def waiting_for(self, group_id: str) -> list[str]:
        """Members the current rebalance still waits for: not yet rejoined (PreparingRebalance) or not yet
        synced (CompletingRebalance); empty when no rebalance is in progress."""
        group = self._groups.get(group_id)
        if group is None:
            return []
        if group.is_in(GroupState.PREPARING_REBALANCE):
            return [m.member_id for m in group.members.values() if not m.is_awaiting_join]
        if group.is_in(GroupState.COMPLETING_REBALANCE):
            return [m.member_id for m in group.members.values() if not m.is_awaiting_sync]
        return []
