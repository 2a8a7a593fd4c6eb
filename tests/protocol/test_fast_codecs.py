"""The generated fast codecs (protocol/fastgen.py) against the construct reference, at every version of every hot
API: decoded requests and encoded responses must be identical, refusals must coincide, allocation stays bounded.

The fuzz suite (test_fuzz.py) and the kio differential (test_kio_differential.py) check the fast decoders too;
here are the direct comparisons, the encode-side rules (absent fields, deferred payloads) and the codegen check.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import api, fastcodec, fastgen
from protocol.errors import DecodeError, EncodeError
from protocol.messages.fetch import FetchableTopicResponse, FetchResponse, PartitionData
from protocol.messages.request_header import RequestHeader
from protocol.registry import APIS, ApiKey
from tests.protocol.fast_paths import HOT_PAIRS, Refused, fast_decode, fast_encode, reference_decode
from tests.protocol.strategies import _value, message_strategy

_INT32 = st.integers(-(2**31), 2**31 - 1)


def _ids(pair: tuple[int, int]) -> str:
    return f"{ApiKey(pair[0]).name}-v{pair[1]}"


def test_every_hot_api_has_fast_codecs_at_every_served_version() -> None:
    hot = {ApiKey[name] for name in fastgen.HOT_APIS}
    for key in hot:
        spec = APIS[key]
        for version in range(spec.min_version, spec.max_version + 1):
            assert fastcodec.request_decoder(key, version) is not None, (key, version)
            assert fastcodec.response_encoder(key, version) is not None, (key, version)
    assert {key for key, _ in HOT_PAIRS} == hot
    assert fastcodec.request_decoder(ApiKey.LEAVE_GROUP, 0) is None


def test_committed_fast_codecs_are_what_codegen_produces() -> None:
    expected = fastgen.generate()
    committed = {path.name: path.read_text() for path in fastgen.FAST_DIR.glob("*.py")}
    stale = sorted(name for name in expected.keys() | committed.keys() if expected.get(name) != committed.get(name))
    assert not stale, f"run `make codegen`: stale fast codec modules {stale}"


@pytest.mark.parametrize("pair", HOT_PAIRS, ids=_ids)
@settings(max_examples=8, deadline=None)
@given(data=st.data(), client_id=st.none() | st.text(max_size=8), trailing=st.binary(max_size=3))
def test_fast_request_decoder_matches_reference(
    pair: tuple[int, int], data: st.DataObject, client_id: str | None, trailing: bytes
) -> None:
    key, version = pair
    body = data.draw(message_strategy(APIS[key].request, version))
    header = RequestHeader(request_api_key=key, request_api_version=version, correlation_id=7, client_id=client_id)
    frame = api.encode_request(header, body)[4:] + trailing  # trailing bytes are ignored by both, as before
    expected = reference_decode(frame)
    assert expected == api.Request(header, body)
    assert fast_decode(frame) == expected
    assert api.decode_request(frame) == expected


@pytest.mark.parametrize("pair", HOT_PAIRS, ids=_ids)
@settings(max_examples=8, deadline=None)
@given(data=st.data(), correlation_id=_INT32)
def test_fast_response_encoder_matches_reference(
    pair: tuple[int, int], data: st.DataObject, correlation_id: int
) -> None:
    key, version = pair
    body = data.draw(message_strategy(APIS[key].response, version))
    expected = api._encode_response_reference(key, version, correlation_id, body)
    assert fast_encode(key, version, correlation_id, body) == (expected, [])
    assert api.encode_response(key, version, correlation_id, body) == expected
    assert api.encode_response_parts(key, version, correlation_id, body) == [expected]


def _encode_outcome(encode: Any, *args: Any) -> object:
    try:
        return encode(*args)
    except EncodeError as exc:
        return f"EncodeError: {exc}"


@pytest.mark.parametrize("pair", HOT_PAIRS, ids=_ids)
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_fields_absent_from_a_version_encode_as_the_reference(pair: tuple[int, int], data: st.DataObject) -> None:
    """A non-default value in a field the version lacks: dropped when Kafka marks it ignorable, else an
    EncodeError, with the same message either way."""
    key, version = pair
    message = APIS[key].response
    absent = [decl for decl in message.struct.fields if version not in decl.versions]
    if not absent:
        return
    decl = data.draw(st.sampled_from(absent))
    other = decl.versions.lo if decl.versions.lo > version else (decl.versions.hi or version)
    value = data.draw(_value(decl, other, other in message.flexible).filter(lambda v: v != decl.default))
    body = message.struct.cls()
    setattr(body, decl.name, value)
    expected = _encode_outcome(api._encode_response_reference, key, version, 3, body)
    assert _encode_outcome(api.encode_response, key, version, 3, body) == expected
    fast = fast_encode(key, version, 3, body)
    assert fast == (Refused() if isinstance(expected, str) else (expected, []))


class Deferred:
    """A payload whose bytes are elsewhere (as Fetch's RecordSlices): only its length is known."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size


@pytest.mark.parametrize("version", range(APIS[ApiKey.FETCH].min_version, APIS[ApiKey.FETCH].max_version + 1))
def test_fetch_parts_match_reference(version: int) -> None:
    partitions = [
        PartitionData(partition_index=0, high_watermark=5, records=Deferred(300)),  # type: ignore[arg-type]
        PartitionData(partition_index=1, records=b"inline"),
        PartitionData(partition_index=2, records=Deferred(70_000)),  # type: ignore[arg-type]
        PartitionData(partition_index=3, records=None),
    ]
    body = FetchResponse(responses=[FetchableTopicResponse(topic="t", partitions=partitions)])
    expected = api._encode_response_parts_reference(ApiKey.FETCH, version, 11, body)
    assert api.encode_response_parts(ApiKey.FETCH, version, 11, body) == expected
    with pytest.raises(EncodeError):  # a payload that is not bytes cannot go into one frame, as before
        api.encode_response(ApiKey.FETCH, version, 11, body)


def _peak_allocation(frame: bytes) -> tuple[object, int]:
    tracemalloc.start()
    try:
        outcome = fast_decode(frame)
        return outcome, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_counts_and_lengths_beyond_the_frame_are_refused_before_allocating() -> None:
    # OffsetFetch v1: a topic array claiming 1,000,000 entries in a 20-byte frame
    topics = b"\x00\x09\x00\x01\x00\x00\x00\x01\xff\xff" + b"\x00\x01g" + b"\x00\x0f\x42\x40"
    # Produce v3: records claiming 2^31 - 1 bytes
    records = (
        b"\x00\x00\x00\x03\x00\x00\x00\x01\xff\xff"  # header v1
        + b"\xff\xff\x00\x01\x00\x00\x03\xe8"  # null transactional id, acks, timeout
        + b"\x00\x00\x00\x01\x00\x01t\x00\x00\x00\x01\x00\x00\x00\x00"  # one topic, one partition
        + b"\x7f\xff\xff\xff"
        + bytes(16)
    )
    for frame in (topics, records):
        outcome, peak = _peak_allocation(frame)
        assert outcome == Refused()
        assert peak < 64 * 1024, peak
        assert reference_decode(frame) == Refused()


def test_refused_frames_raise_the_reference_decode_error() -> None:
    """The fast decoder refuses; the DecodeError the connection logs is the reference's, field path and offset."""
    frame = b"\x00\x0c\x00\x00\x00\x00\x00\x07\xff\xff" + b"\x00\x0aabc"  # Heartbeat v0, group_id cut short
    assert fast_decode(frame) == Refused()
    with pytest.raises(DecodeError) as info:
        api.decode_request(frame)
    assert (info.value.path, info.value.offset) == ("HeartbeatRequest.group_id", 12)


def test_non_bytes_frames_are_decoded_too() -> None:
    header = RequestHeader(request_api_key=ApiKey.HEARTBEAT, request_api_version=4, correlation_id=1, client_id="c")
    frame = api.encode_request(header, APIS[ApiKey.HEARTBEAT].request.struct.cls(group_id="g"))[4:]
    assert api.decode_request(memoryview(frame)) == api.decode_request(bytearray(frame)) == reference_decode(frame)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"caf\xe9", "caf\ufffd"),
        (b"\xff\xfe", "\ufffd\ufffd"),
        (b"a\xe2\x82", "a\ufffd"),
        (b"\xed\xa0\x80", "\ufffd" * 3),  # an encoded surrogate: strict UTF-8 refuses it too
    ],
)
@pytest.mark.parametrize("version", [0, 4])  # an int16 and a compact length
def test_malformed_utf8_is_replaced_as_by_the_reference(raw: bytes, expected: str, version: int) -> None:
    """The fast decoders try strict UTF-8 first; malformed bytes still become U+FFFD (test_lenient_strings.py)."""
    header = RequestHeader(request_api_key=ApiKey.HEARTBEAT, request_api_version=version, correlation_id=1)
    body = APIS[ApiKey.HEARTBEAT].request.struct.cls(group_id="#" * len(raw))
    frame = api.encode_request(header, body)[4:].replace(b"#" * len(raw), raw, 1)
    decoded = fast_decode(frame)
    assert decoded == reference_decode(frame)
    assert isinstance(decoded, api.Request) and decoded.body.group_id == expected
