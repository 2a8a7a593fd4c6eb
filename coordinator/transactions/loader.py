"""Replaying a `__transaction_state` partition into transactional ids (Kafka's `loadTransactionMetadata`, T53, T54).

Records apply in log order: the latest value per id wins and a tombstone forgets the id, which is what the log
means whether or not it has been compacted. A record that cannot be used is quarantined: kept (with its bytes if
it never decoded) and reported with its reason, never silently skipped (architecture.md Decision 9), and the load
goes on with the id's last good value. Kafka skips unknown key and value versions with a warning and fails the
whole load on an unknown state; here all of them are quarantined, and so is a value Kafka never writes (Dead,
PrepareEpochFence), an impossible producer id, and an id stored in a partition it does not hash to (it could never
be looked up there).

This module only builds metadata; the coordinator installs it and resumes the decided transactions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from coordinator.transactions.cache import TransactionCache
from coordinator.transactions.events import TransactionEvents
from coordinator.transactions.metadata import TransactionMetadata
from coordinator.transactions.records import DamagedTxnRecord, TxnRecord, encode_record, metadata_from_value


@dataclass(slots=True)
class LoadedTransactions:
    """What one partition's records amount to."""

    transactions: dict[str, TransactionMetadata] = field(default_factory=dict)
    records: int = 0
    quarantined: list[DamagedTxnRecord] = field(default_factory=list)


def replay(
    partition: int,
    records: Iterable[TxnRecord | DamagedTxnRecord],
    cache: TransactionCache,
    events: TransactionEvents,
) -> LoadedTransactions:
    """Fold the records of one partition into metadata per transactional id."""
    loaded = LoadedTransactions()

    def quarantine(record: TxnRecord | DamagedTxnRecord, transactional_id: str | None, reason: str) -> None:
        if isinstance(record, TxnRecord):
            key, value = encode_record(record)
            record = DamagedTxnRecord(key, value, reason)
        loaded.quarantined.append(record)
        events.record_quarantined(partition, transactional_id, reason)

    for record in records:
        loaded.records += 1
        if isinstance(record, DamagedTxnRecord):
            quarantine(record, None, record.reason)
            continue
        transactional_id = record.transactional_id
        home = cache.partition_for(transactional_id)
        if home != partition:
            quarantine(record, transactional_id, f"belongs to partition {home}")
            continue
        if record.value is None:
            loaded.transactions.pop(transactional_id, None)
            continue
        metadata = metadata_from_value(transactional_id, record.value)
        if isinstance(metadata, str):
            quarantine(record, transactional_id, metadata)
            continue
        loaded.transactions[transactional_id] = metadata
    return loaded
