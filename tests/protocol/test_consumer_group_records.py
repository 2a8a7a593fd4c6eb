"""The KIP-848 consumer-group records of `__consumer_offsets` (key versions 3-8), byte for byte.

The golden bytes are written out by hand from the vendored schemas (key: int16 version = record type, then the
non-flexible key struct; value: int16 version 0, then the flexible struct with compact lengths and tagged fields),
so they check the codec against the schema rather than against itself. Every value and key here was also checked
once against Kafka 4.4's generated classes (`MessageUtil.toVersionPrefixedByteBuffer` in jshell over
tests/reference/server/target/lib): identical bytes, including the nullable struct's presence byte inside the
tagged ClassicMemberMetadata field.
"""

from __future__ import annotations

import uuid
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
        + NO_TAGS,
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
        + b"\x01"  # a nullable struct's presence byte, inside the tagged field too (as Kafka 4.4 writes it)
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
    golden_types = [type(g[1]) for g in GOLDEN if g[0] != "member metadata, classic member (tagged field 0)"]
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
