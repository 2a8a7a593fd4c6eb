"""Differential tests: our codec against kio 0.6.5, an independent implementation of the same Kafka schemas.

A round-trip test cannot see a codec that is wrong symmetrically (a field in the wrong order, a compact length where
Kafka wants a legacy one, a wrong header version); an independent oracle can. For every (api, version) of
`all_pairs()`, request and response, values drawn from our strategies are converted by the generic bridge in
`tests/protocol/kio_bridge.py` and checked three ways: kio's bytes equal our `encode_body` bytes, our `decode_body`
of kio's bytes gives our value back, and kio's decoding of our bytes converts back to our value. Whole frames are
compared too, which checks the header version chosen per (api, version) against kio's `__header_schema__`; for the
hot APIs, the generated fast decoder and encoder (protocol/fastgen.py) are also called alone on those frames (no
fall-back to the construct reference) and must agree with kio as well.

Known differences, each asserted by a test below (nothing is skipped):

1. `KIO_MISSING`: kio 0.6.5 has no class for these (api, version) pairs, request and response alike: ApiVersions
   v5 (KIP-1242), DeleteGroups v3 and TxnOffsetCommit v6, which came after the Kafka schemas kio 0.6.5 was generated
   from, and ListOffsets v0, which Kafka 4 removed (KIP-896) and we still serve. `test_kio_missing_is_exact`
   asserts that kio really lacks exactly these among our pairs, so the set cannot go stale in either direction.
2. Unknown tagged fields: kio does not model them. Its writer cannot emit them, and its (native) reader raises
   `KeyError('Unknown tagged field tag: N')` on any tag its class lacks, where KIP-482 says a receiver must skip
   tags it does not know (our decoder keeps them in `unknown_tagged_fields`). The body test compares on values
   without them, then asserts that our bytes *with* unknown tags differ exactly when some struct has them and that
   kio refuses exactly those.
3. Error codes: kio types `error_code` as its `ErrorCode` enum (-1..133); any other int16 cannot be built and
   makes kio's reader raise ValueError, while we carry it through. Differential values map such codes onto known
   ones; `test_error_code_outside_kio_enum` asserts the difference on every response with a top-level error code.
4. `timedelta_i64` fields (`KIO_TIMEDELTA_I64_FIELDS`): kio writes `round(td.total_seconds() * 1000)`, which is
   exact only below 2**51 ms (2**53 + 1 becomes 2**53), and a `timedelta` cannot hold more than ~8.64e16 ms, so
   int64 values beyond it cannot be represented or read. Differential values are clamped to +-(2**51 - 1);
   `test_timedelta_i64_fields` asserts both failure modes.
5. `datetime_i64` fields (`KIO_DATETIME_I64_FIELDS`): kio reads them as a UTC `datetime`, so it rejects values past
   9999-12-31T23:59:59.999Z and negative ones, except -1 where kio's field is optional (Produce's
   `log_append_time_ms`: -1 is None). DescribeTransactions' `transaction_start_time_ms` is not optional in kio, so
   kio cannot read the -1 Kafka sends for a transactional id with no transaction running (T67); kio's writer still
   writes it. That is a kio limitation, not ours. Differential values are clamped to [-1, that maximum] on optional
   fields and [0, that maximum] on the others; `test_datetime_i64_fields` asserts the boundaries and
   `test_kio_cannot_read_a_transaction_start_time_of_minus_one` the -1 case.

Everything else -- every field name (modulo kio's dropped `_ms` suffix), type, order, nullability, tag and
flexible-version choice -- must agree exactly; the bridge raises BridgeError if either side has a field the other
lacks.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kio.index import UnknownEntity, load_request_schema, load_response_schema
from kio.serial.errors import OutOfBoundValue

from protocol import api
from protocol.declarations import MessageDecl, StructDecl
from protocol.messages.request_header import REQUEST_HEADER, RequestHeader
from protocol.messages.response_header import RESPONSE_HEADER, ResponseHeader
from protocol.registry import APIS, ApiKey
from tests.protocol import kio_bridge as kb
from tests.protocol.fast_paths import HOT_PAIRS, fast_decode, fast_encode
from tests.protocol.strategies import all_pairs, message_strategy

Triple = tuple[int, int, kb.Kind]

KIO_MISSING: frozenset[Triple] = frozenset(
    (key, version, kind)
    for key, versions in (
        (ApiKey.LIST_OFFSETS, (0,)),
        (ApiKey.API_VERSIONS, (5,)),
        (ApiKey.DELETE_GROUPS, (3,)),
        (ApiKey.TXN_OFFSET_COMMIT, (6,)),
    )
    for version in versions
    for kind in ("request", "response")
)

KIO_TIMEDELTA_I64_FIELDS: frozenset[tuple[int, int, kb.Kind, tuple[str, ...]]] = frozenset(
    {(ApiKey.OFFSET_COMMIT, v, "request", ("retention_time_ms",)) for v in (2, 3, 4)}
    | {(ApiKey.SASL_AUTHENTICATE, v, "response", ("session_lifetime_ms",)) for v in (1, 2)}
)
KIO_DATETIME_I64_FIELDS: frozenset[tuple[int, int, kb.Kind, tuple[str, ...]]] = frozenset(
    {(ApiKey.PRODUCE, v, "response", ("responses", "partition_responses", "log_append_time_ms")) for v in range(3, 14)}
    | {(ApiKey.DESCRIBE_TRANSACTIONS, 0, "response", ("transaction_states", "transaction_start_time_ms"))}
)

ALL: list[Triple] = [(key, version, kind) for key, version in all_pairs() for kind in ("request", "response")]
PRESENT: list[Triple] = [triple for triple in ALL if triple not in KIO_MISSING]
_INT32 = st.integers(-(2**31), 2**31 - 1)


def _decl(api_key: int, kind: kb.Kind) -> MessageDecl:
    spec = APIS[api_key]
    return spec.request if kind == "request" else spec.response


def _setup(api_key: int, version: int, kind: kb.Kind) -> tuple[MessageDecl, kb.StructPlan]:
    kio_cls = kb.kio_schema(api_key, version, kind)
    assert kio_cls is not None, f"kio lacks {(api_key, version, kind)} but it is not in KIO_MISSING"
    decl = _decl(api_key, kind)
    return decl, kb.message_plan(decl, version, kio_cls)


def _ids(triple: Triple) -> str:
    key, version, kind = triple
    return f"{ApiKey(key).name}-v{version}-{kind}"


def test_kio_missing_is_exact() -> None:
    """kio lacks exactly the KIO_MISSING pairs among ours (and KIO_MISSING names only pairs we support)."""
    assert set(ALL) >= KIO_MISSING
    missing = {triple for triple in ALL if kb.kio_schema(*triple) is None}
    assert missing == KIO_MISSING
    for key, version, kind in KIO_MISSING:
        loader = load_request_schema if kind == "request" else load_response_schema
        with pytest.raises(UnknownEntity):
            loader(key, version)


@pytest.mark.parametrize("triple", PRESENT, ids=_ids)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_body_matches_kio(triple: Triple, data: st.DataObject) -> None:
    """Same bytes out of both encoders, and each decoder gives back the other's value (on kio's domain)."""
    key, version, kind = triple
    decl, plan = _setup(key, version, kind)
    drawn = data.draw(message_strategy(decl, version))
    with_tags = kb.struct_to_domain(plan, drawn, keep_unknown_tags=True)
    value = kb.struct_to_domain(plan, drawn, keep_unknown_tags=False)

    ours = api.encode_body(decl, version, value)
    theirs = kb.kio_encode(kb.struct_to_kio(plan, value))
    assert theirs == ours
    assert api.decode_body(decl, version, theirs) == value
    assert kb.struct_from_kio(plan, kb.kio_decode(plan.kio_cls, ours)) == value

    # Known difference 2: kio refuses unknown tagged fields instead of skipping them.
    ours_tagged = api.encode_body(decl, version, with_tags)
    assert api.decode_body(decl, version, ours_tagged) == with_tags
    if kb.has_unknown_tags(plan, with_tags):
        assert ours_tagged != ours
        with pytest.raises(KeyError, match="Unknown tagged field tag"):
            kb.kio_decode(plan.kio_cls, ours_tagged)
    else:
        assert ours_tagged == ours


def _kio_header_plan(kind: kb.Kind, kio_body_cls: type[Any]) -> kb.StructPlan:
    """Our header declaration paired with the header class kio names for this body, at kio's header version."""
    header_cls = kio_body_cls.__header_schema__
    decl = REQUEST_HEADER if kind == "request" else RESPONSE_HEADER
    return kb.message_plan(decl, int(header_cls.__version__), header_cls)


@pytest.mark.parametrize("triple", PRESENT, ids=_ids)
@settings(max_examples=5, deadline=None)
@given(data=st.data(), correlation_id=_INT32, client_id=st.none() | st.text(max_size=8))
def test_frame_matches_kio(triple: Triple, data: st.DataObject, correlation_id: int, client_id: str | None) -> None:
    """Whole frames: the header version we pick per (api, version) is the one kio's `__header_schema__` names."""
    key, version, kind = triple
    decl, plan = _setup(key, version, kind)
    body = kb.struct_to_domain(plan, data.draw(message_strategy(decl, version)), keep_unknown_tags=False)
    header_plan = _kio_header_plan(kind, plan.kio_cls)
    header: RequestHeader | ResponseHeader
    if kind == "request":
        header = RequestHeader(
            request_api_key=key, request_api_version=version, correlation_id=correlation_id, client_id=client_id
        )
        frame = api.encode_request(header, body)
    else:
        header = ResponseHeader(correlation_id=correlation_id)
        frame = api.encode_response(key, version, correlation_id, body)

    kio_payload = kb.kio_encode(kb.struct_to_kio(header_plan, header)) + kb.kio_encode(kb.struct_to_kio(plan, body))
    assert frame == len(kio_payload).to_bytes(4, "big") + kio_payload

    if kind == "request":
        decoded = api.decode_request(kio_payload)
        assert (decoded.header, decoded.body) == (header, body)
    else:
        assert api.decode_response(key, version, kio_payload) == (header, body)
    if (key, version) in HOT_PAIRS:
        if kind == "request":
            assert fast_decode(kio_payload) == api.Request(header, body)  # type: ignore[arg-type]
        else:
            assert fast_encode(key, version, correlation_id, body) == (frame, [])


# ---- known difference 3: error codes kio's enum lacks -----------------------------------------------------------

_ERROR_CODE_RESPONSES = [
    triple
    for triple in PRESENT
    if triple[2] == "response" and any(f.kafka_type == "error_code" for f in _setup(*triple)[1].fields)
]


@pytest.mark.parametrize("triple", _ERROR_CODE_RESPONSES, ids=_ids)
def test_error_code_outside_kio_enum(triple: Triple) -> None:
    key, version, kind = triple
    decl, plan = _setup(key, version, kind)
    unknown = max(kb.KIO_ERROR_CODES) + 1
    value = decl.struct.cls(error_code=unknown)
    ours = api.encode_body(decl, version, value)
    assert api.decode_body(decl, version, ours) == value
    with pytest.raises(ValueError, match="is not a valid ErrorCode"):
        kb.kio_decode(plan.kio_cls, ours)
    with pytest.raises(ValueError, match="is not a valid ErrorCode"):
        kb.struct_to_kio(plan, value)
    known = dataclasses.replace(value, error_code=max(kb.KIO_ERROR_CODES))
    assert kb.kio_encode(kb.struct_to_kio(plan, known)) == api.encode_body(decl, version, known)


# ---- known differences 4 and 5: kio's time types --------------------------------------------------------------


def _paths_of(plan: kb.StructPlan, kafka_type: str, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    for field in plan.fields:
        path = (*prefix, field.ours.name)
        if field.kafka_type == kafka_type:
            found.append(path)
        if field.nested is not None:
            found += _paths_of(field.nested, kafka_type, path)
    return found


def _fields_typed(kafka_type: str) -> set[tuple[int, int, kb.Kind, tuple[str, ...]]]:
    return {(*triple, path) for triple in PRESENT for path in _paths_of(_setup(*triple)[1], kafka_type)}


def _message_with(struct: StructDecl, path: tuple[str, ...], leaf: Any) -> Any:
    """A default-valued message whose field at `path` is `leaf`; arrays on the way hold one default element."""
    value = struct.cls()
    field = next(f for f in struct.fields if f.name == path[0])
    if len(path) == 1:
        setattr(value, path[0], leaf)
        return value
    assert field.struct is not None
    inner = _message_with(field.struct, path[1:], leaf)
    setattr(value, path[0], [inner] if field.is_array else inner)
    return value


def _field_plan_at(plan: kb.StructPlan, path: tuple[str, ...]) -> kb.FieldPlan:
    field = next(f for f in plan.fields if f.ours.name == path[0])
    if len(path) == 1:
        return field
    assert field.nested is not None
    return _field_plan_at(field.nested, path[1:])


def _kio_int64_at(kio_bytes: bytes, ours: bytes, value: int) -> int:
    """The int64 kio wrote where we wrote `value` (the only difference between the two encodings)."""
    index = ours.index(value.to_bytes(8, "big", signed=True))
    return int.from_bytes(kio_bytes[index : index + 8], "big", signed=True)


def test_time_typed_fields_are_the_documented_ones() -> None:
    assert _fields_typed("timedelta_i64") == KIO_TIMEDELTA_I64_FIELDS
    assert _fields_typed("datetime_i64") == KIO_DATETIME_I64_FIELDS


@pytest.mark.parametrize("entry", sorted(KIO_TIMEDELTA_I64_FIELDS), ids=lambda e: f"{_ids(e[:3])}-{e[3][-1]}")
def test_timedelta_i64_fields(entry: tuple[int, int, kb.Kind, tuple[str, ...]]) -> None:
    key, version, kind, path = entry
    decl, plan = _setup(key, version, kind)
    for exact in (kb.TIMEDELTA_I64_SAFE_MS, -kb.TIMEDELTA_I64_SAFE_MS, -1, 0):
        value = _message_with(decl.struct, path, exact)
        ours = api.encode_body(decl, version, value)
        assert kb.kio_encode(kb.struct_to_kio(plan, value)) == ours
        assert kb.struct_from_kio(plan, kb.kio_decode(plan.kio_cls, ours)) == value

    lossy = _message_with(decl.struct, path, 2**53 + 1)
    ours = api.encode_body(decl, version, lossy)
    assert api.decode_body(decl, version, ours) == lossy
    assert _kio_int64_at(kb.kio_encode(kb.struct_to_kio(plan, lossy)), ours, 2**53 + 1) == 2**53

    huge = _message_with(decl.struct, path, 2**63 - 1)
    ours = api.encode_body(decl, version, huge)
    assert api.decode_body(decl, version, ours) == huge
    with pytest.raises(OverflowError):
        kb.struct_to_kio(plan, huge)
    with pytest.raises(ValueError, match="timedelta milliseconds overflow"):
        kb.kio_decode(plan.kio_cls, ours)


@pytest.mark.parametrize("entry", sorted(KIO_DATETIME_I64_FIELDS), ids=lambda e: f"{_ids(e[:3])}-{e[3][-1]}")
def test_datetime_i64_fields(entry: tuple[int, int, kb.Kind, tuple[str, ...]]) -> None:
    key, version, kind, path = entry
    decl, plan = _setup(key, version, kind)
    lowest = kb.datetime_i64_min_ms(_field_plan_at(plan, path).optional)
    for exact in (lowest, 0, kb.DATETIME_I64_MAX_MS):
        value = _message_with(decl.struct, path, exact)
        ours = api.encode_body(decl, version, value)
        assert kb.kio_encode(kb.struct_to_kio(plan, value)) == ours
        assert kb.struct_from_kio(plan, kb.kio_decode(plan.kio_cls, ours)) == value

    for unrepresentable, error, message in (
        (lowest - 1, OutOfBoundValue, "Cannot parse negative timestamp"),
        (kb.DATETIME_I64_MAX_MS + 1, ValueError, "year 10000 is out of range"),
    ):
        value = _message_with(decl.struct, path, unrepresentable)
        ours = api.encode_body(decl, version, value)
        assert api.decode_body(decl, version, ours) == value
        with pytest.raises(error, match=message):
            kb.kio_decode(plan.kio_cls, ours)


def test_kio_cannot_read_a_transaction_start_time_of_minus_one() -> None:
    """Kafka answers TransactionStartTimeMs = -1 for an id with no transaction running (T67). kio types the field as
    a non-optional `datetime`: its writer writes -1 as we do, its reader refuses it. Ours reads and writes it."""
    path = ("transaction_states", "transaction_start_time_ms")
    decl, plan = _setup(ApiKey.DESCRIBE_TRANSACTIONS, 0, "response")
    assert not _field_plan_at(plan, path).optional
    not_started = _message_with(decl.struct, path, -1)
    ours = api.encode_body(decl, 0, not_started)
    assert api.decode_body(decl, 0, ours) == not_started
    assert kb.kio_encode(kb.struct_to_kio(plan, not_started)) == ours
    with pytest.raises(OutOfBoundValue, match="Cannot parse negative timestamp"):
        kb.kio_decode(plan.kio_cls, ours)
    # The differential values therefore start at 0 on this field (and at -1 on kio's optional ones).
    assert kb.struct_to_domain(plan, not_started, keep_unknown_tags=False) == _message_with(decl.struct, path, 0)


def test_only_describe_transactions_has_a_non_optional_datetime_in_kio() -> None:
    non_optional = {
        entry for entry in KIO_DATETIME_I64_FIELDS if not _field_plan_at(_setup(*entry[:3])[1], entry[3]).optional
    }
    assert non_optional == {
        (ApiKey.DESCRIBE_TRANSACTIONS, 0, "response", ("transaction_states", "transaction_start_time_ms"))
    }
