"""Everything the broker puts around the sans-IO transaction coordinator: its `__transaction_state` log and load, the
channel that writes its COMMIT/ABORT markers, and the two verifications the data plane and the group coordinator
ask it for.

Markers (Kafka's TransactionMarkerChannelManager, minus the network): the coordinator hands over a `TxnMarkers`
once a PrepareCommit/PrepareAbort is durable; the channel writes one control batch per partition on a later turn of
the event loop (the coordinator's call must not re-enter it) and answers `markers_written` with the partitions that
failed. A data partition's marker goes straight to its log (`TxnMarkerWriter`); a `__consumer_offsets` partition's
goes through the group coordinator (`complete_transaction`), which writes it in order with the offsets it queued
and materialises or drops that producer's pending offsets. What the group coordinator answers when it cannot
(not its partition, loading, unavailable) becomes NOT_LEADER_OR_FOLLOWER, which the transaction coordinator
retries, as Kafka's WriteTxnMarkers handler answers it. A partition of a topic deleted meanwhile counts as written
(Kafka's channel manager drops it).

Verification (KIP-890 part 1, `transaction.partition.verification.enable`): the first transactional batch of a
producer on a partition, and a TxnOffsetCommit, are checked against the coordinator's view of the transaction.
Errors become what the request's older clients understand, as Kafka's ReplicaManager maps them: a partition not
in the transaction is INVALID_TXN_STATE; a coordinator that cannot answer now, or a transaction completing
(CONCURRENT_TRANSACTIONS), is NOT_ENOUGH_REPLICAS for Produce, which producers retry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import structlog

from broker.clock import BrokerClock
from broker.events import EventTap
from broker.handlers.bridge import awaited
from broker.offsets_log import OFFSETS_TOPIC
from broker.partition_loads import read_for_load
from broker.transaction_state_log import TransactionStateLog
from broker.txn_markers import TxnMarkerWriter
from broker.txn_verification import TxnAdd, TxnVerification
from coordinator.config import TransactionConfig
from coordinator.coordinator import GroupCoordinator
from coordinator.offset_base import TxnOffsetVerification
from coordinator.offsets import TopicPartition
from coordinator.partitions import Serves
from coordinator.persistence import AppendCallback
from coordinator.transactions import ProducerIdAllocator, TransactionCoordinator, TransactionEvents, TxnMarkers
from protocol.errors import ErrorCode
from protocol.messages.txn_offset_commit import TxnOffsetCommitRequest
from storage.log_manager import LogManager

log = structlog.get_logger("broker.transactions")
MarkersObserver = Callable[[TxnMarkers, Mapping[TopicPartition, ErrorCode]], None]
"""Told of every round of markers once it is answered: the round and the partitions that failed (with why)."""

#: What the group coordinator answers when a marker cannot be written there now; the marker is retried.
_RETRY_ON_OFFSETS = frozenset(
    {ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE}
)
#: Verification answers a Produce turns into NOT_ENOUGH_REPLICAS (retriable for every producer version).
_PRODUCE_RETRIABLE = frozenset(
    {
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NETWORK_EXCEPTION,
        ErrorCode.CONCURRENT_TRANSACTIONS,
    }
)
#: Produce knows TRANSACTION_ABORTABLE from this version on (KIP-890: GENERIC_ERROR_SUPPORTED).
PRODUCE_GENERIC_ERROR = 11
#: ... and TxnOffsetCommit from this one (Kafka's txnOffsetCommitRequestVersionToTransactionSupportedOperation).
TXN_OFFSET_COMMIT_GENERIC_ERROR = 4
#: The coordinator's verification answers a verified request gets in their place (`TransactionService._verify`).
_VERIFICATION_ANSWER = {
    ErrorCode.PRODUCER_FENCED: ErrorCode.INVALID_PRODUCER_EPOCH,
    ErrorCode.TRANSACTION_ABORTABLE: ErrorCode.INVALID_TXN_STATE,
}


@dataclass(slots=True)
class _MarkerRound:
    """The markers of one `TxnMarkers` being written: failures so far and the offsets partitions still pending."""

    markers: TxnMarkers
    errors: dict[tuple[str, int], ErrorCode] = field(default_factory=dict)
    outstanding: int = 0


class MarkerChannel:
    """Writes the transaction coordinator's markers (see the module docstring); `intercept` lets the test
    toolkit hold back or fail a round (faults), and is None in a plain broker; `observers` are told how each round
    went (the toolkit's transaction timeline)."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        clock: BrokerClock,
        logs: LogManager,
        writer: TxnMarkerWriter,
        groups: GroupCoordinator,
        rearm: Callable[[], None],
    ) -> None:
        self._loop = loop
        self._clock = clock
        self._logs = logs
        self._writer = writer
        self._groups = groups
        self._rearm = rearm
        self.coordinator: TransactionCoordinator | None = None
        self.intercept: Callable[[TxnMarkers, Callable[[ErrorCode | None], None]], None] | None = None
        """Called with each round and a `go(error)` continuation: None writes the markers, an error fails the
        whole round with it without writing anything (the toolkit's marker faults)."""
        self.observers: list[MarkersObserver] = []

    def send(self, markers: TxnMarkers) -> None:
        """The coordinator's `MarkerSink`: queue the round; it is written on the next turn of the loop."""
        self._loop.call_soon(self._start, markers)

    def _start(self, markers: TxnMarkers) -> None:
        if self.intercept is None:
            self._write(markers)
            return

        def go(error: ErrorCode | None) -> None:
            if error is None:
                self._write(markers)
            else:
                self._finish(_MarkerRound(markers, {tp: error for tp in markers.partitions}))

        self.intercept(markers, go)

    def _write(self, markers: TxnMarkers) -> None:
        round_ = _MarkerRound(markers)
        offsets: list[int] = []
        for topic, partition in markers.partitions:
            if topic == OFFSETS_TOPIC:
                offsets.append(partition)
                continue
            error = self._writer.write(
                topic,
                partition,
                producer_id=markers.producer_id,
                producer_epoch=markers.producer_epoch,
                coordinator_epoch=markers.coordinator_epoch,
                commit=markers.committed,
                transaction_version=markers.transaction_version,
            )
            if error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and self._logs.topic(topic) is None:
                continue  # the topic was deleted: nothing left to mark
            if error != ErrorCode.NONE:
                round_.errors[(topic, partition)] = error
        round_.outstanding = len(offsets)
        if not offsets:
            self._finish(round_)
            return
        for partition in offsets:
            reply = self._groups.complete_transaction(
                partition,
                markers.producer_id,
                markers.producer_epoch,
                markers.coordinator_epoch,
                markers.committed,
                self._clock.monotonic_ms(),
                self._clock.wall_ms(),
            )
            reply.on_complete(self._offsets_done(round_, partition))
        self._rearm()

    def _offsets_done(self, round_: _MarkerRound, partition: int) -> AppendCallback:
        def done(error: ErrorCode) -> None:
            if error in _RETRY_ON_OFFSETS:
                error = ErrorCode.NOT_LEADER_OR_FOLLOWER
            if error != ErrorCode.NONE:
                round_.errors[(OFFSETS_TOPIC, partition)] = error
            round_.outstanding -= 1
            if round_.outstanding == 0:
                self._finish(round_)

        return done

    def _finish(self, round_: _MarkerRound) -> None:
        coordinator = self.coordinator
        assert coordinator is not None, "the channel is bound to its coordinator at construction"
        if round_.errors:
            log.warning(
                "txn_markers.failed",
                transactional_id=round_.markers.transactional_id,
                producer_id=round_.markers.producer_id,
                errors={f"{t}-{p}": e.name for (t, p), e in round_.errors.items()},
            )
        coordinator.markers_written(
            round_.markers, self._clock.monotonic_ms(), self._clock.wall_ms(), errors=round_.errors or None
        )
        for observer in self.observers:
            try:
                observer(round_.markers, round_.errors)
            except Exception:  # an observability bug must never stop the markers
                log.exception("txn_markers.observer_failed", transactional_id=round_.markers.transactional_id)
        self._rearm()


class TransactionService:
    """The transaction coordinator of this broker with its log, marker channel and verifications."""

    def __init__(
        self,
        config: TransactionConfig,
        loop: asyncio.AbstractEventLoop,
        clock: BrokerClock,
        logs: LogManager,
        groups: GroupCoordinator,
        writer: TxnMarkerWriter,
        producer_ids: ProducerIdAllocator,
        rearm: Callable[[], None],
        *,
        verification: bool = True,
        serves: Serves | None = None,
    ) -> None:
        """`serves` (several-node clusters): whether the node a client's transaction request came to leads a
        `__transaction_state` partition (`TransactionCoordinator`); the verifications here are the broker's own
        calls, made for whichever node, and are never gated by it."""
        self.config = config
        self._clock = clock
        self._rearm = rearm
        #: transaction.partition.verification.enable; a dynamic key, so it may change while the broker runs.
        self.verification = verification
        self.log = TransactionStateLog(logs, clock.wall_ms, loop.call_soon, self._deliver_durability)
        #: The coordinator's events, tapped: an extension point like `Broker.events` (the transaction timeline).
        self.events = EventTap(structlog.get_logger("transaction_coordinator"))
        self.channel = MarkerChannel(loop, clock, logs, writer, groups, rearm)
        self.coordinator = TransactionCoordinator(
            config,
            self.log,
            producer_ids,
            self.channel,
            events=TransactionEvents(self.events),
            known_partition=lambda topic, partition: logs.get(topic, partition) is not None,
            serves=serves,
        )
        self.channel.coordinator = self.coordinator

    @property
    def partitions(self) -> range:
        return range(self.config.transaction_state_log_num_partitions)

    def begin_loading(self) -> None:
        for partition in self.partitions:
            self.coordinator.begin_loading(partition)

    async def load(self) -> int:
        """Replay every `__transaction_state` partition (read in a worker thread, replayed on the loop); a partition
        that cannot be read is FAILED (NOT_COORDINATOR for its ids) and the others load regardless. Returns how
        many records were replayed."""
        replayed = 0
        for partition in self.partitions:
            replayed += await self.load_partition(partition)
        return replayed

    async def load_partition(self, partition: int) -> int:
        """Replay one partition that is loading (at the start, or moved to another node); the records replayed. Its
        markers carry the partition's leader epoch as their coordinator epoch, as Kafka's do."""
        clock = self._clock
        records = await read_for_load(self.coordinator, partition, self.log.read_transactions, clock.monotonic_ms)
        if records is None:
            return 0
        epoch = self.log.leader_epoch(partition)
        loaded = self.coordinator.load_partition(partition, records, clock.monotonic_ms(), clock.wall_ms(), epoch)
        self._rearm()
        return len(records) if loaded else 0

    def _deliver_durability(self, outcomes: list[tuple[AppendCallback, ErrorCode]]) -> None:
        """Tell the coordinator its records are durable, after bringing its clock to now."""
        self.coordinator.tick(self._clock.monotonic_ms(), self._clock.wall_ms())
        for callback, error in outcomes:
            callback(error)
        self._rearm()

    # -- verifications ---------------------------------------------------------------------------------------

    def verify_produce(self, request: TxnVerification) -> ErrorCode:
        """A producer's first transactional batch on a partition: was the partition added to its transaction?
        Produce v11+ knows TRANSACTION_ABORTABLE and gets it (Kafka's AddPartitionsToTxnManager turns it into
        INVALID_TXN_STATE only for older versions)."""
        if not self.verification:
            return ErrorCode.NONE
        error = self._verify(
            request.transactional_id,
            request.producer_id,
            request.producer_epoch,
            request.topic,
            request.partition,
            generic_error=request.produce_version >= PRODUCE_GENERIC_ERROR,
        )
        return ErrorCode.NOT_ENOUGH_REPLICAS if error in _PRODUCE_RETRIABLE else error

    async def add_for_produce(self, request: TxnAdd) -> ErrorCode:
        """Produce v12+ (KIP-890 part 2): add the partitions to the producer's transaction, and answer as Kafka's
        partition leader does: PRODUCER_FENCED as INVALID_PRODUCER_EPOCH, a coordinator that cannot answer now or
        a transaction completing as NOT_ENOUGH_REPLICAS (retriable). Done whatever `verification` says, as Kafka."""
        reply = self.coordinator.add_partitions(
            request.transactional_id,
            request.producer_id,
            request.producer_epoch,
            request.partitions,
            self._clock.monotonic_ms(),
            self._clock.wall_ms(),
        )
        self._rearm()
        error = await awaited(reply)
        error = _VERIFICATION_ANSWER.get(error, error)
        return ErrorCode.NOT_ENOUGH_REPLICAS if error in _PRODUCE_RETRIABLE else error

    async def add_for_offsets(self, request: TxnOffsetCommitRequest) -> ErrorCode:
        """TxnOffsetCommit v5+ (KIP-890 part 2): add the group's `__consumer_offsets` partition to the producer's
        transaction, as the AddOffsetsToTxn such a producer no longer sends would (Kafka's group coordinator asks
        for it with AddPartitionsToTxn v5, VerifyOnly false, so the transaction is a version 2 one);
        PRODUCER_FENCED is answered INVALID_PRODUCER_EPOCH, as verification does."""
        coordinator = self.coordinator
        reply = coordinator.add_partitions(
            request.transactional_id,
            request.producer_id,
            request.producer_epoch,
            [(OFFSETS_TOPIC, coordinator.group_partition(request.group_id))],
            self._clock.monotonic_ms(),
            self._clock.wall_ms(),
        )
        self._rearm()
        error = await awaited(reply)
        return _VERIFICATION_ANSWER.get(error, error)

    def verify_offsets(self, request: TxnOffsetVerification) -> ErrorCode:
        """A TxnOffsetCommit: was the group's `__consumer_offsets` partition added (AddOffsetsToTxn)? v4+ knows
        TRANSACTION_ABORTABLE and gets it."""
        if not self.verification:
            return ErrorCode.NONE
        return self._verify(
            request.transactional_id,
            request.producer_id,
            request.producer_epoch,
            OFFSETS_TOPIC,
            request.partition,
            generic_error=request.api_version >= TXN_OFFSET_COMMIT_GENERIC_ERROR,
        )

    def _verify(
        self, transactional_id: str, producer_id: int, epoch: int, topic: str, partition: int, *, generic_error: bool
    ) -> ErrorCode:
        """The coordinator's answer as Kafka's verification (AddPartitionsToTxnManager) hands it to Produce and
        TxnOffsetCommit alike: PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH (what producers expect there), and
        TRANSACTION_ABORTABLE INVALID_TXN_STATE unless the request's version knows the generic error."""
        answers = self.coordinator.verify_partitions(transactional_id, producer_id, epoch, [(topic, partition)])
        error = answers.get((topic, partition), ErrorCode.NONE)
        if generic_error and error == ErrorCode.TRANSACTION_ABORTABLE:
            return error
        return _VERIFICATION_ANSWER.get(error, error)
