"""`GroupMetadataManager`: the groups of this coordinator, classic and KIP-848 consumer groups (Kafka's manager of
the same name).

The manager is one class whose parts live in one file each, all over the state in `group_base.py`:

* `rebalance.py`: the delayed operations (join, heartbeat, sync) and the rebalance steps;
* `join.py` JoinGroup, `sync.py` SyncGroup, `membership.py` Heartbeat and LeaveGroup;
* `consumer_group/heartbeat.py` ConsumerGroupHeartbeat; `consumer_group/classic_members.py` the classic APIs
  for classic members of a consumer group, and `consumer_group/migration.py` the conversions between the two
  group types, both in front of the classic paths;
* `admin.py` DescribeGroups, ListGroups, DeleteGroups; `controls.py` operator controls (and
  `consumer_group/controls.py` those of consumer groups).

Operations that write return a `CoordinatorResult` for the runtime; writes the manager starts on its own (a timer
fired) go to the runtime's `write` it was built with. Besides the protocol, its public methods are what the
offset manager and the partition manager need: look a group up, create, kill or forget one, record a member's
liveness, install a loaded partition's groups and drop them when the partition goes.
"""

from __future__ import annotations

from coordinator.admin import AdminMixin
from coordinator.consumer_group.controls import ConsumerGroupControlsMixin
from coordinator.consumer_group.describe import ConsumerGroupDescribeMixin
from coordinator.consumer_group.group import ConsumerGroup, ConsumerGroupState
from coordinator.consumer_group.migration import ConsumerGroupMigrationMixin
from coordinator.consumer_group.subscriptions_regex import InvalidRegularExpression
from coordinator.controls import ControlsMixin
from coordinator.group import ClassicGroup
from coordinator.keys import heartbeat_key, join_key, sync_key
from coordinator.member import ClassicMember
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.join_group import JoinGroupResponse
from protocol.messages.sync_group import SyncGroupResponse


class GroupMetadataManager(
    ConsumerGroupMigrationMixin,
    AdminMixin,
    ControlsMixin,
    ConsumerGroupControlsMixin,
    ConsumerGroupDescribeMixin,
):
    """The classic and consumer groups of the partitions this coordinator owns."""

    def record_liveness(self, member: ClassicMember) -> None:
        """An OffsetCommit from the member proves it alive in Stable/PreparingRebalance (#27)."""
        self._reschedule_heartbeat(member)

    def install(self, groups: dict[str, ClassicGroup]) -> None:
        """Serve a loaded partition's groups: fresh session deadlines, a rebalance for groups over capacity."""
        for group_id, group in groups.items():
            self._groups[group_id] = group
            self._refresh_subscriptions(group)
            for member in group.members.values():
                self._arm_member(group, member)
                self._reschedule_heartbeat(member)
            self._events.group_loaded(
                group_id, group.state.value, group.generation_id, len(group.members), len(group.offsets)
            )
            if len(group.members) > self._config.group_max_size:
                self._prepare_rebalance(
                    group,
                    f"freshly-loaded group is over capacity ({len(group.members)} > {self._config.group_max_size})",
                )

    def install_consumer_groups(self, groups: dict[str, ConsumerGroup]) -> None:
        """K57: serve a loaded partition's consumer groups: every member gets a full session from now, a member
        owing revocations its rebalance timeout (a classic member too: Kafka 4.4's onLoaded arms it for every
        UNREVOKED_PARTITIONS member, whatever its protocol), and regular expressions are resolved again (they are
        not persisted here) without moving the epoch, so the group resumes with the epochs it had."""
        names = list(self._topics.names())
        for group_id, group in groups.items():
            for regex in sorted(group.regexes()):
                resolved = self._regexes.resolve(regex, names)
                if not isinstance(resolved, InvalidRegularExpression):
                    group.resolved_regexes[regex] = frozenset(resolved)
            group.metadata_version_seen = -1
            self._consumer_groups[group_id] = group
            self._rearm_member_timers(group, classic_sessions=False)
            self._events.group_loaded(
                group_id, group.state.value, group.group_epoch, len(group.members), len(group.offsets)
            )

    def drop_partition(self, partition: int) -> int:
        """Mark `partition`'s groups Dead and answer their parked requests (NOT_COORDINATOR, #47); how many."""
        doomed = [g for g in self._groups.values() if g.partition == partition]
        for group in doomed:
            group_id = group.group_id
            old = group.state
            if old is not GroupState.DEAD:
                group.transition_to(GroupState.DEAD, self._wall_ms)
            for member in list(group.members.values()):
                group.complete_join(
                    member, JoinGroupResponse(error_code=ErrorCode.NOT_COORDINATOR, member_id=member.member_id)
                )
                group.complete_sync(member, SyncGroupResponse(error_code=ErrorCode.NOT_COORDINATOR))
                self._timer.cancel(member.heartbeat_key)
            for member_id in group.pending_members:
                self._timer.cancel(heartbeat_key(group_id, member_id))
            self._timer.cancel(join_key(group_id))
            self._timer.cancel(sync_key(group_id))
            del self._groups[group_id]
            self._events.group_unloaded(group_id, old.value, group.generation_id)
        consumer_doomed = [g for g in self._consumer_groups.values() if g.partition == partition]
        for consumer_group in consumer_doomed:
            old_state = consumer_group.state
            consumer_group.state = ConsumerGroupState.DEAD
            for member_id in consumer_group.members:
                self._cancel_consumer_timers(consumer_group.group_id, member_id)
            del self._consumer_groups[consumer_group.group_id]
            self._events.group_unloaded(consumer_group.group_id, old_state.value, consumer_group.group_epoch)
        return len(doomed) + len(consumer_doomed)
