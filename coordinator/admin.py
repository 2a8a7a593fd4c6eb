"""Admin APIs of the group manager: DescribeGroups (#40), ListGroups (#41), DeleteGroups (#42).

Deletions follow the same persist-then-respond rule as commits: the group (or offsets) disappear from what the
coordinator reports at once, tombstones are written, and the reply goes out when they are durable. A deleted
group stays in memory as Dead until then, so requests racing the deletion get COORDINATOR_NOT_AVAILABLE and retry,
exactly what Kafka answers a client that catches a group in Dead.
"""

from __future__ import annotations

from collections.abc import Callable

from coordinator.consumer_group.group import ConsumerGroup, ConsumerGroupState
from coordinator.consumer_group.records import group_tombstones
from coordinator.group import ClassicGroup
from coordinator.group_base import GroupManagerBase
from coordinator.keys import heartbeat_key, join_key, sync_key
from coordinator.offsets import GroupOffsets
from coordinator.records import CoordinatorRecord, group_metadata_tombstone, offset_commit_tombstone
from coordinator.result import CoordinatorResult
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

#: DescribeGroups answers an unknown group GROUP_ID_NOT_FOUND from this version on (KIP-1043); Dead before.
GROUP_ID_NOT_FOUND_VERSION = 6


class AdminMixin(GroupManagerBase):
    """DescribeGroups, ListGroups, DeleteGroups, and the group-removal step retention shares."""

    # -- DescribeGroups --------------------------------------------------------------------------------------

    def describe_groups(self, request: DescribeGroupsRequest, api_version: int) -> DescribeGroupsResponse:
        return DescribeGroupsResponse(groups=[self._describe(group_id, api_version) for group_id in request.groups])

    def _describe(self, group_id: str, api_version: int) -> DescribedGroup:
        error = self._gate(group_id, allow_empty_id=True)
        if error is not None:
            return DescribedGroup(group_id=group_id, error_code=error)
        group = self._groups.get(group_id)
        if group is None or group.is_in(GroupState.DEAD):
            # K45: DescribeGroups describes classic groups only; a consumer group's id reads as Dead (v0-5), and
            # from v6 (KIP-1043) both are GROUP_ID_NOT_FOUND with Kafka's message (GroupMetadataManager.classicGroup).
            dead = DescribedGroup(group_id=group_id, group_state=GroupState.DEAD.value)
            if api_version >= GROUP_ID_NOT_FOUND_VERSION:
                dead.error_code = ErrorCode.GROUP_ID_NOT_FOUND
                consumer_group = self._consumer_groups.get(group_id)
                if consumer_group is not None and self.is_live(consumer_group):
                    dead.error_message = f"Group {group_id} is not a classic group."
                else:
                    dead.error_message = f"Group {group_id} not found."
            return dead
        # Only a Stable group shows the chosen protocol and each member's metadata for it; the assignment (the last
        # one the member received, b"" once a rebalance reset it) is shown in every state, as Kafka does.
        protocol = group.protocol_name if group.is_in(GroupState.STABLE) else None
        members = [
            DescribedGroupMember(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                member_metadata=m.metadata(protocol) if protocol is not None else b"",
                member_assignment=m.assignment,
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

    def list_groups(
        self, request: ListGroupsRequest, error: ErrorCode, listed_here: Callable[[str], bool]
    ) -> ListGroupsResponse:
        """Groups of every partition this coordinator owns (that the requesting node leads: `listed_here`);
        `error` is the partition manager's listing error: COORDINATOR_NOT_AVAILABLE alone, or LOAD_IN_PROGRESS (14)
        sent with the groups while any is loading."""
        if error == ErrorCode.COORDINATOR_NOT_AVAILABLE:
            return ListGroupsResponse(error_code=error)
        states = {s.strip().lower() for s in request.states_filter}
        types = {t.strip().lower() for t in request.types_filter}
        listed = [
            ListedGroup(
                group_id=group.group_id,
                protocol_type=group.protocol_type or "",
                group_state=group.state.value,
                group_type=group.group_type,
            )
            for group in self._all_groups()
            if self.is_live(group)
            and listed_here(group.group_id)
            and (not states or group.state.lower in states)
            and (not types or group.group_type in types)
        ]
        return ListGroupsResponse(error_code=error, groups=listed)

    # -- DeleteGroups ----------------------------------------------------------------------------------------

    def delete_groups(self, request: DeleteGroupsRequest) -> tuple[list[CoordinatorResult[None]], DeleteGroupsResponse]:
        """Delete Empty groups with their offsets: one result (tombstones) per partition, and the response to
        answer once they are all durable."""
        response = DeleteGroupsResponse()
        doomed: dict[int, list[tuple[ClassicGroup | ConsumerGroup, DeletableGroupResult]]] = {}
        for group_id in request.groups_names:
            result = DeletableGroupResult(group_id=group_id)
            response.results.append(result)
            error = self._gate(group_id, allow_empty_id=True)
            group: ClassicGroup | ConsumerGroup | None = None
            if error is None:
                group = self._consumer_groups.get(group_id) or self._groups.get(group_id)
            if error is not None:
                result.error_code = error
            elif group is None or not self.is_live(group):
                result.error_code = ErrorCode.GROUP_ID_NOT_FOUND
            elif not _is_empty(group):
                result.error_code = ErrorCode.NON_EMPTY_GROUP
            else:
                doomed.setdefault(group.partition, []).append((group, result))
        writes: list[CoordinatorResult[None]] = []
        for partition, items in doomed.items():
            records: list[CoordinatorRecord] = []
            for group, _ in items:
                records.extend(self._kill_any(group))

            def done(
                error: ErrorCode, items: list[tuple[ClassicGroup | ConsumerGroup, DeletableGroupResult]] = items
            ) -> None:
                for group, result in items:
                    self._forget_any(group, "DeleteGroups")
                    if error != ErrorCode.NONE:
                        result.error_code = error

            writes.append(CoordinatorResult(records, None, partition, "delete groups", done))
        return writes, response

    def _all_groups(self) -> list[ClassicGroup | ConsumerGroup]:
        """Both group types, by id (what ListGroups shows)."""
        groups: list[ClassicGroup | ConsumerGroup] = [*self._groups.values(), *self._consumer_groups.values()]
        return sorted(groups, key=_group_id)

    def _kill_any(self, group: ClassicGroup | ConsumerGroup) -> list[CoordinatorRecord]:
        return self.kill_consumer_group(group) if isinstance(group, ConsumerGroup) else self.kill_group(group)

    def _forget_any(self, group: ClassicGroup | ConsumerGroup, reason: str) -> None:
        if isinstance(group, ConsumerGroup):
            self._forget_consumer_group(group, reason)
        else:
            self.forget_group(group, reason)

    def kill_consumer_group(self, group: ConsumerGroup) -> list[CoordinatorRecord]:
        """K50: an empty consumer group goes Dead: its offsets' tombstones, then the group-level ones."""
        old = group.state
        group.state = ConsumerGroupState.DEAD
        self._events.group_state_changed(group.group_id, old.value, group.state.value, group.group_epoch)
        records = self._offset_tombstones(group.group_id, group.offsets)
        records.extend(group_tombstones(group.group_id))
        return records

    def _offset_tombstones(self, group_id: str, offsets: GroupOffsets) -> list[CoordinatorRecord]:
        """Tombstones for every offset of a group (committed or in flight), which are deleted from memory now."""
        partitions = {(t, p) for t, p, _ in offsets.items()} | set(offsets.pending_partitions())
        for t, p in partitions:
            offsets.delete(t, p)
        return [offset_commit_tombstone(group_id, t, p) for t, p in sorted(partitions)]

    def kill_group(self, group: ClassicGroup) -> list[CoordinatorRecord]:
        """Move an Empty group to Dead and return the tombstones that erase it: every offset (committed or in
        flight), then its group record. Kafka 4.4 (ClassicGroup.createGroupTombstoneRecords) writes that last one
        even for a group that never wrote a group record (a simple group), and so do we."""
        old = group.state
        group.transition_to(GroupState.DEAD, self._wall_ms)
        self._events.group_state_changed(group.group_id, old.value, GroupState.DEAD.value, group.generation_id)
        self._timer.cancel(join_key(group.group_id))
        self._timer.cancel(sync_key(group.group_id))
        for member_id in sorted(group.pending_members):
            self._timer.cancel(heartbeat_key(group.group_id, member_id))
        group.pending_members.clear()
        records = self._offset_tombstones(group.group_id, group.offsets)
        records.append(group_metadata_tombstone(group.group_id))
        return records


def _group_id(group: ClassicGroup | ConsumerGroup) -> str:
    return group.group_id


def _is_empty(group: ClassicGroup | ConsumerGroup) -> bool:
    return group.is_empty if isinstance(group, ConsumerGroup) else group.is_in(GroupState.EMPTY)
