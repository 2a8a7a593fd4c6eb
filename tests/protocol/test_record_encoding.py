"""Records without headers (every record the coordinators write) take a shorter path through the encoder; it writes
the same bytes as the field-by-field encoder, at every size of every field. The coordinators' batches of (key, value)
pairs (`encode_key_value_batch`) are byte for byte the `RecordBatch` they stand for."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.records import Record, RecordBatch, _varint_bytes, decode_batch, encode_batch, encode_key_value_batch
from protocol.varint import append_varint, append_varlong, write_varint

BLOB = st.none() | st.binary(max_size=70) | st.binary(min_size=8_000, max_size=9_000)


def _field_by_field(record: Record) -> bytes:
    """Kafka's DefaultRecord layout, written one field at a time."""
    body = bytearray((record.attributes,))
    append_varlong(body, record.timestamp_delta)
    append_varint(body, record.offset_delta)
    for blob in (record.key, record.value):
        if blob is None:
            append_varint(body, -1)
        else:
            append_varint(body, len(blob))
            body += blob
    append_varint(body, 0)
    out = bytearray()
    append_varint(out, len(body))
    return bytes(out + body)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.builds(
            Record,
            offset_delta=st.integers(0, 2**31 - 1) | st.integers(-5, 200),
            timestamp_delta=st.integers(0, 63) | st.integers(-(2**40), 2**40),
            key=BLOB,
            value=BLOB,
        ),
        min_size=1,
        max_size=5,
    )
)
def test_headerless_records_encode_as_field_by_field(records: list[Record]) -> None:
    encoded = encode_batch(RecordBatch(records=records, last_offset_delta=0))
    payload = encoded[61:]  # after the v2 batch header
    assert payload == b"".join(_field_by_field(r) for r in records)
    decoded, _ = decode_batch(encoded)
    assert [(r.offset_delta, r.timestamp_delta, r.key, r.value) for r in decoded.records] == [
        (r.offset_delta, r.timestamp_delta, r.key, r.value) for r in records
    ]


def test_the_short_varints_are_the_varint_encoders() -> None:
    assert all(_varint_bytes(n) == write_varint(n) for n in range(-300, 20_000))


@settings(max_examples=150, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.binary(max_size=70) | st.binary(min_size=8_000, max_size=9_000), BLOB), max_size=70),
    timestamp=st.integers(-1, 2**63 - 1),
    producer=st.none() | st.tuples(st.integers(0, 2**63 - 1), st.integers(0, 2**15 - 1)),
)
def test_key_value_batches_are_the_record_batch_they_stand_for(
    pairs: list[tuple[bytes, bytes | None]], timestamp: int, producer: tuple[int, int] | None
) -> None:
    """As broker/offsets_log.py built them before: offset deltas 0..n-1, every timestamp the batch's, and for a
    transaction its producer with base sequence 0 and the transactional bit (up to 70 records: two-byte deltas)."""
    batch = RecordBatch(
        records=[Record(i, 0, k, v) for i, (k, v) in enumerate(pairs)],
        last_offset_delta=max(len(pairs) - 1, 0),
        base_timestamp=timestamp,
        max_timestamp=timestamp,
        **({} if producer is None else {"producer_id": producer[0], "producer_epoch": producer[1], "base_sequence": 0}),
        is_transactional=producer is not None,
    )
    if producer is None:
        encoded = encode_key_value_batch(pairs, timestamp)
    else:
        encoded = encode_key_value_batch(pairs, timestamp, *producer, 0, is_transactional=True)
    assert encoded == encode_batch(batch)
