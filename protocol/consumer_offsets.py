"""Keys and values of the `__consumer_offsets` topic, byte for byte as Kafka writes them.

Both are an int16 version followed by the schema's fields. The key's version is also the record type (Kafka's
`CoordinatorRecordType`): 0 and 1 are OffsetCommitKey, 2 is GroupMetadataKey, 3-8 are the KIP-848 consumer-group
records (group epoch, subscribed-topic metadata, member metadata, target assignment metadata and members, current
member assignment). Higher versions (share groups and later) are unknown here and decode to None, so readers skip
them as Kafka's loader does. A null value is a tombstone. `RECORD_TYPES` is the one place mapping a key version to
its record type. Writers use OffsetCommitKey v1, OffsetCommitValue v3 (v1 when an expire timestamp exists),
GroupMetadataKey v2 / GroupMetadataValue v3, and value version 0 for every consumer-group record. Offset commits,
by far the most frequent, are encoded straight-line (`protocol.offset_commit_codec`); the rest generically.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from protocol.declarations import MessageDecl
from protocol.messages.consumer_group_current_member_assignment_key import (
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
    ConsumerGroupCurrentMemberAssignmentKey,
)
from protocol.messages.consumer_group_current_member_assignment_value import (
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    ConsumerGroupCurrentMemberAssignmentValue,
)
from protocol.messages.consumer_group_member_metadata_key import (
    CONSUMER_GROUP_MEMBER_METADATA_KEY,
    ConsumerGroupMemberMetadataKey,
)
from protocol.messages.consumer_group_member_metadata_value import (
    CONSUMER_GROUP_MEMBER_METADATA_VALUE,
    ConsumerGroupMemberMetadataValue,
)
from protocol.messages.consumer_group_metadata_key import CONSUMER_GROUP_METADATA_KEY, ConsumerGroupMetadataKey
from protocol.messages.consumer_group_metadata_value import CONSUMER_GROUP_METADATA_VALUE, ConsumerGroupMetadataValue
from protocol.messages.consumer_group_partition_metadata_key import (
    CONSUMER_GROUP_PARTITION_METADATA_KEY,
    ConsumerGroupPartitionMetadataKey,
)
from protocol.messages.consumer_group_partition_metadata_value import (
    CONSUMER_GROUP_PARTITION_METADATA_VALUE,
    ConsumerGroupPartitionMetadataValue,
)
from protocol.messages.consumer_group_target_assignment_member_key import (
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
    ConsumerGroupTargetAssignmentMemberKey,
)
from protocol.messages.consumer_group_target_assignment_member_value import (
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    ConsumerGroupTargetAssignmentMemberValue,
)
from protocol.messages.consumer_group_target_assignment_metadata_key import (
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
    ConsumerGroupTargetAssignmentMetadataKey,
)
from protocol.messages.consumer_group_target_assignment_metadata_value import (
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    ConsumerGroupTargetAssignmentMetadataValue,
)
from protocol.messages.group_metadata_key import GROUP_METADATA_KEY, GroupMetadataKey
from protocol.messages.group_metadata_value import GROUP_METADATA_VALUE, GroupMetadataValue
from protocol.messages.offset_commit_key import OFFSET_COMMIT_KEY, OffsetCommitKey
from protocol.messages.offset_commit_value import OFFSET_COMMIT_VALUE, OffsetCommitValue
from protocol.offset_commit_codec import encode_offset_commit_key, encode_offset_commit_value
from protocol.versioned import decode_versioned, encode_versioned, read_version

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
GROUP_METADATA_VALUE_VERSION = 3
#: The value version Kafka writes for every consumer-group record (`GroupCoordinatorRecordHelpers`).
CONSUMER_GROUP_VALUE_VERSION = 0

ClassicKey = OffsetCommitKey | GroupMetadataKey
ClassicValue = OffsetCommitValue | GroupMetadataValue
ConsumerGroupKey = (
    ConsumerGroupMetadataKey
    | ConsumerGroupPartitionMetadataKey
    | ConsumerGroupMemberMetadataKey
    | ConsumerGroupTargetAssignmentMetadataKey
    | ConsumerGroupTargetAssignmentMemberKey
    | ConsumerGroupCurrentMemberAssignmentKey
)
ConsumerGroupValue = (
    ConsumerGroupMetadataValue
    | ConsumerGroupPartitionMetadataValue
    | ConsumerGroupMemberMetadataValue
    | ConsumerGroupTargetAssignmentMetadataValue
    | ConsumerGroupTargetAssignmentMemberValue
    | ConsumerGroupCurrentMemberAssignmentValue
)
OffsetsKey = ClassicKey | ConsumerGroupKey
OffsetsValue = ClassicValue | ConsumerGroupValue


def offset_commit_value_version(value: OffsetCommitValue) -> int:
    """Kafka writes v1 only to carry an explicit expire timestamp (OffsetCommit v2-v4 retention), else v3."""
    return 1 if value.expire_timestamp != -1 else 3


@dataclass(frozen=True, slots=True)
class RecordType:
    """One record type of `__consumer_offsets`: its name for tools, its key and value schemas, how values are
    written and read.

    `clamp_value`: a value newer than our schema is read as our newest. Kafka relies on this for the classic
    values, whose new fields were only ever appended; the consumer-group values are flexible (new fields need not
    be a suffix), so an unknown version of those is an error rather than a silent misreading.
    """

    name: str
    key: MessageDecl
    value: MessageDecl
    value_version: Callable[[Any], int]
    clamp_value: bool = False
    consumer_group: bool = False

    @property
    def key_class(self) -> type:
        return self.key.struct.cls


def _fixed(version: int) -> Callable[[Any], int]:
    return lambda _value: version


_OFFSET_COMMIT = RecordType("offset_commit", OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE, offset_commit_value_version, True)


def _consumer_group(name: str, key: MessageDecl, value: MessageDecl) -> RecordType:
    return RecordType(name, key, value, _fixed(CONSUMER_GROUP_VALUE_VERSION), consumer_group=True)


#: Key version → record type (Kafka's `CoordinatorRecordType` ids 0-8).
RECORD_TYPES: dict[int, RecordType] = {
    0: _OFFSET_COMMIT,
    OFFSET_COMMIT_KEY_VERSION: _OFFSET_COMMIT,
    GROUP_METADATA_KEY_VERSION: RecordType(
        "group_metadata", GROUP_METADATA_KEY, GROUP_METADATA_VALUE, _fixed(GROUP_METADATA_VALUE_VERSION), True
    ),
    3: _consumer_group("consumer_group_metadata", CONSUMER_GROUP_METADATA_KEY, CONSUMER_GROUP_METADATA_VALUE),
    4: _consumer_group(
        "consumer_group_partition_metadata",
        CONSUMER_GROUP_PARTITION_METADATA_KEY,
        CONSUMER_GROUP_PARTITION_METADATA_VALUE,
    ),
    5: _consumer_group(
        "consumer_group_member_metadata", CONSUMER_GROUP_MEMBER_METADATA_KEY, CONSUMER_GROUP_MEMBER_METADATA_VALUE
    ),
    6: _consumer_group(
        "consumer_group_target_assignment_metadata",
        CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
        CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    ),
    7: _consumer_group(
        "consumer_group_target_assignment_member",
        CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
        CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    ),
    8: _consumer_group(
        "consumer_group_current_member_assignment",
        CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
        CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    ),
}
#: Value class → its record type.
_VALUE_TYPE: dict[type, RecordType] = {t.value.struct.cls: t for t in RECORD_TYPES.values()}
#: Key class → the key version it is written with (the newest version of its type).
_WRITE_VERSION: dict[type, int] = {t.key_class: v for v, t in sorted(RECORD_TYPES.items())}


def record_type_of(key: OffsetsKey) -> RecordType:
    """The record type of a decoded key."""
    return RECORD_TYPES[_WRITE_VERSION[type(key)]]


def write_key_version(key: OffsetsKey) -> int:
    """The key version a decoded key is written with (its record type)."""
    return _WRITE_VERSION[type(key)]


def encode_key(key: OffsetsKey) -> bytes:
    """The key's bytes; an offset commit's (most of what is written) through the straight-line encoder."""
    if key.__class__ is OffsetCommitKey:
        return encode_offset_commit_key(OFFSET_COMMIT_KEY_VERSION, key.group, key.topic, key.partition)
    version = write_key_version(key)
    return encode_versioned(RECORD_TYPES[version].key, version, key)


def encode_value(value: OffsetsValue | None) -> bytes | None:
    """The value's bytes, None for a tombstone (each value class belongs to exactly one record type)."""
    if value is None:
        return None
    if value.__class__ is OffsetCommitValue:
        return encode_offset_commit_value(value, offset_commit_value_version(value))
    record_type = _VALUE_TYPE[type(value)]
    return encode_versioned(record_type.value, record_type.value_version(value), value)


def key_version(data: bytes) -> int:
    return read_version(data, "ConsumerOffsetsKey")


def decode_key(data: bytes) -> OffsetsKey | None:
    """The key, or None for a record type this coordinator does not know (share groups and later)."""
    record_type = RECORD_TYPES.get(key_version(data))
    if record_type is None:
        return None
    key: OffsetsKey = decode_versioned(record_type.key, data, clamp=False, strict_end=True)[1]
    return key


def decode_value(key: OffsetsKey, data: bytes | None) -> OffsetsValue | None:
    """The value for a key, None for a tombstone. How newer value versions are read: see `RecordType`."""
    if data is None:
        return None
    record_type = record_type_of(key)
    value: OffsetsValue = decode_versioned(
        record_type.value, data, clamp=record_type.clamp_value, strict_end=not record_type.clamp_value
    )[1]
    return value


def is_consumer_group_key(key: OffsetsKey) -> bool:
    """A KIP-848 consumer-group record (key versions 3-8)."""
    return record_type_of(key).consumer_group
