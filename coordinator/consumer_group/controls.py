"""Operator and test controls of consumer groups: fence a member now, force a new target assignment.

Each takes the coordinator's own path, so clients see what they would see in production, only sooner: an expired
member is fenced exactly as when its session timer fires (its records tombstoned, the group epoch bumped; the new
target comes with the next heartbeat, as in Kafka 4.4), and a forced assignment only bumps the group epoch through a
ConsumerGroupMetadata record, so the next heartbeat of any member computes a new target assignment (Kafka does the
same when a subscribed topic changes).
"""

from __future__ import annotations

from coordinator.consumer_group.heartbeat import ConsumerGroupHeartbeatMixin, _Change
from coordinator.consumer_group.views import ConsumerMemberView, member_views
from protocol.errors import ErrorCode


class ConsumerGroupControlsMixin(ConsumerGroupHeartbeatMixin):
    """Public controls; each returns False when the group or member does not exist (nothing happens)."""

    def expire_consumer_member_now(self, group_id: str, member_id: str) -> bool:
        """Fence the member as if its session timed out this instant."""
        group = self._live_consumer_group(group_id)
        member = None if group is None else group.member(member_id)
        if group is None or member is None:
            return False
        self._events.member_expired(group_id, member_id, member.instance_id, "expired by operator")
        self.expire_consumer_member(group, member, "expired by operator")
        return True

    def force_consumer_target_assignment(self, group_id: str, reason: str) -> bool:
        """Bump the group epoch (one ConsumerGroupMetadata record) so the next heartbeat computes a new target.

        False for an unknown or empty group: there is nobody to assign to."""
        group = self._live_consumer_group(group_id)
        if group is None or not group.members:
            return False
        snapshot = group.snapshot()
        change = _Change()
        change.bump_reasons.append(reason)
        self._bump_group_epoch(group, change)
        self._note_state(group)

        def written(error: ErrorCode) -> None:
            if error != ErrorCode.NONE:
                self._undo_write(group, snapshot)

        self._write(self._group_write(group, change.records, None, "consumer group target assignment forced", written))
        return True

    def consumer_member_views(self, group_id: str) -> list[ConsumerMemberView]:
        group = self._consumer_groups.get(group_id)
        return [] if group is None else member_views(group, self._timer.deadline)
