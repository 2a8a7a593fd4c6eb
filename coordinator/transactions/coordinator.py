"""`TransactionCoordinator`: Kafka's transaction coordinator as a synchronous, sans-IO state machine; the group
coordinator's sibling on the same runtime (architecture.md Decision 7). The package docstring
(`coordinator/transactions/__init__.py`) describes how the broker drives it; this file is its whole public API,
each method recording the caller's clock readings and delegating in a line or two to the parts it builds:

* `TransactionCache` (cache.py): owned `__transaction_state` partitions and the ids' metadata;
* `CoordinatorRuntime` (the group coordinator's, generic in its record type) under `TransactionLog` (log.py):
  the only writer, with the write timeout and Kafka's error mapping;
* `MarkerChannel` (markers.py): the markers handed to the broker and the completion writes;
* `Housekeeping` (housekeeping.py): the timeout abort and id expiration scans;
* `PartitionOwnership` (ownership.py): loading, resuming, unloading;
* the operations: init_producer_id.py, add_partitions.py (+ add_partitions_request.py), end_txn.py, describe.py.

Several nodes in one process (`cluster.nodes`) share this one coordinator, as they share the group coordinator:
`serves(partition)` says whether the node a request came to leads a `__transaction_state` partition, and is
consulted only where a client's request enters (the client-facing APIs below), never by the broker's own calls
(`verify_partitions`, `add_partitions`, markers, timeouts, expiration), which a partition leader or the coordinator
itself makes for whichever node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from coordinator.config import TransactionConfig
from coordinator.context import RequestContext
from coordinator.driven import TimerDriven
from coordinator.hashing import partition_for
from coordinator.offset_base import KnownPartition
from coordinator.offsets import TopicPartition
from coordinator.partitions import Serves
from coordinator.persistence import RecordLog
from coordinator.reply import Reply
from coordinator.runtime import CoordinatorRuntime
from coordinator.time_register import TimeRegister
from coordinator.timer import Timer
from coordinator.transactions import add_partitions_request
from coordinator.transactions.add_partitions import add_partitions, verify_partitions
from coordinator.transactions.cache import TransactionCache
from coordinator.transactions.describe import describe, list_transactions
from coordinator.transactions.end_txn import end_transaction
from coordinator.transactions.events import TransactionEvents
from coordinator.transactions.housekeeping import Housekeeping
from coordinator.transactions.init_producer_id import init_producer_id
from coordinator.transactions.log import TransactionLog
from coordinator.transactions.markers import MarkerChannel, MarkerSink, TransactionResult, TxnMarkers
from coordinator.transactions.metadata import TRANSACTION_VERSION_2, TransactionMetadata
from coordinator.transactions.ownership import PartitionOwnership
from coordinator.transactions.parts import TxnParts
from coordinator.transactions.producer_ids import ProducerIdAllocator
from coordinator.transactions.records import DamagedTxnRecord, TxnRecord
from coordinator.transactions.state import TransactionState
from coordinator.transactions.versions import for_version, transaction_version_for
from protocol.errors import ErrorCode
from protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse
from protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse
from protocol.messages.api_table import ApiKey
from protocol.messages.describe_transactions import DescribeTransactionsRequest, DescribeTransactionsResponse
from protocol.messages.end_txn import EndTxnRequest, EndTxnResponse
from protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from protocol.messages.list_transactions import ListTransactionsRequest, ListTransactionsResponse

OFFSETS_TOPIC = "__consumer_offsets"
KIP_360_SINCE = 3
"""InitProducerId v3 added ProducerId/ProducerEpoch (KIP-360)."""


class TransactionCoordinator(TimerDriven):
    """The transaction coordinator of one broker node (the `__transaction_state` partitions it leads)."""

    def __init__(
        self,
        config: TransactionConfig,
        store: RecordLog[TxnRecord],
        producer_ids: ProducerIdAllocator,
        markers: MarkerSink,
        *,
        events: TransactionEvents | None = None,
        known_partition: KnownPartition | None = None,
        serves: Serves | None = None,
    ) -> None:
        """`serves` (several-node clusters): whether the node a client's request came to leads a
        `__transaction_state` partition; NOT_COORDINATOR for the ids of the others. None: every node does."""
        self._config = config
        self._serves = serves
        self._events = events if events is not None else TransactionEvents()
        self._timer = Timer()
        self._time = TimeRegister()
        self._known_partition = known_partition
        cache = TransactionCache(config.transaction_state_log_num_partitions)
        runtime: CoordinatorRuntime[TxnRecord] = CoordinatorRuntime(
            store, self._timer, self._time, config.write_timeout_ms, self._events
        )
        log = TransactionLog(runtime, cache, self._events, 1 if config.transaction_version >= 1 else 0)
        channel = MarkerChannel(markers, cache, log, self._timer, self._time, self._events, config.retry_backoff_ms)
        self._parts = TxnParts(config, self._events, self._timer, self._time, cache, log, channel, producer_ids)
        self._housekeeping = Housekeeping(self._parts)
        self._ownership = PartitionOwnership(self._parts, runtime, self._housekeeping)

    # -- transaction APIs ------------------------------------------------------------------------------------

    def init_producer_id(
        self, ctx: RequestContext, request: InitProducerIdRequest, now_ms: int
    ) -> Reply[InitProducerIdResponse]:
        """InitProducerId (T5-T17): answered once the new producer id/epoch is durable."""
        self._time.advance(now_ms, ctx.wall_ms)
        reply: Reply[InitProducerIdResponse] = Reply()
        version = ctx.api_version

        def answer(error: ErrorCode, producer_id: int, epoch: int) -> None:
            error = for_version(ApiKey.INIT_PRODUCER_ID, version, error)
            reply.complete(InitProducerIdResponse(error_code=error, producer_id=producer_id, producer_epoch=epoch))

        expected = (request.producer_id, request.producer_epoch)
        if version >= KIP_360_SINCE and (-1 in expected) and expected != (-1, -1):
            answer(ErrorCode.INVALID_REQUEST, -1, -1)  # T6: both or neither
            return reply
        given = None if version < KIP_360_SINCE or expected == (-1, -1) else expected
        init_producer_id(
            self._parts, request.transactional_id, request.transaction_timeout_ms, given, answer, self._serves
        )
        return reply

    def add_partitions_to_txn(
        self, ctx: RequestContext, request: AddPartitionsToTxnRequest, now_ms: int
    ) -> Reply[AddPartitionsToTxnResponse]:
        """AddPartitionsToTxn v0-3 (one transaction) and v4+ (batched, VerifyOnly) (T23-T25)."""
        self._time.advance(now_ms, ctx.wall_ms)
        return add_partitions_request.handle(self._parts, self._known_partition, ctx.api_version, request, self._serves)

    def add_offsets_to_txn(
        self, ctx: RequestContext, request: AddOffsetsToTxnRequest, now_ms: int
    ) -> Reply[AddOffsetsToTxnResponse]:
        """AddOffsetsToTxn (T27): adds the group's `__consumer_offsets` partition to the transaction."""
        self._time.advance(now_ms, ctx.wall_ms)
        reply: Reply[AddOffsetsToTxnResponse] = Reply()
        partition = (OFFSETS_TOPIC, self.group_partition(request.group_id))

        def answer(error: ErrorCode) -> None:
            error = for_version(ApiKey.ADD_OFFSETS_TO_TXN, ctx.api_version, error)
            reply.complete(AddOffsetsToTxnResponse(error_code=error))

        add_partitions(
            self._parts,
            request.transactional_id,
            request.producer_id,
            request.producer_epoch,
            [partition],
            answer,
            serves=self._serves,
        )
        return reply

    def end_txn(self, ctx: RequestContext, request: EndTxnRequest, now_ms: int) -> Reply[EndTxnResponse]:
        """EndTxn (T28-T31, T70-T75): answered once PrepareCommit/PrepareAbort is durable. v5 is transaction version
        2 (Kafka's `transactionVersionForEndTxn`): the epoch is bumped and the answer names the producer id and
        epoch to use next."""
        self._time.advance(now_ms, ctx.wall_ms)
        reply: Reply[EndTxnResponse] = Reply()

        def answer(error: ErrorCode, producer_id: int, producer_epoch: int) -> None:
            error = for_version(ApiKey.END_TXN, ctx.api_version, error)
            reply.complete(EndTxnResponse(error_code=error, producer_id=producer_id, producer_epoch=producer_epoch))

        result = TransactionResult.COMMIT if request.committed else TransactionResult.ABORT
        end_transaction(
            self._parts,
            request.transactional_id,
            request.producer_id,
            request.producer_epoch,
            result,
            from_client=True,
            transaction_version=transaction_version_for(ApiKey.END_TXN, ctx.api_version),
            then=answer,
            serves=self._serves,
        )
        return reply

    def describe_transactions(
        self, ctx: RequestContext, request: DescribeTransactionsRequest, now_ms: int
    ) -> DescribeTransactionsResponse:
        """DescribeTransactions (T67)."""
        self._time.advance(now_ms, ctx.wall_ms)
        return DescribeTransactionsResponse(
            transaction_states=[describe(self._parts.cache, t, self._serves) for t in request.transactional_ids]
        )

    def list_transactions(
        self, ctx: RequestContext, request: ListTransactionsRequest, now_ms: int
    ) -> ListTransactionsResponse:
        """ListTransactions (T68): the transactions of the partitions this coordinator has loaded (and the asking
        node leads)."""
        self._time.advance(now_ms, ctx.wall_ms)
        return list_transactions(
            self._parts.cache,
            request.state_filters,
            request.producer_id_filters,
            request.duration_filter,
            self._time.wall_ms,
            request.transactional_id_pattern,
            self._serves,
        )

    def verify_partitions(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]:
        """For the data plane, before a transactional produce (T24, T39): per partition NONE if it is in the
        ongoing transaction of (id, producer id, epoch), else why not (TRANSACTION_ABORTABLE, PRODUCER_FENCED,
        INVALID_PRODUCER_ID_MAPPING, CONCURRENT_TRANSACTIONS, NOT_COORDINATOR, ...). Writes nothing."""
        return verify_partitions(self._parts, transactional_id, producer_id, producer_epoch, list(partitions))

    def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
        now_ms: int,
        wall_ms: int | None = None,
    ) -> Reply[ErrorCode]:
        """KIP-890 part 2's implicit add: a Produce v12+ or TxnOffsetCommit v5+ adds its partitions to the producer's
        transaction itself (Kafka's partition leader sends AddPartitionsToTxn v5 with VerifyOnly false, so the
        transaction is recorded as a version 2 one, T70). The same checks and write as AddPartitionsToTxn (T25);
        from Empty or Complete* it begins a transaction (T76). The reply completes once the transaction is durable
        (NONE) or with the error for every partition."""
        self._time.advance(now_ms, wall_ms)
        reply: Reply[ErrorCode] = Reply()
        add_partitions(
            self._parts,
            transactional_id,
            producer_id,
            producer_epoch,
            list(partitions),
            reply.complete,
            client_transaction_version=TRANSACTION_VERSION_2,
        )
        return reply

    def partition_for(self, transactional_id: str) -> int:
        """T1: the `__transaction_state` partition (and so the coordinator) of `transactional_id`."""
        return self._parts.cache.partition_for(transactional_id)

    # -- markers ---------------------------------------------------------------------------------------------

    def markers_written(
        self,
        markers: TxnMarkers,
        now_ms: int,
        wall_ms: int | None = None,
        *,
        errors: Mapping[TopicPartition, ErrorCode] | None = None,
    ) -> None:
        """The broker's answer for `markers`: every partition written except those in `errors` (T34)."""
        self._time.advance(now_ms, wall_ms)
        self._parts.markers.written(markers, errors or {})

    def pending_markers(self) -> list[TxnMarkers]:
        """Markers handed out and not yet answered as written, per transaction."""
        return self._parts.markers.pending_markers()

    # -- time ------------------------------------------------------------------------------------------------

    # `tick` and `next_deadline_ms`: `TimerDriven`.

    # -- partition ownership ---------------------------------------------------------------------------------

    def begin_loading(self, partition: int) -> None:
        """Became leader of `partition`: its ids answer COORDINATOR_LOAD_IN_PROGRESS until it is loaded."""
        self._ownership.begin_loading(partition)

    def load_partition(
        self,
        partition: int,
        records: Iterable[TxnRecord | DamagedTxnRecord],
        now_ms: int,
        wall_ms: int | None = None,
        coordinator_epoch: int = 0,
    ) -> bool:
        """Replay `partition`'s records, serve its ids and resume its decided transactions (T53); False (and
        FAILED) when that cannot finish. `coordinator_epoch` (the partition's leader epoch) goes into markers."""
        self._time.advance(now_ms, wall_ms)
        return self._ownership.load_partition(partition, records, coordinator_epoch)

    def fail_loading(self, partition: int, reason: str, now_ms: int, wall_ms: int | None = None) -> None:
        """The load of `partition` cannot finish: NOT_COORDINATOR for its ids from now on."""
        self._time.advance(now_ms, wall_ms)
        self._ownership.fail_loading(partition, reason)

    def unload_partition(self, partition: int, now_ms: int, wall_ms: int | None = None) -> None:
        """Lost `partition` (T55): its ids are dropped, their markers cancelled, their writes NOT_COORDINATOR."""
        self._time.advance(now_ms, wall_ms)
        self._ownership.unload_partition(partition)

    def shutdown(self, now_ms: int, wall_ms: int | None = None) -> None:
        """Unload everything and answer COORDINATOR_NOT_AVAILABLE from now on."""
        self._time.advance(now_ms, wall_ms)
        self._ownership.shutdown()

    # -- controls (operators, the toolkit's faults, tests) ---------------------------------------------------

    def abort_now(self, transactional_id: str, now_ms: int, wall_ms: int | None = None) -> bool:
        """Abort the id's Ongoing transaction as its timeout would, now (fenced, epoch bumped); False if it has
        none to abort or a transition is pending."""
        self._time.advance(now_ms, wall_ms)
        found = self._parts.cache.lookup(transactional_id)
        if not isinstance(found, TransactionMetadata) or found.state is not TransactionState.ONGOING:
            return False
        if found.pending_state is not None:
            return False
        self._housekeeping.abort_timed_out(found)
        return True

    # -- read-only views -------------------------------------------------------------------------------------

    @property
    def config(self) -> TransactionConfig:
        return self._config

    def transaction(self, transactional_id: str) -> TransactionMetadata | None:
        """The id's live metadata (for inspection only), None if unknown or not loaded here."""
        found = self._parts.cache.lookup(transactional_id)
        return found if isinstance(found, TransactionMetadata) else None

    def transactions(self) -> list[TransactionMetadata]:
        """Every id of every loaded partition, by transactional id."""
        return sorted(self._parts.cache.all_transactions(), key=lambda t: t.transactional_id)

    def owned_partitions(self) -> dict[int, str]:
        return self._parts.cache.owned()

    def load_failures(self) -> dict[int, str]:
        """Why each FAILED partition could not be loaded."""
        return self._parts.cache.failures()

    def quarantined_records(self) -> dict[int, list[DamagedTxnRecord]]:
        """Per loaded partition, the records its load quarantined (Decision 9)."""
        return self._ownership.quarantined()

    def group_partition(self, group_id: str) -> int:
        """The group's `__consumer_offsets` partition, the one AddOffsetsToTxn (or TxnOffsetCommit v5's implicit
        add) puts in the transaction (T27)."""
        return partition_for(group_id, self._config.offsets_topic_num_partitions)
