"""Turn a generated field table and a version into a compiled construct, once per (message, version).

This is where the JSON schema's rules become bytes: a field outside its `versions` is absent (the dataclass default
applies), `nullableVersions` decides whether null is allowed, flexible versions switch strings, bytes and arrays to
compact lengths and end every struct with a tagged-field section, and `taggedVersions` moves a field out of the
fixed layout into that section.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from protocol.declarations import FieldDecl, MessageDecl, StructDecl
from protocol.primitives import Array, Blob, Fixed, KafkaType, NullableStruct, Struct


def _element(
    decl: FieldDecl, kind: str, version: int, flexible: bool, path: str, nullable: bool, tagged: bool = False
) -> KafkaType:
    if kind == "struct":
        assert decl.struct is not None
        inner = build_struct(decl.struct, version, flexible, path)
        return NullableStruct(inner, path, tagged=tagged) if nullable else inner
    if kind in ("string", "bytes", "records"):
        return Blob(kind, flexible, nullable, path)
    return Fixed(kind, path)


def _field_type(decl: FieldDecl, version: int, flexible: bool, path: str, tagged: bool = False) -> KafkaType:
    """The field's type; `tagged` when it is written inside the tagged-field section (a nullable struct's marker
    differs there)."""
    if decl.flexible is not None:
        flexible = version in decl.flexible
    nullable = version in decl.nullable
    if decl.is_array:
        element = _element(decl, decl.element_type, version, flexible, path + "[]", nullable=False)
        return Array(element, flexible, nullable, path)
    return _element(decl, decl.type, version, flexible, path, nullable, tagged)


def build_struct(struct: StructDecl, version: int, flexible: bool, path: str) -> Struct:
    fields: list[tuple[str, KafkaType]] = []
    tagged: dict[int, tuple[str, KafkaType, Any]] = {}
    absent: list[tuple[str, Any, bool]] = []
    for decl in struct.fields:
        field_path = f"{path}.{decl.name}"
        if version not in decl.versions:
            absent.append((decl.name, decl.default, decl.ignorable))
        elif flexible and version in decl.tagged:
            assert decl.tag is not None
            kind = _field_type(decl, version, flexible, field_path, tagged=True)
            tagged[decl.tag] = (decl.name, kind, decl.default)
        else:
            fields.append((decl.name, _field_type(decl, version, flexible, field_path)))
    # Tags go on the wire in ascending order (KIP-482; Kafka's generated writers do so), whatever the order the
    # schema declares them in: TransactionLogValue declares tag 3 before tag 2.
    in_tag_order = dict(sorted(tagged.items()))
    return Struct(struct.cls, fields, in_tag_order if flexible else None, absent, version, path)


@cache
def interpreted(message: MessageDecl, version: int) -> Struct:
    """The construct for one version, interpreted: the reference the compiled form is tested against."""
    if version not in message.valid:
        raise ValueError(f"{message.name} has no version {version}")
    return build_struct(message.struct, version, version in message.flexible, message.name)


@cache
def compiled(message: MessageDecl, version: int) -> Any:
    """The same construct compiled to straight-line Python; callers use `.parsefunc(io, None)`/`.buildfunc`."""
    return interpreted(message, version).compile()
