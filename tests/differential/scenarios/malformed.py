"""Malformed frames: which bad input gets an error answer and which a closed connection (Kafka usually closes;
ApiVersions it answers). Each case runs on a connection of its own, and records whether that connection still
answers afterwards, so "answered but poisoned" and "closed" are told apart."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Callable

from protocol import api
from protocol.errors import DecodeError
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.metadata import MetadataRequest
from protocol.registry import ApiKey
from tests.differential.registry import scenario
from tests.differential.scenarios.common import join_body
from tests.differential.scenarios.raw import NO_TAGS, encoded, header_bytes, sized
from tests.differential.session import CLOSED, Conn, Session

ANSWER_TIMEOUT_S = 10.0
#: One byte past group-broker's and Kafka's default socket.request.max.bytes (100 MiB).
OVERSIZED = 104857600 + 1

Build = Callable[[int], bytes]


async def _still_open(conn: Conn) -> bool:
    """Whether the connection answers an ordinary ApiVersions v0 after the bad frame."""
    pending = conn.send(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())
    try:
        return await asyncio.wait_for(asyncio.shield(pending.future), ANSWER_TIMEOUT_S) is not None
    except TimeoutError:
        return False


async def probe(s: Session, step: str, build: Build, api_key: int, version: int) -> None:
    """Send the frame ``build(correlation_id)`` on a new connection; record the decoded answer (or that the
    connection closed, or bytes we cannot decode as that API), then whether the connection is still usable."""
    conn = await s.connect()
    correlation_id = conn.next_correlation_id()
    frame = await asyncio.wait_for(conn.send_frame(build(correlation_id), correlation_id), ANSWER_TIMEOUT_S)
    if frame is None:
        s.record(step, CLOSED)
    else:
        try:
            s.note(step, api.decode_response(api_key, version, frame)[1])
        except DecodeError:
            s.note(step, {"undecodable answer": True})
    s.note(f"{step}: connection still answers", frame is not None and await _still_open(conn))


def _cut(api_key: int, version: int, body: object, keep: int) -> Build:
    """The codec's frame with only the first ``keep`` bytes of the payload (header included), sized honestly."""
    return lambda cid: sized(encoded(api_key, version, cid, body)[:keep])


def _with_tail(api_key: int, version: int, body: object, tail: bytes) -> Build:
    return lambda cid: sized(encoded(api_key, version, cid, body) + tail)


def _join_v5_long_group_id(cid: int) -> bytes:
    """JoinGroup v5 (not flexible) whose group id claims 1000 bytes and has 3."""
    return sized(header_bytes(ApiKey.JOIN_GROUP, 5, cid, flexible=False) + struct.pack(">h", 1000) + b"abc")


def _metadata_v12_bad_tags(cid: int) -> bytes:
    """Metadata v12 whose top-level tagged-field section claims a 100-byte field after the last byte."""
    body = encoded(ApiKey.METADATA, 12, cid, MetadataRequest(topics=[]))
    return sized(body[:-1] + b"\x01\x00\x64" + b"xy")


def _metadata_v12_duplicate_tags(cid: int) -> bytes:
    """Metadata v12 whose tagged-field section carries the unknown tag 0 twice (both brokers keep unknown tags
    without checking their order, and answer)."""
    body = encoded(ApiKey.METADATA, 12, cid, MetadataRequest(topics=[]))
    return sized(body[:-1] + b"\x02\x00\x01x\x00\x01y")


def _header_v2_bad_tags(cid: int) -> bytes:
    """ApiVersions v3 whose request header's tagged-field section is cut short."""
    head = header_bytes(ApiKey.API_VERSIONS, 3, cid, flexible=False) + b"\x01\x00\x20"
    return sized(head)


def _unknown_key(cid: int) -> bytes:
    return sized(header_bytes(999, 0, cid, flexible=False))


def _metadata_v99(cid: int) -> bytes:
    return sized(header_bytes(ApiKey.METADATA, 99, cid, flexible=True) + NO_TAGS)


def _join_v99(cid: int) -> bytes:
    return sized(header_bytes(ApiKey.JOIN_GROUP, 99, cid, flexible=True) + NO_TAGS)


def _short_header(cid: int) -> bytes:
    return sized(b"\x00\x03\x00")


def _client_id_past_end(cid: int) -> bytes:
    return sized(struct.pack(">hhih", ApiKey.METADATA, 1, cid, 300) + b"abc")


def _bad_software_name(cid: int) -> bytes:
    """ApiVersions v3 whose client software name breaks KIP-511's pattern ([a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*...)."""
    body = ApiVersionsRequest(client_software_name="bad name!", client_software_version="1.0")
    return sized(encoded(ApiKey.API_VERSIONS, 3, cid, body))


@scenario("malformed")
async def malformed_bodies(s: Session) -> None:
    """Bodies that cannot be read: cut short, a string past the end, a broken or repeated tagged-field section,
    trailing bytes; for an API with a top-level error code (JoinGroup) and one without (Metadata)."""
    join = join_body(s.name("malformed"))
    await probe(s, "JoinGroup v5 cut 4 bytes into the body", _cut(ApiKey.JOIN_GROUP, 5, join, 26), ApiKey.JOIN_GROUP, 5)
    await probe(s, "JoinGroup v9 cut mid-body", _cut(ApiKey.JOIN_GROUP, 9, join, 40), ApiKey.JOIN_GROUP, 9)
    api_versions = ApiVersionsRequest(client_software_name="differential", client_software_version="1.0")
    cut_versions = _cut(ApiKey.API_VERSIONS, 3, api_versions, 30)
    await probe(s, "ApiVersions v3 cut mid-body", cut_versions, ApiKey.API_VERSIONS, 3)
    await probe(s, "Metadata v1 cut mid-body", _cut(ApiKey.METADATA, 1, MetadataRequest(), 14), ApiKey.METADATA, 1)
    await probe(s, "JoinGroup v5 group id past the end", _join_v5_long_group_id, ApiKey.JOIN_GROUP, 5)
    await probe(s, "Metadata v12 tagged field past the end", _metadata_v12_bad_tags, ApiKey.METADATA, 12)
    await probe(s, "Metadata v12 tag repeated", _metadata_v12_duplicate_tags, ApiKey.METADATA, 12)
    trailing = _with_tail(ApiKey.JOIN_GROUP, 5, join, b"\xde\xad\xbe\xef")
    await probe(s, "JoinGroup v5 with trailing bytes", trailing, ApiKey.JOIN_GROUP, 5)


@scenario("malformed")
async def malformed_headers(s: Session) -> None:
    """Headers that cannot be read or name nothing served: too short, a client id past the end, a cut tagged-field
    section, an unknown api key, versions nobody serves (for an API with and one without a top-level error)."""
    await probe(s, "a 3-byte header", _short_header, ApiKey.METADATA, 1)
    await probe(s, "client id past the end", _client_id_past_end, ApiKey.METADATA, 1)
    await probe(s, "ApiVersions v3 header tags cut", _header_v2_bad_tags, ApiKey.API_VERSIONS, 0)
    await probe(s, "unknown api key 999", _unknown_key, ApiKey.API_VERSIONS, 0)
    await probe(s, "Metadata v99", _metadata_v99, ApiKey.METADATA, 0)
    await probe(s, "JoinGroup v99", _join_v99, ApiKey.JOIN_GROUP, 0)
    await probe(s, "ApiVersions v3 with a bad software name", _bad_software_name, ApiKey.API_VERSIONS, 3)


@scenario("malformed")
async def malformed_sizes(s: Session) -> None:
    """Size prefixes no request may have: past socket.request.max.bytes, negative, zero. Closed before a body byte
    is read (nothing is sent after the prefix but a few bytes)."""
    for step, size in (("a frame past socket.request.max.bytes", OVERSIZED), ("a negative size", -5)):
        conn = await s.connect()
        conn.send_frame(struct.pack(">i", size) + b"\x00\x12\x00\x00", conn.next_correlation_id())
        await conn.closed_within(step)
    await probe(s, "a zero size", lambda cid: sized(b""), ApiKey.API_VERSIONS, 0)
