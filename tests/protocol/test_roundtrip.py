"""decode(encode(x)) == x for every supported (api, version), requests and responses, and the record blobs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import api, consumer_offsets, consumer_protocol, schema
from protocol.messages.consumer_protocol_assignment import CONSUMER_PROTOCOL_ASSIGNMENT
from protocol.messages.consumer_protocol_subscription import CONSUMER_PROTOCOL_SUBSCRIPTION
from protocol.messages.group_metadata_key import GROUP_METADATA_KEY
from protocol.messages.group_metadata_value import GROUP_METADATA_VALUE
from protocol.messages.offset_commit_key import OFFSET_COMMIT_KEY
from protocol.messages.offset_commit_value import OFFSET_COMMIT_VALUE
from protocol.messages.request_header import RequestHeader
from protocol.messages.transaction_log_key import TRANSACTION_LOG_KEY
from protocol.messages.transaction_log_value import TRANSACTION_LOG_VALUE
from protocol.registry import APIS
from protocol.versioned import decode_versioned, encode_versioned
from tests.protocol.strategies import all_pairs, message_strategy

PAIRS = all_pairs()
_HEADER_FIELDS = st.tuples(st.integers(-(2**31), 2**31 - 1), st.none() | st.text(max_size=8))


@pytest.mark.parametrize(("api_key", "version"), PAIRS)
@settings(max_examples=15, deadline=None)
@given(data=st.data(), header=_HEADER_FIELDS)
def test_request_roundtrip(api_key: int, version: int, data: st.DataObject, header: tuple[int, str | None]) -> None:
    body = data.draw(message_strategy(APIS[api_key].request, version))
    correlation_id, client_id = header
    request_header = RequestHeader(
        request_api_key=api_key, request_api_version=version, correlation_id=correlation_id, client_id=client_id
    )
    frame = api.encode_request(request_header, body)
    decoded = api.decode_request(frame[4:])
    assert decoded.header == request_header
    assert decoded.body == body


@pytest.mark.parametrize(("api_key", "version"), PAIRS)
@settings(max_examples=15, deadline=None)
@given(data=st.data(), correlation_id=st.integers(-(2**31), 2**31 - 1))
def test_response_roundtrip(api_key: int, version: int, data: st.DataObject, correlation_id: int) -> None:
    body = data.draw(message_strategy(APIS[api_key].response, version))
    frame = api.encode_response(api_key, version, correlation_id, body)
    header, decoded = api.decode_response(api_key, version, frame[4:])
    assert header.correlation_id == correlation_id
    assert decoded == body


@pytest.mark.parametrize(("api_key", "version"), PAIRS)
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_interpreted_and_compiled_codecs_agree(api_key: int, version: int, data: st.DataObject) -> None:
    """The interpreted construct is the reference for the compiled one: same bytes out, same value back."""
    decl = APIS[api_key].request
    body = data.draw(message_strategy(decl, version))
    compiled_bytes = api.encode_body(decl, version, body)
    assert schema.interpreted(decl, version).build(body) == compiled_bytes
    assert schema.interpreted(decl, version).parse(compiled_bytes) == body


RECORD_DECLS = [
    (OFFSET_COMMIT_KEY, 1),
    (OFFSET_COMMIT_VALUE, 4),
    (GROUP_METADATA_KEY, 2),
    (GROUP_METADATA_VALUE, 4),
    (CONSUMER_PROTOCOL_SUBSCRIPTION, 3),
    (CONSUMER_PROTOCOL_ASSIGNMENT, 3),
    (TRANSACTION_LOG_KEY, 0),
    (TRANSACTION_LOG_VALUE, 1),
]


@pytest.mark.parametrize(
    ("decl", "version"),
    [(d, v) for d, hi in RECORD_DECLS for v in range(d.valid.lo, hi + 1)],
    ids=lambda x: getattr(x, "name", str(x)),
)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_versioned_blob_roundtrip(decl, version: int, data: st.DataObject) -> None:  # type: ignore[no-untyped-def]
    value = data.draw(message_strategy(decl, version))
    assert decode_versioned(decl, encode_versioned(decl, version, value), clamp=False, strict_end=True) == (
        version,
        value,
    )


@settings(max_examples=50, deadline=None)
@given(
    key=message_strategy(OFFSET_COMMIT_KEY, 1) | message_strategy(GROUP_METADATA_KEY, 2),
    data=st.data(),
)
def test_consumer_offsets_record_roundtrip(key, data: st.DataObject) -> None:  # type: ignore[no-untyped-def]
    """What the coordinator writes reads back to the same key and value, tombstones included."""
    value_decl = OFFSET_COMMIT_VALUE if key.__class__.__name__ == "OffsetCommitKey" else GROUP_METADATA_VALUE
    version = 3
    value = data.draw(st.none() | message_strategy(value_decl, version))
    if value is not None and value_decl is OFFSET_COMMIT_VALUE:
        value.expire_timestamp = -1
    encoded_key = consumer_offsets.encode_key(key)
    assert consumer_offsets.decode_key(encoded_key) == key
    assert consumer_offsets.decode_value(key, consumer_offsets.encode_value(value)) == value


def test_offset_commit_value_v1_carries_expire_timestamp() -> None:
    from protocol.messages.offset_commit_value import OffsetCommitValue

    value = OffsetCommitValue(offset=10, metadata="m", commit_timestamp=5, expire_timestamp=99)
    encoded = consumer_offsets.encode_value(value)
    assert encoded is not None and encoded[:2] == b"\x00\x01"
    assert (
        consumer_offsets.decode_value(
            consumer_offsets.decode_key(b"\x00\x01\x00\x01g\x00\x01t\x00\x00\x00\x00"), encoded
        )
        == value
    )  # type: ignore[arg-type]


def test_unknown_key_versions_are_skipped() -> None:
    """Share-group records (key version >= 9) are not ours to load; the loader skips them. Versions 3-8 (KIP-848
    consumer groups) are decoded: tests/protocol/test_consumer_group_records.py."""
    assert consumer_offsets.decode_key(b"\x00\x09\x00\x01g") is None


def test_subscription_reader_accepts_newer_versions() -> None:
    """A client newer than us may send subscription v4; Kafka reads it as its newest known version."""
    from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription

    blob = consumer_protocol.encode_subscription(ConsumerProtocolSubscription(topics=["a", "b"]), version=3)
    newer = b"\x00\x04" + blob[2:] + b"future-fields"
    assert consumer_protocol.decode_subscription(newer).topics == ["a", "b"]
