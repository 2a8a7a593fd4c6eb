"""Kafka's wire primitives as construct classes that compile to straight-line Python.

Stock construct has no Kafka types (compact strings, nullable arrays, tagged fields), its VarInt is unbounded and
never inlined, and its compiled code accepts truncated input silently. These classes fix all three: every one has
an interpreted `_parse`/`_build` and an `_emitparse`/`_emitbuild` that compiles to a call of the small helper
functions below, so `compile()` links nothing back to interpreted code. Every helper checks lengths against what
the frame holds before reading, caps varints at 5 bytes, and raises only `DecodeError` with the field path (a
static string baked in at compile time, so tracking it costs nothing) and the byte offset.

Values travel as plain Python objects: ints, str, bytes, `uuid.UUID`, lists, and the generated dataclasses.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from io import BytesIO
from typing import Any, ClassVar

from construct import Construct

from protocol.errors import DecodeError, EncodeError
from protocol.varint import read_uvarint, write_uvarint

ZERO_UUID = uuid.UUID(int=0)
# A value's position in emitted code is always a Python expression; the helpers below are the only names it calls.
HELPER_NAMES = [
    "rd_int8",
    "rd_int16",
    "rd_uint16",
    "rd_int32",
    "rd_uint32",
    "rd_int64",
    "rd_float64",
    "rd_bool",
    "rd_uvarint",
    "rd_uuid",
    "rd_string",
    "rd_bytes",
    "rd_count",
    "rd_present",
    "rd_tags",
    "parse_tag_value",
    "wr_int8",
    "wr_int16",
    "wr_uint16",
    "wr_int32",
    "wr_uint32",
    "wr_int64",
    "wr_float64",
    "wr_bool",
    "wr_uvarint",
    "wr_uuid",
    "wr_string",
    "wr_bytes",
    "wr_count",
    "wr_present",
    "wr_tags",
    "tag_value_bytes",
    "absent_field_error",
    "ZERO_UUID",
    "BytesIO",
]


def _fail(io: BytesIO, path: str, message: str) -> DecodeError:
    return DecodeError(message, path=path, offset=io.tell())


def _fixed(fmt: str) -> tuple[Callable[[BytesIO, str], Any], Callable[[BytesIO, Any], None]]:
    """One reader/writer pair per fixed-width type, so the hot path is a single read and unpack."""
    packer = struct.Struct(fmt)
    size = packer.size
    unpack = packer.unpack
    pack = packer.pack

    def read(io: BytesIO, path: str) -> Any:
        data = io.read(size)
        if len(data) != size:
            raise DecodeError(f"need {size} bytes, have {len(data)}", path=path, offset=io.tell() - len(data))
        return unpack(data)[0]

    def write(io: BytesIO, value: Any) -> None:
        io.write(pack(value))

    return read, write


rd_int8, wr_int8 = _fixed(">b")
rd_int16, wr_int16 = _fixed(">h")
rd_uint16, wr_uint16 = _fixed(">H")
rd_int32, wr_int32 = _fixed(">i")
rd_uint32, wr_uint32 = _fixed(">I")
rd_int64, wr_int64 = _fixed(">q")
rd_float64, wr_float64 = _fixed(">d")
_UNPACK_I16 = struct.Struct(">h").unpack
_UNPACK_I32 = struct.Struct(">i").unpack
_PACK_I16 = struct.Struct(">h").pack
_PACK_I32 = struct.Struct(">i").pack


def rd_bool(io: BytesIO, path: str) -> bool:
    data = io.read(1)
    if not data:
        raise _fail(io, path, "need 1 byte, have 0")
    return data != b"\x00"


def wr_bool(io: BytesIO, value: bool) -> None:
    io.write(b"\x01" if value else b"\x00")


def rd_uvarint(io: BytesIO, path: str) -> int:
    """Kafka's unsigned varint: LEB128, at most 5 bytes (a 32-bit value), as `ByteUtils.readUnsignedVarint`.

    The one-byte case (almost every count and length) is read here; longer ones go to `protocol.varint`, the one
    LEB128 decoder, over the stream's buffer without copying it.
    """
    data = io.read(1)
    if data and data[0] < 0x80:
        return data[0]
    start = io.tell() - len(data)
    with io.getbuffer() as view:
        value, end = read_uvarint(view, start, path)
    io.seek(end)
    return value


def wr_uvarint(io: BytesIO, value: int) -> None:
    io.write(write_uvarint(value))


def rd_uuid(io: BytesIO, path: str) -> uuid.UUID:
    data = io.read(16)
    if len(data) != 16:
        raise _fail(io, path, f"uuid: need 16 bytes, have {len(data)}")
    return uuid.UUID(bytes=data)


def wr_uuid(io: BytesIO, value: uuid.UUID) -> None:
    io.write(value.bytes)


def _rd_length(io: BytesIO, compact: bool, wide: bool, path: str) -> int:
    """Length of a string/bytes/array: -1 for null, else checked against the bytes left in the frame."""
    if compact:
        length = rd_uvarint(io, path) - 1
    elif wide:
        data = io.read(4)
        if len(data) != 4:
            raise _fail(io, path, "length: need 4 bytes")
        length = _UNPACK_I32(data)[0]
    else:
        data = io.read(2)
        if len(data) != 2:
            raise _fail(io, path, "length: need 2 bytes")
        length = _UNPACK_I16(data)[0]
    if length < -1:
        raise _fail(io, path, f"negative length {length}")
    return length


def _rd_blob(io: BytesIO, compact: bool, nullable: bool, wide: bool, path: str) -> bytes | None:
    length = _rd_length(io, compact, wide, path)
    if length < 0:
        if not nullable:
            raise _fail(io, path, "null in a non-nullable field")
        return None
    data = io.read(length)
    if len(data) != length:
        raise DecodeError(f"need {length} bytes, have {len(data)}", path=path, offset=io.tell() - len(data))
    return data


def rd_string(io: BytesIO, compact: bool, nullable: bool, path: str) -> str | None:
    """A string field, decoded as Kafka decodes it: Java's `new String(bytes, UTF_8)` replaces each malformed
    sequence with U+FFFD instead of failing, so a client sending a Latin-1 group id is served, not disconnected."""
    data = _rd_blob(io, compact, nullable, False, path)
    if data is None:
        return None
    return data.decode("utf-8", "replace")


def rd_bytes(io: BytesIO, compact: bool, nullable: bool, path: str) -> bytes | None:
    return _rd_blob(io, compact, nullable, True, path)


def _wr_length(io: BytesIO, length: int, compact: bool, wide: bool) -> None:
    if compact:
        io.write(write_uvarint(length + 1))
    elif wide:
        io.write(_PACK_I32(length))
    else:
        io.write(_PACK_I16(length))


def wr_string(io: BytesIO, value: str | None, compact: bool, nullable: bool, path: str) -> None:
    if value is None:
        if not nullable:
            raise EncodeError(f"{path}: null in a non-nullable string")
        _wr_length(io, -1, compact, False)
        return
    data = value.encode()
    if not compact and len(data) > 0x7FFF:
        raise EncodeError(f"{path}: string longer than 32767 bytes")
    _wr_length(io, len(data), compact, False)
    io.write(data)


def wr_bytes(io: BytesIO, value: bytes | None, compact: bool, nullable: bool, path: str) -> None:
    if value is None:
        if not nullable:
            raise EncodeError(f"{path}: null in non-nullable bytes")
        _wr_length(io, -1, compact, True)
        return
    _wr_length(io, len(value), compact, True)
    io.write(value)


def rd_count(io: BytesIO, compact: bool, nullable: bool, min_size: int, path: str) -> int:
    """Array element count, refused when the remaining bytes cannot possibly hold that many elements."""
    count = _rd_length(io, compact, True, path)
    if count < 0:
        if not nullable:
            raise _fail(io, path, "null in a non-nullable array")
        return -1
    if count:
        position = io.tell()
        remaining = len(io.getbuffer()) - position
        if count * max(min_size, 1) > remaining:
            raise _fail(io, path, f"array of {count} elements cannot fit in {remaining} bytes")
    return count


def wr_count(io: BytesIO, value: list[Any] | None, compact: bool, nullable: bool, path: str) -> None:
    if value is None:
        if not nullable:
            raise EncodeError(f"{path}: null in a non-nullable array")
        _wr_length(io, -1, compact, True)
    else:
        _wr_length(io, len(value), compact, True)


def rd_present(io: BytesIO, tagged: bool, path: str) -> bool:
    """A nullable struct's marker: an int8 in line (negative = null), an unsigned varint in a tag (0 = null)."""
    if tagged:
        return rd_uvarint(io, path) > 0
    return bool(rd_int8(io, path) >= 0)


def wr_present(io: BytesIO, present: bool, tagged: bool) -> None:
    if tagged:
        io.write(b"\x01" if present else b"\x00")  # the unsigned varints 1 and 0
    else:
        io.write(b"\x01" if present else b"\xff")  # the int8s 1 and -1


def rd_tags(io: BytesIO, path: str) -> dict[int, bytes]:
    """A tagged-field section as raw {tag: bytes}; the struct decodes the tags it knows and keeps the rest."""
    count = rd_uvarint(io, path)
    if not count:
        return {}
    tags: dict[int, bytes] = {}
    for _ in range(count):  # every entry consumes at least 2 bytes or fails, so a huge count cannot spin
        tag = rd_uvarint(io, path)  # any order is accepted and a repeated tag overrides, as Kafka's readers do
        size = rd_uvarint(io, path)
        data = io.read(size)
        if len(data) != size:
            raise _fail(io, path, f"tagged field {tag}: need {size} bytes, have {len(data)}")
        tags[tag] = data
    return tags


def parse_tag_value(data: bytes, parse: Callable[[BytesIO], Any], path: str) -> Any:
    """Decode one known tag's bytes; the tag's size must match its content exactly."""
    io = BytesIO(data)
    value = parse(io)
    if io.tell() != len(data):
        raise DecodeError(f"tagged field has {len(data) - io.tell()} trailing bytes", path=path, offset=io.tell())
    return value


def tag_value_bytes(value: Any, build: Callable[[Any, BytesIO], Any]) -> bytes:
    io = BytesIO()
    build(value, io)
    return io.getvalue()


def wr_tags(io: BytesIO, known: list[tuple[int, bytes]], unknown: dict[int, bytes]) -> None:
    if not known and not unknown:
        io.write(b"\x00")
        return
    entries = sorted([*known, *unknown.items()]) if unknown else known
    io.write(write_uvarint(len(entries)))
    for tag, data in entries:
        io.write(write_uvarint(tag))
        io.write(write_uvarint(len(data)))
        io.write(data)


def absent_field_error(path: str, version: int) -> EncodeError:
    return EncodeError(f"{path} has a non-default value but does not exist in version {version}")


class KafkaType(Construct):  # type: ignore[misc]
    """Base of our primitives: the emitted code and the interpreted code call the same helpers.

    `emit_parse(code)` returns an expression reading one value from `io`; `emit_build(code, value)` returns a
    statement-expression writing the expression `value` to `io`. Structs and arrays define named functions.
    """

    min_size: int = 0

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def emit_parse(self, code: Any) -> str:
        raise NotImplementedError

    def emit_build(self, code: Any, value: str) -> str:
        raise NotImplementedError

    def _emitparse(self, code: Any) -> str:
        _import_helpers(code)
        return self.emit_parse(code)

    def _emitbuild(self, code: Any) -> str:
        _import_helpers(code)
        return self.emit_build(code, "obj")

    def read(self, io: BytesIO) -> Any:
        raise NotImplementedError

    def write(self, value: Any, io: BytesIO) -> None:
        raise NotImplementedError

    def _parse(self, stream: BytesIO, context: Any, path: str) -> Any:
        return self.read(stream)

    def _build(self, obj: Any, stream: BytesIO, context: Any, path: str) -> Any:
        self.write(obj, stream)
        return obj


def _import_helpers(code: Any) -> None:
    code.append(f"from protocol.primitives import {', '.join(HELPER_NAMES)}")


class Fixed(KafkaType):
    """bool, int8..int64, uint16/32, float64, uuid: fixed width, never null."""

    SIZES: ClassVar[dict[str, int]] = {
        "bool": 1,
        "int8": 1,
        "int16": 2,
        "uint16": 2,
        "int32": 4,
        "uint32": 4,
        "int64": 8,
        "float64": 8,
        "uuid": 16,
    }

    def __init__(self, kind: str, path: str) -> None:
        super().__init__(path)
        self.kind = kind
        self.min_size = self.SIZES[kind]
        self._reader = globals()[f"rd_{kind}"]
        self._writer = globals()[f"wr_{kind}"]

    def emit_parse(self, code: Any) -> str:
        return f"rd_{self.kind}(io, {self.path!r})"

    def emit_build(self, code: Any, value: str) -> str:
        return f"wr_{self.kind}(io, {value})"

    def read(self, io: BytesIO) -> Any:
        return self._reader(io, self.path)

    def write(self, value: Any, io: BytesIO) -> None:
        self._writer(io, value)


class Blob(KafkaType):
    """string / bytes / records: int16 (string) or int32 (bytes) length, or a compact uvarint length+1."""

    def __init__(self, kind: str, compact: bool, nullable: bool, path: str) -> None:
        super().__init__(path)
        self.func = "string" if kind == "string" else "bytes"
        self.compact = compact
        self.nullable = nullable
        self.min_size = 1 if compact else (2 if kind == "string" else 4)

    def _args(self) -> str:
        return f"{self.compact}, {self.nullable}, {self.path!r}"

    def emit_parse(self, code: Any) -> str:
        return f"rd_{self.func}(io, {self._args()})"

    def emit_build(self, code: Any, value: str) -> str:
        return f"wr_{self.func}(io, {value}, {self._args()})"

    def read(self, io: BytesIO) -> Any:
        reader = rd_string if self.func == "string" else rd_bytes
        return reader(io, self.compact, self.nullable, self.path)

    def write(self, value: Any, io: BytesIO) -> None:
        writer = wr_string if self.func == "string" else wr_bytes
        writer(io, value, self.compact, self.nullable, self.path)


class Array(KafkaType):
    """int32 count (or compact uvarint count+1), -1/0 meaning null where the version allows it."""

    def __init__(self, element: KafkaType, compact: bool, nullable: bool, path: str) -> None:
        super().__init__(path)
        self.element = element
        self.compact = compact
        self.nullable = nullable
        self.min_size = 1 if compact else 4

    def emit_parse(self, code: Any) -> str:
        cached = code.parsercache.get(("array", id(self)))
        if cached is None:
            name = f"parse_array_{code.allocateId()}"
            element = self.element.emit_parse(code)
            code.append(f"""
                def {name}(io):
                    count = rd_count(io, {self.compact}, {self.nullable}, {self.element.min_size}, {self.path!r})
                    if count < 0:
                        return None
                    return [{element} for _ in range(count)]
            """)
            cached = code.parsercache[("array", id(self))] = name
        return f"{cached}(io)"

    def emit_build(self, code: Any, value: str) -> str:
        cached = code.buildercache.get(("array", id(self)))
        if cached is None:
            name = f"build_array_{code.allocateId()}"
            element = self.element.emit_build(code, "item")
            code.append(f"""
                def {name}(value, io):
                    wr_count(io, value, {self.compact}, {self.nullable}, {self.path!r})
                    if value is not None:
                        for item in value:
                            {element}
            """)
            cached = code.buildercache[("array", id(self))] = name
        return f"{cached}({value}, io)"

    def read(self, io: BytesIO) -> Any:
        count = rd_count(io, self.compact, self.nullable, self.element.min_size, self.path)
        if count < 0:
            return None
        return [self.element.read(io) for _ in range(count)]

    def write(self, value: Any, io: BytesIO) -> None:
        wr_count(io, value, self.compact, self.nullable, self.path)
        for item in value or ():
            self.element.write(item, io)


class NullableStruct(KafkaType):
    """A struct-typed field that may be null, behind a presence marker written the way Kafka's generator does.

    In line the marker is an int8, -1 for null and 1 for present; inside a tagged field it is an unsigned varint,
    0 for null and 1 for present (`tagged`). Kafka's readers treat any negative int8, or a varint of 0, as null.
    """

    def __init__(self, inner: KafkaType, path: str, *, tagged: bool = False) -> None:
        super().__init__(path)
        self.inner = inner
        self.tagged = tagged
        self.min_size = 1

    def emit_parse(self, code: Any) -> str:
        return f"({self.inner.emit_parse(code)} if rd_present(io, {self.tagged}, {self.path!r}) else None)"

    def emit_build(self, code: Any, value: str) -> str:
        inner = self.inner.emit_build(code, value)
        null, present = f"wr_present(io, False, {self.tagged})", f"wr_present(io, True, {self.tagged})"
        return f"({null} if {value} is None else ({present}, {inner}))"

    def read(self, io: BytesIO) -> Any:
        return self.inner.read(io) if rd_present(io, self.tagged, self.path) else None

    def write(self, value: Any, io: BytesIO) -> None:
        wr_present(io, value is not None, self.tagged)
        if value is not None:
            self.inner.write(value, io)


class Struct(KafkaType):
    """A Kafka struct decoded straight into its generated dataclass (no intermediate Container).

    `fields` are the fields on the wire in this version, in order; `tagged` maps tag -> (attribute, type, default)
    for the tagged fields of this version (None when the version is not flexible, so no tag section exists);
    `absent` are the fields this version lacks, with their default and whether a non-default value may be
    dropped silently when encoding (Kafka's `ignorable`).
    """

    def __init__(
        self,
        cls: type,
        fields: list[tuple[str, KafkaType]],
        tagged: dict[int, tuple[str, KafkaType, Any]] | None,
        absent: list[tuple[str, Any, bool]],
        version: int,
        path: str,
    ) -> None:
        super().__init__(path)
        self.cls = cls
        self.fields = fields
        self.tagged = tagged
        self.absent = absent
        self.version = version
        self.min_size = sum(t.min_size for _, t in fields) + (1 if tagged is not None else 0)

    def _class_ref(self, code: Any) -> str:
        alias = f"C{id(self.cls)}"
        code.append(f"from {self.cls.__module__} import {self.cls.__name__} as {alias}")
        return alias

    def emit_parse(self, code: Any) -> str:
        cached = code.parsercache.get(("struct", id(self)))
        if cached is None:
            name = f"parse_struct_{code.allocateId()}"
            alias = self._class_ref(code)
            lines = [f"def {name}(io):"]
            args = []
            for i, (attr, kind) in enumerate(self.fields):
                lines.append(f"    v{i} = {kind.emit_parse(code)}")
                args.append(f"{attr}=v{i}")
            lines.append(f"    obj = {alias}({', '.join(args)})")
            if self.tagged is not None:
                lines.append(f"    tags = rd_tags(io, {self.path + '._tagged_fields'!r})")
                lines.append("    if tags:")
                for tag, (attr, kind, _default) in self.tagged.items():
                    sub = f"parse_tag_{code.allocateId()}"
                    code.append(f"""
                        def {sub}(io):
                            return {kind.emit_parse(code)}
                    """)
                    lines.append(f"        if {tag} in tags:")
                    lines.append(f"            obj.{attr} = parse_tag_value(tags.pop({tag}), {sub}, {kind.path!r})")
                lines.append("        obj.unknown_tagged_fields = tags")
            lines.append("    return obj")
            code.append("\n".join(lines))
            cached = code.parsercache[("struct", id(self))] = name
        return f"{cached}(io)"

    def emit_build(self, code: Any, value: str) -> str:
        cached = code.buildercache.get(("struct", id(self)))
        if cached is None:
            name = f"build_struct_{code.allocateId()}"
            lines = [f"def {name}(obj, io):"]
            for attr, default, ignorable in self.absent:
                if not ignorable:
                    lines.append(f"    if obj.{attr} != {_default_expr(code, default)}:")
                    lines.append(f"        raise absent_field_error({self.path + '.' + attr!r}, {self.version})")
            for attr, kind in self.fields:
                lines.append(f"    {kind.emit_build(code, 'obj.' + attr)}")
            if self.tagged is not None:
                lines.append("    known = []")
                for tag, (attr, kind, default) in self.tagged.items():
                    sub = f"build_tag_{code.allocateId()}"
                    code.append(f"""
                        def {sub}(value, io):
                            {kind.emit_build(code, "value")}
                    """)
                    lines.append(f"    if obj.{attr} != {_default_expr(code, default)}:")
                    lines.append(f"        known.append(({tag}, tag_value_bytes(obj.{attr}, {sub})))")
                lines.append("    wr_tags(io, known, obj.unknown_tagged_fields)")
            lines.append("    return obj")
            code.append("\n".join(lines))
            cached = code.buildercache[("struct", id(self))] = name
        return f"{cached}({value}, io)"

    def read(self, io: BytesIO) -> Any:
        obj = self.cls(**{attr: kind.read(io) for attr, kind in self.fields})
        if self.tagged is not None:
            tags = rd_tags(io, self.path + "._tagged_fields")
            for tag, (attr, kind, _default) in self.tagged.items():
                if tag in tags:
                    setattr(obj, attr, parse_tag_value(tags.pop(tag), kind.read, kind.path))
            obj.unknown_tagged_fields = tags
        return obj

    def write(self, value: Any, io: BytesIO) -> None:
        for attr, default, ignorable in self.absent:
            if not ignorable and getattr(value, attr) != default:
                raise absent_field_error(f"{self.path}.{attr}", self.version)
        for attr, kind in self.fields:
            kind.write(getattr(value, attr), io)
        if self.tagged is not None:
            known = [
                (tag, tag_value_bytes(getattr(value, attr), kind.write))
                for tag, (attr, kind, default) in self.tagged.items()
                if getattr(value, attr) != default
            ]
            wr_tags(io, known, value.unknown_tagged_fields)


def _default_expr(code: Any, default: Any) -> str:
    """A Python expression equal to a field's default, for the emitted absent/tagged-field comparisons."""
    if isinstance(default, uuid.UUID):
        return "ZERO_UUID" if default == ZERO_UUID else f"__import__('uuid').UUID({str(default)!r})"
    if isinstance(default, (int, float, str, bytes, bool, list)) or default is None:
        return repr(default)
    cls = type(default)
    alias = f"C{id(cls)}"
    code.append(f"from {cls.__module__} import {cls.__name__} as {alias}")
    return f"{alias}()"
