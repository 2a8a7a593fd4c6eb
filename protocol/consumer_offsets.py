"""Keys and values of the `__consumer_offsets` topic, byte for byte as Kafka writes them.

Both are an int16 version followed by the schema's fields. The key's version is also the record type: 0 and 1 are
OffsetCommitKey, 2 is GroupMetadataKey, 3 and up belong to KIP-848 and share groups (skipped by readers that do
not know them, as Kafka's loader does). A null value is a tombstone. Writers use OffsetCommitKey v1,
OffsetCommitValue v3 (v1 when an expire timestamp exists) and GroupMetadataKey v2 / GroupMetadataValue v3.
"""

from __future__ import annotations

from protocol.messages.group_metadata_key import GROUP_METADATA_KEY, GroupMetadataKey
from protocol.messages.group_metadata_value import GROUP_METADATA_VALUE, GroupMetadataValue
from protocol.messages.offset_commit_key import OFFSET_COMMIT_KEY, OffsetCommitKey
from protocol.messages.offset_commit_value import OFFSET_COMMIT_VALUE, OffsetCommitValue
from protocol.versioned import decode_versioned, encode_versioned, read_version

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
GROUP_METADATA_VALUE_VERSION = 3

OffsetsKey = OffsetCommitKey | GroupMetadataKey
OffsetsValue = OffsetCommitValue | GroupMetadataValue


def offset_commit_value_version(value: OffsetCommitValue) -> int:
    """Kafka writes v1 only to carry an explicit expire timestamp (OffsetCommit v2-v4 retention), else v3."""
    return 1 if value.expire_timestamp != -1 else 3


def encode_key(key: OffsetsKey) -> bytes:
    if isinstance(key, OffsetCommitKey):
        return encode_versioned(OFFSET_COMMIT_KEY, OFFSET_COMMIT_KEY_VERSION, key)
    return encode_versioned(GROUP_METADATA_KEY, GROUP_METADATA_KEY_VERSION, key)


def encode_value(value: OffsetsValue | None) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, OffsetCommitValue):
        return encode_versioned(OFFSET_COMMIT_VALUE, offset_commit_value_version(value), value)
    return encode_versioned(GROUP_METADATA_VALUE, GROUP_METADATA_VALUE_VERSION, value)


def key_version(data: bytes) -> int:
    return read_version(data, "ConsumerOffsetsKey")


def decode_key(data: bytes) -> OffsetsKey | None:
    """The key, or None for a record type this coordinator does not know (KIP-848/share group records)."""
    version = key_version(data)
    if version in (0, 1):
        commit_key: OffsetCommitKey = decode_versioned(OFFSET_COMMIT_KEY, data, clamp=False, strict_end=True)[1]
        return commit_key
    if version == 2:
        group_key: GroupMetadataKey = decode_versioned(GROUP_METADATA_KEY, data, clamp=False, strict_end=True)[1]
        return group_key
    return None


def decode_value(key: OffsetsKey, data: bytes | None) -> OffsetsValue | None:
    """The value for a key, None for a tombstone. Newer value versions are read as our newest (Kafka does too)."""
    if data is None:
        return None
    decl = OFFSET_COMMIT_VALUE if isinstance(key, OffsetCommitKey) else GROUP_METADATA_VALUE
    value: OffsetsValue = decode_versioned(decl, data, clamp=True, strict_end=False)[1]
    return value
