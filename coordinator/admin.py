"""Admin APIs: DescribeGroups (#40), ListGroups (#41), DeleteGroups (#42), OffsetDelete (#43).

Deletions follow the same persist-then-respond rule as commits: the group (or offsets) disappear from what the
coordinator reports at once, tombstones are written, and the reply goes out when they are durable. A deleted
group stays in memory as Dead until then, so requests racing the deletion get COORDINATOR_NOT_AVAILABLE and retry,
exactly what Kafka answers a client that catches a group in Dead.
"""

from __future__ import annotations

from collections.abc import Callable

from coordinator.context import RequestContext
from coordinator.core import CoordinatorCore, PartitionStatus, heartbeat_key, join_key, sync_key
from coordinator.errors import append_error_to_response
from coordinator.group import ClassicGroup
from coordinator.records import CoordinatorRecord, group_metadata_tombstone, offset_commit_tombstone
from coordinator.reply import Reply
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.delete_groups import DeletableGroupResult, DeleteGroupsRequest, DeleteGroupsResponse
from protocol.messages.describe_groups import (
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)
from protocol.messages.list_groups import ListedGroup, ListGroupsRequest, ListGroupsResponse
from protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
)


class AdminMixin(CoordinatorCore):
    """DescribeGroups, ListGroups, DeleteGroups, OffsetDelete, and the shared group-removal steps."""

    # -- DescribeGroups --------------------------------------------------------------------------------------

    def describe_groups(
        self, ctx: RequestContext, request: DescribeGroupsRequest, now_ms: int
    ) -> DescribeGroupsResponse:
        self._advance(now_ms, ctx.wall_ms)
        return DescribeGroupsResponse(groups=[self._describe(group_id) for group_id in request.groups])

    def _describe(self, group_id: str) -> DescribedGroup:
        error = self._gate(group_id, allow_empty_id=True)
        if error is not None:
            return DescribedGroup(group_id=group_id, error_code=error)
        group = self._groups.get(group_id)
        if group is None or group.is_in(GroupState.DEAD):
            return DescribedGroup(group_id=group_id, group_state=GroupState.DEAD.value)
        stable = group.is_in(GroupState.STABLE)
        protocol = group.protocol_name if stable else None
        members = [
            DescribedGroupMember(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                member_metadata=m.metadata(protocol) if protocol is not None else b"",
                member_assignment=m.assignment if stable else b"",
            )
            for m in group.members.values()
        ]
        return DescribedGroup(
            group_id=group_id,
            group_state=group.state.value,
            protocol_type=group.protocol_type or "",
            protocol_data=protocol or "",
            members=members,
        )

    # -- ListGroups ------------------------------------------------------------------------------------------

    def list_groups(self, ctx: RequestContext, request: ListGroupsRequest, now_ms: int) -> ListGroupsResponse:
        """Groups of every partition this coordinator owns; error 14 (with the groups) while any is loading."""
        self._advance(now_ms, ctx.wall_ms)
        if not self._active:
            return ListGroupsResponse(error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE)
        loading = any(s is PartitionStatus.LOADING for s in self._partitions.values())
        states = {s.strip().lower() for s in request.states_filter}
        types = {t.strip().lower() for t in request.types_filter}
        listed = [
            ListedGroup(
                group_id=group.group_id,
                protocol_type=group.protocol_type or "",
                group_state=group.state.value,
                group_type=group.group_type,
            )
            for group_id, group in sorted(self._groups.items())
            if not group.is_in(GroupState.DEAD)
            and (not states or group.state.lower in states)
            and (not types or group.group_type in types)
        ]
        error = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS if loading else ErrorCode.NONE
        return ListGroupsResponse(error_code=error, groups=listed)

    # -- DeleteGroups ----------------------------------------------------------------------------------------

    def delete_groups(
        self, ctx: RequestContext, request: DeleteGroupsRequest, now_ms: int
    ) -> Reply[DeleteGroupsResponse]:
        """Delete Empty groups with their offsets; answered once the tombstones are durable."""
        self._advance(now_ms, ctx.wall_ms)
        response = DeleteGroupsResponse()
        doomed: dict[int, list[tuple[ClassicGroup, DeletableGroupResult]]] = {}
        for group_id in request.groups_names:
            result = DeletableGroupResult(group_id=group_id)
            response.results.append(result)
            error = self._gate(group_id, allow_empty_id=True)
            group = self._groups.get(group_id) if error is None else None
            if error is not None:
                result.error_code = error
            elif group is None or group.is_in(GroupState.DEAD):
                result.error_code = ErrorCode.GROUP_ID_NOT_FOUND
            elif not group.is_in(GroupState.EMPTY):
                result.error_code = ErrorCode.NON_EMPTY_GROUP
            else:
                doomed.setdefault(group.partition, []).append((group, result))
        reply: Reply[DeleteGroupsResponse] = Reply()
        outstanding = [len(doomed)]

        def partition_done() -> None:
            outstanding[0] -= 1
            if outstanding[0] == 0:
                reply.complete(response)

        if not doomed:
            reply.complete(response)
        for partition, items in doomed.items():
            records: list[CoordinatorRecord] = []
            for group, _ in items:
                records.extend(self._kill_group(group))

            def done(error: ErrorCode, items: list[tuple[ClassicGroup, DeletableGroupResult]] = items) -> None:
                for group, result in items:
                    self._forget_group(group, "DeleteGroups")
                    if error != ErrorCode.NONE:
                        result.error_code = append_error_to_response(error)
                partition_done()

            self._write_or_finish(partition, records, "delete groups", done)
        return reply

    def _kill_group(self, group: ClassicGroup) -> list[CoordinatorRecord]:
        """Move an Empty group to Dead and return the tombstones that erase it: every offset (committed or in
        flight) and, if it ever had a generation, its metadata (generation 0 groups never wrote any)."""
        old = group.state
        group.transition_to(GroupState.DEAD, self._wall_ms)
        self._events.group_state_changed(group.group_id, old.value, GroupState.DEAD.value, group.generation_id)
        self._timer.cancel(join_key(group.group_id))
        self._timer.cancel(sync_key(group.group_id))
        for member_id in sorted(group.pending_members):
            self._timer.cancel(heartbeat_key(group.group_id, member_id))
        group.pending_members.clear()
        offsets = group.offsets
        partitions = {(t, p) for t, p, _ in offsets.items()} | set(offsets.pending_partitions())
        records = [offset_commit_tombstone(group.group_id, t, p) for t, p in sorted(partitions)]
        for t, p in partitions:
            offsets.delete(t, p)
        if group.generation_id > 0:
            records.append(group_metadata_tombstone(group.group_id))
        return records

    def _write_or_finish(
        self, partition: int, records: list[CoordinatorRecord], purpose: str, done: Callable[[ErrorCode], None]
    ) -> None:
        if records:
            self._append(partition, records, purpose, done)
        else:
            done(ErrorCode.NONE)

    # -- OffsetDelete ----------------------------------------------------------------------------------------

    def offset_delete(
        self, ctx: RequestContext, request: OffsetDeleteRequest, now_ms: int
    ) -> Reply[OffsetDeleteResponse]:
        """Delete some offsets of a group; topics an active consumer group subscribes to are refused (#43)."""
        self._advance(now_ms, ctx.wall_ms)
        error = self._gate(request.group_id, allow_empty_id=False)
        if error is not None:
            return Reply.completed(OffsetDeleteResponse(error_code=error))
        group = self._groups.get(request.group_id)
        if group is None or group.is_in(GroupState.DEAD):
            return Reply.completed(OffsetDeleteResponse(error_code=ErrorCode.GROUP_ID_NOT_FOUND))
        active = not group.is_in(GroupState.EMPTY)
        if active and not group.uses_consumer_protocol:
            return Reply.completed(OffsetDeleteResponse(error_code=ErrorCode.NON_EMPTY_GROUP))
        response = OffsetDeleteResponse()
        offsets = group.offsets
        deleted: list[tuple[str, int]] = []
        for topic in request.topics:
            subscribed = active and group.is_subscribed_to_topic(topic.name)
            code = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC if subscribed else ErrorCode.NONE
            response.topics.append(
                OffsetDeleteResponseTopic(
                    name=topic.name,
                    partitions=[
                        OffsetDeleteResponsePartition(partition_index=p.partition_index, error_code=code)
                        for p in topic.partitions
                    ],
                )
            )
            if subscribed:
                continue
            for p in topic.partitions:
                tp = (topic.name, p.partition_index)
                if tp not in deleted and (offsets.get(*tp) is not None or offsets.is_pending(*tp)):
                    deleted.append(tp)
        for tp in deleted:
            offsets.delete(*tp)
        if deleted:
            self._events.offsets_deleted(group.group_id, deleted)
        reply: Reply[OffsetDeleteResponse] = Reply()

        def done(error: ErrorCode) -> None:
            if error != ErrorCode.NONE:
                response.error_code = append_error_to_response(error)
            reply.complete(response)

        records = [offset_commit_tombstone(group.group_id, t, p) for t, p in deleted]
        self._write_or_finish(group.partition, records, "offset delete", done)
        return reply
