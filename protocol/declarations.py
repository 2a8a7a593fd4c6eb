"""Declaration types for the generated message modules: Kafka's JSON schema vocabulary as Python data.

The generated modules in `protocol/messages/` hold one table of `FieldDecl` per struct, in the words of the JSON
schema (versions, nullable versions, tagged versions, tag, default, ignorable). `protocol.schema` turns a table and
a version into a compiled construct; nothing here knows about bytes, so the coordinator may import the message
modules without importing the codec.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Versions:
    """A Kafka version range: "N", "N-M", "N+" or "none" (an empty range)."""

    lo: int
    hi: int | None

    def __contains__(self, version: object) -> bool:
        if not isinstance(version, int) or version < self.lo:
            return False
        return self.hi is None or version <= self.hi

    @property
    def empty(self) -> bool:
        return self.hi is not None and self.hi < self.lo

    @classmethod
    def parse(cls, text: str) -> Versions:
        text = text.strip()
        if text == "none":
            return NO_VERSIONS
        if text.endswith("+"):
            return cls(int(text[:-1]), None)
        if "-" in text:
            lo, hi = text.split("-")
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.hi is None:
            return f"{self.lo}+"
        return f"{self.lo}" if self.lo == self.hi else f"{self.lo}-{self.hi}"


NO_VERSIONS = Versions(1, 0)

PRIMITIVE_TYPES = frozenset(
    {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "uuid", "string", "bytes", "records"}
)


@dataclass(frozen=True, slots=True, eq=False)
class FieldDecl:
    """One field of a struct, exactly as the JSON schema declares it.

    `type` is a primitive name, "struct", or "[]" followed by either. `default` is the Python value a reader uses
    when the field is absent from a version (or an omitted tagged field); `factory` builds fresh mutable defaults.
    """

    name: str
    kafka_name: str
    type: str
    versions: Versions
    nullable: Versions = NO_VERSIONS
    tagged: Versions = NO_VERSIONS
    tag: int | None = None
    default: Any = None
    ignorable: bool = False
    flexible: Versions | None = None
    struct: StructDecl | None = None

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type


@dataclass(frozen=True, slots=True, eq=False)
class StructDecl:
    """A struct (the message body itself, or a nested/common struct) and the dataclass it decodes into."""

    name: str
    cls: type
    fields: tuple[FieldDecl, ...]


@dataclass(frozen=True, slots=True, eq=False)
class MessageDecl:
    """A whole schema file: its kind, API key, valid and flexible versions, and its top-level struct."""

    name: str
    kind: str
    api_key: int | None
    valid: Versions
    flexible: Versions
    struct: StructDecl
    #: Kafka's `latestVersionUnstable`: the newest valid version is still being designed and brokers do not
    #: advertise it.
    latest_unstable: bool = False
