"""Golden bytes for the version-prefixed blobs: `__consumer_offsets` keys/values and the consumer protocol's
JoinGroup subscription / SyncGroup assignment metadata.

Each blob is an int16 version followed by the schema's fields at that version, never flexible in the versions used
here (classic int16 strings, int32 bytes and arrays). Expected bytes are assembled by hand, as in test_golden.py.
"""

from __future__ import annotations

from protocol.consumer_offsets import decode_key, decode_value, encode_key, encode_value
from protocol.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from protocol.messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from protocol.messages.consumer_protocol_assignment import TopicPartition as AssignedTopicPartition
from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from protocol.messages.consumer_protocol_subscription import TopicPartition as OwnedTopicPartition
from protocol.messages.group_metadata_key import GroupMetadataKey
from protocol.messages.group_metadata_value import GroupMetadataValue, MemberMetadata
from protocol.messages.offset_commit_key import OffsetCommitKey
from protocol.messages.offset_commit_value import OffsetCommitValue

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
