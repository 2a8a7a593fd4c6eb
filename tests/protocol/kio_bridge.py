"""A generic bridge between our generated message dataclasses and kio's per-version classes (a test-only oracle).

kio (https://github.com/Aiven-Open/kio) generates one frozen dataclass per (message, version) from the same Apache
Kafka JSON schemas we generate from, with its own serializer (`kio.serial.entity_writer`, pure Python) and parser
(`kio.serial.entity_reader`, native). Comparing bytes and values with an independent implementation catches the
mistakes a round-trip test cannot: a codec that is wrong the same way in both directions still round-trips.

The conversion is driven by two tables only, never by hand-written per-API code, so a new API or version needs no
change here: our `StructDecl`/`FieldDecl` (which fields exist in a version, which are arrays or structs) and kio's
dataclass fields (their names, `metadata["kafka_type"]`, and annotated types). kio's modelling choices, which the
bridge undoes:

* kio's classes are bodies only: no request/response header (`__header_schema__` names the header class).
* Fields kio types as durations or instants drop the `_ms` suffix: `throttle_time_ms` is kio's `throttle_time`.
* `int32`/`int64` milliseconds are `datetime.timedelta` (`kafka_type` `timedelta_i32`/`timedelta_i64`), or a UTC
  `datetime` (`datetime_i64`, where `-1` is `None` if kio's field is optional; if not, kio cannot read -1).
* `error_code` fields are kio's `ErrorCode` enum: only the codes kio knows are representable.
* A zero UUID is `None` in kio (its reader turns 16 zero bytes into `None`); we keep `uuid.UUID(int=0)`.
* Arrays are tuples; nested structs are kio's nested classes; nominal types (`GroupId`, `BrokerId`, ...) are
  phantom types that accept plain `str`/`int`.
* Unknown tagged fields are not modelled: kio's writer cannot emit them and its reader raises KeyError on them.

`kio_domain` maps any value our strategies generate into the subset kio can represent (see its docstring); the
differential tests compare on that subset and assert the differences outside it explicitly.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import types
import typing
import uuid
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from kio.index import KioIndexError, load_request_schema, load_response_schema
from kio.schema.errors import ErrorCode as KioErrorCode
from kio.serial import entity_reader, entity_writer

from protocol.declarations import FieldDecl, MessageDecl, StructDecl

Kind = Literal["request", "response"]

ZERO_UUID = uuid.UUID(int=0)
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)

KIO_ERROR_CODES: tuple[int, ...] = tuple(sorted(int(code) for code in KioErrorCode))
"""Every error code kio's `ErrorCode` enum can hold; any other int16 makes kio's reader raise ValueError."""

TIMEDELTA_I64_SAFE_MS = 2**51 - 1
"""kio writes `timedelta_i64` as `round(td.total_seconds() * 1000)`: two float roundings, exact only below 2**51 ms.

Proof sketch: `total_seconds()` and the `* 1000` each round with relative error <= 2**-53, so for |ms| < 2**51 the
float is within 0.5 of ms; floats there are multiples of 0.25, so it is within 0.25 and `round` restores ms.
"""

DATETIME_I64_MAX_MS = 253_402_300_799_999
"""9999-12-31T23:59:59.999Z: kio reads `datetime_i64` into a `datetime`, which cannot hold year 10000."""


def datetime_i64_min_ms(optional: bool) -> int:
    """The lowest `datetime_i64` kio reads: -1 (as None) where its field is optional, else 0 (no negative instant)."""
    return -1 if optional else 0


class BridgeError(AssertionError):
    """Our declaration and kio's class disagree on the shape of a message (a schema drift, not a codec bug)."""


def kio_schema(api_key: int, version: int, kind: Kind) -> type[Any] | None:
    """kio's class for a request or response body, or None when kio has no such (api, version)."""
    loader = load_request_schema if kind == "request" else load_response_schema
    try:
        return loader(api_key, version)
    except KioIndexError:
        return None


@dataclass(frozen=True, slots=True)
class FieldPlan:
    """How one of our fields maps onto one kio field, for one version."""

    ours: FieldDecl
    kio_name: str
    kafka_type: str | None
    """kio's `metadata["kafka_type"]`; None for struct-typed fields (kio gives them no kafka_type)."""
    optional: bool
    """kio's annotation admits None (nullable fields, `uuid` and `records` always, `datetime_i64` mostly)."""
    nested: StructPlan | None


@dataclass(frozen=True, slots=True)
class StructPlan:
    ours: StructDecl
    kio_cls: type[Any]
    version: int
    fields: tuple[FieldPlan, ...]


def _strip_optional(annotation: Any) -> tuple[Any, bool]:
    if typing.get_origin(annotation) in (types.UnionType, typing.Union):
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(args) != 1:
            raise BridgeError(f"unexpected union {annotation}")
        return args[0], True
    return annotation, False


def _element_annotation(annotation: Any) -> Any:
    """The entity or primitive type inside `X`, `X | None`, `tuple[X, ...]` or `tuple[X, ...] | None`."""
    inner, _ = _strip_optional(annotation)
    if typing.get_origin(inner) is tuple:
        inner = typing.get_args(inner)[0]
    return _strip_optional(inner)[0]


#: Fields Kafka renamed after the schemas kio 0.6.5 was generated from: ours (4.4.0) -> kio's.
_RENAMED = {"generation_id_or_member_epoch": "generation_id"}


def _kio_field_name(ours: FieldDecl, kio_fields: dict[str, dataclasses.Field[Any]]) -> str:
    if ours.name in kio_fields:
        return ours.name
    if _RENAMED.get(ours.name) in kio_fields:
        return _RENAMED[ours.name]
    if ours.name.endswith("_ms"):
        short = ours.name[:-3]
        time_types = ("timedelta_i32", "timedelta_i64", "datetime_i64")
        if short in kio_fields and kio_fields[short].metadata.get("kafka_type") in time_types:
            return short
    raise BridgeError(f"{ours.name} has no kio counterpart among {sorted(kio_fields)}")


@cache
def plan(struct: StructDecl, version: int, kio_cls: Any) -> StructPlan:
    """Pair our fields of `version` with kio's, recursively; raise BridgeError if either side has extra fields."""
    kio_fields = {f.name: f for f in dataclasses.fields(kio_cls)}
    hints = typing.get_type_hints(kio_cls)
    plans = []
    for decl in struct.fields:
        if version not in decl.versions:
            continue
        name = _kio_field_name(decl, kio_fields)
        annotation = hints[name]
        nested = None
        if decl.element_type == "struct":
            assert decl.struct is not None
            nested = plan(decl.struct, version, _element_annotation(annotation))
        outer, optional = _strip_optional(annotation)
        if typing.get_origin(outer) is tuple:
            optional = optional or _strip_optional(typing.get_args(outer)[0])[1]
        plans.append(FieldPlan(decl, name, kio_fields[name].metadata.get("kafka_type"), optional, nested))
    extra = set(kio_fields) - {p.kio_name for p in plans}
    if extra:
        raise BridgeError(f"kio {kio_cls.__qualname__} v{version} has fields we lack in this version: {extra}")
    return StructPlan(struct, kio_cls, version, tuple(plans))


def message_plan(decl: MessageDecl, version: int, kio_cls: Any) -> StructPlan:
    """The plan for a whole message body (or header) against one kio class (`Any`: kio ships no usable stubs)."""
    return plan(decl.struct, version, kio_cls)


# ---- our value -> kio entity ------------------------------------------------------------------------------------


def _scalar_to_kio(kafka_type: str | None, optional: bool, value: Any) -> Any:
    if kafka_type in ("timedelta_i32", "timedelta_i64"):
        return datetime.timedelta(milliseconds=value)
    if kafka_type == "datetime_i64":
        return None if value == -1 and optional else EPOCH + datetime.timedelta(milliseconds=value)
    if kafka_type == "error_code":
        return KioErrorCode(value)
    if kafka_type == "uuid":
        return None if value == ZERO_UUID else value
    return value


def _field_to_kio(field: FieldPlan, value: Any) -> Any:
    if value is None:
        return None
    if field.nested is not None:
        convert: Any = lambda item: struct_to_kio(field.nested, item)  # noqa: E731
    else:
        convert = lambda item: _scalar_to_kio(field.kafka_type, field.optional, item)  # noqa: E731
    if field.ours.is_array:
        return tuple(convert(item) for item in value)
    return convert(value)


def struct_to_kio(struct_plan: StructPlan, value: Any) -> Any:
    kwargs = {f.kio_name: _field_to_kio(f, getattr(value, f.ours.name)) for f in struct_plan.fields}
    return struct_plan.kio_cls(**kwargs)


# ---- kio entity -> our value ------------------------------------------------------------------------------------


def _millis(delta: datetime.timedelta) -> int:
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return (micros + 500) // 1000


def _scalar_from_kio(kafka_type: str | None, value: Any) -> Any:
    if kafka_type in ("timedelta_i32", "timedelta_i64"):
        return _millis(value)
    if kafka_type == "datetime_i64":
        return -1 if value is None else _millis(value - EPOCH)
    if kafka_type == "error_code":
        return int(value)
    if kafka_type == "uuid":
        return ZERO_UUID if value is None else value
    return value


def _field_from_kio(field: FieldPlan, value: Any) -> Any:
    if field.kafka_type in ("uuid", "datetime_i64") and not field.ours.is_array:
        return _scalar_from_kio(field.kafka_type, value)  # their None is a value, not null
    if value is None:
        return None
    if field.nested is not None:
        convert: Any = lambda item: struct_from_kio(field.nested, item)  # noqa: E731
    else:
        convert = lambda item: _scalar_from_kio(field.kafka_type, item)  # noqa: E731
    if field.ours.is_array:
        return [convert(item) for item in value]
    return convert(value)


def struct_from_kio(struct_plan: StructPlan, entity: Any) -> Any:
    kwargs = {f.ours.name: _field_from_kio(f, getattr(entity, f.kio_name)) for f in struct_plan.fields}
    return struct_plan.ours.cls(**kwargs)


# ---- our value -> the subset kio can represent ------------------------------------------------------------------


def _scalar_to_domain(kafka_type: str | None, optional: bool, value: Any) -> Any:
    if kafka_type == "error_code" and value not in KIO_ERROR_CODES:
        return KIO_ERROR_CODES[value % len(KIO_ERROR_CODES)]
    if kafka_type == "timedelta_i64":
        return max(-TIMEDELTA_I64_SAFE_MS, min(TIMEDELTA_I64_SAFE_MS, value))
    if kafka_type == "datetime_i64":
        return max(datetime_i64_min_ms(optional), min(DATETIME_I64_MAX_MS, value))
    return value


def _field_to_domain(field: FieldPlan, value: Any, keep_unknown_tags: bool) -> Any:
    if value is None:
        return None
    if field.nested is not None:
        convert: Any = lambda item: struct_to_domain(field.nested, item, keep_unknown_tags=keep_unknown_tags)  # noqa: E731
    else:
        convert = lambda item: _scalar_to_domain(field.kafka_type, field.optional, item)  # noqa: E731
    if field.ours.is_array:
        return [convert(item) for item in value]
    return convert(value)


def struct_to_domain(struct_plan: StructPlan, value: Any, *, keep_unknown_tags: bool) -> Any:
    """A copy of `value` that kio can represent exactly.

    Error codes kio's enum lacks are replaced by one it has; `timedelta_i64` milliseconds are clamped to
    +-TIMEDELTA_I64_SAFE_MS and `datetime_i64` milliseconds to [`datetime_i64_min_ms`, DATETIME_I64_MAX_MS];
    unknown tagged fields are dropped unless `keep_unknown_tags` (kio can neither read nor write them). Fields
    absent in this version keep their (default) values.
    """
    changes = {
        f.ours.name: _field_to_domain(f, getattr(value, f.ours.name), keep_unknown_tags) for f in struct_plan.fields
    }
    if not keep_unknown_tags:
        changes["unknown_tagged_fields"] = {}
    return dataclasses.replace(value, **changes)


def has_unknown_tags(struct_plan: StructPlan, value: Any) -> bool:
    """Whether any struct in `value` carries unknown tagged fields (the part of a value kio cannot represent)."""
    if value.unknown_tagged_fields:
        return True
    for field in struct_plan.fields:
        if field.nested is None:
            continue
        item = getattr(value, field.ours.name)
        items = (item or []) if field.ours.is_array else [item]
        if any(x is not None and has_unknown_tags(field.nested, x) for x in items):
            return True
    return False


# ---- kio's serializers ------------------------------------------------------------------------------------------


def kio_encode(entity: Any) -> bytes:
    """kio's bytes for a body entity (no header, no size prefix)."""
    buffer = io.BytesIO()
    entity_writer(type(entity))(buffer, entity)
    return buffer.getvalue()


def kio_decode(kio_cls: type[Any], data: bytes) -> Any:
    """kio's entity for a bare body; every byte must be consumed, as `decode_body` requires of ours."""
    entity, size = entity_reader(kio_cls)(data, 0)
    if size != len(data):
        raise AssertionError(f"kio read {size} of {len(data)} bytes of {kio_cls.__qualname__}")
    return entity
