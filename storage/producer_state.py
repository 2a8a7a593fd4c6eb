"""Per-partition producer state: epochs, sequences and open transactions (Kafka's ``ProducerStateManager``).

Every batch that carries a producer id updates its producer's entry: the epoch, the last five batches (sequence
range and offsets, so a retried batch is recognised and answered with its first offset instead of being written
twice), the last timestamp, and for transactional producers the first offset of the transaction still open on
this partition. An end-transaction marker (:mod:`protocol.control_records`) closes that transaction.

Checks, as ``ProducerAppendInfo`` makes them (T37-T39):

* a batch or marker with an epoch older than the producer's current one is INVALID_PRODUCER_EPOCH;
* for client writes only: the sequence must continue the last batch's (a new epoch starts at 0; a producer whose
  state is unknown may start anywhere), else OUT_OF_ORDER_SEQUENCE_NUMBER; a batch equal to one of the last five
  is a duplicate;
* a non-transactional batch from a producer with an open transaction is INVALID_TXN_STATE;
* a marker from a coordinator epoch older than the last marker's is TRANSACTION_COORDINATOR_FENCED.

A marker of transaction version 0/1 must not be older than the producer's epoch; one of version 2 carries the epoch
its EndTxn bumped and must be newer, except a repeat of the last marker (same epoch, no transaction open). It moves
the producer to that epoch and clears its sequences: the next transaction starts at sequence 0, the old epoch is
refused.

An append is checked as a whole first (:meth:`ProducerStateManager.prepare` stages the new entries without
touching the state) and applied only once its bytes are in the log (:meth:`ProducerStateManager.commit`), so a
refused or failed write leaves the state as it was. The first unstable offset (the first offset of the oldest
open transaction) is what the log's last stable offset is made from.

The state is rebuilt by replaying the log's batch headers and markers (:meth:`ProducerStateManager.replay`, no
checks, like Kafka's recovery), from the latest snapshot (:mod:`storage.producer_snapshot`,
:meth:`ProducerStateManager.from_entries`) when there is one, so it survives restarts: a transaction whose marker
was never written is open again after a restart, and holds the last stable offset back until its marker arrives.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from protocol.control_records import EndTxnMarker
from protocol.records import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE, BatchHeader
from storage.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    TransactionCoordinatorFencedError,
)
from storage.validation import AppendOrigin

__all__ = [
    "BATCHES_REMEMBERED",
    "BatchMetadata",
    "CompletedTxn",
    "ProducerAppend",
    "ProducerEntry",
    "ProducerStateManager",
    "ProducerSummary",
]

#: Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN, which is also max.in.flight for idempotent producers.
BATCHES_REMEMBERED = 5
_INT32_MAX = 2**31 - 1
MAX_EPOCH = 32767
TRANSACTION_VERSION_2 = 2
"""Markers of this transaction version carry an epoch their EndTxn bumped (KIP-890 part 2)."""


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """Sequence range, offsets and max timestamp of one batch a producer wrote (Kafka's ``BatchMetadata``); the
    timestamp is what a retry of the batch is answered with as its log append time."""

    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


@dataclass(slots=True)
class ProducerEntry:
    """What the partition knows of one producer id (Kafka's ``ProducerStateEntry``)."""

    producer_id: int
    epoch: int = NO_PRODUCER_EPOCH
    #: The epoch of the coordinator that wrote this producer's last marker (-1: none yet).
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    #: First offset of the transaction open on this partition, None when there is none.
    current_txn_first_offset: int | None = None
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=BATCHES_REMEMBERED))

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    def duplicate_of(self, header: BatchHeader) -> BatchMetadata | None:
        """The remembered batch with exactly this epoch and sequence range: ``header`` is a producer's retry."""
        if header.producer_epoch != self.epoch:
            return None
        last_seq = header.last_sequence
        return next((b for b in self.batches if b.first_seq == header.base_sequence and b.last_seq == last_seq), None)

    def copy(self) -> ProducerEntry:
        """An independent copy to stage changes on (the remembered batches are immutable)."""
        return ProducerEntry(
            self.producer_id,
            self.epoch,
            self.coordinator_epoch,
            self.last_timestamp,
            self.current_txn_first_offset,
            deque(self.batches, maxlen=BATCHES_REMEMBERED),
        )

    def _set_epoch(self, epoch: int) -> None:
        if epoch != self.epoch:
            self.batches.clear()
            self.epoch = epoch


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """A transaction a marker closed: its producer, first offset, the marker's offset, how it ended, and the last
    stable offset right after it (what the aborted-transaction index records)."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool
    last_stable_offset: int


@dataclass(frozen=True, slots=True)
class ProducerSummary:
    """One active producer as DescribeProducers reports it (T69)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_txn_start_offset: int


@dataclass(slots=True)
class ProducerAppend:
    """An append checked against the state but not applied yet (Kafka's ``ProducerAppendInfo``, for all batches).

    ``duplicate`` is set when the append is a client's retry of a batch already in the log: nothing is written
    and the producer gets the offsets and timestamp of the original.
    """

    entries: dict[int, ProducerEntry] = field(default_factory=dict)
    started: list[tuple[int, int]] = field(default_factory=list)
    #: (producer id, first offset, marker offset, aborted) of each transaction a marker of this append closes.
    ended: list[tuple[int, int, int, bool]] = field(default_factory=list)
    duplicate: BatchMetadata | None = None


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == _INT32_MAX)


def _where(producer_id: int, offset: int, partition: str) -> str:
    return f"producer {producer_id} at offset {offset} in partition {partition}"


class ProducerStateManager:
    """The producer entries and open transactions of one partition; see the module docstring.

    ``partition`` (``topic-N``) only names the partition in error messages.
    """

    def __init__(self, partition: str = "") -> None:
        self.partition = partition
        self._producers: dict[int, ProducerEntry] = {}
        #: Open transactions: first offset -> producer id.
        self._ongoing: dict[int, int] = {}

    @classmethod
    def from_entries(cls, partition: str, entries: Sequence[ProducerEntry]) -> ProducerStateManager:
        """A state holding ``entries`` (read back from a snapshot), with their open transactions."""
        state = cls(partition)
        for entry in entries:
            state._producers[entry.producer_id] = entry
            if entry.current_txn_first_offset is not None:
                state._ongoing[entry.current_txn_first_offset] = entry.producer_id
        return state

    # --- queries ----------------------------------------------------------------------------------------------

    def entries(self) -> list[ProducerEntry]:
        """Every producer's entry, by producer id (what a snapshot stores); the caller must not change them."""
        return [entry for _, entry in sorted(self._producers.items())]

    def entry(self, producer_id: int) -> ProducerEntry | None:
        return self._producers.get(producer_id)

    def first_unstable_offset(self) -> int | None:
        """The first offset of the oldest open transaction (None when no transaction is open)."""
        return min(self._ongoing, default=None)

    def ongoing_transactions(self) -> dict[int, int]:
        """Open transactions, as first offset -> producer id, oldest first."""
        return dict(sorted(self._ongoing.items()))

    def has_ongoing_transaction(self, producer_id: int, producer_epoch: int) -> bool:
        """Whether this producer, at this epoch, has a transaction open here (Kafka skips verification then)."""
        entry = self._producers.get(producer_id)
        return entry is not None and entry.epoch == producer_epoch and entry.current_txn_first_offset is not None

    def active_producers(self) -> list[ProducerSummary]:
        """Every producer with state on this partition, by producer id."""
        return [
            ProducerSummary(
                producer_id=pid,
                producer_epoch=entry.epoch,
                last_sequence=entry.last_seq,
                last_timestamp=entry.last_timestamp,
                coordinator_epoch=entry.coordinator_epoch,
                current_txn_start_offset=-1
                if entry.current_txn_first_offset is None
                else entry.current_txn_first_offset,
            )
            for pid, entry in sorted(self._producers.items())
        ]

    # --- appends ----------------------------------------------------------------------------------------------

    def prepare(
        self,
        batches: Sequence[tuple[BatchHeader, EndTxnMarker | None]],
        origin: AppendOrigin,
        marker_transaction_version: int = 0,
    ) -> ProducerAppend:
        """Check the batches of one append (with their assigned offsets) and stage their effect.

        ``batches`` pairs each header with its marker (control batches) or None; ``marker_transaction_version`` is
        the transaction version the markers were written for (WriteTxnMarkers' per-marker field, T37). Raises the
        storage error of the first check that fails; the state is untouched either way.
        """
        staged = ProducerAppend()
        for header, marker in batches:
            producer_id = header.producer_id
            if producer_id == NO_PRODUCER_ID:
                continue
            current = staged.entries.get(producer_id) or self._producers.get(producer_id)
            if origin is AppendOrigin.CLIENT and current is not None and not header.is_control:
                duplicate = current.duplicate_of(header)
                if duplicate is not None:
                    return ProducerAppend(duplicate=duplicate)
            entry = current.copy() if current is not None else ProducerEntry(producer_id)
            staged.entries[producer_id] = entry
            if marker is None:
                self._check_data(entry, header, origin)
                self._apply_data(entry, header, staged)
            else:
                self._check_marker(entry, header, marker, marker_transaction_version)
                self._apply_marker(entry, header, marker, staged)
        return staged

    def commit(self, staged: ProducerAppend) -> list[CompletedTxn]:
        """Apply a prepared append whose bytes are now in the log; returns the transactions its markers closed, each
        with the last stable offset right after it (Kafka computes it before completing the transaction)."""
        self._producers.update(staged.entries)
        for producer_id, first_offset in staged.started:
            self._ongoing[first_offset] = producer_id
        completed: list[CompletedTxn] = []
        for producer_id, first_offset, last_offset, aborted in staged.ended:
            others = [offset for offset, pid in self._ongoing.items() if pid != producer_id]
            lso = min(others) if others else last_offset + 1
            self._ongoing.pop(first_offset, None)
            completed.append(CompletedTxn(producer_id, first_offset, last_offset, aborted, lso))
        return completed

    def replay(self, header: BatchHeader, marker: EndTxnMarker | None) -> CompletedTxn | None:
        """Apply one batch read back from the log, without checks (recovery trusts what the log holds)."""
        if header.producer_id == NO_PRODUCER_ID:
            return None
        current = self._producers.get(header.producer_id)
        staged = ProducerAppend()
        entry = current if current is not None else ProducerEntry(header.producer_id)
        staged.entries[header.producer_id] = entry
        if marker is None:
            self._apply_data(entry, header, staged)
        else:
            self._apply_marker(entry, header, marker, staged)
        completed = self.commit(staged)
        return completed[0] if completed else None

    # --- checks and effects -------------------------------------------------------------------------------------

    def _check_data(self, entry: ProducerEntry, header: BatchHeader, origin: AppendOrigin) -> None:
        epoch = header.producer_epoch
        if epoch < entry.epoch:
            raise InvalidProducerEpochError(
                f"Epoch of {_where(entry.producer_id, header.base_offset, self.partition)} is {epoch}, which is "
                f"smaller than the last seen epoch {entry.epoch}"
            )
        if origin is AppendOrigin.CLIENT:
            self._check_sequence(entry, header)
        if entry.current_txn_first_offset is not None and not header.is_transactional:
            raise InvalidTxnStateError(
                f"Expected transactional write from {_where(entry.producer_id, header.base_offset, self.partition)}"
            )

    def _check_sequence(self, entry: ProducerEntry, header: BatchHeader) -> None:
        first_seq = header.base_sequence
        where = _where(entry.producer_id, header.base_offset, self.partition)
        if header.producer_epoch != entry.epoch:
            if first_seq != 0 and entry.epoch != NO_PRODUCER_EPOCH:
                raise OutOfOrderSequenceError(
                    f"Invalid sequence number for new epoch of {where}: {header.producer_epoch} (request epoch), "
                    f"{first_seq} (seq. number), {entry.epoch} (current producer epoch)"
                )
        elif entry.epoch != NO_PRODUCER_EPOCH and not _in_sequence(entry.last_seq, first_seq):
            raise OutOfOrderSequenceError(
                f"Out of order sequence number for {where}: {first_seq} (incoming seq. number), "
                f"{entry.last_seq} (current end sequence number)"
            )

    def _apply_data(self, entry: ProducerEntry, header: BatchHeader, staged: ProducerAppend) -> None:
        entry._set_epoch(header.producer_epoch)
        entry.batches.append(
            BatchMetadata(
                header.base_sequence, header.last_sequence, header.base_offset, header.last_offset, header.max_timestamp
            )
        )
        entry.last_timestamp = header.max_timestamp
        if entry.current_txn_first_offset is None and header.is_transactional:
            entry.current_txn_first_offset = header.base_offset
            staged.started.append((entry.producer_id, header.base_offset))

    def _check_marker(
        self, entry: ProducerEntry, header: BatchHeader, marker: EndTxnMarker, transaction_version: int
    ) -> None:
        """Kafka's `checkProducerEpoch` for markers: version 0/1 markers must not be older than the producer's
        epoch; version 2 ones must be newer (their EndTxn bumped it), except a repeat of the last one (the same
        epoch with no transaction open, or epoch 32767)."""
        where = _where(entry.producer_id, header.base_offset, self.partition)
        epoch = header.producer_epoch
        if transaction_version >= TRANSACTION_VERSION_2:
            repeat = epoch == entry.epoch and (entry.current_txn_first_offset is None or epoch == MAX_EPOCH)
            if epoch <= entry.epoch and not repeat:
                raise InvalidProducerEpochError(
                    f"Epoch of {where} is {epoch}, which is <= the last seen epoch {entry.epoch}"
                    f" (TV{transaction_version})"
                )
        elif epoch < entry.epoch:
            raise InvalidProducerEpochError(
                f"Epoch of {where} is {epoch}, which is < the last seen epoch {entry.epoch} (TV{transaction_version})"
            )
        if marker.coordinator_epoch < entry.coordinator_epoch:
            raise TransactionCoordinatorFencedError(
                f"Invalid coordinator epoch for {where}: {marker.coordinator_epoch} (zombie), "
                f"{entry.coordinator_epoch} (current)"
            )

    @staticmethod
    def _apply_marker(entry: ProducerEntry, header: BatchHeader, marker: EndTxnMarker, staged: ProducerAppend) -> None:
        if entry.current_txn_first_offset is not None:
            staged.ended.append(
                (entry.producer_id, entry.current_txn_first_offset, header.base_offset, marker.is_abort)
            )
        entry._set_epoch(header.producer_epoch)
        entry.coordinator_epoch = marker.coordinator_epoch
        entry.last_timestamp = header.max_timestamp
        entry.current_txn_first_offset = None
