"""Version-prefixed blobs: an int16 version, then a struct encoded at that version.

Kafka uses this shape for the consumer protocol's JoinGroup/SyncGroup metadata and for `__consumer_offsets` keys
and values. One pair of helpers serves both.
"""

from __future__ import annotations

import struct
from io import BytesIO
from typing import Any

from protocol import schema
from protocol.declarations import MessageDecl
from protocol.errors import DecodeError

_VERSION = struct.Struct(">h")


def read_version(data: bytes, name: str) -> int:
    if len(data) < 2:
        raise DecodeError(f"need a 2-byte version, have {len(data)} bytes", path=name, offset=0)
    version: int = _VERSION.unpack_from(data)[0]
    return version


def decode_versioned(decl: MessageDecl, data: bytes, *, clamp: bool, strict_end: bool) -> tuple[int, Any]:
    """(version, value). With `clamp`, a newer version is read as our newest (its extra fields are a suffix)."""
    version = read_version(data, decl.name)
    assert decl.valid.hi is not None
    if version < decl.valid.lo or (version > decl.valid.hi and not clamp):
        raise DecodeError(f"unknown version {version}", path=decl.name, offset=0)
    io = BytesIO(data)
    io.seek(2)
    value = schema.compiled(decl, min(version, decl.valid.hi)).parsefunc(io, None)
    if strict_end and io.tell() != len(data):
        raise DecodeError(f"{len(data) - io.tell()} trailing bytes", path=decl.name, offset=io.tell())
    return version, value


def encode_versioned(decl: MessageDecl, version: int, value: Any) -> bytes:
    io = BytesIO()
    io.write(_VERSION.pack(version))
    schema.compiled(decl, version).buildfunc(value, io, None)
    return io.getvalue()
