"""The codec's public surface: whole request and response frames, headers included.

Header quirks live here and only here: the request header is v2 (with tagged fields) exactly when the API version
is flexible, yet its client_id is always an int16-length nullable string (the schema's `flexibleVersions: none`);
the response header is v1 when flexible, except for ApiVersions, whose response header is always v0 so that a
client that does not yet know our versions can read it (KIP-511).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from io import BytesIO
from typing import Any

from protocol import fastcodec, schema
from protocol.errors import DecodeError, EncodeError, UnsupportedVersionError
from protocol.messages.request_header import REQUEST_HEADER, RequestHeader
from protocol.messages.response_header import RESPONSE_HEADER, ResponseHeader
from protocol.registry import APIS, ApiKey, ApiSpec

_PEEK = struct.Struct(">hhi")
_SIZE = struct.Struct(">i")
_HEADER = struct.Struct(">ii")  # size placeholder, correlation id
_DECODE_FAILURES = (struct.error, ValueError, IndexError, TypeError, OverflowError)


@dataclass(slots=True)
class Request:
    """A decoded request: its header (api key, version, correlation id, client id) and its body dataclass."""

    header: RequestHeader
    body: Any

    @property
    def api_key(self) -> int:
        return self.header.request_api_key

    @property
    def api_version(self) -> int:
        return self.header.request_api_version

    @property
    def correlation_id(self) -> int:
        return self.header.correlation_id


def request_header_version(spec: ApiSpec, version: int) -> int:
    return 2 if spec.flexible(version) else 1


def response_header_version(spec: ApiSpec, version: int) -> int:
    if spec.key == ApiKey.API_VERSIONS:
        return 0
    return 1 if spec.flexible(version) else 0


def peek_header(frame: bytes) -> tuple[int, int, int]:
    """(api_key, api_version, correlation_id) without decoding anything else: enough to answer an error."""
    if len(frame) < _PEEK.size:
        raise DecodeError(f"request header needs {_PEEK.size} bytes, frame has {len(frame)}", path="RequestHeader")
    api_key, api_version, correlation_id = _PEEK.unpack_from(frame)
    return api_key, api_version, correlation_id


def spec_for(api_key: int, api_version: int, correlation_id: int) -> ApiSpec:
    spec = APIS.get(api_key)
    if spec is None or not spec.supports(api_version):
        raise UnsupportedVersionError(api_key, api_version, correlation_id)
    return spec


def _parse(io: BytesIO, decl: Any, version: int) -> Any:
    try:
        return schema.compiled(decl, version).parsefunc(io, None)
    except DecodeError:
        raise
    except _DECODE_FAILURES as exc:  # defence in depth: the primitives should have raised DecodeError already
        raise DecodeError(str(exc), path=decl.name, offset=io.tell()) from None


def _build(io: BytesIO, decl: Any, version: int, value: Any) -> None:
    try:
        schema.compiled(decl, version).buildfunc(value, io, None)
    except EncodeError:
        raise
    except (struct.error, AttributeError, TypeError, ValueError, OverflowError) as exc:
        raise EncodeError(f"{decl.name} v{version}: {exc}") from exc


def decode_request(frame: bytes) -> Request:
    """Decode one request frame (without its size prefix). Raises only DecodeError or UnsupportedVersionError.

    A hot API goes through its generated fast decoder (`protocol.fastcodec`); when that one refuses the frame, the
    construct reference decodes it again, to raise the DecodeError that names the field and offset.
    """
    if len(frame) < _PEEK.size:
        peek_header(frame)  # raises its DecodeError
    api_key, api_version, correlation_id = _PEEK.unpack_from(frame)  # peek_header without a call: hot path
    fast = _FAST_DECODERS.get((api_key, api_version), _UNKNOWN)
    if fast is _UNKNOWN:
        fast = _fast_decoders(api_key, api_version, correlation_id)
    if fast is not None:
        if frame.__class__ is not bytes:
            frame = bytes(frame)
        try:
            header, position = fast[0](frame, 0)
            return Request(header, fast[1](frame, position)[0])
        except fastcodec.FAILURES:
            pass
    return _decode_request_reference(frame, spec_for(api_key, api_version, correlation_id), api_version)


_UNKNOWN: Any = object()
#: (api_key, version) -> (request header decoder, body decoder), or None where the reference decodes.
_FAST_DECODERS: dict[tuple[int, int], tuple[fastcodec.Decoder, fastcodec.Decoder] | None] = {}
#: (api_key, version) -> (body encoder, whether the response header has a tagged-field section).
_FAST_ENCODERS: dict[tuple[int, int], tuple[fastcodec.Encoder, bool] | None] = {}


def _fast_decoders(
    api_key: int, api_version: int, correlation_id: int
) -> tuple[fastcodec.Decoder, fastcodec.Decoder] | None:
    """Looked up once per (api, version) the broker meets; an unsupported one raises and is not cached."""
    spec = spec_for(api_key, api_version, correlation_id)
    decoder = fastcodec.request_decoder(api_key, api_version)
    fast = None
    if decoder is not None:
        fast = (fastcodec.request_header_decoder(request_header_version(spec, api_version)), decoder)
    _FAST_DECODERS[(api_key, api_version)] = fast
    return fast


def _decode_request_reference(frame: bytes, spec: ApiSpec, api_version: int) -> Request:
    io = BytesIO(frame)
    header = _parse(io, REQUEST_HEADER, request_header_version(spec, api_version))
    body = _parse(io, spec.request, api_version)
    return Request(header, body)


def _encode_response_fast(api_key: int, api_version: int, correlation_id: int, body: Any) -> tuple[bytes, list[Any]]:
    """The frame by the API's generated encoder as (bytes, deferred payloads), or raise one of
    `fastcodec.FAILURES` (no fast encoder, or a value the reference must judge)."""
    fast = _FAST_ENCODERS.get((api_key, api_version), _UNKNOWN)
    if fast is _UNKNOWN:
        encoder = fastcodec.response_encoder(api_key, api_version)
        tagged = encoder is not None and response_header_version(APIS[api_key], api_version) == 1
        fast = _FAST_ENCODERS[(api_key, api_version)] = None if encoder is None else (encoder, tagged)
    if fast is None:
        raise fastcodec.Reject
    out = bytearray(_HEADER.pack(0, correlation_id))
    if fast[1]:
        out.append(0)  # a response header without tagged fields
    deferred: list[Any] = []
    fast[0](body, out, deferred)
    size = len(out) - 4
    if deferred:
        size += sum(len(payload) for _, payload in deferred)
    _SIZE.pack_into(out, 0, size)
    return bytes(out), deferred


def encode_response(api_key: int, api_version: int, correlation_id: int, body: Any) -> bytes:
    """A whole response frame, size prefix included, ready for the socket.

    A hot API goes through its generated fast encoder; any value it does not take (one the reference refuses with
    an EncodeError, or a payload that is not bytes) is encoded by the construct reference instead.
    """
    try:
        frame, deferred = _encode_response_fast(api_key, api_version, correlation_id, body)
        if not deferred:
            return frame
    except fastcodec.FAILURES:
        pass
    return _encode_response_reference(api_key, api_version, correlation_id, body)


def _encode_response_reference(api_key: int, api_version: int, correlation_id: int, body: Any) -> bytes:
    spec = APIS[api_key]
    io = BytesIO()
    io.write(b"\0\0\0\0")
    _build(
        io, RESPONSE_HEADER, response_header_version(spec, api_version), ResponseHeader(correlation_id=correlation_id)
    )
    _build(io, spec.response, api_version, body)
    frame = io.getbuffer()
    _SIZE.pack_into(frame, 0, len(frame) - 4)
    del frame
    return io.getvalue()


class _SplicingWriter:
    """A write-only stand-in for BytesIO: bytes accumulate; any other value the codec writes (a payload with a
    known `len()` whose bytes are elsewhere, such as record bytes still in segment files) becomes its own part."""

    def __init__(self) -> None:
        self.parts: list[Any] = []
        self._buffer = BytesIO()

    def write(self, data: Any) -> int:
        if isinstance(data, (bytes, bytearray, memoryview)):
            return self._buffer.write(data)
        self._close_buffer()
        self.parts.append(data)
        return len(data)

    def _close_buffer(self) -> None:
        if self._buffer.tell():
            self.parts.append(self._buffer.getvalue())
            self._buffer = BytesIO()

    def finish(self) -> list[Any]:
        self._close_buffer()
        return self.parts


def encode_response_parts(api_key: int, api_version: int, correlation_id: int, body: Any) -> list[Any]:
    """A whole response frame as parts in wire order: `bytes`, and deferred payloads where the body holds them.

    A bytes-typed field may hold any object with a `len()` (Fetch's record sets, streamed from the segment files);
    it is left out of the encoded bytes, and the caller sends it between the parts around it. The size prefix at the
    start of the first part counts every part.
    """
    try:
        frame, deferred = _encode_response_fast(api_key, api_version, correlation_id, body)
    except fastcodec.FAILURES:
        return _encode_response_parts_reference(api_key, api_version, correlation_id, body)
    parts: list[Any] = []
    start = 0
    for position, payload in deferred:
        if position > start:
            parts.append(frame[start:position])
        parts.append(payload)
        start = position
    if start < len(frame) or not parts:
        parts.append(frame[start:])
    return parts


def _encode_response_parts_reference(api_key: int, api_version: int, correlation_id: int, body: Any) -> list[Any]:
    spec = APIS[api_key]
    io = _SplicingWriter()
    io.write(b"\0\0\0\0")
    _build(
        io,  # type: ignore[arg-type]
        RESPONSE_HEADER,
        response_header_version(spec, api_version),
        ResponseHeader(correlation_id=correlation_id),
    )
    _build(io, spec.response, api_version, body)  # type: ignore[arg-type]
    parts = io.finish()
    head = bytearray(parts[0])
    _SIZE.pack_into(head, 0, sum(len(part) for part in parts) - 4)
    parts[0] = bytes(head)
    return parts


def encode_request(header: RequestHeader, body: Any) -> bytes:
    """A whole request frame, size prefix included (the client side: tools, tests and benchmarks)."""
    spec = spec_for(header.request_api_key, header.request_api_version, header.correlation_id)
    io = BytesIO()
    io.write(b"\0\0\0\0")
    _build(io, REQUEST_HEADER, request_header_version(spec, header.request_api_version), header)
    _build(io, spec.request, header.request_api_version, body)
    frame = io.getbuffer()
    _SIZE.pack_into(frame, 0, len(frame) - 4)
    del frame
    return io.getvalue()


def decode_response(api_key: int, api_version: int, frame: bytes) -> tuple[ResponseHeader, Any]:
    """Decode a response frame (without size prefix) for a request we sent with this key and version."""
    spec = spec_for(api_key, api_version, -1)
    io = BytesIO(frame)
    header = _parse(io, RESPONSE_HEADER, response_header_version(spec, api_version))
    return header, _parse(io, spec.response, api_version)


def decode_body(decl: Any, version: int, data: bytes) -> Any:
    """Decode a bare struct (no header), e.g. a consumer-protocol blob or a `__consumer_offsets` key."""
    io = BytesIO(data)
    value = _parse(io, decl, version)
    if io.tell() != len(data):
        raise DecodeError(f"{len(data) - io.tell()} trailing bytes", path=decl.name, offset=io.tell())
    return value


def encode_body(decl: Any, version: int, value: Any) -> bytes:
    io = BytesIO()
    _build(io, decl, version, value)
    return io.getvalue()
