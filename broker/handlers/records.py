"""The data plane: Produce, Fetch (long-poll), ListOffsets and DescribeProducers (InitProducerId is the
transaction coordinator's, `transactions.py`, idempotent producers included).

One node leads every partition, so acks=1 and acks=all mean the same thing here: the batch is in the log (written
to the OS) when the response goes out. Idempotent and transactional producers get Kafka's producer-state checks
(:mod:`storage.producer_state`, in the partition log); a retried batch is answered with the offset it was first
written at. A producer's first transactional write to a partition is verified with the transaction coordinator
(:mod:`broker.txn_verification`). Reads honour the isolation level: read_committed Fetch and ListOffsets stop at
the last stable offset, and Fetch lists the aborted transactions of what it returns (T41-T43).
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
from broker.leader_epochs import NO_EPOCH, check_current_leader_epoch
from broker.leader_hints import FETCH_LEADER_HINTS_VERSION, PRODUCE_LEADER_HINTS_VERSION, LeaderHints
from broker.leader_logs import LeaderLogs
from broker.offsets_log import OFFSETS_TOPIC
from broker.produce_refusals import first_batch, refusal_of, refused
from broker.record_slices import RecordSlices, close_record_slices
from broker.txn_verification import (
    ACCEPT_ALL,
    ADD_NOTHING,
    TransactionAdder,
    TransactionVerifier,
    TxnAdd,
    TxnVerification,
)
from protocol.errors import DecodeError, ErrorCode
from protocol.messages.describe_producers import (
    DescribeProducersRequest,
    DescribeProducersResponse,
    PartitionResponse,
    ProducerState,
    TopicResponse,
)
from protocol.messages.fetch import (
    AbortedTransaction,
    EpochEndOffset,
    FetchableTopicResponse,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    PartitionData,
)
from protocol.messages.fetch import LeaderIdAndEpoch as FetchLeaderIdAndEpoch
from protocol.messages.fetch import NodeEndpoint as FetchNodeEndpoint
from protocol.messages.list_offsets import (
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from protocol.messages.produce import (
    BatchIndexAndErrorMessage,
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceResponse,
)
from protocol.records import NO_PRODUCER_ID, BatchHeader, peek_batch_header
from protocol.registry import ApiKey
from storage.errors import InvalidRecordError, OffsetOutOfRangeError, StorageError
from storage.log_manager import LogManager

if TYPE_CHECKING:
    from storage.partition_log import PartitionLog, SegmentSlice

log = structlog.get_logger("broker.records")

EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4  # KIP-405: without tiered storage the local log is the whole log
#: KIP-1005 and KIP-1023: offsets of tiered storage, which Kafka answers with -1 (and epoch -1) when it is off.
LATEST_TIERED_TIMESTAMP = -5
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6
NO_OFFSET = -1
READ_COMMITTED = 1  # Fetch's and ListOffsets' isolation_level
#: ListOffsets carries an isolation level from this version on; before it, reads are bounded by the log end.
LIST_OFFSETS_ISOLATION_VERSION = 2
INT32_MAX = 2**31 - 1
#: Produce adds a transactional batch's partition to the transaction itself from this version on (KIP-890 part 2).
PRODUCE_IMPLICIT_ADD_VERSION = 12
#: Produce names topics by id from this version on (KIP-516); an unknown id is UNKNOWN_TOPIC_ID.
PRODUCE_TOPIC_IDS_VERSION = 13


class RecordHandlers:
    def __init__(
        self,
        config: BrokerConfig,
        logs: LogManager,
        clock: BrokerClock,
        real_clock: BrokerClock,
        fetches: FetchPurgatory,
        rearm: Callable[[], None],
        leader_logs: LeaderLogs,
    ) -> None:
        """`real_clock` times long-poll Fetch waits, which follow real time even when a test moves `clock`;
        `leader_logs` are the partitions the serving node leads (broker.leader_logs)."""
        self._config = config
        self._logs = logs
        self._leader_logs = leader_logs
        self._clock = clock
        self._real_clock = real_clock
        self._fetches = fetches
        self._rearm = rearm
        #: Asked before a producer's first transactional write to a partition; the transaction coordinator
        #: installs its own (see broker.txn_verification).
        self.verifier: TransactionVerifier = ACCEPT_ALL
        #: Adds a Produce v12+'s transactional partitions to the transaction (see broker.txn_verification).
        self.adder: TransactionAdder = ADD_NOTHING

    def register(self, d: Dispatcher) -> None:
        # Fetch v17-18 add fields only replicas send (a directory id, a high watermark); ListOffsets v9-11 add
        # tiered-storage offsets, answered as Kafka without tiered storage answers them.
        d.register(ApiKey.PRODUCE, self.produce)
        d.register(ApiKey.FETCH, self.fetch)
        d.register(ApiKey.LIST_OFFSETS, self.list_offsets)
        d.register(ApiKey.DESCRIBE_PRODUCERS, self.describe_producers)

    # -- Produce -----------------------------------------------------------------------------------------------

    async def produce(self, ctx: RequestContext, request: ProduceRequest) -> ProduceResponse | None:
        """Kafka first refuses some requests as a whole (`broker.produce_refusals`: transactional records without a
        transactional id, or of more than one producer). v12+ adds transactional partitions to the transaction
        first (`_add_to_transaction`); v13 names topics by id."""
        responses: list[TopicProduceResponse] = []
        valid_acks = request.acks in (-1, 0, 1)
        by_id = ctx.api_version >= PRODUCE_TOPIC_IDS_VERSION
        names = self._topic_names() if by_id else {}
        if by_id:
            for topic in request.topic_data:
                topic.name = names.get(topic.topic_id, "")
        refusal = refusal_of(request, lambda topic, partition: self._logs.get(topic, partition) is not None)
        if refusal is not None:
            log.info(
                "produce.refused",
                transactional_id=request.transactional_id,
                code=refusal.error_code.name,
                message=refusal.message,
            )
            return refused(request, refusal, by_id=by_id)
        unknown_ids: list[TopicProduceResponse] = []  # answered after the others, as Kafka's merged response lists them
        not_added: dict[tuple[str, int], ErrorCode] = {}
        if valid_acks and ctx.api_version >= PRODUCE_IMPLICIT_ADD_VERSION:
            not_added = await self._add_to_transaction(request)
        for topic in request.topic_data:
            partitions = []
            for data in topic.partition_data:
                if not valid_acks:
                    result = PartitionProduceResponse(index=data.index, error_code=ErrorCode.INVALID_REQUIRED_ACKS)
                elif by_id and not topic.name:
                    result = PartitionProduceResponse(index=data.index, error_code=ErrorCode.UNKNOWN_TOPIC_ID)
                elif (topic.name, data.index) in not_added:
                    result = PartitionProduceResponse(index=data.index, error_code=not_added[topic.name, data.index])
                else:
                    result = self._append(ctx, request.transactional_id, topic.name, data.index, data.records)
                if result.error_code != ErrorCode.NONE:
                    result.base_offset = NO_OFFSET  # Kafka's PartitionResponse(error): no offset was assigned
                partitions.append(result)
            name = "" if by_id else topic.name
            answer = TopicProduceResponse(name=name, topic_id=topic.topic_id, partition_responses=partitions)
            (unknown_ids if by_id and not topic.name else responses).append(answer)
        responses.extend(unknown_ids)
        node_endpoints = self._produce_leader_hints(ctx.api_version, responses)
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
        return ProduceResponse(responses=responses, node_endpoints=node_endpoints)

    def _produce_leader_hints(self, version: int, responses: list[TopicProduceResponse]) -> list[NodeEndpoint]:
        """KIP-951 (`broker.leader_hints`): the current leader of each partition refused NOT_LEADER_OR_FOLLOWER."""
        if version < PRODUCE_LEADER_HINTS_VERSION:
            return []
        hints = LeaderHints(self._leader_logs.cluster, self._logs)
        for topic in responses:
            for result in topic.partition_responses:
                if result.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER and topic.name:
                    leader, epoch = hints.leader(topic.name, result.index)
                    result.current_leader = LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
        return hints.endpoints(NodeEndpoint)

    async def _add_to_transaction(self, request: ProduceRequest) -> dict[tuple[str, int], ErrorCode]:
        """KIP-890 part 2: add the partitions this request writes a producer's first transactional batch to to its
        transaction, in one step (Kafka's AddPartitionsToTxnManager). The partitions that could not be added, with
        the error to answer; the others go on to the verification and the append."""
        if request.transactional_id is None:
            return {}
        wanted: list[tuple[str, int]] = []
        producer: tuple[int, int] | None = None
        for topic in request.topic_data:
            for data in topic.partition_data:
                header = first_batch(data.records)
                partition_log = self._logs.get(topic.name, data.index) if topic.name else None
                if header is None or partition_log is None or not header.is_transactional:
                    continue
                if header.producer_id == NO_PRODUCER_ID:
                    continue
                try:
                    if partition_log.has_ongoing_transaction(header.producer_id, header.producer_epoch):
                        continue
                except StorageError:
                    continue  # the append answers it
                producer = producer or (header.producer_id, header.producer_epoch)
                wanted.append((topic.name, data.index))
        if producer is None:
            return {}
        add = TxnAdd(request.transactional_id, producer[0], producer[1], tuple(wanted))
        error = await self.adder(add)
        if error == ErrorCode.NONE:
            return {}
        log.info(
            "txn.produce_not_added",
            transactional_id=add.transactional_id,
            producer_id=add.producer_id,
            producer_epoch=add.producer_epoch,
            partitions=[f"{t}-{p}" for t, p in wanted],
            code=ErrorCode(error).name,
        )
        return dict.fromkeys(wanted, error)

    def _append(
        self, ctx: RequestContext, transactional_id: str | None, topic: str, partition: int, records: bytes | None
    ) -> PartitionProduceResponse:
        result = PartitionProduceResponse(index=partition)
        if topic == OFFSETS_TOPIC:
            result.error_code = ErrorCode.INVALID_TOPIC_EXCEPTION
            return result
        partition_log, result.error_code = self._leader_logs.lookup(topic, partition)
        if partition_log is None:
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
            # ... and exactly one batch per partition; the sequence checks below look at that one batch only. Kafka
            # answers it PartitionResponse(INVALID_RECORD), without the exception's message.
            result.error_code = ErrorCode.INVALID_RECORD
            return result
        try:
            refused = self._verify(ctx, transactional_id, topic, partition, header, partition_log)
            if refused:
                result.error_code = refused
                return result
            appended = partition_log.append(records, now_ms=self._wall_ms())
        except InvalidRecordError as exc:
            result.error_code = exc.error_code
            result.log_start_offset = partition_log.log_start_offset  # Kafka: the log's, for a refused record
            result.record_errors = [
                BatchIndexAndErrorMessage(batch_index=index, batch_index_error_message=message)
                for index, message in exc.record_errors
            ]
            result.error_message = str(exc)
            return result
        except StorageError as exc:  # producer-state checks included (epochs, sequences, open transactions)
            result.error_code = exc.error_code
            # Kafka says nothing more than the code for a batch over max.message.bytes
            result.error_message = None if exc.error_code == ErrorCode.MESSAGE_TOO_LARGE else str(exc)
            return result
        result.base_offset = appended.base_offset
        result.log_append_time_ms = appended.log_append_time_ms
        result.log_start_offset = appended.log_start_offset
        if not appended.duplicate:
            self._fetches.on_append(topic, partition)
        return result

    def _verify(
        self,
        ctx: RequestContext,
        transactional_id: str | None,
        topic: str,
        partition: int,
        header: BatchHeader,
        partition_log: PartitionLog,
    ) -> ErrorCode:
        """Ask the verifier about a producer's first transactional write to the partition (Kafka skips the ones
        whose producer already has a transaction open here, and every non-transactional write)."""
        if transactional_id is None or not header.is_transactional or header.producer_id == NO_PRODUCER_ID:
            return ErrorCode.NONE
        if partition_log.has_ongoing_transaction(header.producer_id, header.producer_epoch):
            return ErrorCode.NONE
        request = TxnVerification(
            transactional_id, header.producer_id, header.producer_epoch, topic, partition, ctx.api_version
        )
        error = self.verifier(request)
        if error:
            log.info(
                "txn.produce_unverified",
                transactional_id=transactional_id,
                producer_id=header.producer_id,
                producer_epoch=header.producer_epoch,
                topic=topic,
                partition=partition,
                code=ErrorCode(error).name,
            )
        return error

    def _wall_ms(self) -> int:
        return self._clock.wall_ms()

    # -- Fetch -------------------------------------------------------------------------------------------------

    async def fetch(self, ctx: RequestContext, request: FetchRequest) -> FetchResponse:
        """Kafka's limits (KafkaApis.handleFetchRequest): the response budget is the request's max_bytes capped by
        the broker's `fetch.max.bytes` (KIP-541), and min_bytes is capped by that budget in turn.

        Record sets are `RecordSlices` (ranges of the segment files), streamed to the socket by the connection; a
        read that only decided to wait for more data is closed before waiting.

        Like Kafka's DelayedFetch, a fetch woken by an append reads again and answers only once it has `min_bytes`
        (or at its deadline): a read_committed fetch woken by a write above the last stable offset finds nothing
        new and waits on, until a marker moves the LSO (T41).
        """
        if request.session_id != 0 or request.session_epoch not in (-1, 0):
            return FetchResponse(error_code=ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        max_bytes = min(request.max_bytes, self._config["fetch.max.bytes"])
        min_bytes = min(request.min_bytes, max_bytes)
        response, size = self._read_closing_on_error(ctx.api_version, request, max_bytes)
        if size >= min_bytes or request.max_wait_ms <= 0 or size < 0:
            return response
        deadline = self._real_clock.monotonic_ms() + request.max_wait_ms
        names = self._topic_names()
        watched = [
            (names.get(t.topic_id, t.topic) if ctx.api_version >= 13 else t.topic, p.partition)
            for t in request.topics
            for p in t.partitions
        ]
        while True:
            close_record_slices(response)
            waiter = self._fetches.park(watched, deadline)
            self._rearm()
            await waiter
            response, size = self._read_closing_on_error(ctx.api_version, request, max_bytes)
            expired = self._real_clock.monotonic_ms() >= deadline or self._fetches.closed
            if size >= min_bytes or size < 0 or expired:
                return response

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
        hints = LeaderHints(self._leader_logs.cluster, self._logs) if version >= FETCH_LEADER_HINTS_VERSION else None
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
                partition_log, error = (
                    self._leader_logs.lookup(name, wanted.partition)
                    if name is not None
                    else (None, ErrorCode.UNKNOWN_TOPIC_ID)
                )
                if partition_log is None:
                    _failed(data, error)
                    if hints is not None and error == ErrorCode.NOT_LEADER_OR_FOLLOWER and name is not None:
                        leader, epoch = hints.leader(name, wanted.partition)
                        data.current_leader = FetchLeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
                    errors = True
                    continue
                # FetchRequest.optionalEpoch: any negative epoch means "not checked" (ListOffsets checks all but -1)
                refused = check_current_leader_epoch(partition_log, max(wanted.current_leader_epoch, NO_EPOCH))
                if refused:
                    _failed(data, refused, read=True)
                    errors = True
                    continue
                try:
                    if _diverged(data, partition_log, wanted):
                        errors = True  # answered at once, as Kafka's DelayedFetch completes on a diverging epoch
                        continue
                    slices = self._read_partition(
                        data, partition_log, wanted, max(0, min(wanted.partition_max_bytes, budget)), min_one_batch
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
        endpoints = [] if hints is None else hints.endpoints(FetchNodeEndpoint)
        return FetchResponse(responses=responses, node_endpoints=endpoints), (-1 if errors and total == 0 else total)

    @staticmethod
    def _read_partition(
        data: PartitionData, partition_log: PartitionLog, wanted: FetchPartition, max_bytes: int, min_one_batch: bool
    ) -> list[SegmentSlice]:
        """One partition's batches and offsets: up to the high watermark, or for read_committed (``data`` carries
        an aborted-transaction list then) up to the last stable offset, with the aborted transactions they hold."""
        data.high_watermark = partition_log.high_watermark
        data.log_start_offset = partition_log.log_start_offset
        if data.aborted_transactions is None:
            data.last_stable_offset = partition_log.last_stable_offset()
            return partition_log.read_slices(
                wanted.fetch_offset, max_bytes, max_offset=data.high_watermark, min_one_batch=min_one_batch
            )
        read = partition_log.read_committed(wanted.fetch_offset, max_bytes, min_one_batch=min_one_batch)
        data.last_stable_offset = read.last_stable_offset
        data.aborted_transactions = [
            AbortedTransaction(producer_id=txn.producer_id, first_offset=txn.first_offset) for txn in read.aborted
        ]
        return read.slices

    # -- ListOffsets -------------------------------------------------------------------------------------------

    async def list_offsets(self, ctx: RequestContext, request: ListOffsetsRequest) -> ListOffsetsResponse:
        topics = []
        for topic in request.topics:
            out = ListOffsetsTopicResponse(name=topic.name)
            topics.append(out)
            for wanted in topic.partitions:
                result = ListOffsetsPartitionResponse(partition_index=wanted.partition_index)
                out.partitions.append(result)
                partition_log, result.error_code = self._leader_logs.lookup(topic.name, wanted.partition_index)
                if partition_log is None:
                    continue
                refused = _unsupported_timestamp(ctx.api_version, wanted.timestamp) or check_current_leader_epoch(
                    partition_log, wanted.current_leader_epoch
                )
                if refused:
                    result.error_code = refused
                    continue
                try:
                    offset, timestamp, epoch = self._offset_for(
                        partition_log, wanted.timestamp, _isolation(ctx, request)
                    )
                except StorageError as exc:
                    result.error_code = exc.error_code
                    continue
                if ctx.api_version == 0:  # Kafka 4 removed v0 (KIP-896); Burrow 1.2.1 still sends it
                    result.old_style_offsets = [] if offset < 0 else [offset][: max(wanted.max_num_offsets, 0)]
                else:
                    result.offset, result.timestamp = offset, timestamp
                    if ctx.api_version >= 4:
                        result.leader_epoch = epoch
        return ListOffsetsResponse(topics=topics)

    @staticmethod
    def _offset_for(partition_log: PartitionLog, timestamp: int, isolation: int | None) -> tuple[int, int, int]:
        """(offset, timestamp, leader epoch) as Kafka's Partition.fetchOffsetForTimestamp answers (T43): the last
        fetchable offset is the LSO for read_committed, the high watermark for read_uncommitted, the log end
        without an isolation level (v0-1). LATEST answers it with the current leader epoch; EARLIEST the log start
        with the epoch that wrote it; a lookup by timestamp that lands at or beyond it answers no offset (-1);
        the tiered-storage offsets (-5, -6) are -1 with epoch -1, as without tiered storage."""
        if isolation == READ_COMMITTED:
            bound = partition_log.last_stable_offset()
        elif isolation is not None:
            bound = partition_log.high_watermark
        else:
            bound = partition_log.log_end_offset
        if timestamp == LATEST_TIMESTAMP:
            return bound, -1, partition_log.leader_epoch
        if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            start = partition_log.log_start_offset
            epoch = partition_log.epoch_for_offset(start)
            return start, -1, NO_EPOCH if epoch is None else epoch
        if timestamp == MAX_TIMESTAMP:
            found = partition_log.max_timestamp_offset()
        elif timestamp >= 0:
            found = partition_log.offset_for_timestamp(timestamp)
        else:
            found = None
        if found is None or found.offset >= bound:
            return -1, -1, NO_EPOCH
        return found.offset, found.timestamp, max(found.leader_epoch, NO_EPOCH)

    # -- DescribeProducers -------------------------------------------------------------------------------------

    async def describe_producers(
        self, ctx: RequestContext, request: DescribeProducersRequest
    ) -> DescribeProducersResponse:
        """The producers each partition keeps state for (T69; what `kafka-transactions.sh find-hanging` reads).

        A partition that is not here (unknown topic or partition) is UNKNOWN_TOPIC_OR_PARTITION, as Kafka
        answers when the metadata does not know it either."""
        topics = []
        for topic in request.topics:
            out = TopicResponse(name=topic.name)
            topics.append(out)
            for index in topic.partition_indexes:
                result = PartitionResponse(partition_index=index)
                out.partitions.append(result)
                partition_log, result.error_code = self._leader_logs.lookup(topic.name, index)
                if partition_log is None:
                    continue
                try:
                    producers = partition_log.active_producers()
                except StorageError as exc:
                    result.error_code = exc.error_code
                    result.error_message = str(exc)
                    continue
                result.active_producers = [
                    ProducerState(
                        producer_id=p.producer_id,
                        producer_epoch=p.producer_epoch,
                        last_sequence=p.last_sequence,
                        last_timestamp=p.last_timestamp,
                        coordinator_epoch=p.coordinator_epoch,
                        current_txn_start_offset=p.current_txn_start_offset,
                    )
                    for p in producers
                ]
        return DescribeProducersResponse(topics=topics)


#: The ListOffsets version that introduced each special timestamp; Kafka answers UNSUPPORTED_VERSION for it below.
_TIMESTAMP_SINCE = {
    MAX_TIMESTAMP: 7,
    EARLIEST_LOCAL_TIMESTAMP: 8,
    LATEST_TIERED_TIMESTAMP: 9,
    EARLIEST_PENDING_UPLOAD_TIMESTAMP: 11,
}


def _unsupported_timestamp(version: int, timestamp: int) -> ErrorCode:
    """UNSUPPORTED_VERSION for a special timestamp the request's version does not have yet, as Kafka answers."""
    return ErrorCode.UNSUPPORTED_VERSION if version < _TIMESTAMP_SINCE.get(timestamp, 0) else ErrorCode.NONE


def _isolation(ctx: RequestContext, request: ListOffsetsRequest) -> int | None:
    """ListOffsets' isolation level; None before v2, which has none (reads are bounded by the log end)."""
    return request.isolation_level if ctx.api_version >= LIST_OFFSETS_ISOLATION_VERSION else None


def _diverged(data: PartitionData, partition_log: PartitionLog, wanted: FetchPartition) -> bool:
    """Kafka's check of a fetch's ``last_fetched_epoch`` (v12+, KIP-595/KIP-320): when the log ended that epoch
    before the fetch offset, or has no later epoch entry for it, the answer is the diverging epoch and no records,
    so the fetcher truncates; an epoch the cache cannot place is OFFSET_OUT_OF_RANGE (raised)."""
    if wanted.last_fetched_epoch < 0:
        return False
    epoch, end_offset = partition_log.end_offset_for_epoch(wanted.last_fetched_epoch)
    if epoch == NO_EPOCH or end_offset < 0:
        raise OffsetOutOfRangeError(wanted.fetch_offset, partition_log.log_start_offset, partition_log.log_end_offset)
    if epoch >= wanted.last_fetched_epoch and end_offset >= wanted.fetch_offset:
        return False
    data.diverging_epoch = EpochEndOffset(epoch=epoch, end_offset=end_offset)
    data.high_watermark = partition_log.high_watermark
    data.log_start_offset = partition_log.log_start_offset
    data.last_stable_offset = partition_log.last_stable_offset()
    data.records = b""
    return True


def _failed(data: PartitionData, error: int, *, read: bool = False) -> None:
    """A partition's fetch error as Kafka writes it: no offset is known (-1). An unknown topic is answered before
    any read (FetchResponse.partitionResponse: an empty aborted-transaction list); a failed read (``read``, e.g.
    OFFSET_OUT_OF_RANGE) carries null there, whatever the isolation level."""
    data.error_code = error
    data.high_watermark = data.last_stable_offset = data.log_start_offset = NO_OFFSET
    data.aborted_transactions = None if read else []
