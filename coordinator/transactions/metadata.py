"""One transactional id's metadata and its two-step transitions (Kafka's `TransactionMetadata`, T9-T14, T21-T32).

A transition is *prepared* (`prepare_*` computes the target metadata, a `TxnTransit`, and records the target state
as `pending_state`), the transit is written to `__transaction_state`, and only when the write is durable is it
*completed* (`complete_transition` copies the transit in and clears `pending_state`). A failed write clears the
pending state instead. While a transition is pending every other operation on the id answers
CONCURRENT_TRANSACTIONS, which is how a single-threaded coordinator with asynchronous writes stays serial per id.

Both transaction versions (KIP-890): under version 0/1 EndTxn keeps the epoch; under version 2 (the client's, as its
request versions tell, T70) every PrepareCommit/PrepareAbort bumps it, and when the bump exhausts the epoch a new
producer id is pre-allocated (`next_producer_id`) and becomes current at epoch 0 when the transaction completes
(T72). Timestamps are wall-clock milliseconds, as Kafka persists them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from coordinator.offsets import TopicPartition
from coordinator.transactions.state import TransactionState
from protocol.errors import ErrorCode

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
INT16_MAX = 32767
NO_TIMESTAMP = -1
TRANSACTION_VERSION_2 = 2
"""`transaction.version` 2 (KIP-890 part 2): the epoch is bumped at every EndTxn, partitions are added implicitly."""


def supports_epoch_bump(transaction_version: int) -> bool:
    """Kafka's `TransactionVersion.supportsEpochBump`."""
    return transaction_version >= TRANSACTION_VERSION_2


def is_epoch_exhausted(epoch: int) -> bool:
    """Kafka keeps the last epoch of a producer id for fencing: 32766 and 32767 are never handed out by a bump."""
    return epoch >= INT16_MAX - 1


class IllegalTransitionError(Exception):
    """A transition Kafka would refuse with IllegalStateException: a coordinator bug, never a client's fault."""


@dataclass(frozen=True, slots=True)
class TxnTransit:
    """The metadata one transition writes (Kafka's `TxnTransitMetadata`); `state` is the target state."""

    producer_id: int
    previous_producer_id: int
    next_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    timeout_ms: int
    state: TransactionState
    partitions: frozenset[TopicPartition]
    start_timestamp_ms: int
    last_update_timestamp_ms: int
    client_transaction_version: int = 0


class TransactionMetadata:
    """The live metadata of one transactional id, owned by the coordinator's cache."""

    __slots__ = (
        "client_transaction_version",
        "has_failed_epoch_fence",
        "last_producer_epoch",
        "last_update_timestamp_ms",
        "next_producer_id",
        "partitions",
        "pending_state",
        "previous_producer_id",
        "producer_epoch",
        "producer_id",
        "start_timestamp_ms",
        "state",
        "timeout_ms",
        "transactional_id",
    )

    def __init__(
        self,
        transactional_id: str,
        *,
        producer_id: int,
        producer_epoch: int,
        timeout_ms: int,
        state: TransactionState,
        previous_producer_id: int = NO_PRODUCER_ID,
        next_producer_id: int = NO_PRODUCER_ID,
        last_producer_epoch: int = NO_PRODUCER_EPOCH,
        partitions: Iterable[TopicPartition] = (),
        start_timestamp_ms: int = NO_TIMESTAMP,
        last_update_timestamp_ms: int = NO_TIMESTAMP,
        client_transaction_version: int = 0,
    ) -> None:
        self.transactional_id = transactional_id
        self.producer_id = producer_id
        self.previous_producer_id = previous_producer_id
        self.next_producer_id = next_producer_id
        self.producer_epoch = producer_epoch
        self.last_producer_epoch = last_producer_epoch
        self.timeout_ms = timeout_ms
        self.state = state
        self.partitions: set[TopicPartition] = set(partitions)
        self.start_timestamp_ms = start_timestamp_ms
        self.last_update_timestamp_ms = last_update_timestamp_ms
        self.client_transaction_version = client_transaction_version
        self.pending_state: TransactionState | None = None
        """The state a transition being written goes to (Kafka's `pendingState`)."""
        self.has_failed_epoch_fence = False
        """A fence's PrepareAbort could not be written: the next fence does not bump the epoch again (T14)."""

    @property
    def is_producer_epoch_exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)

    def __repr__(self) -> str:
        return (
            f"TransactionMetadata({self.transactional_id!r}, producer_id={self.producer_id},"
            f" epoch={self.producer_epoch}, state={self.state.state_name}, pending={self.pending_state},"
            f" partitions={sorted(self.partitions)})"
        )

    # -- preparing transitions (each sets `pending_state`) ---------------------------------------------------

    def prepare_fence_producer_epoch(self) -> TxnTransit:
        """T14: fence the producer of an Ongoing transaction before aborting it (never written as such)."""
        bump = not self.has_failed_epoch_fence and self.producer_epoch != INT16_MAX
        return self._prepare(
            TransactionState.PREPARE_EPOCH_FENCE, producer_epoch=self.producer_epoch + 1 if bump else None
        )

    def prepare_increment_producer_epoch(
        self, timeout_ms: int, expected_epoch: int | None, now_ms: int
    ) -> TxnTransit | ErrorCode:
        """T12/T13: InitProducerId's epoch bump, or the idempotent retry of one; PRODUCER_FENCED otherwise."""
        if self.is_producer_epoch_exhausted:
            raise IllegalTransitionError(f"no producer epochs left for producer id {self.producer_id}")
        if expected_epoch is None:
            epoch, last = self.producer_epoch + 1, NO_PRODUCER_EPOCH
        elif self.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == self.producer_epoch:
            epoch, last = self.producer_epoch + 1, self.producer_epoch
        elif expected_epoch == self.last_producer_epoch:
            epoch, last = self.producer_epoch, self.last_producer_epoch
        else:
            return ErrorCode.PRODUCER_FENCED
        return self._prepare(
            TransactionState.EMPTY,
            producer_epoch=epoch,
            last_producer_epoch=last,
            timeout_ms=timeout_ms,
            partitions=frozenset(),
            start_timestamp_ms=NO_TIMESTAMP,
            last_update_timestamp_ms=now_ms,
        )

    def prepare_producer_id_rotation(
        self, new_producer_id: int, timeout_ms: int, now_ms: int, *, record_last_epoch: bool
    ) -> TxnTransit:
        """T12: the epoch is exhausted, so InitProducerId continues under a new producer id at epoch 0."""
        if self.state in (TransactionState.ONGOING, TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT):
            raise IllegalTransitionError("cannot rotate producer ids while a transaction is still pending")
        return self._prepare(
            TransactionState.EMPTY,
            producer_id=new_producer_id,
            producer_epoch=0,
            last_producer_epoch=self.producer_epoch if record_last_epoch else NO_PRODUCER_EPOCH,
            timeout_ms=timeout_ms,
            partitions=frozenset(),
            start_timestamp_ms=NO_TIMESTAMP,
            last_update_timestamp_ms=now_ms,
        )

    def prepare_add_partitions(
        self, partitions: Iterable[TopicPartition], now_ms: int, client_transaction_version: int = 0
    ) -> TxnTransit:
        """T25: the transaction gains partitions; from Empty or Complete* this begins it (start = now). The client's
        transaction version is recorded (T70): the transaction ends by its rules."""
        starts = self.state in (
            TransactionState.EMPTY,
            TransactionState.COMPLETE_COMMIT,
            TransactionState.COMPLETE_ABORT,
        )
        return self._prepare(
            TransactionState.ONGOING,
            partitions=frozenset(self.partitions).union(partitions),
            start_timestamp_ms=now_ms if starts else self.start_timestamp_ms,
            last_update_timestamp_ms=now_ms,
            client_transaction_version=client_transaction_version,
        )

    def prepare_abort_or_commit(
        self,
        state: TransactionState,
        now_ms: int,
        *,
        client_transaction_version: int = 0,
        next_producer_id: int = NO_PRODUCER_ID,
        no_partition_added: bool = False,
    ) -> TxnTransit:
        """T28/T71: EndTxn (or an internal abort) decides the outcome. Version 0/1 keeps the epoch; version 2 bumps
        it (remembering the old one as the last epoch; an abort at epoch 32767 keeps it, as Kafka does) and carries
        the pre-allocated `next_producer_id` when the epoch is exhausted. An abort with no partition added (T73:
        from Empty or Complete* under version 2) starts its transaction now."""
        epoch, last_epoch = self.producer_epoch, self.last_producer_epoch
        if supports_epoch_bump(client_transaction_version):
            keep = self.producer_epoch == INT16_MAX and state is TransactionState.PREPARE_ABORT
            epoch, last_epoch = (self.producer_epoch if keep else self.producer_epoch + 1), self.producer_epoch
        return self._prepare(
            state,
            producer_epoch=epoch,
            last_producer_epoch=last_epoch,
            next_producer_id=next_producer_id,
            start_timestamp_ms=now_ms if no_partition_added else None,
            last_update_timestamp_ms=now_ms,
            client_transaction_version=client_transaction_version,
        )

    def prepare_complete(self, now_ms: int) -> TxnTransit:
        """T32: every marker is written; the transaction is over and its partitions are forgotten. Under version 2
        a pre-allocated next producer id becomes the producer id, at epoch 0 (T72)."""
        self.has_failed_epoch_fence = False
        complete = (
            TransactionState.COMPLETE_COMMIT
            if self.state is TransactionState.PREPARE_COMMIT
            else TransactionState.COMPLETE_ABORT
        )
        rotate = supports_epoch_bump(self.client_transaction_version) and self.next_producer_id != NO_PRODUCER_ID
        return self._prepare(
            complete,
            producer_id=self.next_producer_id if rotate else None,
            producer_epoch=0 if rotate else None,
            next_producer_id=NO_PRODUCER_ID,
            partitions=frozenset(),
            last_update_timestamp_ms=now_ms,
        )

    def prepare_dead(self) -> TxnTransit:
        """T48: the id expires; its tombstone is written and the metadata leaves the cache."""
        return self._prepare(TransactionState.DEAD, partitions=frozenset())

    def _prepare(
        self,
        state: TransactionState,
        *,
        producer_id: int | None = None,
        next_producer_id: int | None = None,
        producer_epoch: int | None = None,
        last_producer_epoch: int | None = None,
        timeout_ms: int | None = None,
        partitions: frozenset[TopicPartition] | None = None,
        start_timestamp_ms: int | None = None,
        last_update_timestamp_ms: int | None = None,
        client_transaction_version: int | None = None,
    ) -> TxnTransit:
        """Kafka's `prepareTransitionTo`: unchanged fields are copied, the target must be a valid successor."""
        if self.pending_state is not None:
            raise IllegalTransitionError(
                f"{self.transactional_id}: transition to {state.state_name} while {self.pending_state.state_name}"
                " is pending"
            )
        transit = TxnTransit(
            producer_id=self.producer_id if producer_id is None else producer_id,
            previous_producer_id=self.producer_id,
            next_producer_id=self.next_producer_id if next_producer_id is None else next_producer_id,
            producer_epoch=self.producer_epoch if producer_epoch is None else producer_epoch,
            last_producer_epoch=self.last_producer_epoch if last_producer_epoch is None else last_producer_epoch,
            timeout_ms=self.timeout_ms if timeout_ms is None else timeout_ms,
            state=state,
            partitions=frozenset(self.partitions) if partitions is None else partitions,
            start_timestamp_ms=self.start_timestamp_ms if start_timestamp_ms is None else start_timestamp_ms,
            last_update_timestamp_ms=(
                self.last_update_timestamp_ms if last_update_timestamp_ms is None else last_update_timestamp_ms
            ),
            client_transaction_version=(
                self.client_transaction_version if client_transaction_version is None else client_transaction_version
            ),
        )
        if transit.producer_id < 0:
            raise IllegalTransitionError(f"{self.transactional_id}: illegal producer id {transit.producer_id}")
        if state is not TransactionState.DEAD and transit.producer_epoch < 0:
            raise IllegalTransitionError(f"{self.transactional_id}: illegal producer epoch {transit.producer_epoch}")
        if self.state not in state.valid_previous_states:
            raise IllegalTransitionError(
                f"{self.transactional_id}: {state.state_name} cannot follow {self.state.state_name}"
            )
        self.pending_state = state
        return transit

    # -- completing --------------------------------------------------------------------------------------------

    def complete_transition(self, transit: TxnTransit) -> TransactionState:
        """The transit is durable: it becomes the metadata. Returns the state it left. Kafka's consistency checks
        (`completeTransitionTo`) guard against a transit that does not follow from this metadata."""
        if self.pending_state is not transit.state:
            raise IllegalTransitionError(
                f"{self.transactional_id}: completing {transit.state.state_name} but pending is {self.pending_state}"
            )
        self._check_completion(transit)
        previous = self.state
        self.producer_id = transit.producer_id
        self.previous_producer_id = transit.previous_producer_id
        self.next_producer_id = transit.next_producer_id
        self.producer_epoch = transit.producer_epoch
        self.last_producer_epoch = transit.last_producer_epoch
        self.timeout_ms = transit.timeout_ms
        self.partitions = set(transit.partitions)
        self.start_timestamp_ms = transit.start_timestamp_ms
        self.last_update_timestamp_ms = transit.last_update_timestamp_ms
        self.client_transaction_version = transit.client_transaction_version
        self.pending_state = None
        self.state = transit.state
        return previous

    def _check_completion(self, transit: TxnTransit) -> None:
        same_producer = transit.producer_id == self.producer_id and transit.producer_epoch == self.producer_epoch
        state = transit.state
        if state is TransactionState.EMPTY:
            bumped = transit.producer_epoch == self.producer_epoch + 1 or (
                transit.producer_epoch == 0 and transit.producer_id != self.producer_id
            )
            ok = (
                (transit.producer_epoch == self.producer_epoch or bumped)
                and not transit.partitions
                and transit.start_timestamp_ms == NO_TIMESTAMP
            )
        elif state is TransactionState.ONGOING:
            ok = same_producer and transit.partitions >= self.partitions and transit.timeout_ms == self.timeout_ms
        elif state.is_prepare:
            bumped = supports_epoch_bump(transit.client_transaction_version) and (
                transit.producer_epoch == self.producer_epoch + 1
            )
            ok = (
                transit.producer_id == self.producer_id
                and (transit.producer_epoch == self.producer_epoch or bumped)
                and transit.partitions == self.partitions
                and transit.timeout_ms == self.timeout_ms
                and (
                    transit.start_timestamp_ms == self.start_timestamp_ms or self.state is not TransactionState.ONGOING
                )
            )
        elif state in (TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT):
            rotated = transit.producer_id == self.next_producer_id != NO_PRODUCER_ID and transit.producer_epoch == 0
            ok = (
                (same_producer or rotated)
                and transit.timeout_ms == self.timeout_ms
                and transit.start_timestamp_ms != NO_TIMESTAMP
            )
        else:  # Dead and PrepareEpochFence are never completed: the former leaves the cache, the latter is replaced
            ok = False
        if not ok:
            raise IllegalTransitionError(f"{self.transactional_id}: unexpected transit {transit} from {self!r}")
