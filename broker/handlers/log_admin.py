"""Admin APIs over the partition logs: DeleteRecords (moves a log start offset), OffsetForLeaderEpoch (where a
leader epoch ended, from the epoch cache) and DescribeLogDirs (the log directory and its partitions' sizes).

Each answers as Kafka's single leader does (ReplicaManager / Partition): per-partition errors, nothing waited for
(there are no followers whose log start or log end must catch up).
"""

from __future__ import annotations

import shutil

import structlog

from broker.context import RequestContext
from broker.dispatch import Dispatcher
from broker.group_topics import INTERNAL_TOPICS
from broker.leader_epochs import check_current_leader_epoch
from broker.leader_logs import LeaderLogs
from protocol.errors import ErrorCode
from protocol.messages.delete_records import (
    DeleteRecordsPartitionResult,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteRecordsTopicResult,
)
from protocol.messages.describe_log_dirs import (
    DescribeLogDirsPartition,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    DescribeLogDirsResult,
    DescribeLogDirsTopic,
)
from protocol.messages.offset_for_leader_epoch import (
    EpochEndOffset,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderTopicResult,
)
from protocol.registry import ApiKey
from storage.errors import StorageError
from storage.log_manager import LogManager

__all__ = ["LogAdminHandlers"]

log = structlog.get_logger("broker.log_admin")

#: DeleteRecords' offset meaning "up to the high watermark" (Kafka's DeleteRecordsRequest.HIGH_WATERMARK).
HIGH_WATERMARK = -1


class LogAdminHandlers:
    def __init__(self, logs: LogManager, leader_logs: LeaderLogs) -> None:
        self._logs = logs
        self._leader_logs = leader_logs

    def register(self, d: Dispatcher) -> None:
        d.register(ApiKey.DELETE_RECORDS, self.delete_records)
        d.register(ApiKey.OFFSET_FOR_LEADER_EPOCH, self.offset_for_leader_epoch)
        d.register(ApiKey.DESCRIBE_LOG_DIRS, self.describe_log_dirs)

    # -- DeleteRecords -----------------------------------------------------------------------------------------

    async def delete_records(self, ctx: RequestContext, request: DeleteRecordsRequest) -> DeleteRecordsResponse:
        """Kafka's ReplicaManager.deleteRecordsOnLocalLog: internal topics are refused (INVALID_TOPIC_EXCEPTION);
        a partition whose cleanup policy lacks ``delete`` is POLICY_VIOLATION; -1 means the high watermark; an
        offset below 0 or past the high watermark is OFFSET_OUT_OF_RANGE. The answer's low watermark is the log
        start afterwards (-1 on an error). The new log start is durable before the answer (PartitionLog)."""
        topics = []
        for topic in request.topics:
            out = DeleteRecordsTopicResult(name=topic.name)
            topics.append(out)
            for wanted in topic.partitions:
                result = DeleteRecordsPartitionResult(partition_index=wanted.partition_index, low_watermark=-1)
                out.partitions.append(result)
                result.error_code, low = self._delete(topic.name, wanted.partition_index, wanted.offset)
                if result.error_code == ErrorCode.NONE:
                    result.low_watermark = low
        return DeleteRecordsResponse(topics=topics)

    def _delete(self, topic: str, partition: int, offset: int) -> tuple[ErrorCode, int]:
        if topic in INTERNAL_TOPICS:
            return ErrorCode.INVALID_TOPIC_EXCEPTION, -1
        partition_log, error = self._leader_logs.lookup(topic, partition)
        if partition_log is None:
            return error, -1
        if not partition_log.config.delete_enabled:
            return ErrorCode.POLICY_VIOLATION, -1
        target = partition_log.high_watermark if offset == HIGH_WATERMARK else offset
        try:
            before = partition_log.log_start_offset
            low = partition_log.delete_records(target)
        except StorageError as exc:
            return ErrorCode(exc.error_code), -1
        log.info(
            "records.deleted",
            topic=topic,
            partition=partition,
            requested=offset,
            log_start_before=before,
            log_start_offset=low,
        )
        return ErrorCode.NONE, low

    # -- OffsetForLeaderEpoch ----------------------------------------------------------------------------------

    async def offset_for_leader_epoch(
        self, ctx: RequestContext, request: OffsetForLeaderEpochRequest
    ) -> OffsetForLeaderEpochResponse:
        """Kafka's Partition.lastOffsetForLeaderEpoch: the current-epoch check, then the epoch cache's end offset
        for the requested epoch ((-1, -1) with no error when the cache has no answer)."""
        topics = []
        for topic in request.topics:
            out = OffsetForLeaderTopicResult(topic=topic.topic)
            topics.append(out)
            for wanted in topic.partitions:
                result = EpochEndOffset(partition=wanted.partition)
                out.partitions.append(result)
                partition_log, result.error_code = self._leader_logs.lookup(topic.topic, wanted.partition)
                if partition_log is None:
                    continue
                error = check_current_leader_epoch(partition_log, wanted.current_leader_epoch)
                if error:
                    result.error_code = error
                    continue
                try:
                    result.leader_epoch, result.end_offset = partition_log.end_offset_for_epoch(wanted.leader_epoch)
                except StorageError as exc:
                    result.error_code = exc.error_code
        return OffsetForLeaderEpochResponse(topics=topics)

    # -- DescribeLogDirs ---------------------------------------------------------------------------------------

    async def describe_log_dirs(self, ctx: RequestContext, request: DescribeLogDirsRequest) -> DescribeLogDirsResponse:
        """The one log directory (Kafka's absolute path), with the partitions asked for (every one for a null
        list) that it holds: their size in bytes, offset lag 0 (the log end is the high watermark of a single
        leader), no future replicas; total and usable bytes of its file system from v4."""
        wanted: set[tuple[str, int]] | None = None
        if request.topics is not None:
            wanted = {(t.topic, p) for t in request.topics for p in t.partitions}
        by_topic: dict[str, list[DescribeLogDirsPartition]] = {}
        for (topic, partition), partition_log in sorted(self._logs.logs().items()):
            if wanted is not None and (topic, partition) not in wanted:
                continue
            by_topic.setdefault(topic, []).append(
                DescribeLogDirsPartition(partition_index=partition, partition_size=partition_log.size_in_bytes)
            )
        result = DescribeLogDirsResult(
            log_dir=str(self._logs.log_dir.resolve()),
            topics=[DescribeLogDirsTopic(name=name, partitions=parts) for name, parts in by_topic.items()],
        )
        if ctx.api_version >= 4:
            usage = shutil.disk_usage(self._logs.log_dir)
            result.total_bytes, result.usable_bytes = usage.total, usage.free
        return DescribeLogDirsResponse(results=[result])
