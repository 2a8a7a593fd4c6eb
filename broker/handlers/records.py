"""The data plane: Produce, Fetch (long-poll), ListOffsets and InitProducerId.

One node leads every partition, so acks=1 and acks=all mean the same thing here: the batch is in the log (written
to the OS) when the response goes out. Idempotent producers get Kafka's sequence checks; a retried batch is
answered with the offset it was first written at.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import structlog

from broker.clock import BrokerClock
from broker.config import BrokerConfig
from broker.connection import CloseConnection
from broker.context import RequestContext
from broker.dispatch import Dispatcher
from broker.fetch_purgatory import FetchPurgatory
from broker.offsets_log import OFFSETS_TOPIC
from broker.producer_state import NO_PRODUCER_ID, PartitionProducers, ProducerIdAllocator
from broker.record_slices import RecordSlices, close_record_slices
from protocol.errors import DecodeError, ErrorCode
from protocol.messages.fetch import (
    FetchableTopicResponse,
    FetchRequest,
    FetchResponse,
    PartitionData,
)
from protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from protocol.messages.list_offsets import (
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from protocol.messages.produce import (
    BatchIndexAndErrorMessage,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceResponse,
)
from protocol.records import peek_batch_header
from protocol.registry import ApiKey
from storage.errors import InvalidRecordError, StorageError
from storage.log_manager import LogManager

if TYPE_CHECKING:
    from storage.partition_log import PartitionLog

log = structlog.get_logger("broker.records")

EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4  # KIP-405: without tiered storage the local log is the whole log
NO_OFFSET = -1
READ_COMMITTED = 1  # Fetch's isolation_level
INT32_MAX = 2**31 - 1


class RecordHandlers:
    def __init__(
        self,
        config: BrokerConfig,
        logs: LogManager,
        clock: BrokerClock,
        real_clock: BrokerClock,
        fetches: FetchPurgatory,
        rearm: Callable[[], None],
    ) -> None:
        """`real_clock` times long-poll Fetch waits, which follow real time even when a test moves `clock`."""
        self._config = config
        self._logs = logs
        self._clock = clock
        self._real_clock = real_clock
        self._fetches = fetches
        self._rearm = rearm
        self.producers: dict[tuple[str, int], tuple[PartitionLog, PartitionProducers]] = {}
        self.producer_ids = ProducerIdAllocator(config.log_dir / "producer-id-block")

    def register(self, d: Dispatcher) -> None:
        d.register(ApiKey.PRODUCE, self.produce)
        d.register(ApiKey.FETCH, self.fetch)
        d.register(ApiKey.LIST_OFFSETS, self.list_offsets)
        d.register(ApiKey.INIT_PRODUCER_ID, self.init_producer_id)

    # -- Produce -----------------------------------------------------------------------------------------------

    async def produce(self, ctx: RequestContext, request: ProduceRequest) -> ProduceResponse | None:
        responses = []
        valid_acks = request.acks in (-1, 0, 1)
        for topic in request.topic_data:
            partitions = []
            for data in topic.partition_data:
                if not valid_acks:
                    result = PartitionProduceResponse(index=data.index, error_code=ErrorCode.INVALID_REQUIRED_ACKS)
                elif request.transactional_id is not None:
                    result = PartitionProduceResponse(
                        index=data.index, error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
                    )
                else:
                    result = self._append(ctx, topic.name, data.index, data.records)
                if result.error_code != ErrorCode.NONE:
                    result.base_offset = NO_OFFSET  # Kafka's PartitionResponse(error): no offset was assigned
                partitions.append(result)
            responses.append(TopicProduceResponse(name=topic.name, partition_responses=partitions))
        if request.acks == 0:
            failed = [
                (t.name, p.index, ErrorCode(p.error_code).name)
                for t in responses
                for p in t.partition_responses
                if p.error_code != ErrorCode.NONE
            ]
            if failed:
                # Kafka closes the connection instead: the producer expects no answer, and only a disconnect makes
                # it refresh metadata and notice the problem (KafkaApis.handleProduceRequest).
                raise CloseConnection(f"acks=0 produce failed: {failed}")
            return None  # acks=0: Kafka sends no response at all
        return ProduceResponse(responses=responses)

    def _append(
        self, ctx: RequestContext, topic: str, partition: int, records: bytes | None
    ) -> PartitionProduceResponse:
        result = PartitionProduceResponse(index=partition)
        if topic == OFFSETS_TOPIC:
            result.error_code = ErrorCode.INVALID_TOPIC_EXCEPTION
            return result
        partition_log = self._logs.get(topic, partition)
        if partition_log is None:
            result.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            return result
        if not records:
            result.error_code = ErrorCode.INVALID_RECORD
            return result
        try:
            header = peek_batch_header(records, 0)
        except DecodeError as exc:
            # ProduceRequest.validateRecords: v3+ carries magic 2 only (older formats are INVALID_RECORD)
            result.error_code = ErrorCode.INVALID_RECORD if exc.path == "batch.magic" else ErrorCode.CORRUPT_MESSAGE
            return result
        if header.size < len(records):
            # ... and exactly one batch per partition; the sequence checks below look at that one batch only.
            result.error_code = ErrorCode.INVALID_RECORD
            result.error_message = "Produce requests v3 and later may contain exactly one record batch per partition"
            return result
        try:
            producers = self._producers_of(topic, partition, partition_log)
        except StorageError as exc:  # the log could not be scanned (closed under us, or corrupt on disk)
            result.error_code = exc.error_code
            result.error_message = str(exc)
            return result
        check = producers.check(
            header.producer_id, header.producer_epoch, header.base_sequence, header.last_offset_delta
        )
        if check.error:
            result.error_code = check.error
            return result
        if check.duplicate_of is not None:
            result.base_offset = check.duplicate_of
            result.log_start_offset = partition_log.log_start_offset
            return result
        try:
            appended = partition_log.append(records, now_ms=self._wall_ms(), leader_epoch=0)
        except InvalidRecordError as exc:
            result.error_code = exc.error_code
            result.record_errors = [
                BatchIndexAndErrorMessage(batch_index=index, batch_index_error_message=message)
                for index, message in exc.record_errors
            ]
            result.error_message = str(exc)
            return result
        except StorageError as exc:
            result.error_code = exc.error_code
            result.error_message = str(exc)
            return result
        if header.producer_id != NO_PRODUCER_ID:
            producers.record(
                header.producer_id,
                header.producer_epoch,
                header.base_sequence,
                header.last_offset_delta,
                appended.base_offset,
            )
        result.base_offset = appended.base_offset
        result.log_append_time_ms = appended.log_append_time_ms
        result.log_start_offset = appended.log_start_offset
        self._fetches.on_append(topic, partition)
        return result

    def _producers_of(self, topic: str, partition: int, partition_log: PartitionLog) -> PartitionProducers:
        """The partition's producer state, rebuilt from the log's batch headers the first time it is needed.

        Kafka recovers producer state from the log (and its snapshots) when it loads a partition, so a retry that
        straddles a restart is still recognised. The state belongs to one log instance: a topic deleted and
        created again under the same name starts empty.
        """
        known = self.producers.get((topic, partition))
        if known is not None and known[0] is partition_log:
            return known[1]
        producers = PartitionProducers.from_log(partition_log)
        self.producers[(topic, partition)] = (partition_log, producers)
        return producers

    def _wall_ms(self) -> int:
        return self._clock.wall_ms()

    # -- Fetch -------------------------------------------------------------------------------------------------

    async def fetch(self, ctx: RequestContext, request: FetchRequest) -> FetchResponse:
        """Kafka's limits (KafkaApis.handleFetchRequest): the response budget is the request's max_bytes capped by
        the broker's `fetch.max.bytes` (KIP-541), and min_bytes is capped by that budget in turn.

        Record sets are `RecordSlices` (ranges of the segment files), streamed to the socket by the connection; a
        read that only decided to wait for more data is closed before waiting.
        """
        if request.session_id != 0 or request.session_epoch not in (-1, 0):
            return FetchResponse(error_code=ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        max_bytes = min(request.max_bytes, self._config["fetch.max.bytes"])
        min_bytes = min(request.min_bytes, max_bytes)
        response, size = self._read_closing_on_error(ctx.api_version, request, max_bytes)
        if size >= min_bytes or request.max_wait_ms <= 0 or size < 0:
            return response
        close_record_slices(response)
        deadline = self._real_clock.monotonic_ms() + request.max_wait_ms
        names = self._topic_names()
        watched = [
            (names.get(t.topic_id, t.topic) if ctx.api_version >= 13 else t.topic, p.partition)
            for t in request.topics
            for p in t.partitions
        ]
        waiter = self._fetches.park(watched, deadline)
        self._rearm()
        await waiter
        return self._read_closing_on_error(ctx.api_version, request, max_bytes)[0]

    def _read_closing_on_error(self, version: int, request: FetchRequest, max_bytes: int) -> tuple[FetchResponse, int]:
        """`_read`, closing the file ranges of the partitions already read if a later one raises."""
        responses: list[FetchableTopicResponse] = []
        try:
            return self._read(version, request, max_bytes, responses)
        except BaseException:
            close_record_slices(FetchResponse(responses=responses))
            raise

    def _topic_names(self) -> dict[Any, str]:
        return {info.topic_id: info.name for info in self._logs.topics()}

    def _read(
        self, version: int, request: FetchRequest, max_bytes: int, responses: list[FetchableTopicResponse]
    ) -> tuple[FetchResponse, int]:
        """The response as of now and its record bytes; -1 bytes when an error means waiting is pointless.

        As ReplicaManager.readFromLog: each partition reads at most min(partition_max_bytes, budget left), and
        until some partition has returned data the read returns at least one whole batch even if it is larger
        (KIP-74: only the first partition with data may exceed the limits, so a consumer never gets stuck).
        """
        by_id = self._topic_names() if version >= 13 else {}
        budget = max(0, max_bytes)
        # Kafka lists aborted transactions only to read_committed fetches; read_uncommitted ones carry null.
        read_committed = request.isolation_level == READ_COMMITTED
        min_one_batch = True
        total = 0
        errors = False
        for topic in request.topics:
            name = by_id.get(topic.topic_id) if version >= 13 else topic.topic
            out = FetchableTopicResponse(topic=topic.topic if version < 13 else "", topic_id=topic.topic_id)
            responses.append(out)
            for wanted in topic.partitions:
                data = PartitionData(
                    partition_index=wanted.partition, aborted_transactions=[] if read_committed else None
                )
                out.partitions.append(data)
                partition_log = self._logs.get(name, wanted.partition) if name is not None else None
                if partition_log is None:
                    _failed(data, ErrorCode.UNKNOWN_TOPIC_ID if name is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                    errors = True
                    continue
                self._fill_offsets(data, partition_log)
                try:
                    slices = partition_log.read_slices(
                        wanted.fetch_offset,
                        max(0, min(wanted.partition_max_bytes, budget)),
                        min_one_batch=min_one_batch,
                    )
                except StorageError as exc:
                    _failed(data, exc.error_code, read=True)
                    errors = True
                    continue
                if not slices:
                    data.records = b""
                    continue
                records = RecordSlices(slices)
                data.records = cast(bytes, records)  # the codec needs only len(); the connection streams the bytes
                total += len(records)
                budget = max(0, budget - len(records))
                min_one_batch = False
        return FetchResponse(responses=responses), (-1 if errors and total == 0 else total)

    @staticmethod
    def _fill_offsets(data: PartitionData, partition_log: PartitionLog) -> None:
        data.high_watermark = partition_log.log_end_offset
        data.last_stable_offset = partition_log.log_end_offset
        data.log_start_offset = partition_log.log_start_offset

    # -- ListOffsets -------------------------------------------------------------------------------------------

    async def list_offsets(self, ctx: RequestContext, request: ListOffsetsRequest) -> ListOffsetsResponse:
        topics = []
        for topic in request.topics:
            out = ListOffsetsTopicResponse(name=topic.name)
            topics.append(out)
            for wanted in topic.partitions:
                result = ListOffsetsPartitionResponse(partition_index=wanted.partition_index)
                out.partitions.append(result)
                partition_log = self._logs.get(topic.name, wanted.partition_index)
                if partition_log is None:
                    result.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    continue
                offset, timestamp = self._offset_for(partition_log, wanted.timestamp)
                if ctx.api_version == 0:
                    result.old_style_offsets = [] if offset < 0 else [offset][: max(wanted.max_num_offsets, 0)]
                else:
                    result.offset, result.timestamp = offset, timestamp
                    if ctx.api_version >= 4:
                        result.leader_epoch = 0 if offset >= 0 else -1
        return ListOffsetsResponse(topics=topics)

    @staticmethod
    def _offset_for(partition_log: PartitionLog, timestamp: int) -> tuple[int, int]:
        if timestamp == LATEST_TIMESTAMP:
            return partition_log.log_end_offset, -1
        if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            return partition_log.log_start_offset, -1
        if timestamp == MAX_TIMESTAMP:
            found = partition_log.max_timestamp_offset()
        elif timestamp >= 0:
            found = partition_log.offset_for_timestamp(timestamp)
        else:
            found = None
        if found is None:
            return -1, -1
        return found.offset, found.timestamp

    # -- InitProducerId ----------------------------------------------------------------------------------------

    async def init_producer_id(self, ctx: RequestContext, request: InitProducerIdRequest) -> InitProducerIdResponse:
        if request.transactional_id is not None:
            # Transactions are not implemented; a fatal error is clearer to the application than endless retries.
            return InitProducerIdResponse(error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        # Without a transactional id Kafka's TransactionCoordinator ignores any producer id/epoch sent (KIP-360
        # v3+) and always hands out a fresh id at epoch 0; idempotent producers bump their epoch locally. Bumping
        # the id we were sent would also let any client fence another client's producer.
        return InitProducerIdResponse(producer_id=self.producer_ids.allocate(), producer_epoch=0)


def _failed(data: PartitionData, error: int, *, read: bool = False) -> None:
    """A partition's fetch error as Kafka writes it: no offset is known (-1). An unknown topic is answered before
    any read (FetchResponse.partitionResponse: an empty aborted-transaction list); a failed read (``read``, e.g.
    OFFSET_OUT_OF_RANGE) carries null there, whatever the isolation level."""
    data.error_code = error
    data.high_watermark = data.last_stable_offset = data.log_start_offset = NO_OFFSET
    data.aborted_transactions = None if read else []
