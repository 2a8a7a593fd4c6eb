"""Transactions as the log cleaner sees them (T44; Kafka's `LogCleaner` with its `CleanedTransactionMetadata`).

A transactional batch's records mean something only once its producer's marker follows: COMMIT makes them
ordinary records, ABORT makes them void. The cleaner therefore learns, walking the log in offset order, the
outcome of every transactional data batch as of the end of its pass:

* committed: its keys are mapped (when the COMMIT marker is reached, at the batch's own offsets, so a later
  record of the same key still wins) and its records compact like any others;
* aborted: its keys are never mapped (an aborted value must not hide the committed one before it) and the batch
  is dropped;
* open (no marker yet): its keys are not mapped and the batch is kept whole; its outcome is decided by a later
  pass. Kafka stops cleaning at the last stable offset instead; keeping open batches whole leaves the same records.

Control batches (the markers themselves) are always kept by the cleaner.
"""

from __future__ import annotations

import enum

from protocol.control_records import ControlRecordType, decode_end_txn_marker
from protocol.errors import DecodeError
from protocol.records import BatchHeader, read_batch_records

MappedKey = tuple[bytes, int]
"""A key and the offset of its record."""


class Outcome(enum.Enum):
    COMMITTED = "committed"
    ABORTED = "aborted"
    OPEN = "open"


def _is_transactional_data(header: BatchHeader) -> bool:
    return header.is_transactional and not header.is_control and header.producer_id >= 0


class TransactionOutcomes:
    """Outcomes of the transactional batches seen so far, fed every batch of the log in offset order."""

    __slots__ = ("_aborted", "_open", "_open_batches")

    def __init__(self) -> None:
        self._open: dict[int, list[tuple[int, list[MappedKey]]]] = {}
        """Producer id -> (base offset, keys to map on COMMIT) of each batch of its open transaction."""
        self._open_batches: set[int] = set()
        self._aborted: set[int] = set()

    def data_batch(self, header: BatchHeader, keys: list[MappedKey]) -> list[MappedKey]:
        """A data batch: the keys to map now. A transactional batch's keys are held until its marker."""
        if not _is_transactional_data(header):
            return keys
        self._open.setdefault(header.producer_id, []).append((header.base_offset, keys))
        self._open_batches.add(header.base_offset)
        return []

    def control_batch(self, header: BatchHeader, buf: bytes, pos: int) -> list[MappedKey]:
        """A control batch (raises DecodeError if it does not parse as a batch): the keys its COMMIT releases. A
        control record that is no COMMIT/ABORT marker ends nothing (its transactions stay open: kept whole)."""
        records = read_batch_records(buf, pos, header)
        try:
            marker = decode_end_txn_marker(records[0]) if records else None
        except DecodeError:
            marker = None
        if marker is None:
            return []
        batches = self._open.pop(header.producer_id, [])
        self._open_batches.difference_update(base for base, _ in batches)
        if marker.control_type is ControlRecordType.COMMIT:
            return [key for _, keys in batches for key in keys]
        self._aborted.update(base for base, _ in batches)
        return []

    def outcome(self, header: BatchHeader) -> Outcome:
        """The outcome of the transaction a data batch belongs to (COMMITTED for a batch outside transactions)."""
        if not _is_transactional_data(header):
            return Outcome.COMMITTED
        if header.base_offset in self._aborted:
            return Outcome.ABORTED
        if header.base_offset in self._open_batches:
            return Outcome.OPEN
        return Outcome.COMMITTED
