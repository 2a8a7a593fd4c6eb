"""The generated fast codecs called directly, without `protocol.api`'s fall-back to the construct reference, so
that the differential and fuzz tests see what the fast code itself does (the fall-back would hide a fast decoder
that refuses a valid frame, or an encoder that refuses a valid value)."""

from __future__ import annotations

from typing import Any

from protocol import api, fastcodec
from protocol.errors import DecodeError
from protocol.registry import APIS
from tests.protocol.strategies import all_pairs

#: Every (api_key, version) with a fast request decoder and response encoder.
HOT_PAIRS = [(key, version) for key, version in all_pairs() if fastcodec.request_decoder(key, version) is not None]


class Refused:
    """What a fast codec's refusal (any of `fastcodec.FAILURES`) is compared as."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Refused)

    def __repr__(self) -> str:
        return "Refused()"


def fast_decode(frame: bytes) -> api.Request | Refused:
    """The request through the fast header and body decoders only (the frame's api and version have one)."""
    api_key, version, _ = api.peek_header(frame)
    decoder = fastcodec.request_decoder(api_key, version)
    assert decoder is not None
    header_version = api.request_header_version(APIS[api_key], version)
    try:
        header, position = fastcodec.request_header_decoder(header_version)(frame, 0)
        return api.Request(header, decoder(frame, position)[0])
    except fastcodec.FAILURES:
        return Refused()


def reference_decode(frame: bytes) -> api.Request | Refused:
    """The same frame through the construct reference; its DecodeError counts as a refusal."""
    api_key, version, correlation_id = api.peek_header(frame)
    try:
        return api._decode_request_reference(frame, api.spec_for(api_key, version, correlation_id), version)
    except DecodeError:
        return Refused()


def fast_encode(api_key: int, version: int, correlation_id: int, body: Any) -> tuple[bytes, list[Any]] | Refused:
    try:
        return api._encode_response_fast(api_key, version, correlation_id, body)
    except fastcodec.FAILURES:
        return Refused()
