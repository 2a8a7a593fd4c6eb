"""Online migration between classic and consumer groups (KIP-848; rules M1-M43 of the migration table).

A group id holds one group type at a time, and the request that arrives decides when it changes type, as in
Kafka's GroupMetadataManager:

* a joining ConsumerGroupHeartbeat (epoch 0) on an EMPTY classic group (a simple, offsets-only group included)
  replaces it by a new consumer group, whatever `group.consumer.migration.policy` says (M40);
* a classic JoinGroup on an EMPTY consumer group replaces it by a new classic group, also under every policy (M41).

Both keep the group's committed offsets (the `GroupOffsets` object moves to the new group: offsets are keyed by
group id in the log and are never tombstoned by a conversion; Kafka 4.4 over the wire agrees) and write the old
group's tombstones first, in the same append as the request's own records. A conversion is undone exactly when the
request fails or its write does, so the old group is served again as if nothing happened.

This mixin sits in front of the classic and consumer-group request paths: it overrides the entry points, converts
when the rules say so, and otherwise hands the request on unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coordinator.consumer_group.classic_conversion import (
    classic_group_from,
    consumer_group_records,
    fill_from_classic,
    upgrade_error,
)
from coordinator.consumer_group.classic_members import ConsumerGroupClassicMembersMixin
from coordinator.consumer_group.group import ConsumerGroup, ConsumerGroupSnapshot
from coordinator.consumer_group.heartbeat import refused
from coordinator.consumer_group.member import JOIN_GROUP_MEMBER_EPOCH, ConsumerGroupMember
from coordinator.consumer_group.records import group_tombstones, member_tombstones
from coordinator.context import RequestContext
from coordinator.errors import GroupError
from coordinator.group import ClassicGroup
from coordinator.keys import join_key, sync_key
from coordinator.records import CoordinatorRecord, group_metadata_record, group_metadata_tombstone
from coordinator.result import AppendOutcome, CoordinatorResult
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
from protocol.messages.sync_group import SyncGroupResponse

Undo = Callable[[], None]

UPGRADE_POLICIES = ("upgrade", "bidirectional")
DOWNGRADE_POLICIES = ("downgrade", "bidirectional")


class ConsumerGroupMigrationMixin(ConsumerGroupClassicMembersMixin):
    """Converts a group from one type to the other when a request of the other protocol arrives."""

    _downgrades: dict[str, tuple[ConsumerGroup, ClassicGroup]]
    """The last downgrade of each group id, until its write fails (then it is undone); a later downgrade of the
    same id replaces it, so at most one entry per group id is kept."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._downgrades = {}

    # -- ConsumerGroupHeartbeat on a classic group's id ------------------------------------------------------

    def _serve_heartbeat(
        self, ctx: RequestContext, request: ConsumerGroupHeartbeatRequest
    ) -> CoordinatorResult[ConsumerGroupHeartbeatResponse]:
        """M1/M2: a joining heartbeat for a classic group's id (already past K2-K5 and the partition gate, so a
        refused request converts nothing) converts that group first (M40), then runs as for any consumer group;
        a heartbeat that fails undoes the conversion."""
        classic = self._groups.get(request.group_id)
        if classic is None or classic.is_in(GroupState.DEAD) or request.member_epoch != JOIN_GROUP_MEMBER_EPOCH:
            return super()._serve_heartbeat(ctx, request)
        try:
            if classic.is_in(GroupState.EMPTY):
                records, undo = self._replace_empty_classic_group(classic)
            else:
                self._validate_online_upgrade(classic)
                records, undo = self._upgrade_classic_group(classic)
        except GroupError as e:
            return refused(e)
        try:
            result = super()._serve_heartbeat(ctx, request)
        except GroupError as e:
            result = refused(e)
        return _with_conversion(result, classic.partition, records, undo, _heartbeat_failed)

    def _replace_empty_classic_group(self, classic: ClassicGroup) -> tuple[list[CoordinatorRecord], Undo]:
        """M40: drop the empty classic group for a new consumer group that takes over its offsets; the classic
        group's tombstone to write first, and how to put everything back. (Ids handed out with MEMBER_ID_REQUIRED
        keep their expiry timers: those find no classic group and do nothing, or find it again after an undo.)"""
        group_id = classic.group_id
        self.forget_group(classic, "converted to a consumer group: ConsumerGroupHeartbeat on the empty classic group")
        consumer = self.create_consumer_group(group_id, "converted from the empty classic group")
        consumer.offsets = classic.offsets

        def undo() -> None:
            self._forget_consumer_group(consumer, "conversion from the classic group undone: the request failed")
            self._groups[group_id] = classic
            self._events.group_created(group_id, classic.partition, "conversion to a consumer group undone")

        return [group_metadata_tombstone(group_id)], undo

    def _validate_online_upgrade(self, classic: ClassicGroup) -> None:
        """M3: policy, protocol type, size; each refusal is GROUP_ID_NOT_FOUND with Kafka's message."""
        group_id = classic.group_id
        if self._config.consumer_group_migration_policy not in UPGRADE_POLICIES:
            raise upgrade_error(group_id, "online upgrade is disabled.")
        if not classic.uses_consumer_protocol:
            raise upgrade_error(group_id, "the group does not use the consumer embedded protocol.")
        if len(classic.members) > self._config.consumer_group_max_size:
            raise upgrade_error(group_id, "the group size exceeds the consumer group maximum size.")

    def _upgrade_classic_group(self, classic: ClassicGroup) -> tuple[list[CoordinatorRecord], Undo]:
        """M5-M9b: the classic group becomes a consumer group at its generation; parked JoinGroup/SyncGroup are
        told to rejoin, each member keeps its classic session timeout. Returns the records (classic tombstone,
        then the converted group) and the undo."""
        group_id = classic.group_id
        consumer = ConsumerGroup(group_id, classic.partition, state_timestamp_ms=self._wall_ms)
        fill_from_classic(consumer, classic, self._topics)
        consumer.offsets = classic.offsets
        for member in classic.members.values():
            classic.complete_join(
                member, JoinGroupResponse(error_code=ErrorCode.REBALANCE_IN_PROGRESS, member_id=member.member_id)
            )
            classic.complete_sync(member, SyncGroupResponse(error_code=ErrorCode.REBALANCE_IN_PROGRESS))
            self._timer.cancel(member.heartbeat_key)
        self._timer.cancel(join_key(group_id))
        self._timer.cancel(sync_key(group_id))
        self.forget_group(classic, "upgraded to a consumer group by a ConsumerGroupHeartbeat")
        self._consumer_groups[group_id] = consumer
        self._events.group_created(
            group_id, consumer.partition, f"upgraded from classic generation {classic.generation_id}"
        )
        self._note_state(consumer)
        for converted in consumer.members.values():
            assert converted.classic is not None
            self._schedule_session(group_id, converted.member_id, converted.classic.session_timeout_ms)

        def undo() -> None:
            for member_id in list(consumer.members):
                self._cancel_consumer_timers(group_id, member_id)
            self._forget_consumer_group(consumer, "upgrade undone: the heartbeat failed")
            self._groups[group_id] = classic
            self._events.group_created(group_id, classic.partition, "upgrade to a consumer group undone")
            for member in classic.members.values():
                self._reschedule_heartbeat(member)
            if classic.is_in(GroupState.PREPARING_REBALANCE):
                self._schedule_join_timeout(classic)
            elif classic.is_in(GroupState.COMPLETING_REBALANCE):
                self._prepare_rebalance(classic, "the upgrade to a consumer group failed")

        return [group_metadata_tombstone(group_id), *consumer_group_records(consumer)], undo

    # -- downgrade: the last consumer-protocol member leaves -------------------------------------------------

    def _fence_members(
        self, group: ConsumerGroup, members: list[ConsumerGroupMember], reason: str
    ) -> list[CoordinatorRecord]:
        """M30: every removal of members (leave -1, LeaveGroup, session/rebalance/join/sync timers) may leave only
        classic members: then the group becomes a classic group instead (M31-M34)."""
        leaving = {m.member_id for m in members}
        remaining = [m for m in group.members.values() if m.member_id not in leaving]
        if not self._can_downgrade(group, remaining):
            return super()._fence_members(group, members, reason)
        leaving_reason = f"Downgrade group {group.group_id} from consumer to classic for member leaving."
        return self._downgrade(group, remaining, reason, leaving_reason)

    def _can_downgrade(self, group: ConsumerGroup, remaining: list[ConsumerGroupMember]) -> bool:
        """M31: only classic members remain (at least one), the policy allows it, and they fit group.max.size.
        A refusal is silent to clients; it is logged."""
        if not remaining or any(m.classic is None for m in remaining):
            return False
        return self._downgrade_allowed(group, remaining)

    def _downgrade_allowed(self, group: ConsumerGroup, members: list[ConsumerGroupMember]) -> bool:
        """M31(3)/(4): the policy allows a downgrade and the classic group's `members` fit group.max.size
        (refusals logged). They must also share a protocol for the classic group to select: joins make sure
        they do, so only a damaged log can break that, and the group then stays a consumer group."""
        if self._config.consumer_group_migration_policy not in DOWNGRADE_POLICIES:
            self._events.group_conversion_skipped(group.group_id, "classic", "the online downgrade is disabled")
            return False
        if len(members) > self._config.group_max_size:
            self._events.group_conversion_skipped(
                group.group_id, "classic", "its group size is greater than classic group max size"
            )
            return False
        if not _protocols_agree(members):
            self._events.group_conversion_skipped(group.group_id, "classic", "its classic members share no protocol")
            return False
        return True

    def _may_downgrade_replacing(self, group: ConsumerGroup, replaced: ConsumerGroupMember) -> bool:
        """M27 (Kafka 4.4 `validateOnlineDowngradeWithReplacedMember`): a classic JoinGroup whose instance id
        belongs to `replaced` downgrades the group when `replaced` is a consumer-protocol member and every other
        member is classic, the policy allows downgrades and the group fits group.max.size."""
        others = (m for m in group.members.values() if m.instance_id != replaced.instance_id)
        return (
            replaced.classic is None
            and all(m.classic is not None for m in others)
            and self._downgrade_allowed(group, list(group.members.values()))
        )

    def _downgrade_replacing(self, group: ConsumerGroup, joiner: ConsumerGroupMember) -> list[CoordinatorRecord]:
        """M27: the classic group takes the joiner in the replaced member's place (last, as Kafka's
        `fromConsumerGroup` adds it). A target still at the group epoch (same subscription) leaves it Stable; a
        stale one (the join bumped the epoch) makes it rebalance, with Kafka 4.4's reason."""
        members = [m for m in group.members.values() if m.member_id != joiner.member_id]
        members.append(joiner)
        stale = group.assignment_epoch < group.group_epoch
        rebalance = (
            f"Downgrade group {group.group_id} from consumer to classic with stale assignment." if stale else None
        )
        return self._downgrade(group, members, "a static member was replaced by a classic member", rebalance)

    def _downgrade(
        self,
        group: ConsumerGroup,
        remaining: list[ConsumerGroupMember],
        reason: str,
        rebalance: str | None,
    ) -> list[CoordinatorRecord]:
        """M32-M34: tombstone the whole consumer group, write ONE classic group record, serve the classic group
        and, with a `rebalance` reason, start a rebalance so the classic members rejoin through the classic path.
        Generation = the consumer group epoch (a leave does not bump it)."""
        group_id = group.group_id
        records: list[CoordinatorRecord] = []
        for member_id in list(group.members):
            self._cancel_consumer_timers(group_id, member_id)
            records.extend(member_tombstones(group_id, member_id))
        records.extend(group_tombstones(group_id))
        classic, assignments = classic_group_from(group, remaining, self._topics, self._wall_ms)
        classic.offsets = group.offsets
        records.append(group_metadata_record(classic, assignments))
        self._downgrades[group_id] = (group, classic)
        self._forget_consumer_group(group, f"downgraded to a classic group: {reason}")
        self._groups[group_id] = classic
        self._events.group_created(
            group_id, classic.partition, f"downgraded from consumer group epoch {group.group_epoch}"
        )
        self._refresh_subscriptions(classic)
        for member in classic.members.values():
            self._arm_member(classic, member)
            self._reschedule_heartbeat(member)
        if rebalance is not None:
            self._prepare_rebalance(classic, rebalance)
        return records

    def _write_durable(self, group: ConsumerGroup) -> None:
        """A downgrade is kept only until the write carrying it has an outcome."""
        downgrade = self._downgrades.get(group.group_id)
        if downgrade is not None and downgrade[0] is group:
            del self._downgrades[group.group_id]

    def _restore_consumer_group(self, group: ConsumerGroup, snapshot: ConsumerGroupSnapshot) -> None:
        """The write that carried a downgrade failed: serve the consumer group again (every member with a fresh
        session), drop the classic group, then restore the group as before the removal."""
        downgrade = self._downgrades.pop(group.group_id, None)
        if downgrade is not None and downgrade[0] is group and self._groups.get(group.group_id) is downgrade[1]:
            classic = downgrade[1]
            for member in list(classic.members.values()):
                self._drop_member(classic, member)
            self._timer.cancel(join_key(group.group_id))
            self._timer.cancel(sync_key(group.group_id))
            self.forget_group(classic, "downgrade undone: its write failed")
            self._consumer_groups[group.group_id] = group
            self._events.group_created(group.group_id, group.partition, "downgrade to a classic group undone")
            super()._restore_consumer_group(group, snapshot)
            self._rearm_member_timers(group)
            return
        super()._restore_consumer_group(group, snapshot)

    # -- JoinGroup on a consumer group's id ------------------------------------------------------------------

    def join_group(self, ctx: RequestContext, request: JoinGroupRequest) -> CoordinatorResult[JoinGroupResponse]:
        """M12/M41: a classic JoinGroup on an EMPTY consumer group replaces it by a classic group and joins that
        one; if the join leaves no member behind (refused, or a member id that cannot create a group), the
        consumer group is put back and nothing is written."""
        consumer = self._live_consumer_group(request.group_id)
        if consumer is None or not consumer.is_empty:
            return super().join_group(ctx, request)
        records, undo = self._replace_empty_consumer_group(consumer)
        result = super().join_group(ctx, request)
        classic = self._groups.get(request.group_id)
        if classic is None or (not classic.members and not classic.pending_members):
            undo()
            return result
        return _with_conversion(result, consumer.partition, records, undo, None)

    def _replace_empty_consumer_group(self, consumer: ConsumerGroup) -> tuple[list[CoordinatorRecord], Undo]:
        """M41: drop the empty consumer group for a new, empty classic group with its offsets, which the JoinGroup
        then joins as it would a group it created itself."""
        group_id = consumer.group_id
        self._forget_consumer_group(consumer, "converted to a classic group: JoinGroup on the empty consumer group")
        classic = self.create_group(group_id, "converted from the empty consumer group")
        classic.offsets = consumer.offsets

        def undo() -> None:
            if self._groups.get(group_id) is classic:
                if classic.members:
                    return  # in use: its own group record, written later, supersedes the consumer group's
                self.forget_group(classic, "conversion from the consumer group undone")
            self._consumer_groups[group_id] = consumer
            self._events.group_created(group_id, consumer.partition, "conversion to a classic group undone")

        return group_tombstones(group_id), undo


def _protocols_agree(members: list[ConsumerGroupMember]) -> bool:
    """Whether the classic members among `members` support at least one protocol in common (true when there are
    none: M27's consumer-protocol member is replaced by a joiner the classic join path already checked)."""
    shared: set[str] | None = None
    for member in members:
        if member.classic is not None:
            names = {name for name, _metadata in member.classic.protocols}
            shared = names if shared is None else shared & names
    return shared is None or bool(shared)


def _heartbeat_failed(response: Any) -> bool:
    return isinstance(response, ConsumerGroupHeartbeatResponse) and response.error_code != ErrorCode.NONE


def _with_conversion(
    result: CoordinatorResult[Any],
    partition: int,
    records: list[CoordinatorRecord],
    undo: Undo,
    failed: Callable[[Any], bool] | None,
) -> CoordinatorResult[Any]:
    """The request's result with the conversion's records in front; undone at once if the request failed (a
    failed request writes nothing, as Kafka discards its records), or later if the write fails."""
    if failed is not None and failed(result.response):
        undo()
        return result
    inner: AppendOutcome | None = result.on_append

    def written(error: ErrorCode) -> None:
        if inner is not None:
            inner(error)
        if error != ErrorCode.NONE:
            undo()

    return CoordinatorResult(
        [*records, *result.records],
        result.response,
        partition,
        result.purpose or "group type conversion",
        written,
    )
