"""ConsumerGroupHeartbeat (KIP-848): join, heartbeat, leave and static leave of consumer-protocol members.

One heartbeat does, in Kafka's order (GroupMetadataManager.consumerGroupHeartbeat; rules K1-K38 in
docs/consumer-groups.md):

1. validate the request (K2-K5) and find or create the group (K10-K12) and the member (K13-K16, K34);
2. apply the member's changes; a subscription change, a new member or changed topic metadata bumps the group
   epoch (K17-K19);
3. when the group epoch is ahead of the assignment epoch, compute a new target assignment for the whole group,
   at most once per `group.consumer.assignment.interval.ms` (K21-K22);
4. move the member one reconciliation step towards its target (K24-K27) and arm or cancel its revocation timer;
5. re-arm the member's session timer and answer: epoch, heartbeat interval, and the assignment when the request
   was a full one or the assignment changed (K28-K29).

Everything the heartbeat changed is written as records in one batch; the answer goes out once they are durable,
and if the write fails the group is put back exactly as it was (the response then carries the write's error).
"""

from __future__ import annotations

import uuid
from collections.abc import Hashable
from dataclasses import replace
from functools import partial
from typing import TypeVar

from coordinator.consumer_group.group import ConsumerGroup, ConsumerGroupSnapshot
from coordinator.consumer_group.keys import classic_join_key, classic_sync_key, revocation_key, session_key
from coordinator.consumer_group.member import (
    JOIN_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupMember,
)
from coordinator.consumer_group.member_state import MemberState, Partitions
from coordinator.consumer_group.reconciliation import Heartbeat, TargetAssignment, reconcile
from coordinator.consumer_group.records import (
    assignment_partitions,
    current_assignment_record,
    group_epoch_record,
    member_metadata_record,
    member_tombstones,
    partitions_from,
    subscription_metadata_record,
    target_epoch_record,
    target_member_record,
    topic_partitions,
)
from coordinator.consumer_group.subscriptions_regex import InvalidRegularExpression
from coordinator.consumer_group.target import compute_target, preferred_assignor
from coordinator.consumer_group.topics import TopicImage
from coordinator.context import RequestContext
from coordinator.errors import GroupError
from coordinator.group_base import GroupManagerBase
from coordinator.records import CoordinatorRecord
from coordinator.result import AppendOutcome, CoordinatorResult
from protocol.errors import ErrorCode
from protocol.kafka_uuid import kafka_uuid_to_str
from protocol.messages.consumer_group_heartbeat import (
    Assignment,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    TopicPartitions,
)

CLIENT_GENERATED_MEMBER_ID_VERSION = 1
"""KIP-1082: from v1 the client generates its member id; an empty one is INVALID_REQUEST."""

Response = ConsumerGroupHeartbeatResponse


T = TypeVar("T")


def _invalid(message: str) -> GroupError:
    return GroupError(ErrorCode.INVALID_REQUEST, message)


class _Change:
    """The records one heartbeat writes, in order, and whether it bumps the group epoch."""

    __slots__ = ("bump_reasons", "records")

    def __init__(self) -> None:
        self.records: list[CoordinatorRecord] = []
        self.bump_reasons: list[str] = []


class ConsumerGroupHeartbeatMixin(GroupManagerBase):
    """The ConsumerGroupHeartbeat API and the timers of consumer-protocol members."""

    # -- entry point -----------------------------------------------------------------------------------------

    def consumer_group_heartbeat(
        self, ctx: RequestContext, request: ConsumerGroupHeartbeatRequest
    ) -> CoordinatorResult[Response]:
        try:
            self._validate_heartbeat(ctx, request)
            error = self._gate(request.group_id, allow_empty_id=False)
            if error is not None:
                return CoordinatorResult.of(Response(error_code=error))
            return self._serve_heartbeat(ctx, request)
        except GroupError as e:
            return refused(e)

    def _serve_heartbeat(
        self, ctx: RequestContext, request: ConsumerGroupHeartbeatRequest
    ) -> CoordinatorResult[Response]:
        """A heartbeat that passed K2-K5 and the partition gate (migration.py converts a classic group first)."""
        if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return self._consumer_leave(request)
        return self._consumer_heartbeat(ctx, request)

    def _validate_heartbeat(self, ctx: RequestContext, request: ConsumerGroupHeartbeatRequest) -> None:
        """K2-K5: Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid, first failure wins."""
        epoch = request.member_epoch
        if not request.member_id and (
            ctx.api_version >= CLIENT_GENERATED_MEMBER_ID_VERSION or epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH
        ):
            raise _invalid("MemberId can't be empty.")
        if not request.group_id:
            raise _invalid("GroupId can't be empty.")
        if request.instance_id is not None and not request.instance_id:
            raise _invalid("InstanceId can't be empty.")
        if request.rack_id is not None and not request.rack_id:
            raise _invalid("RackId can't be empty.")
        if epoch == JOIN_GROUP_MEMBER_EPOCH:
            if request.rebalance_timeout_ms == -1:
                raise _invalid("RebalanceTimeoutMs must be provided in first request.")
            if request.topic_partitions is None or request.topic_partitions:
                raise _invalid("TopicPartitions must be empty when (re-)joining.")
            if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
                raise _invalid(
                    "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."
                )
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if request.instance_id is None:
                raise _invalid("InstanceId can't be null.")
        elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            raise _invalid("MemberEpoch is invalid.")
        assignor = request.server_assignor
        assignors = self._config.consumer_group_assignors
        if assignor is not None and assignor not in assignors:
            raise GroupError(
                ErrorCode.UNSUPPORTED_ASSIGNOR,
                f"ServerAssignor {assignor} is not supported. Supported assignors: {', '.join(assignors)}.",
            )

    # -- heartbeat -------------------------------------------------------------------------------------------

    def _consumer_heartbeat(
        self, ctx: RequestContext, request: ConsumerGroupHeartbeatRequest
    ) -> CoordinatorResult[Response]:
        epoch = request.member_epoch
        group, created = self._consumer_group_for_heartbeat(request.group_id, create=epoch == JOIN_GROUP_MEMBER_EPOCH)
        snapshot = group.snapshot()
        try:
            member, reconciled, change = self._apply_heartbeat(ctx, request, group)
        except GroupError:
            self._undo(group, snapshot, created)
            raise
        full_request = epoch == JOIN_GROUP_MEMBER_EPOCH or (
            request.rebalance_timeout_ms != -1
            and (request.subscribed_topic_names is not None or request.subscribed_topic_regex is not None)
            and request.topic_partitions is not None
        )
        response = Response(
            member_id=reconciled.member_id,
            member_epoch=reconciled.member_epoch,
            heartbeat_interval_ms=self._config.consumer_group_heartbeat_interval_ms,
        )
        if full_request or reconciled.assignment.assigned_partitions != member.assignment.assigned_partitions:
            response.assignment = _wire_assignment(reconciled.assignment.assigned_partitions)
        if not change.records:
            return CoordinatorResult.of(response)
        return self._group_write(
            group,
            change.records,
            response,
            "consumer group heartbeat",
            partial(self._heartbeat_written, group, snapshot, created, response),
        )

    def _apply_heartbeat(
        self, ctx: RequestContext, request: ConsumerGroupHeartbeatRequest, group: ConsumerGroup
    ) -> tuple[ConsumerGroupMember, ConsumerGroupMember, _Change]:
        """Steps 1-4 of the module docstring on the group in memory: the member before and after, and the records."""
        self._check_group_capacity(group, request.member_id)
        change = _Change()
        member_id = request.member_id or kafka_uuid_to_str(self._ids.new_uuid())
        member, is_new = self._member_for_heartbeat(group, request, member_id, change)
        updated = self._updated_member(ctx, request, member)
        reconciled = self._apply_member_update(group, request, member, updated, is_new, change)
        self._schedule_session(group.group_id, member_id)
        return member, reconciled, change

    def _apply_member_update(
        self,
        group: ConsumerGroup,
        request: ConsumerGroupHeartbeatRequest,
        member: ConsumerGroupMember,
        updated: ConsumerGroupMember,
        is_new: bool,
        change: _Change,
        *,
        downgrading: bool = False,
    ) -> ConsumerGroupMember:
        """Steps 2-4 for a member whose new value is `updated` (a classic member's JoinGroup too, migration.py):
        records, epoch bump, target, one reconciliation step (owned partitions: `request.topic_partitions`).

        `downgrading` (M27, a classic member replacing the last consumer-protocol member): no new target is
        computed, and the member is reconciled only if the current target is still at the group epoch; otherwise
        the classic group the join turns the group into rebalances instead (Kafka 4.4)."""
        member_id = updated.member_id
        unchanged = updated is member and not is_new
        if not unchanged and (is_new or not updated.same_metadata(member)):
            change.records.append(member_metadata_record(group.group_id, updated))
        # Kafka 4.4: the epoch moves when the topic names change (hasMemberSubscriptionChanged) or the regex does,
        # to none included (maybeUpdateRegularExpressions: REGEX_UPDATED); the reconciliation is told so.
        names_changed = updated.subscribed_topic_names != member.subscribed_topic_names
        regex_changed = updated.subscribed_topic_regex != member.subscribed_topic_regex
        subscription_changed = is_new or names_changed or regex_changed
        if names_changed:
            change.bump_reasons.append(f"member {member_id} {'joined' if is_new else 'changed its subscription'}")
        if regex_changed and updated.subscribed_topic_regex:
            self._resolve_new_regex(group, updated.subscribed_topic_regex, change)
        elif regex_changed and member.subscribed_topic_regex:
            change.bump_reasons.append(f"member {member_id} dropped its regex {member.subscribed_topic_regex!r}")
        if not unchanged:
            group.put_member(updated)
        # A new preferred assignor refreshes the metadata (hasPreferredServerAssignorChanged): no bump by itself.
        force = bool(change.bump_reasons) or updated.server_assignor != member.server_assignor
        self._refresh_topic_metadata(group, change, force=force)
        if change.bump_reasons:
            self._bump_group_epoch(group, change)
        if group.group_epoch > group.assignment_epoch and not downgrading and self._may_assign(group):
            self._assign(group, change)
        if downgrading and group.assignment_epoch < group.group_epoch:
            reconciled = updated
        else:
            reconciled = self._reconcile_member(group, updated, request, subscription_changed, change)
        if is_new:
            self._events.consumer_member_joined(
                group.group_id,
                member_id,
                updated.instance_id,
                updated.client_id,
                updated.client_host,
                updated.rebalance_timeout_ms,
                updated.subscribed_topic_regex or list(updated.subscribed_topic_names),
            )
        self._note_state(group)
        return reconciled

    def _heartbeat_written(
        self,
        group: ConsumerGroup,
        snapshot: ConsumerGroupSnapshot,
        created: bool,
        response: Response,
        error: ErrorCode,
    ) -> None:
        """The heartbeat's records have an outcome: on failure, put the group back and answer the error."""
        if error == ErrorCode.NONE:
            return
        response.error_code = error
        response.member_id = None
        response.member_epoch = 0
        response.heartbeat_interval_ms = 0
        response.assignment = None
        if created:
            self._undo(group, snapshot, created)
        else:
            self._undo_write(group, snapshot)

    def _group_write(
        self,
        group: ConsumerGroup,
        records: list[CoordinatorRecord],
        response: T,
        purpose: str,
        on_append: AppendOutcome,
    ) -> CoordinatorResult[T]:
        """Every write about a consumer group goes through here, so the group counts them (`_undo_write`) and
        `_write_durable` hears of each one that succeeded."""
        group.note_write()

        def outcome(error: ErrorCode) -> None:
            on_append(error)
            if error == ErrorCode.NONE:
                self._write_durable(group)

        return CoordinatorResult(records, response, group.partition, purpose, outcome)

    def _write_durable(self, group: ConsumerGroup) -> None:
        """A write about `group` is durable: nothing to keep for undoing it (migration.py keeps a downgrade)."""

    def _undo(self, group: ConsumerGroup, snapshot: ConsumerGroupSnapshot, created: bool) -> None:
        """Put the group back as it was before a heartbeat that failed (a group it created is dropped)."""
        if created:
            if self._consumer_groups.get(group.group_id) is group:
                self._forget_consumer_group(group, "its first heartbeat failed")
            return
        self._restore_consumer_group(group, snapshot)

    def _restore_consumer_group(self, group: ConsumerGroup, snapshot: ConsumerGroupSnapshot) -> None:
        """A write about `group` failed: put it back as `snapshot` saw it, if it is still the group served under
        its id (migration.py first undoes a downgrade that write carried)."""
        if self._consumer_groups.get(group.group_id) is not group:
            return
        group.restore(snapshot)
        self._note_state(group)

    def _undo_write(self, group: ConsumerGroup, snapshot: ConsumerGroupSnapshot) -> None:
        """A write failed: restore the group and give its members their timers back (the change may have fenced
        or replaced a member and cancelled its timers). A request refused before any write restores only the
        data: a fenced heartbeat must not push the member's session (K14).

        If later writes were built on the failed one, restoring its snapshot would also drop their changes, which
        may be durable: the partition is reloaded from its log instead."""
        if self._consumer_groups.get(group.group_id) is group and not group.is_latest_write(snapshot):
            self._reload(group.partition, f"a failed write of consumer group {group.group_id} had later writes")
            return
        self._restore_consumer_group(group, snapshot)
        if self._consumer_groups.get(group.group_id) is group:
            self._rearm_member_timers(group)

    def _rearm_member_timers(self, group: ConsumerGroup, *, classic_sessions: bool = True) -> None:
        """Every member a full session from now, and a member owing revocations its rebalance timeout: after a
        load (K57: `group.consumer.session.timeout.ms` for every member, as Kafka 4.4's onLoaded, so
        `classic_sessions=False`), and after an undo, which may bring back a member whose timers its failed change
        had cancelled (a fence, a static replacement; a classic member gets its own session timeout then)."""
        for member in group.members.values():
            timeout = None if member.classic is None or not classic_sessions else member.classic.session_timeout_ms
            self._schedule_session(group.group_id, member.member_id, timeout)
            if member.state is MemberState.UNREVOKED_PARTITIONS:
                self._schedule_revocation(group.group_id, member)

    # -- group and member lookup -----------------------------------------------------------------------------

    def _consumer_group_for_heartbeat(self, group_id: str, *, create: bool) -> tuple[ConsumerGroup, bool]:
        """K10-K11: the consumer group, created on a join; a classic group's id answers GROUP_ID_NOT_FOUND."""
        group = self._live_consumer_group(group_id)
        if group is not None:
            return group, False
        if group_id in self._groups:
            # Online upgrade of a classic group is handled by the migration path when enabled.
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        if not create:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
        return self.create_consumer_group(group_id, "ConsumerGroupHeartbeat from a joining member"), True

    def _check_group_capacity(self, group: ConsumerGroup, member_id: str) -> None:
        """K12: a member that is not yet in the group may not make it larger than group.consumer.max.size."""
        limit = self._config.consumer_group_max_size
        if len(group.members) >= limit and (not member_id or member_id not in group.members):
            raise GroupError(
                ErrorCode.GROUP_MAX_SIZE_REACHED,
                f"The consumer group has reached its maximum capacity of {limit} members.",
            )

    def _member_for_heartbeat(
        self, group: ConsumerGroup, request: ConsumerGroupHeartbeatRequest, member_id: str, change: _Change
    ) -> tuple[ConsumerGroupMember, bool]:
        """K13-K16 and K34: the member as it was before this heartbeat, and whether it is new."""
        epoch = request.member_epoch
        instance_id = request.instance_id
        if instance_id is None:
            member = group.member(member_id)
            if member is None:
                if epoch != JOIN_GROUP_MEMBER_EPOCH:
                    raise GroupError(
                        ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}."
                    )
                return ConsumerGroupMember(member_id), True
            _check_member_epoch(member, epoch, request)
            return member, False
        owner = group.static_member(instance_id)
        if epoch == JOIN_GROUP_MEMBER_EPOCH:
            if owner is None:
                existing = group.member(member_id)
                if existing is not None:
                    _check_member_epoch(existing, epoch, request)
                    return existing, False
                return ConsumerGroupMember(member_id, instance_id=instance_id), True
            # No exemption for the owner's own member id (Kafka has none): an active instance re-sending epoch 0
            # is refused, and one that left with -2 is replaced by its own copy, partitions included.
            if owner.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                raise GroupError(
                    ErrorCode.UNRELEASED_INSTANCE_ID,
                    f"Static member {member_id} with instance id {instance_id} cannot join the group because the"
                    f" instance id is owned by {owner.member_id} member.",
                )
            return self._replace_static_consumer_member(group, owner, member_id, change), False
        owner = static_owner(group, instance_id, member_id)
        _check_member_epoch(owner, epoch, request)
        return owner, False

    def _replace_static_consumer_member(
        self, group: ConsumerGroup, old: ConsumerGroupMember, member_id: str, change: _Change
    ) -> ConsumerGroupMember:
        """K34: the returning instance takes over the departed member's partitions and target at once."""
        group_id = group.group_id
        target = group.target.pop(old.member_id, {})
        group.remove_member(old.member_id)
        self._cancel_consumer_timers(group_id, old.member_id)
        state = replace(old.assignment, member_epoch=0, previous_member_epoch=0)
        new = replace(old, member_id=member_id, assignment=state)
        group.put_member(new)
        group.target[member_id] = target
        change.records.extend(member_tombstones(group_id, old.member_id))
        change.records.append(member_metadata_record(group_id, new))
        change.records.append(target_member_record(group_id, member_id, target))
        change.records.append(current_assignment_record(group_id, member_id, state))
        self._events.member_fenced(group_id, old.instance_id or "", old.member_id, member_id)
        return new

    def _updated_member(
        self, ctx: RequestContext, request: ConsumerGroupHeartbeatRequest, member: ConsumerGroupMember
    ) -> ConsumerGroupMember:
        """K17: the member with every non-null field of the request applied, and the client's identity; `member`
        itself when nothing changes (a steady heartbeat carries no field), so callers can skip their writes."""
        names = request.subscribed_topic_names
        regex = request.subscribed_topic_regex
        if (
            names is None
            and regex is None
            and request.instance_id is None
            and request.rack_id is None
            and request.rebalance_timeout_ms == -1
            and request.server_assignor is None
            and member.classic is None
            and ctx.client_id == member.client_id
            and ctx.client_host == member.client_host
        ):
            return member
        return replace(
            member,
            instance_id=request.instance_id if request.instance_id is not None else member.instance_id,
            rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
            client_id=ctx.client_id,
            client_host=ctx.client_host,
            subscribed_topic_names=tuple(sorted(set(names))) if names is not None else member.subscribed_topic_names,
            subscribed_topic_regex=(regex or None) if regex is not None else member.subscribed_topic_regex,
            rebalance_timeout_ms=request.rebalance_timeout_ms
            if request.rebalance_timeout_ms != -1
            else member.rebalance_timeout_ms,
            server_assignor=request.server_assignor if request.server_assignor is not None else member.server_assignor,
            classic=None,
        )

    # -- subscriptions, epochs and the target ----------------------------------------------------------------

    def _resolve_new_regex(self, group: ConsumerGroup, regex: str, change: _Change) -> None:
        """A regular expression new to the group is checked (K7) and resolved at once against the topics (a
        deliberate difference: Kafka resolves it in the background, at most every 10 s)."""
        if regex in group.resolved_regexes:
            change.bump_reasons.append(f"subscription changed to regex {regex!r}")
            return
        resolved = self._regexes.resolve(regex, self._topics.names())
        if isinstance(resolved, InvalidRegularExpression):
            raise GroupError(resolved.error_code, resolved.message)
        group.resolved_regexes[regex] = frozenset(resolved)
        change.bump_reasons.append(f"regex {regex!r} resolved to {len(resolved)} topics")

    def _refresh_topic_metadata(self, group: ConsumerGroup, change: _Change, *, force: bool) -> None:
        """K18-K19, K59, K62: when the topics changed since the group last looked (or the epoch moves anyway),
        re-resolve its regular expressions and recompute the subscribed topics' metadata; a difference bumps."""
        version = self._topics.version
        if not force and group.metadata_version_seen == version:
            return
        if group.metadata_version_seen != version:
            names = list(self._topics.names())
            for regex in sorted(group.regexes()):
                resolved = self._regexes.resolve(regex, names)
                topics = frozenset() if isinstance(resolved, InvalidRegularExpression) else frozenset(resolved)
                if group.resolved_regexes.get(regex) != topics:
                    group.resolved_regexes[regex] = topics
                    change.bump_reasons.append(f"regex {regex!r} now matches {len(topics)} topics")
        for regex in set(group.resolved_regexes) - group.regexes():
            del group.resolved_regexes[regex]
        group.metadata_version_seen = version
        metadata: dict[str, TopicImage] = {}
        for name in sorted(group.all_subscribed_topic_names()):
            image = self._topics.by_name(name)
            if image is not None:
                metadata[name] = image
        if metadata != group.subscription_metadata:
            group.subscription_metadata = metadata
            change.records.append(subscription_metadata_record(group.group_id, metadata))
            change.bump_reasons.append("subscribed topics metadata changed")

    def _bump_group_epoch(self, group: ConsumerGroup, change: _Change) -> None:
        group.group_epoch += 1
        change.records.append(group_epoch_record(group.group_id, group.group_epoch))
        self._events.group_epoch_bumped(group.group_id, group.group_epoch, "; ".join(change.bump_reasons))

    def _may_assign(self, group: ConsumerGroup) -> bool:
        """Kafka 4.3+'s `group.consumer.assignment.interval.ms`: a new target at most once per interval, the
        first at once. Until then the group stays Assigning and members reconcile towards the current target; the
        next heartbeat after the interval computes it."""
        last = group.last_assignment_ms
        return last is None or self._now_ms - last >= self._config.consumer_group_assignment_interval_ms

    def _assign(self, group: ConsumerGroup, change: _Change) -> None:
        """K21-K22: a new target for every member, written as the changed members and the new epoch."""
        group.last_assignment_ms = self._now_ms
        assignor = preferred_assignor(group, self._config.consumer_group_assignors)
        target = compute_target(group, assignor)
        group_id = group.group_id
        for member_id in target.changed:
            change.records.append(target_member_record(group_id, member_id, target.assignment[member_id]))
        group.target = {member_id: target.assignment.get(member_id, {}) for member_id in group.members}
        group.assignment_epoch = group.group_epoch
        change.records.append(target_epoch_record(group_id, group.assignment_epoch))
        self._events.target_assignment_computed(
            group_id, group.assignment_epoch, assignor, len(group.members), len(target.changed)
        )

    def _reconcile_member(
        self,
        group: ConsumerGroup,
        member: ConsumerGroupMember,
        request: ConsumerGroupHeartbeatRequest,
        subscription_changed: bool,
        change: _Change,
    ) -> ConsumerGroupMember:
        """K24-K27 and K32: one reconciliation step; a moved member is written and its revocation timer set."""
        current = member.assignment
        if (
            current.state is MemberState.STABLE
            and current.member_epoch == group.assignment_epoch
            and not subscription_changed
        ):
            return member  # Kafka's STABLE case at the target epoch: nothing to move (the steady heartbeat)
        owned = (
            None
            if request.topic_partitions is None
            else partitions_from((tp.topic_id, tp.partitions) for tp in request.topic_partitions)
        )
        subscribed = frozenset(
            group.subscription_metadata[name].topic_id
            for name in group.subscribed_topic_names(member)
            if name in group.subscription_metadata
        )
        step = Heartbeat(owned, group.is_held, subscribed, enforce_subscription=subscription_changed)
        target = TargetAssignment(group.assignment_epoch, assignment_partitions(group.target_of(member.member_id)))
        state = reconcile(member.assignment, target, step)
        if state == member.assignment:
            return member
        reconciled = member.with_assignment(state)
        group.put_member(reconciled)
        change.records.append(current_assignment_record(group.group_id, member.member_id, state))
        unreleased = len(assignment_partitions(group.target_of(member.member_id)) - state.assigned_partitions)
        self._events.member_reconciled(
            group.group_id,
            member.member_id,
            state.member_epoch,
            state.state.name,
            len(state.assigned_partitions),
            len(state.partitions_pending_revocation),
            unreleased if state.state is MemberState.UNRELEASED_PARTITIONS else 0,
        )
        self._arm_revocation(group.group_id, reconciled)
        return reconciled

    # -- leave -----------------------------------------------------------------------------------------------

    def _consumer_leave(self, request: ConsumerGroupHeartbeatRequest) -> CoordinatorResult[Response]:
        """K35-K37: -1 removes the member (group epoch bumped); -2 keeps a static member's partitions for its
        return."""
        group_id = request.group_id
        group = self._live_consumer_group(group_id)
        if group is None:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, self._consumer_group_not_found(group_id))
        instance_id = request.instance_id
        if instance_id is None:
            member = group.member(request.member_id)
            if member is None:
                raise GroupError(
                    ErrorCode.UNKNOWN_MEMBER_ID, f"Member {request.member_id} is not a member of group {group_id}."
                )
        else:
            member = static_owner(group, instance_id, request.member_id)
        response = Response(member_id=member.member_id, member_epoch=request.member_epoch)
        snapshot = group.snapshot()
        if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            state = replace(
                member.assignment,
                member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                partitions_pending_revocation=frozenset(),
            )
            group.put_member(member.with_assignment(state))
            self._timer.cancel(revocation_key(group_id, member.member_id))
            self._events.member_left(group_id, member.member_id, instance_id, "static member left temporarily (-2)")
            self._note_state(group)
            records = [current_assignment_record(group_id, member.member_id, state)]
        else:
            records = self._fence_member(group, member, "the member left the group (-1)")
            self._events.member_left(group_id, member.member_id, instance_id, "ConsumerGroupHeartbeat with epoch -1")
        return self._group_write(
            group,
            records,
            response,
            "consumer group leave",
            partial(self._heartbeat_written, group, snapshot, False, response),
        )

    def _fence_member(self, group: ConsumerGroup, member: ConsumerGroupMember, reason: str) -> list[CoordinatorRecord]:
        """K36: remove the member, drop its target, re-read the subscriptions and bump the group epoch."""
        return self._fence_members(group, [member], reason)

    def _fence_members(
        self, group: ConsumerGroup, members: list[ConsumerGroupMember], reason: str
    ) -> list[CoordinatorRecord]:
        """K36/M22: remove the members (a classic LeaveGroup may name several) and bump the group epoch once for all.
        The new target is computed at the next heartbeat, except for a group left empty: Kafka 4.4 then moves the
        (empty) target to the new epoch at once (consumerGroupFenceMembers), so an Empty group is never Assigning."""
        group_id = group.group_id
        change = _Change()
        for member in members:
            group.remove_member(member.member_id)
            group.target.pop(member.member_id, None)
            self._cancel_consumer_timers(group_id, member.member_id)
            change.records.extend(member_tombstones(group_id, member.member_id))
            change.bump_reasons.append(f"member {member.member_id} removed: {reason}")
        self._refresh_topic_metadata(group, change, force=True)
        self._bump_group_epoch(group, change)
        if not group.members:
            group.target = {}
            group.assignment_epoch = group.group_epoch
            change.records.append(target_epoch_record(group_id, group.assignment_epoch))
        self._note_state(group)
        return change.records

    # -- timers ----------------------------------------------------------------------------------------------

    def _schedule_session(self, group_id: str, member_id: str, timeout_ms: int | None = None) -> None:
        """K31: every heartbeat pushes the member's session deadline (a classic member's: its own session
        timeout, M9b/M18)."""
        self._timer.schedule(
            session_key(group_id, member_id),
            self._now_ms + (self._config.consumer_group_session_timeout_ms if timeout_ms is None else timeout_ms),
            partial(self._consumer_timer_fired, group_id, member_id, None, "the member session expired"),
        )

    def _arm_revocation(self, group_id: str, member: ConsumerGroupMember) -> None:
        """K32: a member that must revoke has its rebalance timeout to do it, at the epoch it was asked at (a classic
        member has its join timer instead, M18)."""
        if member.state is MemberState.UNREVOKED_PARTITIONS and not member.uses_classic_protocol:
            self._schedule_revocation(group_id, member)
        else:
            self._timer.cancel(revocation_key(group_id, member.member_id))

    def _schedule_revocation(self, group_id: str, member: ConsumerGroupMember) -> None:
        """The revocation timer: fence the member if it is still at its current epoch after its rebalance timeout."""
        self._schedule_fence(
            revocation_key(group_id, member.member_id),
            group_id,
            member.member_id,
            member.member_epoch,
            member.rebalance_timeout_ms,
            "the member failed to revoke partitions within its rebalance timeout",
        )

    def _schedule_fence(
        self, key: Hashable, group_id: str, member_id: str, epoch: int | None, delay_ms: int, reason: str
    ) -> None:
        """Arm (or re-arm) `key` to fence the member in `delay_ms` (if it is still there at `epoch`, when given)."""
        self._timer.schedule(
            key,
            self._now_ms + max(delay_ms, 0),
            partial(self._consumer_timer_fired, group_id, member_id, epoch, reason),
        )

    def _cancel_consumer_timers(self, group_id: str, member_id: str) -> None:
        self._timer.cancel(session_key(group_id, member_id))
        self._timer.cancel(revocation_key(group_id, member_id))
        self._timer.cancel(classic_join_key(group_id, member_id))
        self._timer.cancel(classic_sync_key(group_id, member_id))

    def _consumer_timer_fired(self, group_id: str, member_id: str, epoch: int | None, reason: str) -> None:
        """A session or revocation deadline passed: fence the member (if it is still there at that epoch)."""
        group = self._consumer_groups.get(group_id)
        member = None if group is None else group.member(member_id)
        if group is None or member is None or (epoch is not None and member.member_epoch != epoch):
            return
        self._events.member_expired(group_id, member_id, member.instance_id, reason)
        self.expire_consumer_member(group, member, reason)

    def expire_consumer_member(self, group: ConsumerGroup, member: ConsumerGroupMember, reason: str) -> None:
        """Fence `member` on the coordinator's own initiative (timers, operator controls)."""
        snapshot = group.snapshot()
        records = self._fence_member(group, member, reason)

        def written(error: ErrorCode) -> None:
            if error != ErrorCode.NONE:
                self._undo_write(group, snapshot)

        self._write(self._group_write(group, records, None, "consumer group member fenced", written))

    # -- state -----------------------------------------------------------------------------------------------

    def _note_state(self, group: ConsumerGroup) -> None:
        """Recompute the group's state (K39) and log a change."""
        new = group.computed_state()
        old = group.state
        if new is old:
            return
        group.state = new
        group.state_timestamp_ms = self._wall_ms
        self._events.group_state_changed(group.group_id, old.value, new.value, group.group_epoch)


def refused(error: GroupError) -> CoordinatorResult[Response]:
    """The answer to a heartbeat refused with `error` (nothing written)."""
    return CoordinatorResult.of(Response(error_code=error.code, error_message=error.message))


def static_owner(group: ConsumerGroup, instance_id: str, member_id: str) -> ConsumerGroupMember:
    """K16/K35/M15: the member holding `instance_id`, which must be `member_id`."""
    owner = group.static_member(instance_id)
    if owner is None:
        raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
    if owner.member_id != member_id:
        raise GroupError(
            ErrorCode.FENCED_INSTANCE_ID,
            f"Static member {member_id} with instance id {instance_id} was fenced by member {owner.member_id}.",
        )
    return owner


def _check_member_epoch(member: ConsumerGroupMember, epoch: int, request: ConsumerGroupHeartbeatRequest) -> None:
    """K14: a newer epoch is always fenced; an older one only passes as the previous epoch of a member whose
    reported partitions are all still assigned to it (its last response was lost)."""
    known = member.member_epoch
    if epoch > known:
        raise GroupError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The consumer group member has a greater member epoch ({epoch}) than the one known by the group"
            f" coordinator ({known}). The member must abandon all its partitions and rejoin.",
        )
    if epoch < known:
        owned = request.topic_partitions
        if (
            epoch != member.assignment.previous_member_epoch
            or owned is None
            or not partitions_from((tp.topic_id, tp.partitions) for tp in owned)
            <= member.assignment.assigned_partitions
        ):
            raise GroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The consumer group member has a smaller member epoch ({epoch}) than the one known by the group"
                f" coordinator ({known}). The member must abandon all its partitions and rejoin.",
            )


def _wire_assignment(partitions: Partitions) -> Assignment:
    return Assignment(topic_partitions=topic_partitions(partitions, _wire_topic))


def _wire_topic(topic_id: uuid.UUID, partitions: list[int]) -> TopicPartitions:
    return TopicPartitions(topic_id=topic_id, partitions=partitions)
