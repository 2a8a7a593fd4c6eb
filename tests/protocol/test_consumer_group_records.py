"""The KIP-848 consumer-group records of `__consumer_offsets` (key versions 3-8), byte for byte.

The golden bytes are written out by hand from the vendored schemas (key: int16 version = record type, then the
non-flexible key struct; value: int16 version 0, then the flexible struct with compact lengths and tagged fields),
so they check the codec against the schema rather than against itself. Every value and key here was also checked
once against Kafka 4.4's generated classes (`MessageUtil.toVersionPrefixedByteBuffer` in jshell over
tests/reference/server/target/lib): identical bytes. The member metadata values Kafka 4.4 itself wrote (one
consumer-protocol member, one classic member joined by online migration) are checked from its own log segment,
tests/protocol/fixtures/kafka-4.4-consumer-offsets.log.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import consumer_offsets
from protocol.consumer_offsets import RECORD_TYPES, decode_key, decode_value, encode_key, encode_value
from protocol.errors import DecodeError
from protocol.messages.consumer_group_current_member_assignment_key import ConsumerGroupCurrentMemberAssignmentKey
from protocol.messages.consumer_group_current_member_assignment_value import (
    ConsumerGroupCurrentMemberAssignmentValue,
    TopicPartitions,
)
from protocol.messages.consumer_group_member_metadata_key import ConsumerGroupMemberMetadataKey
from protocol.messages.consumer_group_member_metadata_value import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupMemberMetadataValue,
)
from protocol.messages.consumer_group_metadata_key import ConsumerGroupMetadataKey
from protocol.messages.consumer_group_metadata_value import ConsumerGroupMetadataValue
from protocol.messages.consumer_group_partition_metadata_key import ConsumerGroupPartitionMetadataKey
from protocol.messages.consumer_group_partition_metadata_value import (
    ConsumerGroupPartitionMetadataValue,
    PartitionMetadata,
    TopicMetadata,
)
from protocol.messages.consumer_group_target_assignment_member_key import ConsumerGroupTargetAssignmentMemberKey
from protocol.messages.consumer_group_target_assignment_member_value import (
    ConsumerGroupTargetAssignmentMemberValue,
    TopicPartition,
)
from protocol.messages.consumer_group_target_assignment_metadata_key import ConsumerGroupTargetAssignmentMetadataKey
from protocol.messages.consumer_group_target_assignment_metadata_value import (
    ConsumerGroupTargetAssignmentMetadataValue,
)
from protocol.records import decode_batch
from protocol.versioned import encode_versioned
from tests.protocol.strategies import message_strategy

TOPIC = uuid.UUID("0123456789abcdef0123456789abcdef")
TOPIC_BYTES = TOPIC.bytes
V0 = b"\x00\x00"
NO_TAGS = b"\x00"

GOLDEN: list[tuple[str, Any, bytes, Any, bytes]] = [
    (
        "group epoch",
        ConsumerGroupMetadataKey(group_id="g"),
        b"\x00\x03" + b"\x00\x01g",
        ConsumerGroupMetadataValue(epoch=5),
        V0 + b"\x00\x00\x00\x05" + NO_TAGS,
    ),
    (
        "subscribed topic metadata",
        ConsumerGroupPartitionMetadataKey(group_id="g"),
        b"\x00\x04" + b"\x00\x01g",
        ConsumerGroupPartitionMetadataValue(
            topics=[
                TopicMetadata(
                    topic_id=TOPIC,
                    topic_name="t",
                    num_partitions=3,
                    partition_metadata=[PartitionMetadata(partition=0, racks=["r"])],
                )
            ]
        ),
        V0
        + b"\x02"  # one topic
        + TOPIC_BYTES
        + b"\x02t"
        + b"\x00\x00\x00\x03"
        + b"\x02"  # one partition's racks
        + b"\x00\x00\x00\x00"
        + b"\x02\x02r"
        + NO_TAGS  # PartitionMetadata
        + NO_TAGS  # TopicMetadata
        + NO_TAGS,
    ),
    (
        "member metadata, consumer protocol",
        ConsumerGroupMemberMetadataKey(group_id="g", member_id="m1"),
        b"\x00\x05" + b"\x00\x01g" + b"\x00\x02m1",
        ConsumerGroupMemberMetadataValue(
            instance_id=None,
            rack_id="r",
            client_id="c",
            client_host="/h",
            subscribed_topic_names=["t"],
            subscribed_topic_regex=None,
            rebalance_timeout_ms=300_000,
            server_assignor="uniform",
            classic_member_metadata=None,
        ),
        V0
        + b"\x00"  # null instance id
        + b"\x02r"
        + b"\x02c"
        + b"\x03/h"
        + b"\x02\x02t"
        + b"\x00"  # null regex
        + b"\x00\x04\x93\xe0"
        + b"\x08uniform"
        + b"\x01"  # one tagged field: Kafka writes a null ClassicMemberMetadata, it is not its default
        + b"\x00\x01"  # tag 0, 1 byte
        + b"\x00",  # inside a tagged field a nullable struct's marker is an unsigned varint: 0 = null
    ),
    (
        "member metadata, Kafka's default (empty) classic metadata is omitted",
        ConsumerGroupMemberMetadataKey(group_id="g", member_id="m0"),
        b"\x00\x05" + b"\x00\x01g" + b"\x00\x02m0",
        ConsumerGroupMemberMetadataValue(
            client_id="c", client_host="/h", classic_member_metadata=ClassicMemberMetadata()
        ),
        V0 + b"\x01\x01\x02c\x03/h\x01\x01\xff\xff\xff\xff\x01" + NO_TAGS,
    ),
    (
        "member metadata, classic member (tagged field 0)",
        ConsumerGroupMemberMetadataKey(group_id="g", member_id="m2"),
        b"\x00\x05" + b"\x00\x01g" + b"\x00\x02m2",
        ConsumerGroupMemberMetadataValue(
            instance_id="i",
            rack_id=None,
            client_id="c",
            client_host="/h",
            subscribed_topic_names=[],
            subscribed_topic_regex="t.*",
            rebalance_timeout_ms=-1,
            server_assignor=None,
            classic_member_metadata=ClassicMemberMetadata(
                session_timeout_ms=45_000, supported_protocols=[ClassicProtocol(name="range", metadata=b"\x01\x02")]
            ),
        ),
        V0
        + b"\x02i"
        + b"\x00"
        + b"\x02c"
        + b"\x03/h"
        + b"\x01"  # no topic names
        + b"\x04t.*"
        + b"\xff\xff\xff\xff"
        + b"\x00"  # null assignor
        + b"\x01"  # one tagged field
        + b"\x00\x11"  # tag 0, 17 bytes
        + b"\x01"  # the nullable struct's marker inside a tagged field: unsigned varint 1 = present
        + b"\x00\x00\xaf\xc8"
        + b"\x02"
        + b"\x06range"
        + b"\x03\x01\x02"
        + NO_TAGS  # ClassicProtocol
        + NO_TAGS,  # ClassicMemberMetadata
    ),
    (
        "target assignment epoch",
        ConsumerGroupTargetAssignmentMetadataKey(group_id="g"),
        b"\x00\x06" + b"\x00\x01g",
        ConsumerGroupTargetAssignmentMetadataValue(assignment_epoch=7),
        V0 + b"\x00\x00\x00\x07" + NO_TAGS,
    ),
    (
        "target assignment of a member",
        ConsumerGroupTargetAssignmentMemberKey(group_id="g", member_id="m1"),
        b"\x00\x07" + b"\x00\x01g" + b"\x00\x02m1",
        ConsumerGroupTargetAssignmentMemberValue(topic_partitions=[TopicPartition(topic_id=TOPIC, partitions=[0, 2])]),
        V0 + b"\x02" + TOPIC_BYTES + b"\x03\x00\x00\x00\x00\x00\x00\x00\x02" + NO_TAGS + NO_TAGS,
    ),
    (
        "current assignment of a member",
        ConsumerGroupCurrentMemberAssignmentKey(group_id="g", member_id="m1"),
        b"\x00\x08" + b"\x00\x01g" + b"\x00\x02m1",
        ConsumerGroupCurrentMemberAssignmentValue(
            member_epoch=5,
            previous_member_epoch=4,
            state=2,
            assigned_partitions=[TopicPartitions(topic_id=TOPIC, partitions=[1])],
            partitions_pending_revocation=[],
        ),
        V0
        + b"\x00\x00\x00\x05"
        + b"\x00\x00\x00\x04"
        + b"\x02"
        + b"\x02"
        + TOPIC_BYTES
        + b"\x02\x00\x00\x00\x01"
        + NO_TAGS
        + b"\x01"  # nothing pending revocation
        + NO_TAGS,
    ),
]


@pytest.mark.parametrize(
    ("key", "key_bytes", "value", "value_bytes"), [g[1:] for g in GOLDEN], ids=[g[0] for g in GOLDEN]
)
def test_golden_bytes_both_ways(key: Any, key_bytes: bytes, value: Any, value_bytes: bytes) -> None:
    """Encoding gives the schema's bytes, and those bytes decode to the same typed record."""
    assert encode_key(key) == key_bytes
    assert encode_value(value) == value_bytes
    assert decode_key(key_bytes) == key
    assert decode_value(key, value_bytes) == value
    assert decode_value(key, None) is None  # tombstone


def test_every_consumer_group_key_version_maps_to_its_type() -> None:
    """Key versions 3-8 are the six consumer-group types, in Kafka's `CoordinatorRecordType` order."""
    golden_types = [type(g[1]) for g in GOLDEN if not g[0].startswith("member metadata, ") or g[0].endswith("protocol")]
    assert [RECORD_TYPES[v].key_class for v in range(3, 9)] == golden_types
    assert all(RECORD_TYPES[v].consumer_group for v in range(3, 9))
    assert not any(RECORD_TYPES[v].consumer_group for v in range(3))
    assert consumer_offsets.is_consumer_group_key(ConsumerGroupMetadataKey(group_id="g"))


def test_an_unknown_consumer_group_value_version_is_an_error_not_a_misreading() -> None:
    """Flexible values may add fields anywhere, so a newer one cannot be read as v0."""
    with pytest.raises(DecodeError):
        decode_value(ConsumerGroupMetadataKey(group_id="g"), b"\x00\x01\x00\x00\x00\x05\x00")


def _versions(decl: Any) -> range:
    return range(decl.valid.lo, decl.valid.hi + 1)


_EVERY_VERSION = [
    (key_version, value_version)
    for key_version, record_type in RECORD_TYPES.items()
    if record_type.consumer_group
    for value_version in _versions(record_type.value)
]


@pytest.mark.parametrize(("key_version", "value_version"), _EVERY_VERSION)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_roundtrip_every_version(key_version: int, value_version: int, data: st.DataObject) -> None:
    """Any key and value of each version read back equal, through the same functions the log's readers use."""
    record_type = RECORD_TYPES[key_version]
    key = data.draw(message_strategy(record_type.key, key_version))
    value = data.draw(message_strategy(record_type.value, value_version))
    key_bytes = encode_versioned(record_type.key, key_version, key)
    value_bytes = encode_versioned(record_type.value, value_version, value)
    assert decode_key(key_bytes) == key
    assert decode_value(key, value_bytes) == value
    assert encode_key(key) == key_bytes  # the written version is the one Kafka writes
    assert encode_value(value) == value_bytes


#: __consumer_offsets-4 of a reference Kafka 4.4.0 (tests/reference/kafka.py), stopped after one consumer-protocol
#: member (ConsumerGroupHeartbeat v1) and one classic member (JoinGroup v9, online migration) joined group "g-codec".
KAFKA_44_SEGMENT = Path(__file__).parent / "fixtures" / "kafka-4.4-consumer-offsets.log"
KAFKA_44_CONSUMER_MEMBER = "5adf0bc1-6cf8-4d6b-b09e-ad3b7fa9f609"
KAFKA_44_CLASSIC_MEMBER = "Usj9kaz7Q4iccgABzka_xA"


def kafka_44_member_values() -> dict[str, bytes]:
    """The ConsumerGroupMemberMetadataValue bytes Kafka wrote, by member id."""
    buf = KAFKA_44_SEGMENT.read_bytes()
    values: dict[str, bytes] = {}
    pos = 0
    while pos < len(buf):
        batch, pos = decode_batch(buf, pos)
        for record in batch.records:
            assert record.key is not None and record.value is not None
            key = decode_key(record.key)
            if isinstance(key, ConsumerGroupMemberMetadataKey):
                values[key.member_id] = record.value
    return values


def test_kafka_44_consumer_protocol_member_reads_and_writes_back_byte_for_byte() -> None:
    """Kafka 4.4 writes a consumer-protocol member's null ClassicMemberMetadata as tag 0, size 1, varint 0."""
    data = kafka_44_member_values()[KAFKA_44_CONSUMER_MEMBER]
    assert data.endswith(b"\x00\x00\x27\x10" + b"\x00" + b"\x01" + b"\x00\x01\x00")  # timeout, assignor, tags
    key = ConsumerGroupMemberMetadataKey(group_id="g-codec", member_id=KAFKA_44_CONSUMER_MEMBER)
    value = decode_value(key, data)
    assert value == ConsumerGroupMemberMetadataValue(
        instance_id=None,
        rack_id=None,
        client_id="wire-test",
        client_host="/127.0.0.1",
        subscribed_topic_names=["t-codec"],
        subscribed_topic_regex="",
        rebalance_timeout_ms=10_000,
        server_assignor=None,
        classic_member_metadata=None,
    )
    assert encode_value(value) == data


def test_kafka_44_classic_member_reads_and_writes_back_byte_for_byte() -> None:
    """A classic member's metadata: tag 0, size 44, varint 1 (present), then the struct."""
    data = kafka_44_member_values()[KAFKA_44_CLASSIC_MEMBER]
    key = ConsumerGroupMemberMetadataKey(group_id="g-codec", member_id=KAFKA_44_CLASSIC_MEMBER)
    value = decode_value(key, data)
    assert isinstance(value, ConsumerGroupMemberMetadataValue)
    assert value.classic_member_metadata is not None
    assert value.classic_member_metadata.session_timeout_ms == 10_000
    assert [p.name for p in value.classic_member_metadata.supported_protocols] == ["range"]
    assert encode_value(value) == data


def test_a_value_without_the_tag_reads_as_kafkas_default_classic_metadata() -> None:
    """Kafka's reader starts from `new ClassicMemberMetadata()` and only a present tag 0 replaces it, so a value
    with no tag 0 is not a null one: it decodes to the empty struct, which encodes back to no tag."""
    key = ConsumerGroupMemberMetadataKey(group_id="g", member_id="m")
    data = V0 + b"\x01\x01\x02c\x03/h\x01\x01\xff\xff\xff\xff\x01" + NO_TAGS
    value = decode_value(key, data)
    assert isinstance(value, ConsumerGroupMemberMetadataValue)
    assert value.classic_member_metadata == ClassicMemberMetadata()
    assert encode_value(value) == data
