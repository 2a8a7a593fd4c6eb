"""What the transaction coordinator writes to `__transaction_state`, as typed records (T50, T51, T54).

Every transition rewrites the id's whole metadata under its key (the transit, i.e. the target of the transition),
so a compacted log keeps exactly the latest value per transactional id; an expired id is a tombstone (T48). The
broker's log layer turns records into bytes with `encode_record` and reads them back with `decode_record`, which
never raises: what does not decode becomes a `DamagedTxnRecord` that the loader quarantines and reports
(architecture.md Decision 9).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby

from coordinator.transactions.metadata import NO_PRODUCER_EPOCH, TransactionMetadata, TxnTransit
from coordinator.transactions.state import TransactionState
from protocol import transaction_log
from protocol.errors import DecodeError
from protocol.messages.transaction_log_value import PartitionsSchema, TransactionLogValue

TOMBSTONE_VERSION = -1


@dataclass(frozen=True, slots=True)
class TxnRecord:
    """One `__transaction_state` record: the transactional id (the key) and its value; None is a tombstone."""

    transactional_id: str
    value: TransactionLogValue | None
    value_version: int = transaction_log.TRANSACTION_LOG_VALUE_VERSION

    @property
    def is_tombstone(self) -> bool:
        return self.value is None


@dataclass(frozen=True, slots=True)
class DamagedTxnRecord:
    """A stored record that cannot be used, kept with its bytes and the reason, for the quarantine report."""

    key: bytes | None
    value: bytes | None
    reason: str


def transit_record(
    transactional_id: str, transit: TxnTransit, value_version: int = transaction_log.TRANSACTION_LOG_VALUE_VERSION
) -> TxnRecord:
    """Kafka's `TransactionLog.valueToBytes`: Empty writes null partitions, other states the set by topic; in
    `value_version` (0 carries no previous/next producer ids nor client transaction version, T51)."""
    partitions: list[PartitionsSchema] | None = None
    if transit.state is not TransactionState.EMPTY:
        partitions = [
            PartitionsSchema(topic=topic, partition_ids=[p for _, p in group])
            for topic, group in groupby(sorted(transit.partitions), key=lambda tp: tp[0])
        ]
    value = TransactionLogValue(
        producer_id=transit.producer_id,
        previous_producer_id=transit.previous_producer_id,
        next_producer_id=transit.next_producer_id,
        producer_epoch=transit.producer_epoch,
        transaction_timeout_ms=transit.timeout_ms,
        transaction_status=transit.state.value,
        transaction_partitions=partitions,
        transaction_last_update_timestamp_ms=transit.last_update_timestamp_ms,
        transaction_start_timestamp_ms=transit.start_timestamp_ms,
        client_transaction_version=transit.client_transaction_version,
    )
    return TxnRecord(transactional_id, value, value_version)


def tombstone(transactional_id: str) -> TxnRecord:
    return TxnRecord(transactional_id, None, TOMBSTONE_VERSION)


#: States Kafka never writes as values: Dead is a tombstone, PrepareEpochFence only ever a pending state.
_NEVER_WRITTEN = frozenset({TransactionState.DEAD, TransactionState.PREPARE_EPOCH_FENCE})


def metadata_from_value(transactional_id: str, value: TransactionLogValue) -> TransactionMetadata | str:
    """The metadata a value stands for (Kafka's `TransactionLog.readTxnRecordValue`), or why it cannot be used.

    The last producer epoch is not persisted, so it loads as -1, as in Kafka; an Empty value's partitions are
    ignored, as Kafka ignores them.
    """
    state = TransactionState.from_id(value.transaction_status)
    if state is None:
        return f"unknown transaction state {value.transaction_status}"
    if state in _NEVER_WRITTEN:
        return f"state {state.state_name} is never written"
    if value.producer_id < 0 or value.producer_epoch < 0:
        return f"invalid producer id {value.producer_id} or epoch {value.producer_epoch}"
    partitions = [] if state is TransactionState.EMPTY else value.transaction_partitions or []
    return TransactionMetadata(
        transactional_id,
        producer_id=value.producer_id,
        previous_producer_id=value.previous_producer_id,
        next_producer_id=value.next_producer_id,
        producer_epoch=value.producer_epoch,
        last_producer_epoch=NO_PRODUCER_EPOCH,
        timeout_ms=value.transaction_timeout_ms,
        state=state,
        partitions=[(p.topic, index) for p in partitions for index in p.partition_ids],
        start_timestamp_ms=value.transaction_start_timestamp_ms,
        last_update_timestamp_ms=value.transaction_last_update_timestamp_ms,
        client_transaction_version=value.client_transaction_version,
    )


# -- the broker's side: bytes ----------------------------------------------------------------------------------


def encode_record(record: TxnRecord) -> tuple[bytes, bytes | None]:
    """Key and value bytes of a record (None value: a tombstone)."""
    key = transaction_log.encode_key(record.transactional_id)
    if record.value is None:
        return key, None
    return key, transaction_log.encode_value(record.value, record.value_version)


def decode_record(key: bytes | None, value: bytes | None) -> TxnRecord | DamagedTxnRecord:
    """A stored record as the loader wants it; never raises (damage is described, not thrown)."""
    if key is None:
        return DamagedTxnRecord(key, value, "record without a key")
    try:
        transactional_id = transaction_log.decode_key(key)
        if transactional_id is None:
            return DamagedTxnRecord(key, value, f"unknown key version {transaction_log.key_version(key)}")
        if value is None:
            return tombstone(transactional_id)
        decoded = transaction_log.decode_value(value)
        if decoded is None:
            return DamagedTxnRecord(key, value, f"unknown value version {transaction_log.value_version(value)}")
    except DecodeError as exc:
        return DamagedTxnRecord(key, value, f"undecodable: {exc}")
    return TxnRecord(transactional_id, decoded, transaction_log.value_version(value))
