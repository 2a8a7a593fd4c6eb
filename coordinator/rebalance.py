"""The rebalance machinery: Part 1.3's delayed operations as explicit steps on one keyed timer.

Kafka's founding model had a purgatory of delayed operations with try-complete / on-expire / on-complete parts.
Modern Kafka (and this module) replaces the class hierarchy with explicit calls: after every request that may
let a join complete, the caller runs `_maybe_complete_join_phase`; when a timer fires it calls the completion
directly. The operations, by timer key:

* join (`join_key`): the delayed join. Deadline = the group's rebalance timeout (max over its members); at the
  deadline the join is force-completed without the dynamic members that did not rejoin (T5, #13). For a group
  that was Empty it is instead the initial rebalance delay (KIP-134, #12), which never completes early and is
  extended while new members keep arriving.
* heartbeat (`heartbeat_key`): one per member, deadline = last interaction + session timeout; at expiry a member
  is removed unless it is alive by the liveness rule (a parked JoinGroup or SyncGroup, Part 1.3 / #27). Also the
  expiry of a pending MEMBER_ID_REQUIRED id (#9) and the new-member join timeout (#16).
* sync (`sync_key`): after JoinGroup responses go out, members that never send SyncGroup within the rebalance
  timeout are removed and a new rebalance starts (#24).

Deviation, deliberately: when a heartbeat deadline passes for a member that is alive only because a reply is
parked, Kafka lets the timer lapse and relies on the reply's completion to schedule the next one. Here a fresh
deadline (now + session timeout) is scheduled instead, so every live member always has exactly one heartbeat
deadline; since completing the parked reply reschedules anyway, no observable timing differs.
"""

from __future__ import annotations

from functools import partial

from coordinator.group import ClassicGroup
from coordinator.group_base import GroupManagerBase
from coordinator.keys import heartbeat_key, join_key, sync_key
from coordinator.member import ClassicMember
from coordinator.records import group_metadata_record
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.join_group import JoinGroupResponse
from protocol.messages.sync_group import SyncGroupResponse

_PREPARING = GroupState.PREPARING_REBALANCE
_COMPLETING = GroupState.COMPLETING_REBALANCE


class RebalanceMixin(GroupManagerBase):
    """Prepare / complete rebalances, expire members, propagate assignments."""

    # -- members and their timers ----------------------------------------------------------------------------

    def _arm_member(self, group: ClassicGroup, member: ClassicMember) -> None:
        """Give a member its heartbeat key and expiry operation, built once (heartbeats are the hot path)."""
        member.heartbeat_key = heartbeat_key(group.group_id, member.member_id)
        member.heartbeat_op = partial(self._expire_heartbeat, group.group_id, member.member_id)

    def _reschedule_heartbeat(self, member: ClassicMember, timeout_ms: int | None = None) -> None:
        """Part 1.3 complete-and-schedule-next-heartbeat: one deadline per member, pushed to now + timeout."""
        deadline = self._now_ms + (member.session_timeout_ms if timeout_ms is None else timeout_ms)
        self._timer.schedule(member.heartbeat_key, deadline, member.heartbeat_op)

    def _expire_heartbeat(self, group_id: str, member_id: str) -> None:
        group = self._groups.get(group_id)
        if group is None or group.is_in(GroupState.DEAD):
            return
        if member_id in group.pending_members:
            self._events.member_expired(
                group_id,
                member_id,
                None,
                "member id issued with MEMBER_ID_REQUIRED was not used to join within the session timeout",
            )
            group.remove(member_id)
            self._maybe_complete_join_phase(group)
            return
        member = group.members.get(member_id)
        if member is None:
            return
        if member.has_satisfied_heartbeat():
            self._reschedule_heartbeat(member)
            return
        reason = (
            "new member did not complete its join within the new-member join timeout"
            if member.is_new
            else "session timeout expired"
        )
        self._events.member_expired(group_id, member_id, member.group_instance_id, reason)
        self._remove_member_and_update_group(group, member, f"removing member {member_id} on heartbeat expiration")

    def _drop_member(self, group: ClassicGroup, member: ClassicMember) -> None:
        """Remove a member, answering anything it still has parked, and forget its timer.

        A parked JoinGroup gets UNKNOWN_MEMBER_ID with an empty member id, so a client that is still alive rejoins
        from scratch (Kafka). A parked SyncGroup gets UNKNOWN_MEMBER_ID too: Kafka leaves it unanswered until the
        client times out, which only delays the same outcome.
        """
        group.complete_join(member, JoinGroupResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID, member_id=""))
        group.complete_sync(member, SyncGroupResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID))
        self._timer.cancel(member.heartbeat_key)
        group.remove(member.member_id)

    def _remove_member_and_update_group(self, group: ClassicGroup, member: ClassicMember, reason: str) -> None:
        self._drop_member(group, member)
        if group.state in (GroupState.STABLE, _COMPLETING):
            self._prepare_rebalance(group, reason)
        elif group.is_in(_PREPARING):
            self._maybe_complete_join_phase(group)

    def _remove_pending_member(self, group: ClassicGroup, member_id: str) -> None:
        group.remove(member_id)
        self._timer.cancel(heartbeat_key(group.group_id, member_id))

    # -- state changes ---------------------------------------------------------------------------------------

    def _transition(self, group: ClassicGroup, target: GroupState) -> None:
        old = group.transition_to(target, self._wall_ms)
        self._events.group_state_changed(group.group_id, old.value, target.value, group.generation_id)

    def _prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        """Start a rebalance: answer parked syncs, enter PreparingRebalance, arm the (initial) delayed join."""
        if group.is_in(_COMPLETING):
            self._reset_and_propagate_assignment_error(group, ErrorCode.REBALANCE_IN_PROGRESS)
        self._timer.cancel(sync_key(group.group_id))
        is_initial = group.is_in(GroupState.EMPTY)
        group.rebalance_started_ms = self._now_ms
        group.rebalance_reason = reason
        self._transition(group, _PREPARING)
        self._events.rebalance_started(group.group_id, group.generation_id, reason, len(group.members))
        if is_initial:
            delay_ms = self._config.group_initial_rebalance_delay_ms
            remaining_ms = max(group.rebalance_timeout_ms() - delay_ms, 0)
            self._schedule_initial_delay(group.group_id, delay_ms, remaining_ms)
        else:
            self._maybe_complete_join_else_schedule(group)

    def _schedule_initial_delay(self, group_id: str, delay_ms: int, remaining_ms: int) -> None:
        self._timer.schedule(
            join_key(group_id),
            self._now_ms + delay_ms,
            lambda: self._initial_delay_expired(group_id, delay_ms, remaining_ms),
        )

    def _initial_delay_expired(self, group_id: str, delay_ms: int, remaining_ms: int) -> None:
        """KIP-134: extend by min(delay, remaining) while new members arrived, else complete the join."""
        group = self._groups.get(group_id)
        if group is None or not group.is_in(_PREPARING):
            return
        if group.new_member_added and remaining_ms != 0:
            group.new_member_added = False
            new_delay_ms = min(self._config.group_initial_rebalance_delay_ms, remaining_ms)
            new_remaining_ms = max(remaining_ms - delay_ms, 0)
            self._schedule_initial_delay(group_id, new_delay_ms, new_remaining_ms)
        else:
            self._complete_join(group)

    def _maybe_complete_join_else_schedule(self, group: ClassicGroup) -> None:
        if group.has_all_members_joined():
            self._complete_join(group)
        else:
            self._schedule_join_timeout(group)

    def _schedule_join_timeout(self, group: ClassicGroup) -> None:
        group_id = group.group_id
        self._timer.schedule(
            join_key(group_id), self._now_ms + group.rebalance_timeout_ms(), lambda: self._join_timed_out(group_id)
        )

    def _join_timed_out(self, group_id: str) -> None:
        group = self._groups.get(group_id)
        if group is not None and group.is_in(_PREPARING):
            self._complete_join(group)

    def _maybe_complete_join_phase(self, group: ClassicGroup) -> None:
        """Complete the join if every member has rejoined, except during the initial delay (never early, #12)."""
        if group.is_in(_PREPARING) and group.has_all_members_joined() and group.previous_state is not GroupState.EMPTY:
            self._complete_join(group)

    def _maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup, reason: str) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, reason)
        else:
            self._maybe_complete_join_phase(group)

    def _complete_join(self, group: ClassicGroup) -> None:
        """The delayed join completes (#13): drop dynamic laggards, bump the generation, answer every JoinGroup."""
        group_id = group.group_id
        self._timer.cancel(join_key(group_id))
        for member in group.not_yet_rejoined_members():
            if not member.is_static:
                self._events.member_expired(
                    group_id, member.member_id, None, "did not rejoin before the rebalance timeout"
                )
                self._drop_member(group, member)
        if group.members and not group.maybe_elect_new_joined_leader():
            # Only static members that did not rejoin are left: wait for them (or their session expiry) again.
            self._schedule_join_timeout(group)
            return
        old_state = group.state
        group.init_next_generation(self._wall_ms)
        self._events.group_state_changed(group_id, old_state.value, group.state.value, group.generation_id)
        self._refresh_subscriptions(group)
        if group.is_in(GroupState.EMPTY):
            # Everyone left: persist the Empty group of the new generation (no reply waits for it).
            self._append(
                group.partition, [group_metadata_record(group, {})], "empty group metadata", lambda _error: None
            )
            return
        members = list(group.members.values())
        self._events.join_completed(
            group_id, group.generation_id, group.leader_id, group.protocol_name, [m.member_id for m in members]
        )
        for member in members:
            is_leader = member.member_id == group.leader_id
            group.complete_join(member, self._current_generation_join_response(group, member, is_leader))
            self._reschedule_heartbeat(member)
            member.is_new = False
            group.pending_sync_members.add(member.member_id)
        self._schedule_pending_sync(group)

    def _current_generation_join_response(
        self, group: ClassicGroup, member: ClassicMember, with_members: bool
    ) -> JoinGroupResponse:
        return JoinGroupResponse(
            error_code=ErrorCode.NONE,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader=group.leader_id or "",
            member_id=member.member_id,
            members=group.leader_member_list() if with_members else [],
        )

    # -- the sync phase --------------------------------------------------------------------------------------

    def _schedule_pending_sync(self, group: ClassicGroup) -> None:
        group_id, generation = group.group_id, group.generation_id
        self._timer.schedule(
            sync_key(group_id),
            self._now_ms + group.rebalance_timeout_ms(),
            lambda: self._expire_pending_sync(group_id, generation),
        )

    def _expire_pending_sync(self, group_id: str, generation_id: int) -> None:
        group = self._groups.get(group_id)
        if group is None or group.generation_id != generation_id:
            return
        if group.state not in (_COMPLETING, GroupState.STABLE) or group.has_received_sync_from_all_members():
            return
        laggards = sorted(group.pending_sync_members)
        for member_id in laggards:
            member = group.members.get(member_id)
            if member is not None:
                self._events.member_expired(
                    group_id, member_id, member.group_instance_id, "no SyncGroup within the rebalance timeout"
                )
                self._drop_member(group, member)
        group.pending_sync_members.clear()
        self._prepare_rebalance(group, f"removing {laggards} on pending sync request expiration")

    def _remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.pending_sync_members.discard(member_id)
        if group.state not in (_COMPLETING, GroupState.STABLE) or group.has_received_sync_from_all_members():
            self._timer.cancel(sync_key(group.group_id))

    def _propagate_assignment(self, group: ClassicGroup, error: ErrorCode) -> None:
        """Answer every parked SyncGroup (with its assignment, or the error) and restart its session timer (#25)."""
        for member in list(group.members.values()):
            if error == ErrorCode.NONE:
                response = SyncGroupResponse(
                    protocol_type=group.protocol_type, protocol_name=group.protocol_name, assignment=member.assignment
                )
            else:
                response = SyncGroupResponse(error_code=error)
            if group.complete_sync(member, response):
                self._reschedule_heartbeat(member)

    def _reset_and_propagate_assignment_error(self, group: ClassicGroup, error: ErrorCode) -> None:
        assert group.is_in(_COMPLETING)
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error)
