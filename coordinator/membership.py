"""Heartbeat (#26-#27) and LeaveGroup (#28-#31).

Heartbeat is the hot path (hundreds of thousands per second per broker are plausible), so it is written as a
straight line: one dict lookup for the group, one for the member, one timer update; no logging, no allocation
beyond the response. Every validation still happens, in Kafka's order.
"""

from __future__ import annotations

from coordinator.context import RequestContext
from coordinator.errors import GroupError
from coordinator.group import ClassicGroup
from coordinator.rebalance import RebalanceMixin
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from protocol.messages.leave_group import LeaveGroupRequest, LeaveGroupResponse, MemberIdentity, MemberResponse

_DEAD = GroupState.DEAD
_EMPTY = GroupState.EMPTY
_PREPARING = GroupState.PREPARING_REBALANCE
_NONE = ErrorCode.NONE
_UNKNOWN_MEMBER_ID = ErrorCode.UNKNOWN_MEMBER_ID

MULTI_MEMBER_LEAVE_VERSION = 3
"""LeaveGroup v3+ carries a list of members and answers per member (KIP-345); v0-2 one member id."""


class MembershipMixin(RebalanceMixin):
    """Heartbeat and LeaveGroup."""

    def heartbeat(self, ctx: RequestContext, request: HeartbeatRequest, now_ms: int) -> HeartbeatResponse:
        """Handle a Heartbeat: validate, push the member's session deadline, report whether to rejoin."""
        group_id = request.group_id
        group = self._groups.get(group_id) if group_id else None
        if group is None or self._gate_always:
            error = self._gate(group_id, allow_empty_id=False)
            if error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
                error = _NONE  # the group is still loading: answer blindly (#4)
            if group is None or error is not None:
                return HeartbeatResponse(error_code=_UNKNOWN_MEMBER_ID if error is None else error)
        state = group.state
        if state is _DEAD:
            return HeartbeatResponse(error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if request.group_instance_id is None:
            member = group.members.get(request.member_id)
            if member is None:
                return HeartbeatResponse(error_code=_UNKNOWN_MEMBER_ID)
        else:
            try:
                member = group.validate_member(request.member_id, request.group_instance_id)
            except GroupError as e:
                return HeartbeatResponse(error_code=e.code)
        if request.generation_id != group.generation_id:
            return HeartbeatResponse(error_code=ErrorCode.ILLEGAL_GENERATION)
        if state is _EMPTY:
            return HeartbeatResponse(error_code=_UNKNOWN_MEMBER_ID)
        # Complete-and-schedule-next-heartbeat (Part 1.3), inlined.
        self._timer.schedule(member.heartbeat_key, now_ms + member.session_timeout_ms, member.heartbeat_op)
        if state is _PREPARING:
            return HeartbeatResponse(error_code=ErrorCode.REBALANCE_IN_PROGRESS)
        return HeartbeatResponse(error_code=_NONE)

    def leave_group(self, ctx: RequestContext, request: LeaveGroupRequest, now_ms: int) -> LeaveGroupResponse:
        """Handle a LeaveGroup; v0-2 report the member's error at top level, v3+ per member."""
        legacy = ctx.api_version < MULTI_MEMBER_LEAVE_VERSION
        identities = [MemberIdentity(member_id=request.member_id)] if legacy else list(request.members)
        error = self._gate(request.group_id, allow_empty_id=False)
        if error is not None:
            return LeaveGroupResponse(error_code=error)
        group = self._groups.get(request.group_id)
        if group is None:
            return self._leave_response(
                legacy,
                [
                    MemberResponse(
                        member_id=i.member_id, group_instance_id=i.group_instance_id, error_code=_UNKNOWN_MEMBER_ID
                    )
                    for i in identities
                ],
            )
        if group.is_in(_DEAD):
            return LeaveGroupResponse(error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE)

        responses: list[MemberResponse] = []
        left: list[str] = []
        for identity in identities:
            code = self._leave_one(group, identity)
            responses.append(
                MemberResponse(
                    member_id=identity.member_id, group_instance_id=identity.group_instance_id, error_code=code
                )
            )
            if code == _NONE:
                left.append(identity.member_id or f"instance {identity.group_instance_id}")
        if left:
            reason = f"explicit LeaveGroup request for ({', '.join(left)}) members"
            if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
                self._maybe_prepare_rebalance_or_complete_join(group, reason)
            elif group.is_in(_PREPARING):
                self._maybe_complete_join_phase(group)
        return self._leave_response(legacy, responses)

    def _leave_one(self, group: ClassicGroup, identity: MemberIdentity) -> ErrorCode:
        reason = identity.reason or "not provided"
        if identity.member_id == "":
            # Administrative removal of a static member by its instance id (#29).
            instance_id = identity.group_instance_id
            member_id = None if instance_id is None else group.static_member_id(instance_id)
            if member_id is None:
                return _UNKNOWN_MEMBER_ID
            member = group.members[member_id]
        elif identity.member_id in group.pending_members:
            self._remove_pending_member(group, identity.member_id)
            self._events.member_left(group.group_id, identity.member_id, None, reason)
            return _NONE
        else:
            try:
                member = group.validate_member(identity.member_id, identity.group_instance_id)
            except GroupError as e:
                return e.code
        self._events.member_left(group.group_id, member.member_id, member.group_instance_id, reason)
        self._drop_member(group, member)
        return _NONE

    @staticmethod
    def _leave_response(legacy: bool, responses: list[MemberResponse]) -> LeaveGroupResponse:
        if legacy:
            # v0-2: the (single) member's error becomes the top-level error (LeaveGroupResponse constructor, #28).
            first_error = next((r.error_code for r in responses if r.error_code != _NONE), _NONE)
            return LeaveGroupResponse(error_code=first_error)
        return LeaveGroupResponse(error_code=_NONE, members=responses)
