"""Keys and values of the `__transaction_state` topic, byte for byte as Kafka writes them (rules T50, T51).

Both are an int16 version followed by the schema's fields. The key's version is Kafka's coordinator record type
(`CoordinatorRecordType.TRANSACTION_LOG`, 0) and its only field is the transactional id. The value is
TransactionLogValue: version 0 (non-flexible) or version 1 (flexible, with the previous/next producer ids and the
client's transaction version as tagged fields). Kafka 4.4 writes version 1 whenever the cluster's
`transaction.version` is at least 1, which a fresh 4.4 cluster's is, else version 0; the transaction coordinator
writes by the same rule (`TransactionConfig.transaction_version`), and both are read.
A null value is a tombstone (an expired transactional id, T48).

A key or value of a version this codec does not know decodes to None, so the loader can skip it as Kafka does
("It could be a left over from an aborted upgrade", T53); bytes that do not parse raise `DecodeError`.
"""

from __future__ import annotations

from dataclasses import replace

from protocol.errors import DecodeError
from protocol.messages.transaction_log_key import TRANSACTION_LOG_KEY, TransactionLogKey
from protocol.messages.transaction_log_value import TRANSACTION_LOG_VALUE, TransactionLogValue
from protocol.versioned import decode_versioned, encode_versioned, read_version

TRANSACTION_LOG_KEY_VERSION = 0
"""Kafka's `CoordinatorRecordType.TRANSACTION_LOG` id, written as the key's version prefix."""
TRANSACTION_LOG_VALUE_VERSION = 1
"""The value version written with `transaction.version` >= 1 (0 below)."""


def encode_key(transactional_id: str) -> bytes:
    return encode_versioned(
        TRANSACTION_LOG_KEY, TRANSACTION_LOG_KEY_VERSION, TransactionLogKey(transactional_id=transactional_id)
    )


def key_version(data: bytes) -> int:
    return read_version(data, "TransactionLogKey")


def decode_key(data: bytes) -> str | None:
    """The transactional id, or None for a key of another record type (skipped by the loader)."""
    if key_version(data) != TRANSACTION_LOG_KEY_VERSION:
        return None
    key: TransactionLogKey = decode_versioned(TRANSACTION_LOG_KEY, data, clamp=False, strict_end=True)[1]
    return key.transactional_id


def encode_value(value: TransactionLogValue, version: int = TRANSACTION_LOG_VALUE_VERSION) -> bytes:
    """The value's bytes; version 0 leaves out what only version 1 holds, as Kafka's `valueToBytes` does."""
    if version == 0:
        value = replace(
            value, previous_producer_id=-1, next_producer_id=-1, next_producer_epoch=-1, client_transaction_version=0
        )
    return encode_versioned(TRANSACTION_LOG_VALUE, version, value)


def value_version(data: bytes) -> int:
    return read_version(data, "TransactionLogValue")


def decode_value(data: bytes) -> TransactionLogValue | None:
    """The value, or None for a version this codec does not know; `DecodeError` when the bytes do not parse."""
    version = value_version(data)
    valid = TRANSACTION_LOG_VALUE.valid
    if version < valid.lo or (valid.hi is not None and version > valid.hi):
        return None
    value: TransactionLogValue = decode_versioned(TRANSACTION_LOG_VALUE, data, clamp=False, strict_end=True)[1]
    return value


__all__ = [
    "TRANSACTION_LOG_KEY_VERSION",
    "TRANSACTION_LOG_VALUE_VERSION",
    "DecodeError",
    "decode_key",
    "decode_value",
    "encode_key",
    "encode_value",
    "key_version",
    "value_version",
]
