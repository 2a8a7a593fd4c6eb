"""The straight-line OffsetCommitKey/OffsetCommitValue encoders write exactly what the generic versioned codec writes,
at every version they cover, and refuse exactly what it refuses."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import consumer_offsets
from protocol.errors import EncodeError
from protocol.messages.offset_commit_key import OFFSET_COMMIT_KEY, OffsetCommitKey
from protocol.messages.offset_commit_value import OFFSET_COMMIT_VALUE, OffsetCommitValue
from protocol.offset_commit_codec import (
    STRAIGHT_VALUE_VERSIONS,
    encode_offset_commit_key,
    encode_offset_commit_value,
)
from protocol.versioned import encode_versioned

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = I64 = st.integers(-(2**63), 2**63 - 1)
#: Text of any code point but lone surrogates (which no codec can write), of any length up to past the int16 limit.
TEXT = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.builds(lambda c, n: c * n, st.sampled_from(["a", "é", "\U0001f600"]), st.integers(8_000, 33_000)),
)


def _generic(decl: object, version: int, value: object) -> bytes | type[Exception]:
    try:
        return encode_versioned(decl, version, value)  # type: ignore[arg-type]
    except Exception:
        return Exception


def _straight(encode: object, *args: object) -> bytes | type[Exception]:
    try:
        return encode(*args)  # type: ignore[operator, no-any-return]
    except EncodeError:
        return Exception


@settings(max_examples=300, deadline=None)
@given(version=st.sampled_from([0, 1]), group=TEXT, topic=TEXT, partition=INT32)
def test_keys_match_the_generic_codec(version: int, group: str, topic: str, partition: int) -> None:
    key = OffsetCommitKey(group=group, topic=topic, partition=partition)
    expected = _generic(OFFSET_COMMIT_KEY, version, key)
    assert _straight(encode_offset_commit_key, version, group, topic, partition) == expected


FIELDS = {"offset": INT64, "leader_epoch": INT32, "metadata": TEXT, "commit_timestamp": INT64, "expire_timestamp": I64}
VALUES = st.builds(OffsetCommitValue, **FIELDS)


@settings(max_examples=500, deadline=None)
@given(version=st.sampled_from(list(STRAIGHT_VALUE_VERSIONS)), value=VALUES)
def test_values_match_the_generic_codec(version: int, value: OffsetCommitValue) -> None:
    expected = _generic(OFFSET_COMMIT_VALUE, version, value)
    assert _straight(encode_offset_commit_value, value, version) == expected


@pytest.mark.parametrize(
    ("field", "bad"),
    [("offset", 2**63), ("leader_epoch", 2**31), ("commit_timestamp", -(2**63) - 1), ("metadata", None)],
)
def test_out_of_range_values_are_refused_like_the_generic_codec(field: str, bad: object) -> None:
    value = OffsetCommitValue(offset=1, metadata="m", commit_timestamp=2)
    setattr(value, field, bad)
    assert _generic(OFFSET_COMMIT_VALUE, 3, value) is Exception
    with pytest.raises(EncodeError):
        encode_offset_commit_value(value, 3)


def test_the_consumer_offsets_codec_writes_commits_straight_and_reads_them_back() -> None:
    key = OffsetCommitKey(group="g", topic="t", partition=7)
    with_expiry = OffsetCommitValue(offset=5, metadata="m", commit_timestamp=9, expire_timestamp=11)
    plain = OffsetCommitValue(offset=5, leader_epoch=3, metadata="", commit_timestamp=9)
    assert consumer_offsets.encode_key(key) == encode_versioned(OFFSET_COMMIT_KEY, 1, key)
    assert consumer_offsets.encode_value(with_expiry) == encode_versioned(OFFSET_COMMIT_VALUE, 1, with_expiry)
    assert consumer_offsets.encode_value(plain) == encode_versioned(OFFSET_COMMIT_VALUE, 3, plain)
    decoded = consumer_offsets.decode_key(consumer_offsets.encode_key(key))
    assert decoded == key
    assert consumer_offsets.decode_value(key, consumer_offsets.encode_value(plain)) == plain


def test_a_version_without_a_straight_line_encoder_is_an_error() -> None:
    with pytest.raises(ValueError, match="v4"):
        encode_offset_commit_value(OffsetCommitValue(), 4)
