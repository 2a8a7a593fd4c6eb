"""Classic-protocol members inside a consumer group (KIP-848 online migration; rules M12-M24, M39).

During a rolling upgrade a consumer group holds members of both protocols. The classic ones keep speaking
JoinGroup/SyncGroup/Heartbeat/LeaveGroup, and Kafka serves them from the consumer group's state:

* JoinGroup is a full "heartbeat" of that member (its subscription and owned partitions, read from the first
  protocol's ConsumerProtocol metadata) through the same steps as a ConsumerGroupHeartbeat: epoch bump, target
  assignment by the server-side assignor, one reconciliation step. It is answered at once (no join barrier),
  with generation = the member's epoch, no leader and no member list: every classic member is a follower;
* SyncGroup hands out the member's CURRENT partitions (never one still held by another member), encoded in the
  member's ConsumerProtocol version; the leader's assignments, if any, are ignored;
* Heartbeat keeps the session (the member's classic session timeout) and answers REBALANCE_IN_PROGRESS while
  the member has something to do (a newer group epoch, partitions to revoke, free partitions to pick up);
* LeaveGroup fences the named members (either protocol) with one group-epoch bump.

A classic member has no revocation timer; instead a join timer (rebalance timeout, from the first
REBALANCE_IN_PROGRESS until its JoinGroup) and a sync timer (rebalance timeout, from JoinGroup until SyncGroup)
fence it when it does not follow through.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from coordinator.consumer_group.classic_conversion import (
    encode_partitions,
    names_to_partitions,
    parse_subscription,
    subscription_version,
)
from coordinator.consumer_group.group import ConsumerGroup
from coordinator.consumer_group.heartbeat import ConsumerGroupHeartbeatMixin, _Change, static_owner
from coordinator.consumer_group.keys import classic_join_key, classic_sync_key
from coordinator.consumer_group.member import ClassicProtocols, ConsumerGroupMember
from coordinator.consumer_group.member_state import MemberState
from coordinator.consumer_group.records import assignment_partitions, topic_partitions
from coordinator.context import RequestContext
from coordinator.errors import GroupError
from coordinator.group import CONSUMER_PROTOCOL_TYPE
from coordinator.join import REQUIRE_KNOWN_MEMBER_ID_VERSION, JoinMixin
from coordinator.member import Protocols
from coordinator.membership import MULTI_MEMBER_LEAVE_VERSION, MembershipMixin
from coordinator.records import CoordinatorRecord
from coordinator.result import CoordinatorResult
from coordinator.sync import MANDATORY_PROTOCOL_VERSION, SyncMixin
from protocol.errors import DecodeError, ErrorCode
from protocol.kafka_uuid import kafka_uuid_to_str
from protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest, TopicPartitions
from protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
from protocol.messages.leave_group import LeaveGroupRequest, LeaveGroupResponse, MemberIdentity, MemberResponse
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse

DISABLED_POLICY = "disabled"


class ConsumerGroupClassicMembersMixin(JoinMixin, SyncMixin, MembershipMixin, ConsumerGroupHeartbeatMixin):
    """The classic group APIs for a group id held by a (non-empty) consumer group."""

    def _serving_consumer_group(self, group_id: str) -> ConsumerGroup | None:
        group = self._live_consumer_group(group_id)
        return None if group is None or group.is_empty else group

    # -- JoinGroup -------------------------------------------------------------------------------------------

    def join_group(self, ctx: RequestContext, request: JoinGroupRequest) -> CoordinatorResult[JoinGroupResponse]:
        """M12: a JoinGroup for a non-empty consumer group joins it as a classic member."""
        group = self._serving_consumer_group(request.group_id)
        if group is None:
            return super().join_group(ctx, request)
        error = self._gate(request.group_id, allow_empty_id=False)
        if error is None and not (
            self._config.group_min_session_timeout_ms
            <= request.session_timeout_ms
            <= self._config.group_max_session_timeout_ms
        ):
            error = ErrorCode.INVALID_SESSION_TIMEOUT
        if error is not None:
            return CoordinatorResult.of(JoinGroupResponse(error_code=error, member_id=request.member_id))
        try:
            return self._classic_join(ctx, request, group)
        except GroupError as e:
            return CoordinatorResult.of(JoinGroupResponse(error_code=e.code, member_id=""))

    def _classic_join(
        self, ctx: RequestContext, request: JoinGroupRequest, group: ConsumerGroup
    ) -> CoordinatorResult[JoinGroupResponse]:
        """M14-M18 in Kafka's order: policy, size, protocols, member id, member, then the heartbeat steps."""
        if self._config.consumer_group_migration_policy == DISABLED_POLICY:
            # M39 (KAFKA-20640; Kafka 4.4.0 answers this over the wire): no classic member in a consumer group.
            raise GroupError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        self._check_group_capacity(group, request.member_id)
        protocols: Protocols = tuple((p.name, p.metadata) for p in request.protocols)
        if request.protocol_type != CONSUMER_PROTOCOL_TYPE or not protocols or not _supported(group, protocols):
            raise GroupError(
                ErrorCode.INCONSISTENT_GROUP_PROTOCOL, f"Member {request.member_id}'s protocols are not supported."
            )
        member_id = request.member_id
        instance_id = request.group_instance_id
        if not member_id:
            member_id = kafka_uuid_to_str(self._ids.new_uuid())
            if instance_id is None and ctx.api_version >= REQUIRE_KNOWN_MEMBER_ID_VERSION:
                return CoordinatorResult.of(
                    JoinGroupResponse(error_code=ErrorCode.MEMBER_ID_REQUIRED, member_id=member_id)
                )
        try:
            subscription = parse_subscription(protocols[0][1])
        except (DecodeError, ValueError) as e:
            raise GroupError(
                ErrorCode.UNKNOWN_SERVER_ERROR, "Malformed embedded consumer protocol in subscription deserialization."
            ) from e
        snapshot = group.snapshot()
        change = _Change()
        replaced = None if instance_id is None else group.static_member(instance_id)
        try:
            member, is_new = self._classic_member_for_join(group, request, member_id, change)
            downgrade = replaced is not None and self._may_downgrade_replacing(group, replaced)
            updated = replace(
                member,
                rack_id=subscription.rack_id,
                client_id=ctx.client_id,
                client_host=ctx.client_host,
                subscribed_topic_names=tuple(sorted(set(subscription.topics))),
                subscribed_topic_regex=None,
                rebalance_timeout_ms=request.session_timeout_ms
                if ctx.api_version == 0
                else request.rebalance_timeout_ms,
                server_assignor=None,
                classic=ClassicProtocols(request.session_timeout_ms, protocols),
            )
            owned = self._owned_wire((t.topic, t.partitions) for t in subscription.owned_partitions)
            heartbeat = ConsumerGroupHeartbeatRequest(
                group_id=group.group_id, member_id=member_id, topic_partitions=owned
            )
            reconciled = self._apply_member_update(
                group, heartbeat, member, updated, is_new, change, downgrading=downgrade
            )
        except GroupError:
            self._restore_consumer_group(group, snapshot)
            raise
        group_id = group.group_id
        self._timer.cancel(classic_join_key(group_id, member_id))
        if downgrade:
            change.records.extend(self._downgrade_replacing(group, reconciled))
        else:
            self._schedule_session(group_id, member_id, request.session_timeout_ms)
            self._schedule_fence(
                classic_sync_key(group_id, member_id),
                group_id,
                member_id,
                None,
                updated.rebalance_timeout_ms,
                "the member failed to sync within timeout",
            )
        response = JoinGroupResponse(
            member_id=member_id,
            generation_id=reconciled.member_epoch,
            protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocol_name=protocols[0][0],
            leader="",
            members=[],
        )

        def written(error: ErrorCode) -> None:
            if error == ErrorCode.NONE:
                return
            self._undo_write(group, snapshot)
            if self._consumer_groups.get(group_id) is not group:
                return
            self._timer.cancel(classic_sync_key(group_id, member_id))
            response.error_code = error
            response.generation_id = -1
            response.protocol_name = None

        return self._group_write(group, change.records, response, "classic member join", written)

    def _may_downgrade_replacing(self, group: ConsumerGroup, replaced: ConsumerGroupMember) -> bool:
        """M27 (`validateOnlineDowngradeWithReplacedMember`): whether this join turns the group into a classic
        group; never here, migration.py decides."""
        return False

    def _downgrade_replacing(self, group: ConsumerGroup, joiner: ConsumerGroupMember) -> list[CoordinatorRecord]:
        """M27: turn the group into a classic group with `joiner` in the replaced member's place (migration.py)."""
        raise NotImplementedError("only called when _may_downgrade_replacing said yes")

    def _owned_wire(self, entries: Iterable[tuple[str, Iterable[int]]]) -> list[TopicPartitions]:
        """Owned partitions (topic names) as a heartbeat's TopicPartitions (topic ids); unknown topics dropped."""
        partitions = names_to_partitions(self._topics, entries)
        return topic_partitions(partitions, lambda t, p: TopicPartitions(topic_id=t, partitions=p))

    def _classic_member_for_join(
        self, group: ConsumerGroup, request: JoinGroupRequest, member_id: str, change: _Change
    ) -> tuple[ConsumerGroupMember, bool]:
        """M15 member lookup: any dynamic member id is accepted (created if unknown); a static member with an
        unknown member id is new or replaces the instance's member at once; a known one must own the instance."""
        instance_id = request.group_instance_id
        if instance_id is None:
            existing = group.member(member_id)
            return (existing, False) if existing is not None else (ConsumerGroupMember(member_id), True)
        if request.member_id:
            return static_owner(group, instance_id, member_id), False
        owner = group.static_member(instance_id)
        if owner is None:
            return ConsumerGroupMember(member_id, instance_id=instance_id), True
        return self._replace_static_consumer_member(group, owner, member_id, change), False

    # -- SyncGroup and Heartbeat -----------------------------------------------------------------------------

    def _classic_member(self, group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerGroupMember:
        """M19 lookup (`validateConsumerGroupMember`), and the member must speak the classic protocol."""
        if instance_id is None:
            member = group.member(member_id)
            if member is None:
                raise GroupError(
                    ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}."
                )
        else:
            member = group.static_member(instance_id)
            if member is None:
                raise GroupError(
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    f"Member with instance id {instance_id} is not a member of group {group.group_id}.",
                )
            if member.member_id != member_id:
                raise GroupError(ErrorCode.FENCED_INSTANCE_ID)
        if member.classic is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} does not use the classic protocol.")
        return member

    def _check_generation(self, member: ConsumerGroupMember, generation_id: int) -> None:
        if generation_id != member.member_epoch:
            raise GroupError(
                ErrorCode.ILLEGAL_GENERATION,
                f"The request generation id {generation_id} is not equal to the member epoch"
                f" {member.member_epoch} of member {member.member_id}.",
            )

    def _ask_to_rejoin(self, group: ConsumerGroup, member: ConsumerGroupMember) -> None:
        """M18/M24: REBALANCE_IN_PROGRESS, with the join timer armed if it is not already."""
        group_id = group.group_id
        key = classic_join_key(group_id, member.member_id)
        if self._timer.deadline(key) is None:
            self._schedule_fence(
                key,
                group_id,
                member.member_id,
                None,
                member.rebalance_timeout_ms,
                "the classic member failed to join within the rebalance timeout",
            )
        raise GroupError(ErrorCode.REBALANCE_IN_PROGRESS)

    def _keep_session(self, group: ConsumerGroup, member: ConsumerGroupMember) -> None:
        assert member.classic is not None
        self._schedule_session(group.group_id, member.member_id, member.classic.session_timeout_ms)

    def sync_group(self, ctx: RequestContext, request: SyncGroupRequest) -> CoordinatorResult[SyncGroupResponse]:
        """M19/M20: the member's current partitions, once it has caught up with the group epoch."""
        group = self._serving_consumer_group(request.group_id)
        if group is None or (
            ctx.api_version >= MANDATORY_PROTOCOL_VERSION
            and (request.protocol_type is None or request.protocol_name is None)
        ):
            return super().sync_group(ctx, request)
        error = self._gate(request.group_id, allow_empty_id=False)
        if error is not None:
            return super().sync_group(ctx, request)
        try:
            member, metadata = self._classic_sync_member(group, request)
        except GroupError as e:
            return CoordinatorResult.of(SyncGroupResponse(error_code=e.code))
        self._timer.cancel(classic_sync_key(group.group_id, member.member_id))
        self._keep_session(group, member)
        assignment = encode_partitions(
            self._topics, member.assignment.assigned_partitions, subscription_version(metadata)
        )
        return CoordinatorResult.of(
            SyncGroupResponse(
                protocol_type=request.protocol_type, protocol_name=request.protocol_name, assignment=assignment
            )
        )

    def _classic_sync_member(
        self, group: ConsumerGroup, request: SyncGroupRequest
    ) -> tuple[ConsumerGroupMember, bytes]:
        """M19 in Kafka's order; the member and its first protocol's metadata (its ConsumerProtocol version)."""
        member = self._classic_member(group, request.member_id, request.group_instance_id)
        self._check_generation(member, request.generation_id)
        assert member.classic is not None
        first_protocol, metadata = member.classic.protocols[0]
        if (request.protocol_type is not None and request.protocol_type != CONSUMER_PROTOCOL_TYPE) or (
            request.protocol_name is not None and request.protocol_name != first_protocol
        ):
            raise GroupError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        if group.group_epoch > member.member_epoch and member.state is not MemberState.UNREVOKED_PARTITIONS:
            self._ask_to_rejoin(group, member)
        return member, metadata

    def heartbeat(self, ctx: RequestContext, request: HeartbeatRequest, now_ms: int) -> HeartbeatResponse:
        """M21: keep the session; REBALANCE_IN_PROGRESS while the member has to rejoin to make progress."""
        group = self._serving_consumer_group(request.group_id)
        if group is None:
            return super().heartbeat(ctx, request, now_ms)
        try:
            member = self._classic_member(group, request.member_id, request.group_instance_id)
            self._check_generation(member, request.generation_id)
            self._keep_session(group, member)
            if (
                member.member_epoch < group.group_epoch
                or member.state is MemberState.UNREVOKED_PARTITIONS
                or (member.state is MemberState.UNRELEASED_PARTITIONS and not _waiting_on_unreleased(group, member))
            ):
                self._ask_to_rejoin(group, member)
        except GroupError as e:
            return HeartbeatResponse(error_code=e.code)
        return HeartbeatResponse(error_code=ErrorCode.NONE)

    # -- LeaveGroup ------------------------------------------------------------------------------------------

    def leave_group_write(
        self, ctx: RequestContext, request: LeaveGroupRequest, now_ms: int
    ) -> CoordinatorResult[LeaveGroupResponse]:
        """LeaveGroup of either group type. M22: in a consumer group every valid member named (either protocol) is
        fenced, all with one group-epoch bump, and the answer waits for the records to be durable (a failed write
        puts the group back and answers the mapped error); a classic group's LeaveGroup writes nothing."""
        group = self._serving_consumer_group(request.group_id)
        if group is None or self._gate(request.group_id, allow_empty_id=False) is not None:
            return CoordinatorResult.of(self.leave_group(ctx, request, now_ms))
        legacy = ctx.api_version < MULTI_MEMBER_LEAVE_VERSION
        identities = [MemberIdentity(member_id=request.member_id)] if legacy else list(request.members)
        responses: list[MemberResponse] = []
        leaving: dict[str, ConsumerGroupMember] = {}
        for identity in identities:
            response = MemberResponse(member_id=identity.member_id, group_instance_id=identity.group_instance_id)
            try:
                member = self._leaving_member(group, identity)
                leaving[member.member_id] = member
            except GroupError as e:
                response.error_code = e.code
            responses.append(response)
        answer = self._leave_response(legacy, responses)
        if not leaving:
            return CoordinatorResult.of(answer)
        snapshot = group.snapshot()
        records = self._fence_members(group, list(leaving.values()), "the member left the group (LeaveGroup)")
        for member in leaving.values():
            self._events.member_left(group.group_id, member.member_id, member.instance_id, "LeaveGroup")

        def written(error: ErrorCode) -> None:
            if error != ErrorCode.NONE:
                answer.error_code = error
                self._undo_write(group, snapshot)

        return self._group_write(group, records, answer, "classic leave from a consumer group", written)

    def _leaving_member(self, group: ConsumerGroup, identity: MemberIdentity) -> ConsumerGroupMember:
        instance_id = identity.group_instance_id
        if instance_id is None:
            member = group.member(identity.member_id)
            if member is None:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID)
            return member
        member = group.static_member(instance_id)
        if member is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if identity.member_id and member.member_id != identity.member_id:
            raise GroupError(ErrorCode.FENCED_INSTANCE_ID)
        return member


def _supported(group: ConsumerGroup, protocols: Protocols) -> bool:
    """M15 (`supportsClassicProtocols`): some offered protocol is supported by every classic member."""
    classic = [m.classic for m in group.members.values() if m.classic is not None]
    return any(all(any(n == name for n, _ in c.protocols) for c in classic) for name, _ in protocols)


def _waiting_on_unreleased(group: ConsumerGroup, member: ConsumerGroupMember) -> bool:
    """Whether a target partition the member does not have yet is still held by another member."""
    missing = assignment_partitions(group.target_of(member.member_id)) - member.assignment.assigned_partitions
    return any(group.is_held(tp) for tp in missing)
