"""OffsetFetch (#37-#39): committed offsets of one group (v0-v7) or several (v8+).

Classic groups are read without membership checks. A missing or Dead group answers offset -1 for what was asked
(NONE); a null topic list (v2+) means every committed partition. Offsets pending in a transaction are never
answered (T63). With require_stable (v7+), a partition whose commit is still being written, or that has an offset
pending in any producer's transaction, answers UNSTABLE_OFFSET_COMMIT (offset -1) so the consumer retries rather
than start from a position that is about to change (KIP-447; per partition in every version, as Kafka). Group-level
errors go to the partitions (v0-1), the top level (v2-7) or the group (v8+).
"""

from __future__ import annotations

from coordinator.consumer_group.group import ConsumerGroup
from coordinator.consumer_group.offset_checks import validate_offset_fetch
from coordinator.context import RequestContext
from coordinator.errors import GroupError, offset_fetch_error
from coordinator.group import ClassicGroup
from coordinator.offset_base import OffsetManagerBase
from protocol.errors import ErrorCode
from protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
)

INVALID_OFFSET = -1
TOP_LEVEL_ERROR_VERSION = 2
MULTI_GROUP_VERSION = 8

#: (partition, committed offset, leader epoch, metadata, error code)
_PartitionResult = tuple[int, int, int, str, ErrorCode]
_TopicResult = tuple[str, list[_PartitionResult]]


class OffsetFetchMixin(OffsetManagerBase):
    """OffsetFetch."""

    def offset_fetch(self, ctx: RequestContext, request: OffsetFetchRequest) -> OffsetFetchResponse:
        if ctx.api_version >= MULTI_GROUP_VERSION:
            groups: list[OffsetFetchResponseGroup] = []
            for requested in request.groups:
                wanted = None if requested.topics is None else [(t.name, t.partition_indexes) for t in requested.topics]
                error, topics = self._fetch_group(
                    requested.group_id, wanted, request.require_stable, requested.member_id, requested.member_epoch
                )
                groups.append(
                    OffsetFetchResponseGroup(
                        group_id=requested.group_id,
                        error_code=error,
                        topics=[
                            OffsetFetchResponseTopics(
                                name=name,
                                partitions=[
                                    OffsetFetchResponsePartitions(
                                        partition_index=p,
                                        committed_offset=o,
                                        committed_leader_epoch=e,
                                        metadata=m,
                                        error_code=c,
                                    )
                                    for p, o, e, m, c in partitions
                                ],
                            )
                            for name, partitions in topics
                        ],
                    )
                )
            return OffsetFetchResponse(groups=groups)

        wanted = None if request.topics is None else [(t.name, t.partition_indexes) for t in request.topics]
        error, topics = self._fetch_group(request.group_id, wanted, request.require_stable)
        if error != ErrorCode.NONE:
            if ctx.api_version >= TOP_LEVEL_ERROR_VERSION:
                return OffsetFetchResponse(error_code=error)
            # v0-1 have no top-level error: every requested partition carries it.
            topics = [(name, [(p, INVALID_OFFSET, -1, "", error) for p in parts]) for name, parts in wanted or []]
        return OffsetFetchResponse(
            topics=[
                OffsetFetchResponseTopic(
                    name=name,
                    partitions=[
                        OffsetFetchResponsePartition(
                            partition_index=p, committed_offset=o, committed_leader_epoch=e, metadata=m, error_code=c
                        )
                        for p, o, e, m, c in partitions
                    ],
                )
                for name, partitions in topics
            ]
        )

    def _fetch_group(
        self,
        group_id: str | None,
        wanted: list[tuple[str, list[int]]] | None,
        require_stable: bool,
        member_id: str | None = None,
        member_epoch: int = -1,
    ) -> tuple[ErrorCode, list[_TopicResult]]:
        error = self._gate(group_id, allow_empty_id=True)
        if error is not None:
            return offset_fetch_error(error), []
        assert group_id is not None
        group: ClassicGroup | ConsumerGroup | None
        consumer_group = self._group_manager.consumer_group(group_id)
        if consumer_group is not None and not consumer_group.is_dead:
            try:
                validate_offset_fetch(consumer_group, member_id, member_epoch)  # K49
            except GroupError as e:
                return e.code, []
            group = consumer_group
        else:
            group = self._group_manager.group(group_id)
        if group is None or not self._group_manager.is_live(group):
            return ErrorCode.NONE, [
                (name, [(p, INVALID_OFFSET, -1, "", ErrorCode.NONE) for p in parts]) for name, parts in wanted or []
            ]
        offsets = group.offsets
        if wanted is None:
            wanted = [(topic, offsets.partitions_of(topic)) for topic in offsets.topics()]
        result: list[_TopicResult] = []
        for name, parts in wanted:
            partitions: list[_PartitionResult] = []
            for p in parts:
                if require_stable and offsets.is_unstable(name, p):
                    partitions.append((p, INVALID_OFFSET, -1, "", ErrorCode.UNSTABLE_OFFSET_COMMIT))
                    continue
                value = offsets.get(name, p)
                if value is None:
                    partitions.append((p, INVALID_OFFSET, -1, "", ErrorCode.NONE))
                else:
                    partitions.append((p, value.offset, value.leader_epoch, value.metadata, ErrorCode.NONE))
            result.append((name, partitions))
        return ErrorCode.NONE, result
