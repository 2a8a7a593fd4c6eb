"""OffsetCommit (#32-#35): validate against the group, write the commits, answer once they are durable.

Per partition, in Kafka's order: unknown topic/partition (UNKNOWN_TOPIC_OR_PARTITION, if the broker gave us its
metadata view; a commit left with no partition is answered as it is, without touching the group, as Kafka's
API layer does), then the group-level validation (one code for every partition), then metadata too large
(OFFSET_METADATA_TOO_LARGE). What remains is written as one batch of OffsetCommit records; the commits become
visible to OffsetFetch only when the batch is durable, and a failed write maps to Kafka's per-partition codes.
"""

from __future__ import annotations

from dataclasses import dataclass

from coordinator.consumer_group.group import ConsumerGroup
from coordinator.consumer_group.offset_checks import validate_offset_commit
from coordinator.context import RequestContext
from coordinator.errors import GroupError
from coordinator.group import ClassicGroup
from coordinator.offset_base import OffsetManagerBase
from coordinator.offsets import NO_EXPIRE, OffsetAndMetadata
from coordinator.records import CoordinatorRecord, offset_commit_record
from coordinator.result import CoordinatorResult
from coordinator.state import GroupState
from coordinator.topic_order import merged_by_topic
from protocol.errors import ErrorCode
from protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)

GROUP_ID_NOT_FOUND_VERSION = 9
"""OffsetCommit v9+ answers GROUP_ID_NOT_FOUND for a missing group when a generation is given (#33)."""
RETENTION_VERSIONS = range(2, 5)
"""OffsetCommit v2-v4 carry a per-request retention time (#35)."""
DEFAULT_TIMESTAMP = -1


def java_string_length(value: str) -> int:
    """`String.length()` in Java: UTF-16 code units. Kafka compares commit metadata to
    offset.metadata.max.bytes with it, so "bytes" really means characters (astral ones count twice)."""
    if value.isascii():
        return len(value)
    return len(value.encode("utf-16-le", "surrogatepass")) // 2


def _topic(name: str) -> OffsetCommitResponseTopic:
    return OffsetCommitResponseTopic(name=name)


@dataclass(slots=True)
class _Write:
    topic: str
    partition: int
    value: OffsetAndMetadata
    response: OffsetCommitResponsePartition


class OffsetCommitMixin(OffsetManagerBase):
    """OffsetCommit."""

    def offset_commit(
        self, ctx: RequestContext, request: OffsetCommitRequest
    ) -> CoordinatorResult[OffsetCommitResponse]:
        """Handle an OffsetCommit: the commit records, and the response to send once they are durable."""
        slots: list[tuple[str, OffsetCommitResponsePartition, int, int, str | None, int, int]] = []
        rejected: list[tuple[str, OffsetCommitResponsePartition]] = []
        known = self._known_partition
        for topic in request.topics:
            for p in topic.partitions:
                partition_response = OffsetCommitResponsePartition(partition_index=p.partition_index)
                if known is not None and not known(topic.name, p.partition_index):
                    partition_response.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    rejected.append((topic.name, partition_response))
                    continue
                slots.append(
                    (
                        topic.name,
                        partition_response,
                        p.partition_index,
                        p.committed_offset,
                        p.committed_metadata,
                        p.committed_leader_epoch,
                        p.commit_timestamp,
                    )
                )
        answered = [(slot[0], slot[1]) for slot in slots]
        response = OffsetCommitResponse(topics=merged_by_topic(rejected, answered, _topic))
        if not slots:  # KafkaApis does not ask the coordinator: no group is created or validated
            return CoordinatorResult.of(response)

        if not slots:  # Kafka's API layer answers this itself: the group is neither checked nor created
            return CoordinatorResult.of(response)
        error = self._gate(request.group_id, allow_empty_id=True)
        group: ClassicGroup | ConsumerGroup | None = None
        if error is None:
            try:
                group = self._validate_offset_commit(ctx, request)
            except GroupError as e:
                error = e.code
        if error is not None or group is None:
            for slot in slots:
                slot[1].error_code = error if error is not None else ErrorCode.UNKNOWN_SERVER_ERROR
            return CoordinatorResult.of(response)

        if isinstance(group, ClassicGroup) and group.state in (GroupState.STABLE, GroupState.PREPARING_REBALANCE):
            member = group.members.get(request.member_id)
            if member is not None:
                # In the classic protocol a commit also proves liveness (#27).
                self._group_manager.record_liveness(member)

        wall_ms = self._time.wall_ms
        expire_ms = NO_EXPIRE
        if ctx.api_version in RETENTION_VERSIONS and request.retention_time_ms != -1:
            expire_ms = wall_ms + request.retention_time_ms
        max_metadata = self._config.offset_metadata_max_bytes
        writes: list[_Write] = []
        records: list[CoordinatorRecord] = []
        for topic_name, partition_response, index, offset, metadata, epoch, timestamp in slots:
            if metadata is not None and java_string_length(metadata) > max_metadata:
                partition_response.error_code = ErrorCode.OFFSET_METADATA_TOO_LARGE
                continue
            value = OffsetAndMetadata(
                offset=offset,
                leader_epoch=epoch,
                metadata=metadata or "",
                commit_timestamp_ms=wall_ms if timestamp == DEFAULT_TIMESTAMP else timestamp,
                expire_timestamp_ms=expire_ms,
            )
            writes.append(_Write(topic_name, index, value, partition_response))
            records.append(offset_commit_record(group.group_id, topic_name, index, value))
        if not records:
            return CoordinatorResult.of(response)

        offsets = group.offsets
        markers = [offsets.add_pending(write.topic, write.partition) for write in writes]
        member_id = request.member_id
        generation = request.generation_id_or_member_epoch

        def durable(error: ErrorCode) -> None:
            alive = self._group_manager.is_live(group)
            code = error  # already mapped by the runtime
            for write, marker in zip(writes, markers, strict=True):
                applied = write.value if code == ErrorCode.NONE and alive else None
                offsets.finish_pending(write.topic, write.partition, marker, applied)
                write.response.error_code = code
            if code == ErrorCode.NONE:
                self._events.offsets_committed(group.group_id, member_id, generation, len(writes))

        return CoordinatorResult(records, response, group.partition, "offset commit", durable)

    def _validate_offset_commit(
        self, ctx: RequestContext, request: OffsetCommitRequest
    ) -> ClassicGroup | ConsumerGroup:
        """#32/#33 (Kafka `validateOffsetCommit`); creates a simple group for a generation-less commit. A consumer
        group checks the member's epoch instead (K46)."""
        generation = request.generation_id_or_member_epoch
        consumer_group = self._group_manager.consumer_group(request.group_id)
        if consumer_group is not None:
            if consumer_group.is_dead:
                raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
            validate_offset_commit(consumer_group, request.member_id, generation, ctx.api_version)
            return consumer_group
        group = self._group_manager.group(request.group_id)
        if group is None:
            if generation < 0:
                return self._group_manager.create_group(request.group_id, "OffsetCommit from a simple consumer")
            if ctx.api_version >= GROUP_ID_NOT_FOUND_VERSION:
                raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND)
            raise GroupError(ErrorCode.ILLEGAL_GENERATION)
        if group.is_in(GroupState.DEAD):
            raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if generation < 0 and group.is_in(GroupState.EMPTY):
            return group  # a simple/admin consumer committing for an Empty group
        if generation >= 0 or request.member_id or request.group_instance_id is not None:
            group.validate_member(request.member_id, request.group_instance_id)
            if generation != group.generation_id:
                raise GroupError(ErrorCode.ILLEGAL_GENERATION)
        elif not group.is_in(GroupState.EMPTY):
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID)
        if group.is_in(GroupState.COMPLETING_REBALANCE):
            raise GroupError(ErrorCode.REBALANCE_IN_PROGRESS)
        return group
