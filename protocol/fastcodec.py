"""What the generated fast codecs (`protocol/messages/fast/`, made by protocol/fastgen.py) call, and how
`protocol.api` finds them.

A fast decoder is `(frame, position) -> (value, position)`; it rejects malformed input by raising `Reject` (or an
IndexError/struct.error where it ran off the end of the frame, which `FAILURES` lists) and leaves the explaining
to the construct reference, which names the field and offset in its DecodeError. A fast encoder is
`(value, bytearray, deferred)`: it appends the value's bytes, and for a bytes field holding a payload that is not
bytes (Fetch's record sets still in segment files) it appends `(position, payload)` to `deferred` instead.

The generated modules are imported on the first request of their API, so the broker's start pays for none of them.
"""

from __future__ import annotations

import importlib
import struct
from collections.abc import Callable
from typing import Any

from protocol.errors import DecodeError, EncodeError
from protocol.varint import read_uvarint, write_uvarint

#: What a value of a bytes field may be to be copied into the encoded bytes (as `BytesIO.write` accepts).
BUFFERS = (bytes, bytearray, memoryview)

Decoder = Callable[[bytes, int], tuple[Any, int]]
Encoder = Callable[[Any, bytearray, list[Any]], None]


class Reject(Exception):
    """A fast codec refuses its input; the reference codec then raises the error that says why."""


#: Every exception a fast codec may raise on bad input or an unencodable value: the caller falls back to the
#: reference on any of them. DecodeError comes from `protocol.varint` (a varint that is too long or overflows);
#: ValueError covers a str that cannot be encoded (a lone surrogate), EncodeError a varint out of range.
FAILURES = (
    Reject,
    DecodeError,
    EncodeError,
    IndexError,
    struct.error,
    ValueError,
    TypeError,
    AttributeError,
    OverflowError,
    KeyError,
)


def uvarint(b: bytes, p: int) -> tuple[int, int]:
    """An unsigned varint of more than one byte (the generated code reads the one-byte case itself)."""
    return read_uvarint(b, p, "uvarint")


def read_tags(b: bytes, p: int, count: int) -> tuple[dict[int, bytes], int]:
    """A tagged-field section's `count` entries as raw {tag: bytes}, as `protocol.primitives.rd_tags` reads them:
    any order, a repeated tag overriding. Every entry takes at least 2 bytes or fails, so no count can spin."""
    tags: dict[int, bytes] = {}
    for _ in range(count):
        tag = b[p]
        p += 1
        if tag > 127:
            tag, p = read_uvarint(b, p - 1)
        size = b[p]
        p += 1
        if size > 127:
            size, p = read_uvarint(b, p - 1)
        end = p + size
        if end > len(b):
            raise Reject
        tags[tag] = b[p:end]
        p = end
    return tags, p


def tag_value(data: bytes, decode: Decoder) -> Any:
    """One known tag's value; its bytes must hold exactly that value."""
    value, end = decode(data, 0)
    if end != len(data):
        raise Reject
    return value


def tag_bytes(value: Any, encode: Encoder) -> bytes:
    """One known tag's value encoded on its own (its size goes before it on the wire)."""
    out = bytearray()
    deferred: list[Any] = []
    encode(value, out, deferred)
    if deferred:  # the reference cannot splice a payload inside a tag either
        raise Reject
    return bytes(out)


def write_tags(w: bytearray, known: list[tuple[int, bytes]], unknown: dict[int, bytes]) -> None:
    """A tagged-field section, as `protocol.primitives.wr_tags` writes it (ascending tags)."""
    if not known and not unknown:
        w.append(0)
        return
    entries = sorted([*known, *unknown.items()]) if unknown else known
    w += write_uvarint(len(entries))
    for tag, data in entries:
        w += write_uvarint(tag)
        w += write_uvarint(len(data))
        w += data


_MODULES: dict[int, Any] = {}


def _module(api_key: int) -> Any:
    """The generated module of an API, imported on first use; None for an API without fast codecs."""
    module = _MODULES.get(api_key)
    if module is None:
        from protocol.messages.fast import MODULES

        name = MODULES.get(api_key)
        module = _MODULES[api_key] = importlib.import_module(f"protocol.messages.fast.{name}") if name else False
    return module or None


def request_decoder(api_key: int, version: int) -> Decoder | None:
    module = _module(api_key)
    return None if module is None else module.DECODERS.get(version)


def response_encoder(api_key: int, version: int) -> Encoder | None:
    module = _module(api_key)
    return None if module is None else module.ENCODERS.get(version)


def request_header_decoder(version: int) -> Decoder:
    from protocol.messages.fast.request_header import DECODERS

    return DECODERS[version]  # type: ignore[no-any-return]
