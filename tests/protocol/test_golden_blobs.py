"""Golden bytes for the version-prefixed blobs: `__consumer_offsets` keys/values, `__transaction_state`
keys/values and the consumer protocol's JoinGroup subscription / SyncGroup assignment metadata.

Each blob is an int16 version followed by the schema's fields at that version: classic int16 strings, int32 bytes
and arrays, except TransactionLogValue v1 (and the OffsetCommitValue v4 Kafka writes), which are flexible (compact
lengths and a tagged-field section). Expected bytes are assembled by hand, as in test_golden.py; the transaction
log blobs are also checked against bytes Kafka 4.4 itself wrote (tests/protocol/fixtures).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from protocol.consumer_offsets import decode_key, decode_value, encode_key, encode_value
from protocol.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from protocol.errors import EncodeError
from protocol.messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from protocol.messages.consumer_protocol_assignment import TopicPartition as AssignedTopicPartition
from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from protocol.messages.consumer_protocol_subscription import TopicPartition as OwnedTopicPartition
from protocol.messages.group_metadata_key import GroupMetadataKey
from protocol.messages.group_metadata_value import GroupMetadataValue, MemberMetadata
from protocol.messages.offset_commit_key import OffsetCommitKey
from protocol.messages.offset_commit_value import OffsetCommitValue
from protocol.messages.transaction_log_key import TRANSACTION_LOG_KEY, TransactionLogKey
from protocol.messages.transaction_log_value import TRANSACTION_LOG_VALUE, PartitionsSchema, TransactionLogValue
from protocol.versioned import decode_versioned, encode_versioned

# --- __consumer_offsets ----------------------------------------------------------------------------------------


def test_offset_commit_key_v1_golden() -> None:
    key = OffsetCommitKey(group="g1", topic="t1", partition=3)
    expected = (
        b"\x00\x01"  # version = 1 (OffsetCommitKey; also the record type)
        b"\x00\x02g1"  # group = "g1"
        b"\x00\x02t1"  # topic = "t1"
        b"\x00\x00\x00\x03"  # partition = 3
    )
    assert encode_key(key) == expected
    assert decode_key(expected) == key


def test_offset_commit_value_v3_golden() -> None:
    key = OffsetCommitKey(group="g1", topic="t1", partition=3)
    value = OffsetCommitValue(
        offset=100, leader_epoch=2, metadata="meta", commit_timestamp=1700000000000, expire_timestamp=-1
    )
    expected = (
        b"\x00\x03"  # version = 3 (no expire timestamp)
        b"\x00\x00\x00\x00\x00\x00\x00\x64"  # offset = 100
        b"\x00\x00\x00\x02"  # leader_epoch = 2 (v3+)
        b"\x00\x04meta"  # metadata = "meta"
        b"\x00\x00\x01\x8b\xcf\xe5\x68\x00"  # commit_timestamp = 1700000000000
    )
    assert encode_value(value) == expected
    assert decode_value(key, expected) == value


def test_offset_commit_value_v4_as_kafka_4_4_writes_it_is_read() -> None:
    """Kafka 4.4 writes OffsetCommitValue v4, the first flexible version, when there is no expire timestamp (the
    differential suite reads both brokers' records). We keep writing v3, which Burrow and older tools decode
    (README, Differences from Kafka), but a log Kafka 4.4 wrote must load."""
    key = OffsetCommitKey(group="g1", topic="t1", partition=3)
    value = OffsetCommitValue(
        offset=100, leader_epoch=2, metadata="meta", commit_timestamp=1700000000000, expire_timestamp=-1
    )
    written_by_kafka = (
        b"\x00\x04"  # version = 4
        b"\x00\x00\x00\x00\x00\x00\x00\x64"  # offset = 100
        b"\x00\x00\x00\x02"  # leader_epoch = 2
        b"\x05meta"  # metadata = "meta" (compact string: unsigned varint length + 1)
        b"\x00\x00\x01\x8b\xcf\xe5\x68\x00"  # commit_timestamp = 1700000000000
        b"\x00"  # no tagged fields
    )
    assert decode_value(key, written_by_kafka) == value


def test_offset_commit_value_v1_with_expire_timestamp_golden() -> None:
    key = OffsetCommitKey(group="g1", topic="t1", partition=3)
    value = OffsetCommitValue(
        offset=100, leader_epoch=-1, metadata="", commit_timestamp=1700000000000, expire_timestamp=1700086400000
    )
    expected = (
        b"\x00\x01"  # version = 1 (chosen because an expire timestamp exists)
        b"\x00\x00\x00\x00\x00\x00\x00\x64"  # offset = 100 (no leader_epoch before v3)
        b"\x00\x00"  # metadata = ""
        b"\x00\x00\x01\x8b\xcf\xe5\x68\x00"  # commit_timestamp = 1700000000000
        b"\x00\x00\x01\x8b\xd5\x0b\xc4\x00"  # expire_timestamp = 1700086400000 (v1 only)
    )
    assert encode_value(value) == expected
    assert decode_value(key, expected) == value


def test_offset_commit_tombstone_is_null_value() -> None:
    assert encode_value(None) is None
    assert decode_value(OffsetCommitKey(group="g1", topic="t1", partition=3), None) is None


def test_group_metadata_key_v2_golden() -> None:
    key = GroupMetadataKey(group="g1")
    expected = (
        b"\x00\x02"  # version = 2 (GroupMetadataKey)
        b"\x00\x02g1"  # group = "g1"
    )
    assert encode_key(key) == expected
    assert decode_key(expected) == key


def test_group_metadata_value_v3_one_member_golden() -> None:
    key = GroupMetadataKey(group="g1")
    value = GroupMetadataValue(
        protocol_type="consumer",
        generation=5,
        protocol="range",
        leader="m1",
        current_state_timestamp=1700000000000,
        members=[
            MemberMetadata(
                member_id="m1",
                group_instance_id=None,
                client_id="cli",
                client_host="/127.0.0.1",
                rebalance_timeout=30000,
                session_timeout=10000,
                subscription=b"\xaa\xbb",
                assignment=b"\xcc\xdd",
            )
        ],
    )
    expected = (
        b"\x00\x03"  # version = 3
        b"\x00\x08consumer"  # protocol_type = "consumer"
        b"\x00\x00\x00\x05"  # generation = 5
        b"\x00\x05range"  # protocol = "range" (nullable)
        b"\x00\x02m1"  # leader = "m1" (nullable)
        b"\x00\x00\x01\x8b\xcf\xe5\x68\x00"  # current_state_timestamp = 1700000000000 (v2+)
        b"\x00\x00\x00\x01"  # members: int32 count 1
        b"\x00\x02m1"  # members[0].member_id = "m1"
        b"\xff\xff"  # members[0].group_instance_id = null (v3+)
        b"\x00\x03cli"  # members[0].client_id = "cli"
        b"\x00\x0a/127.0.0.1"  # members[0].client_host = "/127.0.0.1"
        b"\x00\x00\x75\x30"  # members[0].rebalance_timeout = 30000 (v1+)
        b"\x00\x00\x27\x10"  # members[0].session_timeout = 10000
        b"\x00\x00\x00\x02\xaa\xbb"  # members[0].subscription = aa bb (int32 length)
        b"\x00\x00\x00\x02\xcc\xdd"  # members[0].assignment = cc dd
    )
    assert encode_value(value) == expected
    assert decode_value(key, expected) == value


# --- Consumer protocol ---------------------------------------------------------------------------------------


def test_consumer_protocol_subscription_v1_golden() -> None:
    subscription = ConsumerProtocolSubscription(
        topics=["t1", "t2"],
        user_data=None,
        owned_partitions=[OwnedTopicPartition(topic="t1", partitions=[0, 2])],
    )
    expected = (
        b"\x00\x01"  # version = 1
        b"\x00\x00\x00\x02"  # topics: int32 count 2
        b"\x00\x02t1"  # [0] = "t1"
        b"\x00\x02t2"  # [1] = "t2"
        b"\xff\xff\xff\xff"  # user_data = null (int32 length -1)
        b"\x00\x00\x00\x01"  # owned_partitions: int32 count 1 (v1+)
        b"\x00\x02t1"  # owned_partitions[0].topic = "t1"
        b"\x00\x00\x00\x02"  # owned_partitions[0].partitions: int32 count 2
        b"\x00\x00\x00\x00"  # [0] = 0
        b"\x00\x00\x00\x02"  # [1] = 2
    )
    assert encode_subscription(subscription, version=1) == expected
    assert decode_subscription(expected) == subscription


def test_consumer_protocol_assignment_v1_golden() -> None:
    assignment = ConsumerProtocolAssignment(
        assigned_partitions=[AssignedTopicPartition(topic="t1", partitions=[0, 1])],
        user_data=b"",
    )
    expected = (
        b"\x00\x01"  # version = 1
        b"\x00\x00\x00\x01"  # assigned_partitions: int32 count 1
        b"\x00\x02t1"  # [0].topic = "t1"
        b"\x00\x00\x00\x02"  # [0].partitions: int32 count 2
        b"\x00\x00\x00\x00"  # [0] = 0
        b"\x00\x00\x00\x01"  # [1] = 1
        b"\x00\x00\x00\x00"  # user_data = empty (int32 length 0, not null)
    )
    assert encode_assignment(assignment, version=1) == expected
    assert decode_assignment(expected) == assignment


# --- __transaction_state ---------------------------------------------------------------------------------------
# Key: int16 version 0 + TransactionLogKey; value: int16 version + TransactionLogValue, v0 classic and v1 flexible
# with four tagged fields (T50). Producer id 4096, timeout 60000 ms, last update 1700000000500, start 1700000000000.

#: State Empty, as Kafka writes it: no partitions (null, T51) and no start time (-1, T12); every tagged field at
#: its default (previous/next producer id -1, next epoch -1, client transaction version 0).
TXN_EMPTY = TransactionLogValue(
    producer_id=4096,
    producer_epoch=4,
    transaction_timeout_ms=60000,
    transaction_status=0,
    transaction_partitions=None,
    transaction_last_update_timestamp_ms=1700000000500,
    transaction_start_timestamp_ms=-1,
)
#: PrepareCommit at an exhausted epoch with every tagged field away from its default.
TXN_EVERY_TAG = TransactionLogValue(
    producer_id=4096,
    previous_producer_id=4095,
    next_producer_id=4097,
    producer_epoch=32766,
    next_producer_epoch=0,
    transaction_timeout_ms=60000,
    transaction_status=2,
    transaction_partitions=[PartitionsSchema(topic="t1", partition_ids=[0])],
    transaction_last_update_timestamp_ms=1700000000500,
    transaction_start_timestamp_ms=1700000000000,
    client_transaction_version=2,
)


def _txn_key_blob(key: TransactionLogKey) -> bytes:
    return encode_versioned(TRANSACTION_LOG_KEY, 0, key)


def _read_txn_key(data: bytes) -> TransactionLogKey:
    version, key = decode_versioned(TRANSACTION_LOG_KEY, data, clamp=False, strict_end=True)
    assert version == 0
    assert isinstance(key, TransactionLogKey)
    return key


def _check_txn_value(version: int, value: TransactionLogValue, data: bytes) -> None:
    """encode(version, value) == data, and data decodes to (version, value)."""
    assert encode_versioned(TRANSACTION_LOG_VALUE, version, value) == data
    assert decode_versioned(TRANSACTION_LOG_VALUE, data, clamp=False, strict_end=True) == (version, value)


def test_transaction_log_key_v0_golden() -> None:
    key = TransactionLogKey(transactional_id="tx")
    expected = (
        b"\x00\x00"  # version = 0 (the only TransactionLogKey version)
        b"\x00\x02tx"  # transactional_id = "tx" (int16 length: the key is never flexible)
    )
    assert _txn_key_blob(key) == expected
    assert _read_txn_key(expected) == key


def test_transaction_log_value_v0_ongoing_golden() -> None:
    value = TransactionLogValue(
        producer_id=4096,
        producer_epoch=3,
        transaction_timeout_ms=60000,
        transaction_status=1,
        transaction_partitions=[PartitionsSchema(topic="t1", partition_ids=[0, 1])],
        transaction_last_update_timestamp_ms=1700000000500,
        transaction_start_timestamp_ms=1700000000000,
    )
    expected = (
        b"\x00\x00"  # version = 0 (what Kafka writes while transaction.version is 0, T51)
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # producer_id = 4096
        b"\x00\x03"  # producer_epoch = 3
        b"\x00\x00\xea\x60"  # transaction_timeout_ms = 60000
        b"\x01"  # transaction_status = 1 (Ongoing, T20)
        b"\x00\x00\x00\x01"  # transaction_partitions: int32 count 1 (nullable array)
        b"\x00\x02t1"  # [0].topic = "t1"
        b"\x00\x00\x00\x02"  # [0].partition_ids: int32 count 2
        b"\x00\x00\x00\x00"  # [0].partition_ids[0] = 0
        b"\x00\x00\x00\x01"  # [0].partition_ids[1] = 1
        b"\x00\x00\x01\x8b\xcf\xe5\x69\xf4"  # transaction_last_update_timestamp_ms = 1700000000500
        b"\x00\x00\x01\x8b\xcf\xe5\x68\x00"  # transaction_start_timestamp_ms = 1700000000000
        # no tagged fields in v0: previous/next producer id, next epoch and client version keep their defaults
    )
    _check_txn_value(0, value, expected)


def test_transaction_log_value_v0_empty_has_null_partitions_golden() -> None:
    expected = (
        b"\x00\x00"  # version = 0
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # producer_id = 4096
        b"\x00\x04"  # producer_epoch = 4
        b"\x00\x00\xea\x60"  # transaction_timeout_ms = 60000
        b"\x00"  # transaction_status = 0 (Empty)
        b"\xff\xff\xff\xff"  # transaction_partitions = null (int32 count -1)
        b"\x00\x00\x01\x8b\xcf\xe5\x69\xf4"  # transaction_last_update_timestamp_ms = 1700000000500
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # transaction_start_timestamp_ms = -1 (no transaction)
    )
    _check_txn_value(0, TXN_EMPTY, expected)


def test_transaction_log_value_v1_every_tagged_field_golden() -> None:
    """Tags are written in ascending tag order, not schema order (NextProducerEpoch, tag 3, is declared before
    ClientTransactionVersion, tag 2)."""
    expected = (
        b"\x00\x01"  # version = 1 (flexible)
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # producer_id = 4096
        b"\x7f\xfe"  # producer_epoch = 32766 (exhausted: the next epoch comes with a new producer id, T19)
        b"\x00\x00\xea\x60"  # transaction_timeout_ms = 60000
        b"\x02"  # transaction_status = 2 (PrepareCommit)
        b"\x02"  # transaction_partitions: compact nullable array of 1
        b"\x03t1"  # [0].topic = "t1" (compact)
        b"\x02\x00\x00\x00\x00"  # [0].partition_ids = [0] (compact int32 array)
        b"\x00"  # [0] tagged fields: none
        b"\x00\x00\x01\x8b\xcf\xe5\x69\xf4"  # transaction_last_update_timestamp_ms = 1700000000500
        b"\x00\x00\x01\x8b\xcf\xe5\x68\x00"  # transaction_start_timestamp_ms = 1700000000000
        b"\x04"  # tagged fields: 4
        b"\x00"  # tag 0 = PreviousProducerId
        b"\x08"  # size = 8
        b"\x00\x00\x00\x00\x00\x00\x0f\xff"  # previous_producer_id = 4095
        b"\x01"  # tag 1 = NextProducerId
        b"\x08"  # size = 8
        b"\x00\x00\x00\x00\x00\x00\x10\x01"  # next_producer_id = 4097
        b"\x02"  # tag 2 = ClientTransactionVersion
        b"\x02"  # size = 2
        b"\x00\x02"  # client_transaction_version = 2
        b"\x03"  # tag 3 = NextProducerEpoch
        b"\x02"  # size = 2
        b"\x00\x00"  # next_producer_epoch = 0 (not the default -1, so written)
    )
    _check_txn_value(1, TXN_EVERY_TAG, expected)


def test_transaction_log_value_v1_tagged_fields_at_their_defaults_are_absent_golden() -> None:
    expected = (
        b"\x00\x01"  # version = 1
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # producer_id = 4096
        b"\x00\x04"  # producer_epoch = 4
        b"\x00\x00\xea\x60"  # transaction_timeout_ms = 60000
        b"\x00"  # transaction_status = 0 (Empty)
        b"\x00"  # transaction_partitions = null (compact null)
        b"\x00\x00\x01\x8b\xcf\xe5\x69\xf4"  # transaction_last_update_timestamp_ms = 1700000000500
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # transaction_start_timestamp_ms = -1
        b"\x00"  # tagged fields: none (-1, -1, -1 and 0 are the defaults)
    )
    _check_txn_value(1, TXN_EMPTY, expected)


def test_transaction_log_value_v0_refuses_the_v1_tagged_fields() -> None:
    """v0 has no tag section: a previous producer id cannot be written there (Kafka's writer sets it only for v1)."""
    with pytest.raises(EncodeError, match=r"previous_producer_id .*does not exist in version 0"):
        encode_versioned(TRANSACTION_LOG_VALUE, 0, TransactionLogValue(previous_producer_id=4095))


#: Blobs Kafka 4.4.0 wrote, from tests/protocol/fixtures/TransactionLogBlobs.java (its header says how to re-run it):
#: `log-*` through Kafka's own TransactionLog.keyToBytes/valueToBytes, `message-*` through the generated
#: TransactionLogValue and MessageUtil, since Kafka's writer never sets NextProducerEpoch.
KAFKA_44_TRANSACTION_LOG = Path(__file__).parent / "fixtures" / "kafka-4.4-transaction-log.txt"
KAFKA_44_TRANSACTION_LOG_VALUES: dict[str, tuple[int, TransactionLogValue]] = {
    "log-value-v0-ongoing": (
        0,
        TransactionLogValue(
            producer_id=4096,
            producer_epoch=3,
            transaction_timeout_ms=60000,
            transaction_status=1,
            # Kafka groups a HashSet of partitions by topic: the ids come in hash order.
            transaction_partitions=[PartitionsSchema(topic="t1", partition_ids=[1, 0])],
            transaction_last_update_timestamp_ms=1700000000500,
            transaction_start_timestamp_ms=1700000000000,
        ),
    ),
    "log-value-v0-empty": (0, TXN_EMPTY),
    "log-value-v1-prepare-commit": (
        1,
        # Kafka's own writer: previous/next producer id and client version, but never NextProducerEpoch.
        dataclasses.replace(TXN_EVERY_TAG, producer_epoch=3, next_producer_epoch=-1),
    ),
    "log-value-v1-empty": (1, TXN_EMPTY),
    "message-value-v1-every-tag": (1, TXN_EVERY_TAG),
}


def _kafka_44_transaction_log() -> dict[str, bytes]:
    """The fixture's "name hex" lines."""
    lines = KAFKA_44_TRANSACTION_LOG.read_text().splitlines()
    return {name: bytes.fromhex(blob) for name, blob in (line.split(" ") for line in lines)}


def test_kafka_44_transaction_log_key_reads_and_writes_back_byte_for_byte() -> None:
    data = _kafka_44_transaction_log()["log-key-tx"]
    key = _read_txn_key(data)
    assert key == TransactionLogKey(transactional_id="tx")
    assert _txn_key_blob(key) == data


def test_kafka_44_transaction_log_fixture_is_fully_checked() -> None:
    assert set(_kafka_44_transaction_log()) == {"log-key-tx", *KAFKA_44_TRANSACTION_LOG_VALUES}


@pytest.mark.parametrize("name", sorted(KAFKA_44_TRANSACTION_LOG_VALUES))
def test_kafka_44_transaction_log_values_read_and_write_back_byte_for_byte(name: str) -> None:
    version, value = KAFKA_44_TRANSACTION_LOG_VALUES[name]
    _check_txn_value(version, value, _kafka_44_transaction_log()[name])
