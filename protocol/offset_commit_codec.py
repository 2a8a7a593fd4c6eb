"""Straight-line encoders for the record every OffsetCommit writes: OffsetCommitKey and OffsetCommitValue.

A durable commit of N partitions writes N `__consumer_offsets` records, so these two are encoded far more often
than anything else the coordinator stores. The generic versioned codec (`protocol.versioned`, compiled construct
structs) costs several microseconds a record; these are `struct` packs of the same fields, byte for byte what the
schemas give (tests/protocol/test_offset_commit_codec.py compares them with the generic codec at every version).

Only the non-flexible versions are straight-line: the key's (v0, v1: group, topic, partition) and the value's
v0-v3 (offset, leader epoch from v3, metadata, commit timestamp, expire timestamp in v1 only). The coordinator
writes key v1 and value v3 (v1 with an expire timestamp); value v4 (flexible, never written here) goes through the
generic codec. Whatever the generic codec refuses these refuse too, with `EncodeError` (a string over 32767 bytes or
null, a number out of its type's range), so an unwritable record is still refused alone.
"""

from __future__ import annotations

import struct
from functools import lru_cache

from protocol.errors import EncodeError
from protocol.messages.offset_commit_value import OffsetCommitValue

_I16 = struct.Struct(">h").pack
_I32 = struct.Struct(">i").pack
_I64 = struct.Struct(">q").pack
_VERSION_OFFSET = struct.Struct(">hq").pack
_VERSION_OFFSET_EPOCH = struct.Struct(">hqi").pack
_TWO_I64 = struct.Struct(">qq").pack
_STRING_MAX = 0x7FFF
#: The value versions encoded here; newer ones are flexible (compact strings, tagged fields).
STRAIGHT_VALUE_VERSIONS = range(0, 4)
#: How many (group, topic) key prefixes are kept: a group commits the same topics over and over.
KEY_PREFIX_CACHE = 4096
#: How many whole keys are kept (one per group, topic and partition committed lately).
KEY_CACHE = 65_536
#: The empty metadata string, what most commits carry.
_EMPTY_STRING = b"\x00\x00"


def _string(value: str | None, path: str) -> bytes:
    """A non-nullable, non-compact string: int16 length and UTF-8 bytes."""
    if value is None:
        raise EncodeError(f"{path}: null in a non-nullable string")
    data = value.encode()
    if len(data) > _STRING_MAX:
        raise EncodeError(f"{path}: string longer than 32767 bytes")
    return _I16(len(data)) + data


@lru_cache(maxsize=KEY_PREFIX_CACHE)
def _key_prefix(version: int, group: str, topic: str) -> bytes:
    return _I16(version) + _string(group, "OffsetCommitKey.group") + _string(topic, "OffsetCommitKey.topic")


@lru_cache(maxsize=KEY_CACHE)
def encode_offset_commit_key(version: int, group: str, topic: str, partition: int) -> bytes:
    """OffsetCommitKey at `version` (0 or 1, the same fields), its version prefix included.

    Cached whole: a group commits the same partitions over and over, and each commit writes every key again. An
    unencodable key raises each time (exceptions are not cached)."""
    try:
        return _key_prefix(version, group, topic) + _I32(partition)
    except struct.error as exc:
        raise EncodeError(f"OffsetCommitKey: {exc}") from None


def encode_offset_commit_value(value: OffsetCommitValue, version: int) -> bytes:
    """OffsetCommitValue at `version` (0-3), its version prefix included."""
    try:
        metadata = _EMPTY_STRING if value.metadata == "" else _string(value.metadata, "OffsetCommitValue.metadata")
        if version == 3:
            return _VERSION_OFFSET_EPOCH(3, value.offset, value.leader_epoch) + metadata + _I64(value.commit_timestamp)
        if version == 1:
            return (
                _VERSION_OFFSET(1, value.offset) + metadata + _TWO_I64(value.commit_timestamp, value.expire_timestamp)
            )
        if version in (0, 2):
            return _VERSION_OFFSET(version, value.offset) + metadata + _I64(value.commit_timestamp)
    except struct.error as exc:
        raise EncodeError(f"OffsetCommitValue: {exc}") from None
    raise ValueError(f"OffsetCommitValue v{version} is not encoded here")
