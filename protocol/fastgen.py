"""Generate `protocol/messages/fast/`: straight-line codecs for the hot APIs (run by `make codegen` after the
message modules, see `protocol.codegen.main`).

The construct codec (`protocol.schema`) is the reference: it is general, and every field crosses a helper call
and a `BytesIO`. Here the same per-version field tree (`schema.interpreted`) is walked once more, at codegen time,
and written out as plain functions over `(bytes, position)` for decoding and a `bytearray` for encoding: runs of
fixed-width fields become one precompiled `struct.Struct`, lengths and counts are read inline (the one-byte
varint in line, longer ones through `protocol.varint`), and nothing is compiled at import. Because the tree is the
reference's own, the two cannot disagree on which fields a version has, which are tagged, nullable or compact.

Division of labour with the reference (`protocol.api`): a fast decoder only decides accept or reject. It checks
every length and count against the bytes left before slicing or allocating, as the reference does, and on any
malformed input it raises (`protocol.fastcodec.Reject`, or an `IndexError`/`struct.error` at the end of the frame);
the caller then decodes the frame again with the reference, which raises the DecodeError naming the field and
offset. A fast encoder likewise leaves every error (absent non-default field, null in a non-nullable field, a
value out of range) to the reference, which raises the same EncodeError as before.
"""

from __future__ import annotations

import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protocol import schema
from protocol.codegen import write_package
from protocol.declarations import MessageDecl
from protocol.primitives import ZERO_UUID, Array, Blob, Fixed, KafkaType, NullableStruct, Struct

FAST_DIR = Path(__file__).parent / "messages" / "fast"

#: The hot APIs (issue #18): request decoders and response encoders at every version the registry serves.
HOT_APIS = (
    "HEARTBEAT",
    "OFFSET_COMMIT",
    "OFFSET_FETCH",
    "JOIN_GROUP",
    "SYNC_GROUP",
    "PRODUCE",
    "FETCH",
    "METADATA",
    "API_VERSIONS",
)

_FORMATS = {
    "bool": "?",
    "int8": "b",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "float64": "d",
    "uuid": "16s",
}


@dataclass
class _Module:
    """One generated module's functions, the `struct.Struct`s they share, and the classes they construct."""

    functions: list[str] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)
    classes: dict[type, str] = field(default_factory=dict)
    decoders: dict[int, str] = field(default_factory=dict)
    encoders: dict[int, str] = field(default_factory=dict)
    counter: int = 0

    bodies: dict[str, str] = field(default_factory=dict)
    constants: dict[str, str] = field(default_factory=dict)

    def function(self, prefix: str, code: _Code) -> str:
        """Add the function in `code` (named `NAME` in its first line), or reuse an identical one: most versions
        of an API share most of their structs' layouts."""
        text = "\n".join(code.lines)
        name = self.bodies.get(text)
        if name is None:
            self.counter += 1
            name = self.bodies[text] = f"_{prefix}{self.counter}"
            self.functions.append(text.replace("NAME", name, 1))
        return name

    def packer(self, fmt: str) -> str:
        """The module-level name of `struct.Struct('>' + fmt)`."""
        if fmt not in self.formats:
            self.formats[fmt] = f"_S{len(self.formats)}"
        return self.formats[fmt]

    def cls(self, cls: type) -> str:
        """The local name of a message class: its own, unless another module's class already took it."""
        if cls not in self.classes:
            taken = set(self.classes.values()) | _MODULE_NAMES
            alias = cls.__name__
            while alias in taken:
                alias += "_"
            self.classes[cls] = alias
        return self.classes[cls]

    def default(self, value: Any) -> str:
        """A Python expression equal to a field's default (what an absent or omitted tagged field compares to)."""
        if isinstance(value, uuid.UUID):
            if value != ZERO_UUID:
                raise ValueError(f"no expression for default {value}")
            return "ZERO_UUID"
        if isinstance(value, (int, float, str, bytes, list)) or value is None:
            return repr(value)
        return f"{self.cls(type(value))}()"

    def compared_default(self, value: Any) -> str:
        """The same, for a comparison only: a struct default is then one module-level instance, not one built per
        comparison (Fetch's tagged structs are compared on every partition)."""
        expression = self.default(value)
        if not expression.endswith("()"):
            return expression
        if expression not in self.constants:
            self.constants[expression] = f"_DEFAULT{len(self.constants)}"
        return self.constants[expression]


#: The names a generated module defines or imports besides the message classes (which must not shadow them).
_MODULE_NAMES = frozenset(
    {"Any", "Struct", "UUID", "ZERO_UUID", "BUFFERS", "Reject", "read_tags", "tag_bytes", "tag_value", "write_tags"}
    | {"write_uvarint", "DECODERS", "ENCODERS"}
)


class _Code:
    """Indented lines of one function body, and fresh local names."""

    def __init__(self, module: _Module) -> None:
        self.module = module
        self.lines: list[str] = []
        self.counter = 0

    def var(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def add(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)


# --- decoding ------------------------------------------------------------------------------------------------


def _read_length(code: _Code, ind: int, var: str, compact: bool, wide: bool, nullable: bool) -> None:
    """`var` = a length or count: compact (uvarint - 1, never below -1) or an int16/int32 (checked >= -1 where
    null is allowed; the caller refuses any negative one where it is not)."""
    if compact:
        code.add(ind, f"{var} = b[p]")
        code.add(ind, "p += 1")
        code.add(ind, f"if {var} > 127:")
        code.add(ind + 1, f"{var}, p = _uvarint(b, p - 1)")
        code.add(ind, f"{var} -= 1")
    else:
        packer = code.module.packer("i" if wide else "h")
        code.add(ind, f"({var},) = {packer}.unpack_from(b, p)")
        code.add(ind, f"p += {4 if wide else 2}")
        if nullable:
            code.add(ind, f"if {var} < -1:")
            code.add(ind + 1, "raise Reject")


def _read_blob(code: _Code, ind: int, kind: Blob, var: str) -> None:
    n = code.var("n")
    _read_length(code, ind, n, kind.compact, kind.func == "bytes", kind.nullable)
    code.add(ind, f"if {n} < 0:")
    code.add(ind + 1, f"{var} = None" if kind.nullable else "raise Reject")
    code.add(ind, "else:")
    end = code.var("e")
    code.add(ind + 1, f"{end} = p + {n}")
    code.add(ind + 1, f"if {end} > len(b):")
    code.add(ind + 2, "raise Reject")
    if kind.func == "string":
        # strict UTF-8 first: a third faster than with an error handler, and the same str whenever it succeeds;
        # malformed bytes become U+FFFD as Java's `new String(bytes, UTF_8)` makes them (primitives.rd_string)
        code.add(ind + 1, "try:")
        code.add(ind + 2, f"{var} = b[p:{end}].decode()")
        code.add(ind + 1, "except UnicodeDecodeError:")
        code.add(ind + 2, f"{var} = b[p:{end}].decode('utf-8', 'replace')")
    else:
        code.add(ind + 1, f"{var} = b[p:{end}]")
    code.add(ind + 1, f"p = {end}")


def _read_fixed_run(code: _Code, ind: int, kinds: list[Fixed], targets: list[str]) -> None:
    fmt = "".join(_FORMATS[k.kind] for k in kinds)
    packer = code.module.packer(fmt)
    size = sum(k.min_size for k in kinds)
    code.add(ind, f"({', '.join(targets)},) = {packer}.unpack_from(b, p)")
    code.add(ind, f"p += {size}")
    for kind, target in zip(kinds, targets, strict=True):
        if kind.kind == "uuid":
            code.add(ind, f"{target} = UUID(bytes={target})")


def _read_value(code: _Code, ind: int, kind: KafkaType, var: str) -> None:
    """Lines reading one value of `kind` at `p` into `var`, advancing `p`."""
    if isinstance(kind, Fixed):
        _read_fixed_run(code, ind, [kind], [var])
    elif isinstance(kind, Blob):
        _read_blob(code, ind, kind, var)
    elif isinstance(kind, Struct):
        code.add(ind, f"{var}, p = {_decoder(code.module, kind)}(b, p)")
    elif isinstance(kind, NullableStruct):
        marker = code.var("m")
        if kind.tagged:
            code.add(ind, f"{marker} = b[p]")
            code.add(ind, "p += 1")
            code.add(ind, f"if {marker} > 127:")
            code.add(ind + 1, f"{marker}, p = _uvarint(b, p - 1)")
            present = f"{marker} > 0"
        else:
            code.add(ind, f"({marker},) = {code.module.packer('b')}.unpack_from(b, p)")
            code.add(ind, "p += 1")
            present = f"{marker} >= 0"
        code.add(ind, f"if {present}:")
        code.add(ind + 1, f"{var}, p = {_decoder(code.module, _inner(kind))}(b, p)")
        code.add(ind, "else:")
        code.add(ind + 1, f"{var} = None")
    elif isinstance(kind, Array):
        _read_array(code, ind, kind, var)
    else:  # pragma: no cover - the schema builds only the kinds above
        raise TypeError(f"no fast decoder for {kind!r}")


def _inner(kind: NullableStruct) -> Struct:
    assert isinstance(kind.inner, Struct)
    return kind.inner


def _read_array(code: _Code, ind: int, kind: Array, var: str) -> None:
    n = code.var("n")
    _read_length(code, ind, n, kind.compact, True, kind.nullable)
    code.add(ind, f"if {n} < 0:")
    code.add(ind + 1, f"{var} = None" if kind.nullable else "raise Reject")
    code.add(ind, "else:")
    # the reference's bound: a count the remaining bytes cannot hold is refused before the list grows
    code.add(ind + 1, f"if {n} * {max(kind.element.min_size, 1)} > len(b) - p:")
    code.add(ind + 2, "raise Reject")
    items = code.var("a")
    item = code.var("x")
    code.add(ind + 1, f"{item}: Any")
    code.add(ind + 1, f"{items}: list[Any] = []")
    code.add(ind + 1, f"for _ in range({n}):")
    _read_value(code, ind + 2, kind.element, item)
    code.add(ind + 2, f"{items}.append({item})")
    code.add(ind + 1, f"{var} = {items}")


def _groups(fields: list[tuple[str, KafkaType]]) -> list[tuple[list[tuple[str, Fixed]], tuple[str, KafkaType]]]:
    """The fields in wire order as (run, field): each run of consecutive fixed-width fields once, as a non-empty
    `run` (one `struct.Struct` reads or writes it; `field` is then its first), every other field alone (`run` empty)."""
    groups: list[tuple[list[tuple[str, Fixed]], tuple[str, KafkaType]]] = []
    for attr, kind in fields:
        if not isinstance(kind, Fixed):
            groups.append(([], (attr, kind)))
        elif groups and groups[-1][0]:
            groups[-1][0].append((attr, kind))
        else:
            groups.append(([(attr, kind)], (attr, kind)))
    return groups


def _decoder(module: _Module, struct: Struct) -> str:
    """The name of the function decoding `struct`, emitting it (and the ones it calls) on first use."""
    cls = module.cls(struct.cls)
    code = _Code(module)
    code.add(0, f"def NAME(b: bytes, p: int) -> tuple[{cls}, int]:")
    args = []
    for run, (attr, kind) in _groups(struct.fields):
        if run:
            targets = [code.var() for _ in run]
            _read_fixed_run(code, 1, [k for _, k in run], targets)
            args += [f"{a}={t}" for (a, _), t in zip(run, targets, strict=True)]
            continue
        var = code.var()
        code.add(1, f"{var}: Any")
        _read_value(code, 1, kind, var)
        args.append(f"{attr}={var}")
    # `object.__new__` and one store per slot: half the cost of the keyword `__init__`, which the generated
    # classes only have for people. Every slot is set, absent and tagged fields to their defaults (a fresh one for
    # mutable defaults, as `__init__` makes them), so the object equals what the reference's `cls(**fields)` makes.
    code.add(1, f"o = _new({cls})")
    for arg in args:
        code.add(1, "o." + arg.replace("=", " = ", 1))
    for attr, default, _ignorable in struct.absent:
        code.add(1, f"o.{attr} = {module.default(default)}")
    for attr, _kind, default in (struct.tagged or {}).values():
        code.add(1, f"o.{attr} = {module.default(default)}")
    code.add(1, "o.unknown_tagged_fields = {}")
    if struct.tagged is not None:
        code.add(1, "t = b[p]")
        code.add(1, "p += 1")
        code.add(1, "if t:")
        code.add(2, "if t > 127:")
        code.add(3, "t, p = _uvarint(b, p - 1)")
        code.add(2, "tags, p = read_tags(b, p, t)")
        if struct.tagged:
            code.add(2, "if tags:")
            for tag, (attr, kind, _default) in struct.tagged.items():
                code.add(3, f"if {tag} in tags:")
                code.add(4, f"o.{attr} = tag_value(tags.pop({tag}), {_tag_decoder(module, kind)})")
        code.add(2, "o.unknown_tagged_fields = tags")
    code.add(1, "return o, p")
    return module.function("d", code)


def _tag_decoder(module: _Module, kind: KafkaType) -> str:
    code = _Code(module)
    code.add(0, "def NAME(b: bytes, p: int) -> tuple[Any, int]:")
    code.add(1, "v: Any")
    _read_value(code, 1, kind, "v")
    code.add(1, "return v, p")
    return module.function("dt", code)


# --- encoding ------------------------------------------------------------------------------------------------


def _write_length(code: _Code, ind: int, length: str, compact: bool, wide: bool) -> None:
    if compact:
        size = code.var("c")
        code.add(ind, f"{size} = {length} + 1")
        code.add(ind, f"if {size} < 128:")
        code.add(ind + 1, f"w.append({size})")
        code.add(ind, "else:")
        code.add(ind + 1, f"w += write_uvarint({size})")
    else:
        code.add(ind, f"w += {code.module.packer('i' if wide else 'h')}.pack({length})")


def _null_length(compact: bool, wide: bool) -> str:
    if compact:
        return "b'\\x00'"
    return "b'\\xff\\xff\\xff\\xff'" if wide else "b'\\xff\\xff'"


def _write_blob(code: _Code, ind: int, kind: Blob, value: str) -> None:
    wide = kind.func == "bytes"
    code.add(ind, f"if {value} is None:")
    code.add(ind + 1, f"w += {_null_length(kind.compact, wide)}" if kind.nullable else "raise Reject")
    code.add(ind, "else:")
    if kind.func == "string":
        data = code.var("s")
        code.add(ind + 1, f"{data} = {value}.encode()")
        if not kind.compact:
            code.add(ind + 1, f"if len({data}) > 0x7FFF:")
            code.add(ind + 2, "raise Reject")
        _write_length(code, ind + 1, f"len({data})", kind.compact, False)
        code.add(ind + 1, f"w += {data}")
    else:
        _write_length(code, ind + 1, f"len({value})", kind.compact, True)
        # a payload that is not bytes (Fetch's record sets still in segment files) is sent between the parts
        code.add(ind + 1, f"if isinstance({value}, BUFFERS):")
        code.add(ind + 2, f"w += {value}")
        code.add(ind + 1, "else:")
        code.add(ind + 2, f"d.append((len(w), {value}))")


def _write_value(code: _Code, ind: int, kind: KafkaType, value: str) -> None:
    """Lines appending `value` (a simple expression: a local or `o.attr`) as `kind` to `w`."""
    if isinstance(kind, Fixed):
        _write_fixed_run(code, ind, [kind], [value])
    elif isinstance(kind, (Blob, Array, NullableStruct)):
        local = code.var("y")
        code.add(ind, f"{local} = {value}")
        if isinstance(kind, Blob):
            _write_blob(code, ind, kind, local)
        elif isinstance(kind, Array):
            _write_array(code, ind, kind, local)
        else:
            code.add(ind, f"if {local} is None:")
            code.add(ind + 1, f"w.append({0 if kind.tagged else 255})")
            code.add(ind, "else:")
            code.add(ind + 1, "w.append(1)")
            code.add(ind + 1, f"{_encoder(code.module, _inner(kind))}({local}, w, d)")
    elif isinstance(kind, Struct):
        code.add(ind, f"{_encoder(code.module, kind)}({value}, w, d)")
    else:  # pragma: no cover
        raise TypeError(f"no fast encoder for {kind!r}")


def _write_fixed_run(code: _Code, ind: int, kinds: list[Fixed], values: list[str]) -> None:
    fmt = "".join(_FORMATS[k.kind] for k in kinds)
    args = [f"{v}.bytes" if k.kind == "uuid" else v for k, v in zip(kinds, values, strict=True)]
    code.add(ind, f"w += {code.module.packer(fmt)}.pack({', '.join(args)})")


def _write_array(code: _Code, ind: int, kind: Array, value: str) -> None:
    code.add(ind, f"if {value} is None:")
    code.add(ind + 1, f"w += {_null_length(kind.compact, True)}" if kind.nullable else "raise Reject")
    code.add(ind, "else:")
    _write_length(code, ind + 1, f"len({value})", kind.compact, True)
    item = code.var("x")
    code.add(ind + 1, f"for {item} in {value}:")
    _write_value(code, ind + 2, kind.element, item)


def _encoder(module: _Module, struct: Struct) -> str:
    code = _Code(module)
    code.add(0, "def NAME(o: Any, w: bytearray, d: list[Any]) -> None:")
    for attr, default, ignorable in struct.absent:
        if not ignorable:
            code.add(1, f"if o.{attr} != {module.compared_default(default)}:")
            code.add(2, "raise Reject")
    for run, (attr, kind) in _groups(struct.fields):
        if run:
            _write_fixed_run(code, 1, [k for _, k in run], [f"o.{a}" for a, _ in run])
        else:
            _write_value(code, 1, kind, f"o.{attr}")
    if struct.tagged is not None:
        if struct.tagged:
            code.add(1, "known: list[tuple[int, bytes]] = []")
            for tag, (attr, kind, default) in struct.tagged.items():
                code.add(1, f"if o.{attr} != {module.compared_default(default)}:")
                code.add(2, f"known.append(({tag}, tag_bytes(o.{attr}, {_tag_encoder(module, kind)})))")
            code.add(1, "write_tags(w, known, o.unknown_tagged_fields)")
        else:
            code.add(1, "if o.unknown_tagged_fields:")
            code.add(2, "write_tags(w, [], o.unknown_tagged_fields)")
            code.add(1, "else:")
            code.add(2, "w.append(0)")
    return module.function("e", code)


def _tag_encoder(module: _Module, kind: KafkaType) -> str:
    code = _Code(module)
    code.add(0, "def NAME(v: Any, w: bytearray, d: list[Any]) -> None:")
    _write_value(code, 1, kind, "v")
    return module.function("et", code)


# --- modules -------------------------------------------------------------------------------------------------


def _render(title: str, module: _Module) -> str:
    classes = sorted(module.classes.items(), key=lambda item: (item[0].__module__, item[1]))
    lines = [
        f'"""Fast codecs for {title}, generated by `make codegen` (protocol/fastgen.py). Do not edit.',
        "",
        "Straight-line twins of the construct reference (`protocol.schema`); see protocol/fastgen.py for the contract.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from struct import Struct",
        "from typing import Any",
        "from uuid import UUID  # noqa: F401",
        "",
        "from protocol.fastcodec import BUFFERS, Reject, read_tags, tag_bytes, tag_value, write_tags  # noqa: F401",
        "from protocol.fastcodec import uvarint as _uvarint  # noqa: F401",
        "from protocol.varint import write_uvarint  # noqa: F401",
    ]
    lines.append("from protocol.primitives import ZERO_UUID  # noqa: F401")
    for cls, alias in classes:
        lines.append(f"from {cls.__module__} import {cls.__name__} as {alias}")
    lines += ["", "_new = object.__new__"]
    for fmt, name in sorted(module.formats.items(), key=lambda item: int(item[1][2:])):
        lines.append(f"{name} = Struct({'>' + fmt!r})")
    for expression, name in module.constants.items():
        lines.append(f"{name} = {expression}")
    for function in module.functions:
        lines += ["", "", function]
    lines += ["", ""]
    lines.append("#: version -> decoder(frame, position) -> (value, position after it)")
    lines.append("DECODERS: dict[int, Any] = {" + ", ".join(f"{v}: {n}" for v, n in module.decoders.items()) + "}")
    lines.append("#: version -> encoder(value, bytearray, deferred payloads)")
    lines.append("ENCODERS: dict[int, Any] = {" + ", ".join(f"{v}: {n}" for v, n in module.encoders.items()) + "}")
    return "\n".join(lines) + "\n"


def _codec_module(title: str, decode: MessageDecl | None, encode: MessageDecl | None, versions: range) -> str:
    module = _Module()
    for version in versions:
        if decode is not None:
            module.decoders[version] = _decoder(module, schema.interpreted(decode, version))
        if encode is not None:
            module.encoders[version] = _encoder(module, schema.interpreted(encode, version))
    return _render(title, module)


def generate() -> dict[str, str]:
    """Every file of `protocol/messages/fast/`, by name: one per hot API (request decoders, response encoders,
    every version the registry serves), the request header's decoders, and the index."""
    from protocol.kafka_names import module_name
    from protocol.messages.request_header import REQUEST_HEADER
    from protocol.registry import APIS, ApiKey

    files: dict[str, str] = {}
    index: list[str] = []
    for api in HOT_APIS:
        spec = APIS[ApiKey[api]]
        name = module_name(spec.request.name[: -len("Request")])
        versions = range(spec.min_version, spec.max_version + 1)
        title = f"{spec.request.name} (decode) and {spec.response.name} (encode), v{versions[0]}-v{versions[-1]}"
        files[f"{name}.py"] = _codec_module(title, spec.request, spec.response, versions)
        index.append(f"    {int(spec.key)}: {name!r},")
    header_versions = range(REQUEST_HEADER.valid.lo, (REQUEST_HEADER.valid.hi or 0) + 1)
    files["request_header.py"] = _codec_module("RequestHeader (decode)", REQUEST_HEADER, None, header_versions)
    files["__init__.py"] = (
        "\n".join(
            [
                '"""Generated fast codecs (`make codegen`, protocol/fastgen.py), imported by protocol.fastcodec."""',
                "",
                "#: api key -> the module of this package holding its request decoders and response encoders.",
                "MODULES = {",
                *index,
                "}",
            ]
        )
        + "\n"
    )
    return files


def main() -> int:
    write_package(FAST_DIR, generate())
    return 0


if __name__ == "__main__":
    sys.exit(main())
