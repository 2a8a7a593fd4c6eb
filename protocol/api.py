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

from protocol import schema
from protocol.errors import DecodeError, EncodeError, UnsupportedVersionError
from protocol.messages.request_header import REQUEST_HEADER, RequestHeader
from protocol.messages.response_header import RESPONSE_HEADER, ResponseHeader
from protocol.registry import APIS, ApiKey, ApiSpec

_PEEK = struct.Struct(">hhi")
_SIZE = struct.Struct(">i")
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
    """Decode one request frame (without its size prefix). Raises only DecodeError or UnsupportedVersionError."""
    api_key, api_version, correlation_id = peek_header(frame)
    spec = spec_for(api_key, api_version, correlation_id)
    io = BytesIO(frame)
    header = _parse(io, REQUEST_HEADER, request_header_version(spec, api_version))
    body = _parse(io, spec.request, api_version)
    return Request(header, body)


def encode_response(api_key: int, api_version: int, correlation_id: int, body: Any) -> bytes:
    """A whole response frame, size prefix included, ready for the socket."""
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
