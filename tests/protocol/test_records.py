"""Record batch v2 codec and Kafka varints.

Correctness is anchored three ways: a batch laid out byte by byte from the protocol spec, round-trips through
hypothesis, and two independent implementations (kafka-python, aiokafka) reading our bytes and writing bytes we
read. The fuzz tests pin the hostile-input contract: DecodeError or success, nothing else.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import struct
import warnings
from typing import Any

import cramjam
import crc32c
import pytest
from aiokafka.record.default_records import (
    DefaultRecordBatch as AioRecordBatch,
)
from aiokafka.record.default_records import (
    DefaultRecordBatchBuilder as AioRecordBatchBuilder,
)
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from protocol.errors import DecodeError, EncodeError
from protocol.records import (
    BATCH_HEADER_SIZE,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    Compression,
    Record,
    RecordBatch,
    TimestampType,
    compress,
    decode_batch,
    decompress,
    encode_batch,
    iter_batch_headers,
    iter_batches,
    peek_batch_header,
    read_batch_records,
    verify_batch_crc,
)
from protocol.varint import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    UINT32_MAX,
    append_uvarint,
    append_varint,
    append_varlong,
    read_uvarint,
    read_varint,
    read_varlong,
    uvarint_size,
    varint_size,
    varlong_size,
    write_uvarint,
    write_varint,
    write_varlong,
)

with warnings.catch_warnings():
    # kafka-python's package import trips a DeprecationWarning (importlib.resources.read_text) on 3.11.
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatch as KpRecordBatch
    from kafka.record.default_records import DefaultRecordBatchBuilder as KpRecordBatchBuilder
    from kafka.record.util import decode_varint as kp_decode_varint
    from kafka.record.util import encode_varint as kp_encode_varint

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ALL_CODECS = list(Compression)
# kafka-python 3.x only does gzip without python-snappy / lz4 / zstandard, none of which are installed;
# aiokafka reaches snappy, lz4 and zstd through cramjam, with its own xerial/frame handling.
KAFKA_PYTHON_CODECS = [Compression.NONE, Compression.GZIP]


# --- varints ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, "00"),
        (1, "01"),
        (127, "7f"),
        (128, "8001"),
        (300, "ac02"),
        (16384, "808001"),
        (UINT32_MAX, "ffffffff0f"),
    ],
)
def test_uvarint_known_encodings(value: int, encoded: str) -> None:
    raw = bytes.fromhex(encoded)
    assert write_uvarint(value) == raw
    assert read_uvarint(raw, 0) == (value, len(raw))
    assert uvarint_size(value) == len(raw)


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, "00"),
        (-1, "01"),
        (1, "02"),
        (-64, "7f"),
        (63, "7e"),
        (64, "8001"),
        (INT32_MAX, "feffffff0f"),
        (INT32_MIN, "ffffffff0f"),
    ],
)
def test_varint_known_encodings(value: int, encoded: str) -> None:
    raw = bytes.fromhex(encoded)
    assert write_varint(value) == raw
    assert read_varint(raw, 0) == (value, len(raw))
    assert varint_size(value) == len(raw)


@pytest.mark.parametrize(
    ("value", "encoded"),
    [(0, "00"), (-1, "01"), (INT64_MAX, "feffffffffffffffff01"), (INT64_MIN, "ffffffffffffffffff01")],
)
def test_varlong_known_encodings(value: int, encoded: str) -> None:
    raw = bytes.fromhex(encoded)
    assert write_varlong(value) == raw
    assert read_varlong(raw, 0) == (value, len(raw))
    assert varlong_size(value) == len(raw)


@FAST
@given(st.integers(0, UINT32_MAX), st.binary(max_size=3))
def test_uvarint_round_trip(value: int, prefix: bytes) -> None:
    out = bytearray(prefix)
    append_uvarint(out, value)
    assert bytes(out[len(prefix) :]) == write_uvarint(value)
    assert len(out) - len(prefix) == uvarint_size(value)
    assert read_uvarint(memoryview(bytes(out)), len(prefix)) == (value, len(out))


@FAST
@given(st.integers(INT32_MIN, INT32_MAX))
def test_varint_round_trip_and_matches_kafka_python(value: int) -> None:
    out = bytearray()
    append_varint(out, value)
    assert bytes(out) == write_varint(value)
    assert len(out) == varint_size(value)
    assert read_varint(bytes(out), 0) == (value, len(out))
    # kafka-python's varint is the 64-bit zigzag one, which coincides with Kafka's int32 varint in range.
    theirs = bytearray()
    kp_encode_varint(value, theirs.append)
    assert bytes(theirs) == bytes(out)


@FAST
@given(st.integers(INT64_MIN, INT64_MAX))
def test_varlong_round_trip_and_matches_kafka_python(value: int) -> None:
    out = bytearray()
    append_varlong(out, value)
    assert bytes(out) == write_varlong(value)
    assert len(out) == varlong_size(value)
    assert read_varlong(bytes(out), 0) == (value, len(out))
    assert kp_decode_varint(bytearray(out), 0) == (value, len(out))


@pytest.mark.parametrize("reader", [read_uvarint, read_varint])
def test_varint_longer_than_five_bytes_is_rejected(reader: object) -> None:
    assert callable(reader)
    with pytest.raises(DecodeError, match="longer than 5 bytes") as info:
        reader(b"\x00\x80\x80\x80\x80\x80\x00", 1)
    assert info.value.offset == 1


def test_varlong_longer_than_ten_bytes_is_rejected() -> None:
    with pytest.raises(DecodeError, match="longer than 10 bytes"):
        read_varlong(b"\x80" * 10 + b"\x00", 0)
    # Ten bytes is fine, even when not minimal.
    assert read_varlong(b"\x80" * 9 + b"\x00", 0) == (0, 10)


@pytest.mark.parametrize(
    ("reader", "raw"),
    [(read_uvarint, "ffffffff1f"), (read_varint, "8080808010"), (read_varlong, "ffffffffffffffffff02")],
)
def test_varint_overflowing_its_width_is_rejected(reader: object, raw: str) -> None:
    assert callable(reader)
    with pytest.raises(DecodeError, match="overflows"):
        reader(bytes.fromhex(raw), 0)


@pytest.mark.parametrize("reader", [read_uvarint, read_varint, read_varlong])
@pytest.mark.parametrize("raw", ["", "80", "ff80", "808080"])
def test_truncated_varint_is_rejected(reader: object, raw: str) -> None:
    assert callable(reader)
    with pytest.raises(DecodeError, match="truncated"):
        reader(bytes.fromhex(raw), 0)


def test_varint_path_is_reported() -> None:
    with pytest.raises(DecodeError) as info:
        read_varint(b"\x80", 0, "topic.partition")
    assert info.value.path == "topic.partition"
    assert info.value.offset == 0


@pytest.mark.parametrize(
    ("writer", "value"),
    [
        (write_uvarint, -1),
        (write_uvarint, UINT32_MAX + 1),
        (write_varint, INT32_MAX + 1),
        (write_varint, INT32_MIN - 1),
        (write_varlong, INT64_MAX + 1),
        (write_varlong, INT64_MIN - 1),
    ],
)
def test_out_of_range_varint_write_is_rejected(writer: object, value: int) -> None:
    assert callable(writer)
    with pytest.raises(EncodeError):
        writer(value)


# --- golden batch -----------------------------------------------------------------------------------------------

GOLDEN_BATCH = RecordBatch(
    base_offset=1000,
    partition_leader_epoch=7,
    is_transactional=True,
    last_offset_delta=1,
    base_timestamp=1_700_000_000_000,
    max_timestamp=1_700_000_000_300,
    producer_id=42,
    producer_epoch=3,
    base_sequence=10,
    records=[
        Record(offset_delta=0, timestamp_delta=0, key=b"k", value=b"hello", headers=[("h", b"v")]),
        Record(offset_delta=1, timestamp_delta=300, key=None, value=b"", headers=[("trace", None)]),
    ],
)


def _golden_bytes() -> bytes:
    records = bytes(
        [
            # record 0
            0x20,  # length: zigzag(16)
            0x00,  # attributes
            0x00,  # timestampDelta: zigzag(0)
            0x00,  # offsetDelta: zigzag(0)
            0x02, *b"k",  # key: length zigzag(1), "k"
            0x0A, *b"hello",  # value: length zigzag(5), "hello"
            0x02,  # headers count: zigzag(1)
            0x02, *b"h",  # header key: length zigzag(1), "h"
            0x02, *b"v",  # header value: length zigzag(1), "v"
            # record 1
            0x1C,  # length: zigzag(14)
            0x00,  # attributes
            0xD8, 0x04,  # timestampDelta: zigzag(300) = 600 = 0x58 | 0x80, 600 >> 7 = 4
            0x02,  # offsetDelta: zigzag(1)
            0x01,  # key: length zigzag(-1) = null
            0x00,  # value: length zigzag(0) = empty
            0x02,  # headers count: zigzag(1)
            0x0A, *b"trace",  # header key: length zigzag(5), "trace"
            0x01,  # header value: zigzag(-1) = null
        ]
    )  # fmt: skip
    assert len(records) == 32
    after_crc = bytes(
        [
            0x00, 0x10,  # attributes: compression none, CreateTime, transactional (bit 4)
            0x00, 0x00, 0x00, 0x01,  # lastOffsetDelta = 1
            0x00, 0x00, 0x01, 0x8B, 0xCF, 0xE5, 0x68, 0x00,  # baseTimestamp = 1_700_000_000_000
            0x00, 0x00, 0x01, 0x8B, 0xCF, 0xE5, 0x69, 0x2C,  # maxTimestamp = 1_700_000_000_300
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2A,  # producerId = 42
            0x00, 0x03,  # producerEpoch = 3
            0x00, 0x00, 0x00, 0x0A,  # baseSequence = 10
            0x00, 0x00, 0x00, 0x02,  # records count = 2
        ]
    ) + records  # fmt: skip
    before_crc = bytes(
        [
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xE8,  # baseOffset = 1000
            0x00, 0x00, 0x00, 0x51,  # batchLength = 81 = 93 total - 12
            0x00, 0x00, 0x00, 0x07,  # partitionLeaderEpoch = 7
            0x02,  # magic = 2
        ]
    )  # fmt: skip
    crc = crc32c.crc32c(after_crc).to_bytes(4, "big")  # CRC32C over attributes..end
    golden = before_crc + crc + after_crc
    assert len(golden) == 93
    return golden


def test_golden_encode() -> None:
    assert encode_batch(GOLDEN_BATCH) == _golden_bytes()


def test_golden_decode_and_header() -> None:
    golden = _golden_bytes()
    assert decode_batch(golden) == (GOLDEN_BATCH, 93)
    header = peek_batch_header(golden)
    assert header.size == 93
    assert header.batch_length == 81
    assert header.record_count == 2
    assert header.crc == crc32c.crc32c(golden[21:])
    assert header.compression is Compression.NONE
    assert header.is_transactional
    assert not header.is_control
    assert header.timestamp_type is TimestampType.CREATE_TIME
    assert (header.last_offset, header.next_offset, header.last_sequence) == (1001, 1002, 11)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (42, 3, 10)
    assert header.max_timestamp == 1_700_000_000_300


def test_golden_decodes_with_kafka_python() -> None:
    theirs = KpRecordBatch(bytearray(_golden_bytes()))
    assert theirs.validate_crc()
    assert theirs.is_transactional
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in theirs] == [
        (1000, 1_700_000_000_000, b"k", b"hello", [("h", b"v")]),
        (1001, 1_700_000_000_300, None, b"", [("trace", None)]),
    ]


def test_batch_helpers() -> None:
    batch = GOLDEN_BATCH
    assert [(offset, ts) for offset, ts, _ in batch.absolute()] == [
        (1000, 1_700_000_000_000),
        (1001, 1_700_000_000_300),
    ]
    assert batch.attributes == 0x10
    appended = dataclasses.replace(batch, timestamp_type=TimestampType.LOG_APPEND_TIME, max_timestamp=5)
    assert [appended.timestamp_of(r) for r in appended.records] == [5, 5]
    wrapping = dataclasses.replace(batch, base_sequence=INT32_MAX, last_offset_delta=2)
    assert wrapping.last_sequence == 1
    assert dataclasses.replace(batch, base_sequence=-1).last_sequence == -1

    built = RecordBatch.from_records(batch.records, base_offset=1000, base_timestamp=1_700_000_000_000)
    assert (built.last_offset_delta, built.max_timestamp) == (1, 1_700_000_000_300)
    assert RecordBatch.from_records([]).last_offset_delta == 0


def test_log_append_time_agrees_with_kafka_python() -> None:
    batch = dataclasses.replace(GOLDEN_BATCH, timestamp_type=TimestampType.LOG_APPEND_TIME, max_timestamp=77)
    theirs = list(KpRecordBatch(bytearray(encode_batch(batch))))
    assert [r.timestamp for r in theirs] == [batch.timestamp_of(r) for r in batch.records] == [77, 77]


# --- strategies -------------------------------------------------------------------------------------------------

header_keys = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=8)
nullable_bytes = st.none() | st.binary(max_size=40)
records_strategy = st.builds(
    Record,
    offset_delta=st.integers(INT32_MIN, INT32_MAX),
    timestamp_delta=st.integers(INT64_MIN // 2, INT64_MAX // 2),
    key=nullable_bytes,
    value=nullable_bytes,
    headers=st.lists(st.tuples(header_keys, nullable_bytes), max_size=3),
    attributes=st.integers(-128, 127),
)
int16 = st.integers(-(1 << 15), (1 << 15) - 1)
int32 = st.integers(INT32_MIN, INT32_MAX)
int64 = st.integers(INT64_MIN, INT64_MAX)
batches = st.builds(
    RecordBatch,
    base_offset=int64,
    partition_leader_epoch=int32,
    compression=st.just(Compression.NONE),
    timestamp_type=st.sampled_from(TimestampType),
    is_transactional=st.booleans(),
    is_control=st.booleans(),
    has_delete_horizon=st.booleans(),
    last_offset_delta=int32,
    base_timestamp=int64,
    max_timestamp=int64,
    producer_id=int64,
    producer_epoch=int16,
    base_sequence=int32,
    records=st.lists(records_strategy, max_size=6),
)


@pytest.mark.parametrize("codec", ALL_CODECS, ids=lambda c: c.name)
@FAST
@given(batch=batches)
def test_round_trip(codec: Compression, batch: RecordBatch) -> None:
    batch = dataclasses.replace(batch, compression=codec)
    encoded = encode_batch(batch)
    assert decode_batch(encoded) == (batch, len(encoded))
    assert encode_batch(decode_batch(encoded)[0]) == encoded
    header = peek_batch_header(encoded)
    assert (header.size, header.compression, header.record_count) == (len(encoded), codec, len(batch.records))
    assert header.last_offset == batch.last_offset


@FAST
@given(batch=batches, codec=st.sampled_from(ALL_CODECS))
def test_compression_argument_overrides_batch_codec(batch: RecordBatch, codec: Compression) -> None:
    decoded, _ = decode_batch(encode_batch(batch, compression=codec))
    assert decoded == dataclasses.replace(batch, compression=codec)


def test_large_batch_round_trips_with_multiple_compressed_blocks() -> None:
    # 200 KiB of records spans several xerial (32 KiB), LZ4 (64 KiB) and zstd (128 KiB) blocks.
    records = [Record(i, i, str(i).encode(), bytes([i % 251]) * 1024 + str(i).encode()) for i in range(200)]
    for codec in ALL_CODECS:
        batch = RecordBatch.from_records(records, compression=codec, base_timestamp=0)
        encoded = encode_batch(batch)
        assert decode_batch(encoded)[0] == batch
        if codec is not Compression.NONE:
            theirs = AioRecordBatch(bytes(encoded))
            assert [r.value for r in theirs] == [r.value for r in records]


def test_invalid_utf8_header_key_survives_decode_and_reencode() -> None:
    raw_key = b"caf\xe9\xff"  # latin-1 bytes, not UTF-8: Java decodes these leniently
    batch = RecordBatch(records=[Record(0, 0, None, b"v", [(raw_key.decode("utf-8", "surrogateescape"), b"x")])])
    encoded = encode_batch(batch)
    assert raw_key in encoded
    decoded, _ = decode_batch(encoded)
    assert decoded == batch
    assert encode_batch(decoded) == encoded


# --- cross-checks with independent implementations -------------------------------------------------------------

cross_records = st.lists(
    st.tuples(
        st.integers(0, 10_000),  # timestamp delta from a fixed base
        nullable_bytes,
        # Compressible values, so the clients' builders do not fall back to no compression.
        st.binary(min_size=1, max_size=8).map(lambda b: b * 30),
        st.lists(st.tuples(header_keys, nullable_bytes), max_size=2),
    ),
    min_size=1,
    max_size=6,
)
BASE_TS = 1_700_000_000_000
Row = tuple[int, bytes | None, bytes, list[tuple[str, bytes | None]]]
CLIENT_CODECS = [("kafka-python", codec) for codec in KAFKA_PYTHON_CODECS] + [("aiokafka", c) for c in ALL_CODECS]
CLIENT_CODEC_IDS = [f"{client}-{codec.name}" for client, codec in CLIENT_CODECS]


def _ours(rows: list[Row]) -> list[Record]:
    first = rows[0][0]
    return [Record(i, ts - first, key, value, headers) for i, (ts, key, value, headers) in enumerate(rows)]


def _check_theirs(theirs: Any, batch: RecordBatch, codec: Compression) -> None:
    """Both clients' batch classes share this duck type."""
    assert theirs.validate_crc()
    assert theirs.compression_type == codec
    assert theirs.producer_id == batch.producer_id
    assert theirs.base_sequence == batch.base_sequence
    got = [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in theirs]
    expected = [(o, t, r.key, r.value, r.headers) for o, t, r in batch.absolute()]
    assert got == expected


@pytest.mark.parametrize(("client", "codec"), CLIENT_CODECS, ids=CLIENT_CODEC_IDS)
@settings(max_examples=25, deadline=None)
@given(rows=cross_records)
def test_our_bytes_decode_with_clients(client: str, codec: Compression, rows: list[Row]) -> None:
    batch = RecordBatch.from_records(
        _ours(rows),
        base_offset=500,
        base_timestamp=BASE_TS + rows[0][0],
        compression=codec,
        producer_id=9,
        producer_epoch=1,
        base_sequence=4,
    )
    encoded = encode_batch(batch)
    theirs = KpRecordBatch(bytearray(encoded)) if client == "kafka-python" else AioRecordBatch(encoded)
    _check_theirs(theirs, batch, codec)


@pytest.mark.parametrize(("client", "codec"), CLIENT_CODECS, ids=CLIENT_CODEC_IDS)
@settings(max_examples=25, deadline=None)
@given(rows=cross_records)
def test_client_bytes_decode_with_ours(client: str, codec: Compression, rows: list[Row]) -> None:
    builder_type = KpRecordBatchBuilder if client == "kafka-python" else AioRecordBatchBuilder
    builder = builder_type(2, int(codec), False, 9, 1, 4, 1 << 20)
    for i, (ts, key, value, headers) in enumerate(rows):
        builder.append(i, BASE_TS + ts, key, value, headers)
    encoded = bytes(builder.build())

    batch, end = decode_batch(encoded)
    assert end == len(encoded)
    assert batch.compression == codec
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (9, 1, 4)
    assert batch.records == _ours(rows)
    assert batch.base_timestamp == BASE_TS + rows[0][0]
    assert batch.max_timestamp == BASE_TS + max(ts for ts, *_ in rows)
    # Re-encoding an uncompressed client batch reproduces it exactly.
    if codec is Compression.NONE:
        assert encode_batch(batch) == encoded


def test_raw_snappy_as_written_by_librdkafka_is_read() -> None:
    plain = encode_batch(GOLDEN_BATCH)
    raw = bytes(cramjam.snappy.compress_raw(plain[BATCH_HEADER_SIZE:]))
    rewrapped = _rewrap(plain, Compression.SNAPPY, raw)
    assert decode_batch(rewrapped)[0] == dataclasses.replace(GOLDEN_BATCH, compression=Compression.SNAPPY)


def test_concatenated_gzip_members_are_read() -> None:
    plain = encode_batch(GOLDEN_BATCH)[BATCH_HEADER_SIZE:]
    two_members = gzip.compress(plain[:10]) + gzip.compress(plain[10:])
    assert decompress(Compression.GZIP, two_members) == plain
    # Like Java's GZIPInputStream, bytes after the last member that are not another member are ignored.
    assert decompress(Compression.GZIP, two_members + b"\x00\x00junk") == plain
    with pytest.raises(DecodeError, match="gzip"):
        decompress(Compression.GZIP, two_members + b"\x1f\x8bjunk")


# --- hostile input ----------------------------------------------------------------------------------------------


def _rewrap(encoded: bytes, codec: Compression, payload: bytes, *, count: int | None = None) -> bytes:
    """Replace a batch's records section, fixing length, codec bits and CRC, to fuzz past the CRC check."""
    out = bytearray(encoded[:BATCH_HEADER_SIZE] + payload)
    struct.pack_into(">i", out, 8, len(out) - 12)
    attributes = struct.unpack_from(">h", out, 21)[0]
    struct.pack_into(">h", out, 21, (attributes & ~0x07) | int(codec))
    if count is not None:
        struct.pack_into(">i", out, 57, count)
    struct.pack_into(">I", out, 17, crc32c.crc32c(bytes(out[21:])))
    return bytes(out)


def _decode_or_decode_error(data: bytes, **kwargs: bool) -> None:
    try:
        decode_batch(data, **kwargs)
    except DecodeError as exc:
        assert exc.offset >= -1
        assert isinstance(exc.path, str)


@FUZZ
@given(st.binary(max_size=200))
def test_random_bytes_only_raise_decode_error(data: bytes) -> None:
    _decode_or_decode_error(data)
    _decode_or_decode_error(data, verify_crc=False)
    with contextlib.suppress(DecodeError):
        list(iter_batches(data, verify_crc=False))


@FUZZ
@given(payload=st.binary(max_size=120), codec=st.sampled_from(ALL_CODECS), count=st.integers(-2, 2**31 - 1))
@example(payload=b"\x02\x00\x00\x00\x00\x00\x00", codec=Compression.NONE, count=2**31 - 1)
def test_random_records_section_behind_valid_crc(payload: bytes, codec: Compression, count: int) -> None:
    _decode_or_decode_error(_rewrap(encode_batch(GOLDEN_BATCH), codec, payload, count=count))


@pytest.mark.parametrize("codec", ALL_CODECS, ids=lambda c: c.name)
def test_random_payload_behind_real_compression_header(codec: Compression) -> None:
    # Mutate real compressed payloads (past their magic) so the frame walkers and decoders see plausible input.
    compressed = compress(codec, encode_batch(GOLDEN_BATCH)[BATCH_HEADER_SIZE:])
    for i in range(len(compressed)):
        for mask in (0x01, 0x80, 0xFF):
            mutated = bytearray(compressed)
            mutated[i] ^= mask
            _decode_or_decode_error(_rewrap(encode_batch(GOLDEN_BATCH), codec, bytes(mutated)))
        _decode_or_decode_error(_rewrap(encode_batch(GOLDEN_BATCH), codec, compressed[:i]))


@pytest.mark.parametrize("codec", ALL_CODECS, ids=lambda c: c.name)
def test_every_truncation_raises_and_is_seen_as_a_torn_tail(codec: Compression) -> None:
    encoded = encode_batch(dataclasses.replace(GOLDEN_BATCH, compression=codec))
    for cut in range(len(encoded)):
        with pytest.raises(DecodeError):
            decode_batch(encoded[:cut])
        scan = iter_batches(encoded[:cut])
        assert list(scan) == []
        assert scan.valid_end == 0
        assert scan.truncated == (cut > 0)


@pytest.mark.parametrize("codec", ALL_CODECS, ids=lambda c: c.name)
def test_every_bit_flip_is_caught_or_confined_to_unprotected_fields(codec: Compression) -> None:
    original = dataclasses.replace(GOLDEN_BATCH, compression=codec)
    encoded = encode_batch(original)
    for index in range(len(encoded)):
        for bit in range(8):
            flipped = bytearray(encoded)
            flipped[index] ^= 1 << bit
            if index < 8 or 12 <= index < 16:
                # baseOffset and partitionLeaderEpoch sit before the CRC's range (the broker rewrites them).
                decoded, _ = decode_batch(bytes(flipped))
                assert decoded.records == original.records
                assert decoded.base_offset != original.base_offset or (
                    decoded.partition_leader_epoch != original.partition_leader_epoch
                )
            else:
                with pytest.raises(DecodeError):
                    decode_batch(bytes(flipped))
            _decode_or_decode_error(bytes(flipped), verify_crc=False)


def test_legacy_magic_is_rejected() -> None:
    for magic in (0, 1, 3):
        data = bytearray(_golden_bytes())
        data[16] = magic
        with pytest.raises(DecodeError, match="magic") as info:
            decode_batch(bytes(data))
        assert info.value.offset == 16
    # A v0 message (26 bytes) is shorter than a v2 header; its magic is still recognised.
    v0 = struct.pack(">qiIbbii", 0, 14, 0, 0, 0, -1, -1)
    with pytest.raises(DecodeError, match="magic 0"):
        peek_batch_header(v0)


def test_unknown_codec_and_negative_count_are_rejected() -> None:
    data = bytearray(_golden_bytes())
    data[22] |= 0x07
    with pytest.raises(DecodeError, match="compression"):
        peek_batch_header(bytes(data))
    negative = bytearray(_golden_bytes())
    struct.pack_into(">i", negative, 57, -1)
    with pytest.raises(DecodeError, match="negative record count"):
        peek_batch_header(bytes(negative))


def test_over_long_varint_inside_a_record_is_reported_with_its_path() -> None:
    plain = encode_batch(GOLDEN_BATCH)
    payload = b"\x80\x80\x80\x80\x80\x01" + plain[BATCH_HEADER_SIZE + 1 :]
    with pytest.raises(DecodeError, match="longer than 5 bytes") as info:
        decode_batch(_rewrap(plain, Compression.NONE, payload))
    assert info.value.path == "batch.records[0].length"
    assert info.value.offset == BATCH_HEADER_SIZE


def test_key_length_beyond_the_record_is_reported() -> None:
    plain = bytearray(encode_batch(GOLDEN_BATCH))
    plain[BATCH_HEADER_SIZE + 4] = 0x7E  # record 0 key length: zigzag(63), far beyond the 16-byte record
    with pytest.raises(DecodeError, match="exceeds record") as info:
        decode_batch(bytes(plain), verify_crc=False)
    assert info.value.path == "batch.records[0].key"


def test_count_mismatch_is_rejected() -> None:
    plain = encode_batch(GOLDEN_BATCH)
    with pytest.raises(DecodeError, match="left after 1 records"):
        decode_batch(_rewrap(plain, Compression.NONE, plain[BATCH_HEADER_SIZE:], count=1))
    with pytest.raises(DecodeError, match="records\\[2\\]"):
        decode_batch(_rewrap(plain, Compression.NONE, plain[BATCH_HEADER_SIZE:], count=3))


def _zstd_rle_bomb(blocks: int) -> bytes:
    frame = bytearray(b"\x28\xb5\x2f\xfd")  # zstd magic
    frame.append(0x00)  # descriptor: no content size, not single segment, no checksum, no dictionary
    frame.append(0x58)  # window descriptor: 2 MiB window
    for i in range(blocks):
        header = (128 * 1024) << 3 | 1 << 1 | (1 if i == blocks - 1 else 0)  # RLE block of 128 KiB
        frame += header.to_bytes(3, "little") + b"\x00"
    return bytes(frame)


def test_zstd_rle_bomb_is_refused_before_decompression() -> None:
    bomb = _zstd_rle_bomb(600)  # 2.4 KB claiming 75 MiB
    assert len(bomb) < 3000
    with pytest.raises(DecodeError, match="exceeds limit"):
        decompress(Compression.ZSTD, bomb)
    with pytest.raises(DecodeError, match="exceeds limit"):
        decode_batch(_rewrap(encode_batch(GOLDEN_BATCH), Compression.ZSTD, bomb))
    # The same frame with a budget that fits decodes for real, which shows the walk reads frames correctly.
    assert decompress(Compression.ZSTD, _zstd_rle_bomb(4)) == bytes(512 * 1024)


@pytest.mark.parametrize("codec", [c for c in ALL_CODECS if c is not Compression.NONE], ids=lambda c: c.name)
def test_decompressed_size_limit(codec: Compression) -> None:
    data = bytes(300_000)
    compressed = compress(codec, data)
    assert decompress(codec, compressed) == data
    with pytest.raises(DecodeError, match="exceeds"):
        decompress(codec, compressed, max_size=100_000)
    batch = RecordBatch.from_records([Record(0, 0, None, data)], compression=codec)
    encoded = encode_batch(batch)
    with pytest.raises(DecodeError, match="exceeds"):
        decode_batch(encoded, max_decompressed_size=100_000)
    assert decode_batch(encoded, max_decompressed_size=DEFAULT_MAX_DECOMPRESSED_SIZE)[0] == batch


def test_lz4_declared_content_size_counts_against_the_limit() -> None:
    frame = bytearray(compress(Compression.LZ4, b"abc"))
    frame[4] |= 0x08  # content-size flag; a decoder may preallocate from it
    frame[7:7] = (1 << 40).to_bytes(8, "little")
    with pytest.raises(DecodeError, match="exceeds limit"):
        decompress(Compression.LZ4, bytes(frame))


@FUZZ
@given(codec=st.sampled_from(ALL_CODECS), data=st.binary(max_size=100))
def test_decompress_random_bytes(codec: Compression, data: bytes) -> None:
    with contextlib.suppress(DecodeError):
        decompress(codec, data, max_size=1 << 20)


def test_encode_rejects_out_of_range_fields() -> None:
    with pytest.raises(EncodeError):
        encode_batch(RecordBatch(producer_epoch=1 << 15))
    with pytest.raises(EncodeError):
        encode_batch(RecordBatch(records=[Record(INT32_MAX + 1, 0, None, None)]))
    with pytest.raises(EncodeError):
        encode_batch(RecordBatch(records=[Record(0, 0, None, None, attributes=200)]))
    with pytest.raises(EncodeError):
        encode_batch(RecordBatch(records=[Record(0, 0, None, None, [("\ud800", None)])]))


# --- scanning ---------------------------------------------------------------------------------------------------


def _three_batches() -> tuple[bytes, list[int]]:
    parts = [
        encode_batch(dataclasses.replace(GOLDEN_BATCH, base_offset=offset, compression=codec))
        for offset, codec in ((0, Compression.NONE), (2, Compression.ZSTD), (4, Compression.GZIP))
    ]
    starts = [0, len(parts[0]), len(parts[0]) + len(parts[1])]
    return b"".join(parts), starts


def test_iter_batches_reads_all_and_reports_clean_end() -> None:
    data, starts = _three_batches()
    scan = iter_batches(data)
    got = [(pos, batch.base_offset) for pos, batch in scan]
    assert got == list(zip(starts, [0, 2, 4], strict=True))
    assert scan.valid_end == len(data)
    assert not scan.truncated
    headers = iter_batch_headers(memoryview(data))
    assert [(pos, h.base_offset, h.size) for pos, h in headers] == [
        (pos, off, end - pos) for pos, off, end in zip(starts, [0, 2, 4], [*starts[1:], len(data)], strict=True)
    ]


def test_iter_batches_stops_at_torn_tail() -> None:
    data, starts = _three_batches()
    for cut in range(starts[2] + 1, len(data)):
        scan = iter_batches(data[:cut])
        assert [batch.base_offset for _, batch in scan] == [0, 2]
        assert scan.valid_end == starts[2]
        assert scan.truncated
        headers = iter_batch_headers(data[:cut])
        assert [h.base_offset for _, h in headers] == [0, 2]
        assert (headers.valid_end, headers.truncated) == (starts[2], True)


def test_iter_batches_raises_on_corrupt_batch_and_keeps_valid_end() -> None:
    data, starts = _three_batches()
    corrupt = bytearray(data)
    corrupt[starts[1] + 30] ^= 0x01  # inside the second batch's CRC range
    scan = iter_batches(bytes(corrupt))
    first = next(scan)
    assert first[0] == 0
    with pytest.raises(DecodeError, match="CRC"):
        next(scan)
    assert scan.valid_end == starts[1]
    # A zero-filled tail (preallocated file) has a bad length, which is corruption, not a torn write.
    zeros = iter_batch_headers(data + bytes(100))
    with pytest.raises(DecodeError, match="batch length"):
        list(zeros)
    assert zeros.valid_end == len(data)


def test_peek_works_on_header_alone_and_read_records_needs_the_batch() -> None:
    encoded = encode_batch(GOLDEN_BATCH)
    header = peek_batch_header(encoded[:BATCH_HEADER_SIZE])
    assert header.size == len(encoded)
    with pytest.raises(DecodeError, match="truncated batch"):
        read_batch_records(encoded[:-1], 0, header)
    with pytest.raises(DecodeError, match="truncated batch header"):
        peek_batch_header(encoded[: BATCH_HEADER_SIZE - 1])
    assert read_batch_records(encoded, 0, header) == GOLDEN_BATCH.records
    verify_batch_crc(encoded)
    # Batches can be read in place at any offset of a larger buffer.
    padded = b"\xff" * 7 + encoded + b"\xee" * 5
    assert decode_batch(memoryview(padded), 7) == (GOLDEN_BATCH, 7 + len(encoded))


def test_codecs_accept_plain_ints() -> None:
    assert decompress(2, compress(2, b"abc")) == b"abc"  # type: ignore[arg-type]
    with pytest.raises(EncodeError):
        compress(5, b"abc")  # type: ignore[arg-type]
    with pytest.raises(EncodeError):
        encode_batch(GOLDEN_BATCH, compression=7)  # type: ignore[arg-type]
