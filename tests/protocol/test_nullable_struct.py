"""Nullable struct fields, tagged and not, byte for byte as Kafka's generator (MessageDataGenerator) writes them.

Outside the tagged section the marker is an int8: -1 for null, 1 for present (`writeByte`; a reader takes any
negative byte as null). Inside a tagged field it is an unsigned varint: 0 for null, 1 for present
(`writeUnsignedVarint`; a reader takes anything above 0 as present). A tagged field is left out when it equals its
default, and a struct's default is the empty struct unless the schema says "null": so a null value whose default is
the empty struct is written (tag, size 1, 0x00), as Kafka 4.4 does for ConsumerGroupMemberMetadataValue's
ClassicMemberMetadata. Both the interpreted and the compiled codec are checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from io import BytesIO
from typing import Any

import pytest

from protocol import schema
from protocol.declarations import FieldDecl, MessageDecl, StructDecl, Versions
from protocol.errors import DecodeError

ALL = Versions(0, None)


@dataclass(slots=True, kw_only=True)
class Inner:
    x: int = 0
    unknown_tagged_fields: dict[int, bytes] = field(default_factory=dict, repr=False)


@dataclass(slots=True, kw_only=True)
class Outer:
    plain: Inner | None = field(default_factory=Inner)
    tagged: Inner | None = field(default_factory=Inner)
    null_default: Inner | None = None
    unknown_tagged_fields: dict[int, bytes] = field(default_factory=dict, repr=False)


_INNER = StructDecl("Inner", Inner, (FieldDecl("x", "X", "int32", ALL, default=0),))
_OUTER = StructDecl(
    "Outer",
    Outer,
    (
        FieldDecl("plain", "Plain", "struct", ALL, nullable=ALL, default=Inner(), struct=_INNER),
        FieldDecl("tagged", "Tagged", "struct", ALL, nullable=ALL, tagged=ALL, tag=0, default=Inner(), struct=_INNER),
        FieldDecl(
            "null_default", "NullDefault", "struct", ALL, nullable=ALL, tagged=ALL, tag=1, default=None, struct=_INNER
        ),
    ),
)
MESSAGE = MessageDecl("Outer", "data", None, Versions(0, 0), ALL, _OUTER)

PLAIN_NULL = b"\xff"
PLAIN_PRESENT = b"\x01" + b"\x00\x00\x00\x07" + b"\x00"
INNER_7 = b"\x00\x00\x00\x07" + b"\x00"

CASES: list[tuple[str, Outer, bytes]] = [
    ("defaults: only the untagged struct is on the wire", Outer(), b"\x01\x00\x00\x00\x00\x00" + b"\x00"),
    (
        "null untagged: int8 -1; null tagged with an empty-struct default: tag 0, size 1, varint 0",
        Outer(plain=None, tagged=None),
        PLAIN_NULL + b"\x01" + b"\x00\x01\x00",
    ),
    (
        "present: int8 1 untagged, varint 1 inside both tags",
        Outer(plain=Inner(x=7), tagged=Inner(x=7), null_default=Inner(x=7)),
        PLAIN_PRESENT + b"\x02" + b"\x00\x06\x01" + INNER_7 + b"\x01\x06\x01" + INNER_7,
    ),
    (
        "an empty struct in a tag whose default is null is written, marker 1",
        Outer(plain=None, null_default=Inner()),
        PLAIN_NULL + b"\x01" + b"\x01\x06\x01" + b"\x00\x00\x00\x00\x00",
    ),
]


def _codecs() -> list[tuple[str, Any]]:
    return [("interpreted", schema.interpreted(MESSAGE, 0)), ("compiled", schema.compiled(MESSAGE, 0))]


def _encode(codec: Any, value: Outer) -> bytes:
    io = BytesIO()
    codec.buildfunc(value, io, None) if hasattr(codec, "buildfunc") else codec.write(value, io)
    return io.getvalue()


def _decode(codec: Any, data: bytes) -> Any:
    io = BytesIO(data)
    value = codec.parsefunc(io, None) if hasattr(codec, "parsefunc") else codec.read(io)
    assert io.tell() == len(data)
    return value


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
@pytest.mark.parametrize(("value", "data"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bytes_both_ways(mode: str, value: Outer, data: bytes) -> None:
    codec = dict(_codecs())[mode]
    assert _encode(codec, value) == data
    assert _decode(codec, data) == value


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
def test_a_tagged_marker_above_one_is_present_as_in_kafkas_reader(mode: str) -> None:
    """Kafka reads `readUnsignedVarint() <= 0` as null and anything else as present."""
    codec = dict(_codecs())[mode]
    value = _decode(codec, PLAIN_NULL + b"\x01" + b"\x00\x06\x02" + INNER_7)
    assert value.tagged == Inner(x=7)


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
def test_a_truncated_tagged_marker_is_a_decode_error(mode: str) -> None:
    """A tag whose body is an unfinished varint is damaged input, reported with the field's path."""
    codec = dict(_codecs())[mode]
    with pytest.raises(DecodeError, match=r"Outer\.tagged"):
        _decode(codec, PLAIN_NULL + b"\x01" + b"\x00\x01\xff")
