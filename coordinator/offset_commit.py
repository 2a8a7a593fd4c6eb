"""OffsetCommit (#32-#35): validate against the group, write the commits, answer once they are durable.

Per partition, in Kafka's order (`offset_commit_base.py`): unknown topic/partition (UNKNOWN_TOPIC_OR_PARTITION,
if the broker gave us its metadata view; a commit left with no partition is answered as it is, without touching
the group, as Kafka's API layer does), then the group-level validation (one code for every partition), then
metadata too large (OFFSET_METADATA_TOO_LARGE). What remains is written as one batch of OffsetCommit records; the
commits become visible to OffsetFetch only when the batch is durable, and a failed write maps to Kafka's
per-partition codes.
"""

from __future__ import annotations

from coordinator.consumer_group.group import ConsumerGroup
from coordinator.context import RequestContext
from coordinator.errors import GroupError
from coordinator.group import ClassicGroup
from coordinator.offset_commit_base import CommitBase, CommitIdentity, answered_topics
from coordinator.offsets import NO_EXPIRE
from coordinator.result import CoordinatorResult
from coordinator.state import GroupState
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


def _answer(index: int) -> OffsetCommitResponsePartition:
    return OffsetCommitResponsePartition(partition_index=index)


def _topic(name: str) -> OffsetCommitResponseTopic:
    return OffsetCommitResponseTopic(name=name)


class OffsetCommitMixin(CommitBase):
    """OffsetCommit."""

    def offset_commit(
        self, ctx: RequestContext, request: OffsetCommitRequest
    ) -> CoordinatorResult[OffsetCommitResponse]:
        """Handle an OffsetCommit: the commit records, and the response to send once they are durable."""
        slots, rejected = self._request_slots(request.topics, _answer)
        response = OffsetCommitResponse(topics=answered_topics(slots, rejected, _topic))
        if not slots:  # KafkaApis does not ask the coordinator: no group is created or validated
            return CoordinatorResult.of(response)
        who = CommitIdentity(
            request.group_id, request.member_id, request.group_instance_id, request.generation_id_or_member_epoch
        )
        error = self._gate(request.group_id, allow_empty_id=True)
        group: ClassicGroup | ConsumerGroup | None = None
        if error is None:
            try:
                group = self._commit_group(
                    who,
                    ctx.api_version,
                    api="OffsetCommit",
                    transactional=False,
                    group_id_not_found_version=GROUP_ID_NOT_FOUND_VERSION,
                )
            except GroupError as e:
                error = e.code
        if error is not None or group is None:
            for slot in slots:
                slot.answer.error_code = error if error is not None else ErrorCode.UNKNOWN_SERVER_ERROR
            return CoordinatorResult.of(response)

        if isinstance(group, ClassicGroup) and group.state in (GroupState.STABLE, GroupState.PREPARING_REBALANCE):
            member = group.members.get(request.member_id)
            if member is not None:
                # In the classic protocol a commit also proves liveness (#27).
                self._group_manager.record_liveness(member)

        expire_ms = NO_EXPIRE
        if ctx.api_version in RETENTION_VERSIONS and request.retention_time_ms != -1:
            expire_ms = self._time.wall_ms + request.retention_time_ms
        writes, records = self._prepare_writes(group.group_id, slots, expire_ms)
        if not records:
            return CoordinatorResult.of(response)

        offsets = group.offsets
        add_pending = offsets.add_pending
        for write in writes:
            write.position = add_pending(write.topic, write.partition)

        def durable(error: ErrorCode) -> None:
            code = error  # already mapped by the runtime
            apply = code == ErrorCode.NONE and self._group_manager.is_live(group)
            finish_pending = offsets.finish_pending
            for write in writes:
                finish_pending(write.topic, write.partition, write.position, write.value if apply else None)
                write.answer.error_code = code
            if code == ErrorCode.NONE:
                self._events.offsets_committed(group.group_id, who.member_id, who.generation, len(writes))

        return CoordinatorResult(records, response, group.partition, "offset commit", durable)
