"""`__transaction_state` keys and values, byte for byte as Kafka 4.4 writes them (T50, T51).

The golden bytes were produced by Kafka 4.4.0's own `TransactionLog.keyToBytes` / `valueToBytes` (a small Java
program against the reference jars in tests/reference): value version 1 for a cluster whose transaction.version
is at least 1 (a fresh 4.4 cluster), version 0 otherwise.
"""

from __future__ import annotations

import pytest

from protocol import transaction_log
from protocol.errors import DecodeError
from protocol.messages.transaction_log_value import PartitionsSchema, TransactionLogValue

KEY_TXN_1 = bytes.fromhex("0000000574786e2d31")
KEY_UNICODE = bytes.fromhex("0000000574782dc3a9")
PREPARE_COMMIT_V1 = bytes.fromhex(
    "00010000000000000fa000030000ea600202076f7264657273030000000000000001000000018bcfe56be80000018bcfe568000100080000"
    "000000000fa0"
)
PREPARE_COMMIT_V0 = bytes.fromhex(
    "00000000000000000fa000030000ea60020000000100066f72646572730000000200000000000000010000018bcfe56be80000018bcfe56800"
)
EMPTY_V1 = bytes.fromhex("0001000000000000138800000000ea6000000000018bcfe56fd0ffffffffffffffff0100080000000000000fa0")
#: Kafka groups partitions by topic in hash order; a reader must not care about the order.
ONGOING_TWO_TOPICS_V1 = bytes.fromhex(
    "00010000000000000fa000030000ea600103076f726465727303000000000000000100135f5f636f6e73756d65725f6f666673657473020000"
    "0007000000018bcfe56be80000018bcfe568000100080000000000000fa0"
)


def prepare_commit_value() -> TransactionLogValue:
    return TransactionLogValue(
        producer_id=4000,
        previous_producer_id=4000,
        producer_epoch=3,
        transaction_timeout_ms=60_000,
        transaction_status=2,
        transaction_partitions=[PartitionsSchema(topic="orders", partition_ids=[0, 1])],
        transaction_last_update_timestamp_ms=1_700_000_001_000,
        transaction_start_timestamp_ms=1_700_000_000_000,
    )


def test_t50_key_is_version_0_and_the_transactional_id() -> None:
    assert transaction_log.encode_key("txn-1") == KEY_TXN_1
    assert transaction_log.encode_key("tx-é") == KEY_UNICODE
    assert transaction_log.decode_key(KEY_TXN_1) == "txn-1"


def test_t53_a_key_of_another_record_type_is_unknown_not_an_error() -> None:
    assert transaction_log.decode_key(b"\x00\x01" + KEY_TXN_1[2:]) is None


def test_t51_value_v1_is_what_kafka_writes() -> None:
    assert transaction_log.encode_value(prepare_commit_value()) == PREPARE_COMMIT_V1


def test_t51_value_v0_can_be_written_too() -> None:
    assert transaction_log.encode_value(prepare_commit_value(), version=0) == PREPARE_COMMIT_V0


def test_t50_both_value_versions_decode_to_the_same_fields() -> None:
    v1 = transaction_log.decode_value(PREPARE_COMMIT_V1)
    v0 = transaction_log.decode_value(PREPARE_COMMIT_V0)
    assert v1 is not None and v0 is not None
    assert v1.producer_id == v0.producer_id == 4000
    assert v1.previous_producer_id == 4000 and v0.previous_producer_id == -1  # a v0 value has no tagged fields
    assert (
        v1.transaction_partitions
        == v0.transaction_partitions
        == [PartitionsSchema(topic="orders", partition_ids=[0, 1])]
    )
    assert (v1.transaction_status, v1.transaction_timeout_ms, v1.producer_epoch) == (2, 60_000, 3)


def test_t51_an_empty_transaction_writes_null_partitions() -> None:
    value = TransactionLogValue(
        producer_id=5000,
        previous_producer_id=4000,
        producer_epoch=0,
        transaction_timeout_ms=60_000,
        transaction_status=0,
        transaction_partitions=None,
        transaction_last_update_timestamp_ms=1_700_000_002_000,
        transaction_start_timestamp_ms=-1,
    )
    assert transaction_log.encode_value(value) == EMPTY_V1
    decoded = transaction_log.decode_value(EMPTY_V1)
    assert decoded is not None and decoded.transaction_partitions is None


def test_t50_a_value_with_several_topics_in_kafkas_order_decodes() -> None:
    decoded = transaction_log.decode_value(ONGOING_TWO_TOPICS_V1)
    assert decoded is not None
    assert {(p.topic, i) for p in decoded.transaction_partitions or [] for i in p.partition_ids} == {
        ("orders", 0),
        ("orders", 1),
        ("__consumer_offsets", 7),
    }


def test_t53_a_value_version_from_the_future_is_unknown_not_an_error() -> None:
    assert transaction_log.decode_value(b"\x00\x02" + PREPARE_COMMIT_V1[2:]) is None


@pytest.mark.parametrize(
    "damaged",
    [b"", b"\x00", PREPARE_COMMIT_V1[:-3], PREPARE_COMMIT_V1 + b"\x00", b"\x00\x01\xff\xff"],
    ids=["empty", "half-a-version", "truncated", "trailing-byte", "garbage"],
)
def test_damaged_values_raise_decode_error(damaged: bytes) -> None:
    with pytest.raises(DecodeError):
        transaction_log.decode_value(damaged)


@pytest.mark.parametrize("damaged", [b"", b"\x00\x00\x00\x09abc", KEY_TXN_1 + b"!"], ids=["empty", "short", "trailing"])
def test_damaged_keys_raise_decode_error(damaged: bytes) -> None:
    with pytest.raises(DecodeError):
        transaction_log.decode_key(damaged)
