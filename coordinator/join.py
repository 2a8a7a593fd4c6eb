"""JoinGroup (rules #6-#19): admission, member ids, static membership, and parking until the join completes.

Order of checks, as Kafka's: group id / ownership gating (#2), session-timeout bounds (#6), group lookup or creation
(only for an empty member id, #8), group size (#11), then new-member or known-member handling. A new dynamic
member on v4+ first gets MEMBER_ID_REQUIRED with its id (#9); everything else that is accepted is parked in a
`Reply` that the join completion answers (`RebalanceMixin._complete_join`), or answered at once when the group
can hand out the current generation unchanged (#15, #17).
"""

from __future__ import annotations

from functools import partial

from coordinator.context import RequestContext
from coordinator.errors import GroupError
from coordinator.group import ClassicGroup
from coordinator.keys import heartbeat_key
from coordinator.member import ClassicMember, Protocols
from coordinator.rebalance import RebalanceMixin
from coordinator.records import group_metadata_record
from coordinator.reply import Reply
from coordinator.result import CoordinatorResult
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse

REQUIRE_KNOWN_MEMBER_ID_VERSION = 4
"""JoinGroup v4+ (KIP-394): a new dynamic member first gets MEMBER_ID_REQUIRED with its id."""
SKIP_ASSIGNMENT_VERSION = 9
"""JoinGroup v9+: a returning static leader is told to skip the assignment instead of being handed the old id."""


def _error(code: ErrorCode, member_id: str) -> JoinGroupResponse:
    return JoinGroupResponse(error_code=code, member_id=member_id)


class JoinMixin(RebalanceMixin):
    """JoinGroup."""

    def join_group(self, ctx: RequestContext, request: JoinGroupRequest) -> CoordinatorResult[JoinGroupResponse]:
        """Handle a JoinGroup: a parked reply, completed now or when the join phase completes (with the record
        of a static member's new id when one replaces its old id in a Stable group)."""
        reply: Reply[JoinGroupResponse] = Reply()
        result: CoordinatorResult[JoinGroupResponse] = CoordinatorResult.of(reply)
        group_id = request.group_id
        member_id = request.member_id
        error = self._gate(group_id, allow_empty_id=False)
        if error is not None:
            reply.complete(_error(error, member_id))
            return result
        config = self._config
        if not config.group_min_session_timeout_ms <= request.session_timeout_ms <= config.group_max_session_timeout_ms:
            reply.complete(_error(ErrorCode.INVALID_SESSION_TIMEOUT, member_id))
            return result
        is_unknown_member = member_id == ""
        group = self._groups.get(group_id)
        if group is None:
            if not is_unknown_member:
                reply.complete(_error(ErrorCode.UNKNOWN_MEMBER_ID, member_id))
                return result
            group = self.create_group(group_id, "JoinGroup")
        protocols: Protocols = tuple((p.name, p.metadata) for p in request.protocols)
        rebalance_timeout_ms = request.session_timeout_ms if ctx.api_version == 0 else request.rebalance_timeout_ms

        if not self._accept_joining_member(group, member_id):
            member = group.members.get(member_id)
            if member is not None:
                self._drop_member(group, member)
            elif member_id in group.pending_members:
                self._remove_pending_member(group, member_id)
            self._events.member_rejected(group_id, member_id, f"group.max.size {config.group_max_size} reached")
            reply.complete(_error(ErrorCode.GROUP_MAX_SIZE_REACHED, ""))
            self._maybe_complete_join_phase(group)
        elif is_unknown_member:
            written = self._join_new_member(ctx, request, group, protocols, rebalance_timeout_ms, reply)
            if written is not None:
                return written
        else:
            self._join_existing_member(ctx, request, group, protocols, rebalance_timeout_ms, reply)
        return result

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        """KIP-389 (#11): awaiting-join count in PreparingRebalance, group size in CompletingRebalance/Stable."""
        state = group.state
        max_size = self._config.group_max_size
        if state in (GroupState.EMPTY, GroupState.DEAD):
            return True
        member = group.members.get(member_id)
        if state is GroupState.PREPARING_REBALANCE:
            return (member is not None and member.is_awaiting_join) or group.num_awaiting_join < max_size
        return member is not None or len(group.members) < max_size

    def _join_new_member(
        self,
        ctx: RequestContext,
        request: JoinGroupRequest,
        group: ClassicGroup,
        protocols: Protocols,
        rebalance_timeout_ms: int,
        reply: Reply[JoinGroupResponse],
    ) -> CoordinatorResult[JoinGroupResponse] | None:
        """A new member id; returns the result when the join writes a record (a static member's new id)."""
        if group.is_in(GroupState.DEAD):
            reply.complete(_error(ErrorCode.COORDINATOR_NOT_AVAILABLE, ""))
            return None
        if not group.supports_protocols(request.protocol_type, protocols):
            reply.complete(_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, ""))
            return None
        instance_id = request.group_instance_id
        new_member_id = self._ids.new_id(instance_id if instance_id is not None else ctx.client_id)
        if instance_id is not None:
            existing = group.static_member_id(instance_id)
            if existing is not None:
                return self._replace_static_member(
                    ctx, request, group, existing, new_member_id, protocols, rebalance_timeout_ms, reply
                )
            else:
                self._add_member_and_rebalance(
                    ctx, request, group, new_member_id, protocols, rebalance_timeout_ms, reply
                )
        elif ctx.api_version >= REQUIRE_KNOWN_MEMBER_ID_VERSION:
            # KIP-394: remember the id, expire it after the session timeout unless the client comes back with it.
            group.pending_members.add(new_member_id)
            group_id = group.group_id
            self._timer.schedule(
                heartbeat_key(group_id, new_member_id),
                self._now_ms + request.session_timeout_ms,
                partial(self._expire_heartbeat, group_id, new_member_id),
            )
            self._events.member_id_required(group.group_id, new_member_id, ctx.client_id)
            reply.complete(_error(ErrorCode.MEMBER_ID_REQUIRED, new_member_id))
        else:
            self._add_member_and_rebalance(ctx, request, group, new_member_id, protocols, rebalance_timeout_ms, reply)
        return None

    def _join_existing_member(
        self,
        ctx: RequestContext,
        request: JoinGroupRequest,
        group: ClassicGroup,
        protocols: Protocols,
        rebalance_timeout_ms: int,
        reply: Reply[JoinGroupResponse],
    ) -> None:
        member_id = request.member_id
        if group.is_in(GroupState.DEAD):
            reply.complete(_error(ErrorCode.COORDINATOR_NOT_AVAILABLE, member_id))
            return
        if not group.supports_protocols(request.protocol_type, protocols):
            reply.complete(_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id))
            return
        if member_id in group.pending_members and request.group_instance_id is None:
            self._add_member_and_rebalance(ctx, request, group, member_id, protocols, rebalance_timeout_ms, reply)
            return
        try:
            member = group.validate_member(member_id, request.group_instance_id)
        except GroupError as e:
            reply.complete(_error(e.code, member_id))
            return
        state = group.state
        reason = f"member {member_id} rejoined in {state.value}" + (
            f"; client reason: {request.reason}" if request.reason else ""
        )
        if state is GroupState.PREPARING_REBALANCE:
            self._update_member_and_rebalance(group, member, request, protocols, rebalance_timeout_ms, reply, reason)
        elif state is GroupState.COMPLETING_REBALANCE:
            if member.matches(protocols):
                # Lost its JoinGroup response: same generation again (the leader gets the member list again).
                reply.complete(self._current_generation_join_response(group, member, group.is_leader(member_id)))
            else:
                self._update_member_and_rebalance(
                    group, member, request, protocols, rebalance_timeout_ms, reply, reason + " with new metadata"
                )
        elif state is GroupState.STABLE:
            if group.is_leader(member_id):
                # The leader rejoining always rebalances: it is how a leader forces a new assignment.
                self._update_member_and_rebalance(
                    group, member, request, protocols, rebalance_timeout_ms, reply, reason + " (leader)"
                )
            elif not member.matches(protocols):
                self._update_member_and_rebalance(
                    group, member, request, protocols, rebalance_timeout_ms, reply, reason + " with new metadata"
                )
            else:
                reply.complete(self._current_generation_join_response(group, member, False))
        else:
            reply.complete(_error(ErrorCode.UNKNOWN_MEMBER_ID, member_id))

    def _add_member_and_rebalance(
        self,
        ctx: RequestContext,
        request: JoinGroupRequest,
        group: ClassicGroup,
        member_id: str,
        protocols: Protocols,
        rebalance_timeout_ms: int,
        reply: Reply[JoinGroupResponse],
    ) -> None:
        member = ClassicMember(
            member_id=member_id,
            group_instance_id=request.group_instance_id,
            client_id=ctx.client_id,
            client_host=ctx.client_host,
            rebalance_timeout_ms=rebalance_timeout_ms,
            session_timeout_ms=request.session_timeout_ms,
            protocol_type=request.protocol_type,
            protocols=protocols,
            is_new=True,
        )
        self._arm_member(group, member)
        if group.is_in(GroupState.PREPARING_REBALANCE) and group.previous_state is GroupState.EMPTY:
            group.new_member_added = True
        group.add(member, reply)
        self._events.member_joined(
            group.group_id,
            member_id,
            member.group_instance_id,
            ctx.client_id,
            ctx.client_host,
            member.session_timeout_ms,
            rebalance_timeout_ms,
            member.protocol_names(),
        )
        # A new member cannot heartbeat while its JoinGroup is parked (its connection is muted), so instead of its
        # session timeout it gets the new-member join timeout (KAFKA-7610, #16).
        self._reschedule_heartbeat(member, self._config.new_member_join_timeout_ms)
        self._maybe_prepare_rebalance_or_complete_join(
            group,
            f"adding new member {member_id} with group instance id {member.group_instance_id}"
            + (f"; client reason: {request.reason}" if request.reason else ""),
        )

    def _update_member_and_rebalance(
        self,
        group: ClassicGroup,
        member: ClassicMember,
        request: JoinGroupRequest,
        protocols: Protocols,
        rebalance_timeout_ms: int,
        reply: Reply[JoinGroupResponse],
        reason: str,
    ) -> None:
        # A JoinGroup still parked for this member belongs to a connection that gave up (a live connection is muted
        # while it waits); answer it so every parked reply is completed exactly once.
        group.complete_join(member, _error(ErrorCode.REBALANCE_IN_PROGRESS, member.member_id))
        group.update_member(member, protocols, rebalance_timeout_ms, request.session_timeout_ms, reply)
        self._maybe_prepare_rebalance_or_complete_join(group, reason)

    def _replace_static_member(
        self,
        ctx: RequestContext,
        request: JoinGroupRequest,
        group: ClassicGroup,
        old_member_id: str,
        new_member_id: str,
        protocols: Protocols,
        rebalance_timeout_ms: int,
        reply: Reply[JoinGroupResponse],
    ) -> CoordinatorResult[JoinGroupResponse] | None:
        """KIP-345 (#17): a known static member rejoins with an empty member id; its old id is fenced."""
        instance_id = request.group_instance_id
        assert instance_id is not None
        old_leader = group.leader_id
        self._timer.cancel(group.members[old_member_id].heartbeat_key)
        new = group.replace_static_member(instance_id, old_member_id, new_member_id)
        self._arm_member(group, new)
        self._events.member_fenced(group.group_id, instance_id, old_member_id, new_member_id)
        self._reschedule_heartbeat(new)
        old_protocols, old_rebalance_ms, old_session_ms = (
            new.protocols,
            new.rebalance_timeout_ms,
            new.session_timeout_ms,
        )
        group.update_member(new, protocols, rebalance_timeout_ms, request.session_timeout_ms, reply)
        reason = f"static member {instance_id} rejoined with a new member id {new_member_id}"
        if group.is_in(GroupState.STABLE):
            if group.protocol_name != group.select_protocol():
                self._maybe_prepare_rebalance_or_complete_join(group, reason + " and a change of protocol")
                return None
            # Same protocol: no rebalance. Persist the group with the new member id, then answer.
            generation = group.generation_id
            assignment = {m.member_id: m.assignment for m in group.members.values()}
            api_version = ctx.api_version

            def persisted(error: ErrorCode) -> None:
                if new.awaiting_join is not reply:
                    return  # already answered (fenced again, removed, or the partition was unloaded)
                if error != ErrorCode.NONE:
                    self._revert_static_member(
                        group,
                        new,
                        old_member_id,
                        instance_id,
                        old_protocols,
                        old_rebalance_ms,
                        old_session_ms,
                        reply,
                        old_leader,
                        error,
                    )
                elif api_version >= SKIP_ASSIGNMENT_VERSION:
                    is_leader = group.is_leader(new_member_id)
                    response = self._current_generation_join_response(group, new, is_leader)
                    response.skip_assignment = is_leader
                    response.generation_id = generation
                    group.complete_join(new, response)
                else:
                    # Before v9 the old leader id goes out, so a returning leader does not run the assignor.
                    response = self._current_generation_join_response(group, new, False)
                    response.leader = old_leader or ""
                    response.generation_id = generation
                    group.complete_join(new, response)

            record = group_metadata_record(group, assignment)
            return CoordinatorResult([record], reply, group.partition, "static member id", persisted)
        elif group.is_in(GroupState.COMPLETING_REBALANCE):
            # The leader may already be assigning for the old id: always rebalance (KAFKA-9801).
            self._prepare_rebalance(group, reason + " during CompletingRebalance")
        else:
            self._maybe_complete_join_phase(group)
        return None

    def _revert_static_member(
        self,
        group: ClassicGroup,
        new: ClassicMember,
        old_member_id: str,
        instance_id: str,
        old_protocols: Protocols,
        old_rebalance_ms: int,
        old_session_ms: int,
        reply: Reply[JoinGroupResponse],
        old_leader: str | None,
        error: ErrorCode,
    ) -> None:
        """Persisting the replacement failed: restore the old member id and report the error (mapped by the
        runtime)."""
        group.update_member(new, old_protocols, old_rebalance_ms, old_session_ms, None)
        self._timer.cancel(new.heartbeat_key)
        old = group.replace_static_member(instance_id, new.member_id, old_member_id)
        self._arm_member(group, old)
        self._reschedule_heartbeat(old)
        reply.complete(
            JoinGroupResponse(
                error_code=error,
                member_id="",
                generation_id=group.generation_id,
                protocol_type=group.protocol_type,
                protocol_name=group.protocol_name,
                leader=old_leader or "",
            )
        )
