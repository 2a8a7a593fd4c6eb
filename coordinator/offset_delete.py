"""OffsetDelete (#43): delete some offsets of a group, refusing topics an active consumer group subscribes to.

Partitions the broker does not have are UNKNOWN_TOPIC_OR_PARTITION and keep their offsets (Kafka rejects them
before the coordinator sees the request, and answers them first: coordinator/topic_order.py).

The offsets disappear from what OffsetFetch answers at once; their tombstones are written and the response goes
out when they are durable (or with the mapped error when the write fails). A partition whose only offsets are
pending in a transaction gets a tombstone too, which drops them (T65: Kafka's `hasPendingTransactionalOffsets`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from coordinator.consumer_group.group import ConsumerGroup
from coordinator.consumer_group.offset_checks import is_subscribed_to_topic
from coordinator.group import ClassicGroup
from coordinator.offset_base import OffsetManagerBase
from coordinator.records import offset_commit_tombstone
from coordinator.result import CoordinatorResult
from coordinator.state import GroupState
from coordinator.topic_order import merged_by_topic
from protocol.errors import ErrorCode
from protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
)


def _nothing(_topic: str) -> bool:
    return False


def _partition(index: int, error: ErrorCode) -> OffsetDeleteResponsePartition:
    return OffsetDeleteResponsePartition(partition_index=index, error_code=error)


def _topic(name: str) -> OffsetDeleteResponseTopic:
    return OffsetDeleteResponseTopic(name=name)


class OffsetDeleteMixin(OffsetManagerBase):
    """OffsetDelete."""

    def offset_delete(self, request: OffsetDeleteRequest) -> CoordinatorResult[OffsetDeleteResponse]:
        """Delete some offsets of a group; topics an active consumer group subscribes to are refused (#43)."""
        error = self._gate(request.group_id, allow_empty_id=False)
        if error is not None:
            return CoordinatorResult.of(OffsetDeleteResponse(error_code=error))
        group: ClassicGroup | ConsumerGroup | None
        consumer_group = self._group_manager.consumer_group(request.group_id)
        subscribed_to: Callable[[str], bool]
        if consumer_group is not None and not consumer_group.is_dead:
            # K51: a consumer group refuses topics its members subscribe to, whatever its state.
            group = consumer_group
            subscribed_to = partial(is_subscribed_to_topic, consumer_group)
        else:
            group = self._group_manager.group(request.group_id)
            if group is None or group.is_in(GroupState.DEAD):
                return CoordinatorResult.of(OffsetDeleteResponse(error_code=ErrorCode.GROUP_ID_NOT_FOUND))
            if group.is_in(GroupState.EMPTY):
                subscribed_to = _nothing
            elif group.uses_consumer_protocol:
                subscribed_to = group.is_subscribed_to_topic
            else:
                return CoordinatorResult.of(OffsetDeleteResponse(error_code=ErrorCode.NON_EMPTY_GROUP))
        offsets = group.offsets
        deleted: list[tuple[str, int]] = []
        rejected: list[tuple[str, OffsetDeleteResponsePartition]] = []
        answered: list[tuple[str, OffsetDeleteResponsePartition]] = []
        known = self._known_partition
        for topic in request.topics:
            subscribed = subscribed_to(topic.name)
            code = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC if subscribed else ErrorCode.NONE
            for p in topic.partitions:
                tp = (topic.name, p.partition_index)
                if known is not None and not known(*tp):
                    rejected.append((topic.name, _partition(p.partition_index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)))
                    continue
                answered.append((topic.name, _partition(p.partition_index, code)))
                if not subscribed and tp not in deleted and (offsets.get(*tp) is not None or offsets.is_unstable(*tp)):
                    deleted.append(tp)
        response = OffsetDeleteResponse(topics=merged_by_topic(rejected, answered, _topic))
        for tp in deleted:
            offsets.delete(*tp)
        if deleted:
            self._events.offsets_deleted(group.group_id, deleted)

        def done(error: ErrorCode) -> None:
            if error != ErrorCode.NONE:
                response.error_code = error

        records = [offset_commit_tombstone(group.group_id, t, p) for t, p in deleted]
        return CoordinatorResult(records, response, group.partition, "offset delete", done)
