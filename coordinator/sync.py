"""SyncGroup (rules #20-#25): park until the leader's assignment is durable, then answer everyone.

Persist, then respond (Part 1.1 step 3): the leader's SyncGroup writes the group metadata with every member's
assignment (members the leader left out get an empty one); only when that record is durable do the parked
SyncGroups get their assignments and the group becomes Stable. If the group moved on meanwhile (a new rebalance,
a new generation) the durability notice changes nothing; if the write failed, every parked SyncGroup gets the
mapped error and a new rebalance starts.
"""

from __future__ import annotations

from coordinator.context import RequestContext
from coordinator.errors import GroupError
from coordinator.group import ClassicGroup
from coordinator.member import ClassicMember
from coordinator.rebalance import RebalanceMixin
from coordinator.records import group_metadata_record
from coordinator.reply import Reply
from coordinator.result import CoordinatorResult
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse

MANDATORY_PROTOCOL_VERSION = 5
"""SyncGroup v5+ must carry protocol type and name (checked at Kafka's API layer, #20)."""


def _inconsistent(requested: str | None, actual: str | None) -> bool:
    return requested is not None and actual is not None and requested != actual


class SyncMixin(RebalanceMixin):
    """SyncGroup."""

    def sync_group(self, ctx: RequestContext, request: SyncGroupRequest) -> CoordinatorResult[SyncGroupResponse]:
        """Handle a SyncGroup: answered now, or parked until the leader's assignment (the result's record) is
        durable."""
        if ctx.api_version >= MANDATORY_PROTOCOL_VERSION and (
            request.protocol_type is None or request.protocol_name is None
        ):
            return CoordinatorResult.of(SyncGroupResponse(error_code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
        error = self._gate(request.group_id, allow_empty_id=False)
        if error is not None:
            if error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
                # The rebalance state was lost with the old coordinator: make the member rejoin (#4).
                error = ErrorCode.REBALANCE_IN_PROGRESS
            return CoordinatorResult.of(SyncGroupResponse(error_code=error))
        group = self._groups.get(request.group_id)
        if group is None:
            return CoordinatorResult.of(SyncGroupResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID))
        try:
            member = self._validate_sync(group, request)
        except GroupError as e:
            return CoordinatorResult.of(SyncGroupResponse(error_code=e.code))

        if group.is_in(GroupState.PREPARING_REBALANCE):
            return CoordinatorResult.of(SyncGroupResponse(error_code=ErrorCode.REBALANCE_IN_PROGRESS))
        if group.is_in(GroupState.STABLE):
            # Any member, even repeating itself, gets its current assignment at once (#23).
            self._remove_pending_sync_member(group, member.member_id)
            self._reschedule_heartbeat(member)
            return CoordinatorResult.of(
                SyncGroupResponse(
                    protocol_type=group.protocol_type, protocol_name=group.protocol_name, assignment=member.assignment
                )
            )
        assert group.is_in(GroupState.COMPLETING_REBALANCE), group.state
        reply: Reply[SyncGroupResponse] = Reply()
        # A SyncGroup already parked for this member is from a connection that gave up: answer it.
        group.complete_sync(member, SyncGroupResponse(error_code=ErrorCode.REBALANCE_IN_PROGRESS))
        member.awaiting_sync = reply
        self._reschedule_heartbeat(member)
        self._remove_pending_sync_member(group, member.member_id)
        if group.is_leader(member.member_id):
            return self._persist_assignment(group, request, reply)
        return CoordinatorResult.of(reply)

    def _validate_sync(self, group: ClassicGroup, request: SyncGroupRequest) -> ClassicMember:
        """#20: Dead, member checks, generation, then protocol type/name consistency."""
        if group.is_in(GroupState.DEAD):
            raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        member = group.validate_member(request.member_id, request.group_instance_id)
        if request.generation_id != group.generation_id:
            raise GroupError(ErrorCode.ILLEGAL_GENERATION)
        if _inconsistent(request.protocol_type, group.protocol_type) or _inconsistent(
            request.protocol_name, group.protocol_name
        ):
            raise GroupError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        return member

    def _persist_assignment(
        self, group: ClassicGroup, request: SyncGroupRequest, reply: Reply[SyncGroupResponse]
    ) -> CoordinatorResult[SyncGroupResponse]:
        """The leader's SyncGroup: write the group with its assignment; answer everyone once it is durable."""
        assignment = {a.member_id: a.assignment for a in request.assignments}
        for member_id in group.members:
            assignment.setdefault(member_id, b"")
        generation = group.generation_id
        group_id = group.group_id

        def persisted(error: ErrorCode) -> None:
            if self._groups.get(group_id) is not group:
                return
            if not group.is_in(GroupState.COMPLETING_REBALANCE) or group.generation_id != generation:
                return  # the group moved on while the write was in flight
            if error == ErrorCode.NONE:
                for member in group.members.values():
                    member.assignment = assignment.get(member.member_id, b"")
                self._transition(group, GroupState.STABLE)
                started = group.rebalance_started_ms
                self._events.rebalance_completed(
                    group_id,
                    generation,
                    group.leader_id,
                    group.protocol_name,
                    list(group.members),
                    0 if started is None else self._now_ms - started,
                )
                self._propagate_assignment(group, ErrorCode.NONE)
            else:
                self._reset_and_propagate_assignment_error(group, error)
                self._maybe_prepare_rebalance_or_complete_join(
                    group, f"error {error.name} when storing the group assignment"
                )

        record = group_metadata_record(group, assignment)
        return CoordinatorResult([record], reply, group.partition, "group assignment", persisted)
