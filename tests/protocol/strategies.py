"""Hypothesis strategies for any generated message at any version, derived from the same field tables as the codec.

Only fields that exist in the version get values (absent ones keep their defaults, as a decoder would produce);
tagged fields are sometimes left at their default, which is how Kafka omits them; flexible structs also carry
unknown tags, which must survive a round trip.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from protocol.declarations import FieldDecl, MessageDecl, StructDecl

_INTS = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


def _scalar(kind: str) -> st.SearchStrategy[Any]:
    if kind in _INTS:
        lo, hi = _INTS[kind]
        return st.integers(lo, hi)
    if kind == "bool":
        return st.booleans()
    if kind == "float64":
        return st.floats(allow_nan=False)
    if kind == "uuid":
        return st.uuids()
    if kind == "string":
        return _TEXT
    return st.binary(max_size=24)


def _value(decl: FieldDecl, version: int, flexible: bool) -> st.SearchStrategy[Any]:
    if decl.flexible is not None:
        flexible = version in decl.flexible
    element_kind = decl.element_type
    if element_kind == "struct":
        assert decl.struct is not None
        element = struct_strategy(decl.struct, version, flexible)
    else:
        element = _scalar(element_kind)
    value = st.lists(element, max_size=3) if decl.is_array else element
    if version in decl.nullable:
        value = st.none() | value
    return value


def struct_strategy(struct: StructDecl, version: int, flexible: bool) -> st.SearchStrategy[Any]:
    fields: dict[str, st.SearchStrategy[Any]] = {}
    known_tags = set()
    for decl in struct.fields:
        if version not in decl.versions:
            continue
        value = _value(decl, version, flexible)
        if flexible and version in decl.tagged:
            known_tags.add(decl.tag)
            value = st.just(decl.default) | value
        fields[decl.name] = value
    if flexible:
        unknown_tag = st.integers(0, 40).filter(lambda t: t not in known_tags)
        fields["unknown_tagged_fields"] = st.dictionaries(unknown_tag, st.binary(max_size=6), max_size=2)
    return st.builds(struct.cls, **fields)


def message_strategy(message: MessageDecl, version: int) -> st.SearchStrategy[Any]:
    return struct_strategy(message.struct, version, version in message.flexible)


def all_pairs() -> list[tuple[int, int]]:
    """Every (api_key, version) the codec supports."""
    from protocol.registry import APIS

    return [(key, v) for key, spec in sorted(APIS.items()) for v in range(spec.min_version, spec.max_version + 1)]
