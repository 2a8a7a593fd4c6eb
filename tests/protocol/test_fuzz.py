"""Untrusted bytes: whatever arrives, the decoder answers with a value or one DecodeError, never anything else.

Valid frames of every (api, version) are truncated, bit-flipped and replaced by noise; the decoder must not raise
another exception type, loop, or read beyond the frame. The interpreted construct must agree with the compiled one
on every outcome, which checks both against each other on hostile input too; and where a hot API has a generated
fast decoder (protocol/fastgen.py), every frame of every test here also goes through it alone, which must refuse
exactly the frames the reference refuses and decode the others to the same value.
"""

from __future__ import annotations

from io import BytesIO

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import api, fastcodec, schema
from protocol.errors import DecodeError, UnsupportedVersionError
from protocol.frame import FrameBuffer, FrameError
from protocol.messages.request_header import RequestHeader
from protocol.primitives import rd_count, rd_uvarint
from protocol.registry import APIS
from tests.protocol.fast_paths import Refused, fast_decode
from tests.protocol.strategies import all_pairs, message_strategy

PAIRS = all_pairs()


def _decode_outcome(frame: bytes) -> object:
    try:
        outcome: object = api.decode_request(frame)
    except (DecodeError, UnsupportedVersionError) as exc:
        outcome = type(exc)
    _check_fast_decoder(frame, outcome)
    return outcome


def _check_fast_decoder(frame: bytes, outcome: object) -> None:
    """The fast decoder alone (no fall-back to the reference) agrees with the public outcome."""
    if len(frame) < 8 or outcome is UnsupportedVersionError:
        return
    api_key, version, _ = api.peek_header(frame)
    if fastcodec.request_decoder(api_key, version) is None:
        return
    assert fast_decode(frame) == (Refused() if outcome is DecodeError else outcome)


def _valid_frame(api_key: int, version: int, data: st.DataObject) -> bytes:
    body = data.draw(message_strategy(APIS[api_key].request, version))
    header = RequestHeader(request_api_key=api_key, request_api_version=version, correlation_id=1, client_id="c")
    return api.encode_request(header, body)[4:]


@pytest.mark.parametrize(("api_key", "version"), PAIRS)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_truncated_frames_raise_decode_error(api_key: int, version: int, data: st.DataObject) -> None:
    frame = _valid_frame(api_key, version, data)
    cut = data.draw(st.integers(0, len(frame) - 1))
    # every field of the version is always read, so no proper prefix of a frame is a complete request
    assert _decode_outcome(frame[:cut]) is DecodeError


@pytest.mark.parametrize(("api_key", "version"), PAIRS)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_bit_flipped_frames_decode_or_raise_decode_error(api_key: int, version: int, data: st.DataObject) -> None:
    frame = bytearray(_valid_frame(api_key, version, data))
    for _ in range(data.draw(st.integers(1, 3))):
        bit = data.draw(st.integers(0, len(frame) * 8 - 1))
        frame[bit // 8] ^= 1 << (bit % 8)
    outcome = _decode_outcome(bytes(frame))
    assert outcome in (DecodeError, UnsupportedVersionError) or not isinstance(outcome, type)


@pytest.mark.parametrize(("api_key", "version"), PAIRS)
@settings(max_examples=10, deadline=None)
@given(noise=st.binary(max_size=64))
def test_random_bodies_decode_or_raise_decode_error(api_key: int, version: int, noise: bytes) -> None:
    """A valid header followed by noise exercises every body decoder with garbage."""
    spec = APIS[api_key]
    header = RequestHeader(request_api_key=api_key, request_api_version=version, correlation_id=1, client_id=None)
    head = api.encode_request(header, spec.request.struct.cls())[4:]
    header_size = len(head) - len(api.encode_body(spec.request, version, spec.request.struct.cls()))
    frame = head[:header_size] + noise
    compiled = _decode_outcome(frame)
    try:
        io = BytesIO(frame)
        io.seek(header_size)
        interpreted: object = schema.interpreted(spec.request, version).parse_stream(io)
    except DecodeError:
        interpreted = DecodeError
    if isinstance(compiled, type):
        assert compiled is DecodeError
        assert interpreted is DecodeError
    else:
        assert compiled.body == interpreted  # type: ignore[attr-defined]


@settings(max_examples=200, deadline=None)
@given(noise=st.binary(max_size=80))
def test_random_frames_raise_only_decode_errors(noise: bytes) -> None:
    outcome = _decode_outcome(noise)
    assert outcome in (DecodeError, UnsupportedVersionError) or not isinstance(outcome, type)


def test_varint_longer_than_five_bytes_is_rejected() -> None:
    with pytest.raises(DecodeError, match="longer than 5 bytes"):
        rd_uvarint(BytesIO(b"\x80\x80\x80\x80\x80\x01"), "x")
    with pytest.raises(DecodeError, match="exceeds 32 bits"):
        rd_uvarint(BytesIO(b"\xff\xff\xff\xff\x7f"), "x")
    assert rd_uvarint(BytesIO(b"\xff\xff\xff\xff\x0f"), "x") == 2**32 - 1


def test_array_count_larger_than_remaining_bytes_is_rejected_before_allocating() -> None:
    # int32 count of 2^31-1 elements of int32 with 8 bytes left: refused without building a list
    with pytest.raises(DecodeError, match="cannot fit"):
        rd_count(BytesIO(b"\x7f\xff\xff\xff" + bytes(8)), False, False, 4, "x")
    # OffsetFetch v1 with a topic array claiming 1,000,000 entries in a 20-byte frame
    frame = b"\x00\x09\x00\x01\x00\x00\x00\x01\xff\xff" + b"\x00\x01g" + b"\x00\x0f\x42\x40"
    with pytest.raises(DecodeError) as info:
        api.decode_request(frame)
    assert info.value.path == "OffsetFetchRequest.topics"
    assert info.value.offset == len(frame)


def test_decode_error_names_field_path_and_offset() -> None:
    # Heartbeat v0: group_id claims 10 bytes but the frame ends after 3
    frame = b"\x00\x0c\x00\x00\x00\x00\x00\x07\xff\xff" + b"\x00\x0aabc"
    with pytest.raises(DecodeError) as info:
        api.decode_request(frame)
    assert info.value.path == "HeartbeatRequest.group_id"
    assert info.value.offset == 12


def test_unsupported_version_carries_what_an_error_reply_needs() -> None:
    with pytest.raises(UnsupportedVersionError) as info:
        api.decode_request(b"\x00\x12\x00\x63\x00\x00\x00\x2a\xff\xff")
    assert (info.value.api_key, info.value.api_version, info.value.correlation_id) == (18, 99, 42)


def test_frame_buffer_yields_frames_in_order_across_feeds() -> None:
    buffer = FrameBuffer(max_frame_bytes=100)
    stream = b"\x00\x00\x00\x03abc\x00\x00\x00\x00\x00\x00\x00\x02xy"
    for byte in stream:
        buffer.feed(bytes([byte]))
    assert [buffer.next_frame(), buffer.next_frame(), buffer.next_frame(), buffer.next_frame()] == [
        b"abc",
        b"",
        b"xy",
        None,
    ]
    assert buffer.pending_bytes == 0


def test_frame_buffer_rejects_oversized_frame_on_its_prefix() -> None:
    """socket.request.max.bytes is checked on the 4-byte prefix, before any body byte is buffered."""
    buffer = FrameBuffer(max_frame_bytes=1000)
    with pytest.raises(FrameError, match=r"socket\.request\.max\.bytes"):
        buffer.feed(b"\x00\x00\x03\xe9")
    with pytest.raises(FrameError, match="negative"):
        FrameBuffer().feed(b"\xff\xff\xff\xff")


def test_frame_buffer_reports_partial_frame_at_eof() -> None:
    buffer = FrameBuffer()
    buffer.feed(b"\x00\x00\x00\x05ab")
    assert buffer.next_frame() is None
    assert buffer.pending_bytes == 6


def test_tagged_fields_are_accepted_in_any_order_like_kafka() -> None:
    """Kafka's generated readers switch on each tag as it comes; order on the wire is the writer's business."""
    from protocol.primitives import rd_tags

    assert rd_tags(BytesIO(b"\x02\x05\x01a\x01\x01b"), "x") == {5: b"a", 1: b"b"}
    assert rd_tags(BytesIO(b"\x02\x01\x01a\x01\x01b"), "x") == {1: b"b"}
