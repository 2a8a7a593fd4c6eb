"""The produce path's batch-level validation: a batch (decompressed first if it is compressed) is accepted by an
object-free walk over its records (`protocol.record_scan`), and whatever the walk does not accept goes to the full
parser.

Two properties: the walk is never more lenient than the full parser (whatever it accepts, the parser accepts with
the same timestamps, offsets and keys, also for mutated bytes), and each refusal Kafka makes still happens, with
the same error, when the batch is one the walk reads: a record count that lies, a bad CRC, a timestamp out of the
window, a keyless record on a compacted topic.
"""

from __future__ import annotations

import struct
from pathlib import Path

import crc32c
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.errors import DecodeError
from protocol.record_scan import scan_records
from protocol.records import (
    BATCH_HEADER_SIZE,
    Compression,
    Record,
    RecordBatch,
    encode_batch,
    peek_batch_header,
    read_batch_records,
)
from storage import validation
from storage.config import LogConfig
from storage.errors import CorruptRecordError, InvalidRecordError, InvalidTimestampError
from storage.partition_log import PartitionLog
from tests.storage.helpers import make_batch, offsets_of

NOW = 1_795_526_181_961
WINDOW = LogConfig().with_overrides({"message.timestamp.before.max.ms": "60000"})
COMPACTED = LogConfig().with_overrides({"cleanup.policy": "compact"})

_records = st.lists(
    st.builds(
        Record,
        offset_delta=st.just(0),
        timestamp_delta=st.integers(-20_000, 20_000),
        key=st.none() | st.binary(max_size=300),
        value=st.none() | st.binary(max_size=9_000) | st.binary(min_size=16_000, max_size=20_000),
        headers=st.lists(st.tuples(st.text(max_size=5), st.none() | st.binary(max_size=200)), max_size=3),
    ),
    min_size=1,
    max_size=80,
)


def _encoded(records: list[Record], base_timestamp: int = NOW) -> bytes:
    for index, record in enumerate(records):
        record.offset_delta = index
    return encode_batch(RecordBatch.from_records(records, base_timestamp=base_timestamp))


def _agrees_with_the_parser(data: bytes | bytearray) -> None:
    """If the walk accepts the records of the batch in `data`, the full parser reads the same thing."""
    header = peek_batch_header(data)
    summary = scan_records(data, BATCH_HEADER_SIZE, len(data), header.record_count)
    if summary is None:
        return
    records = read_batch_records(data, 0, header)  # must not raise
    assert [r.offset_delta for r in records] == list(range(header.record_count))
    assert summary.min_timestamp_delta == min(r.timestamp_delta for r in records)
    assert summary.max_timestamp_delta == max(r.timestamp_delta for r in records)
    assert summary.all_keyed == all(r.key is not None for r in records)


@settings(max_examples=150, deadline=None)
@given(_records)
def test_the_walk_reads_what_the_parser_reads(records: list[Record]) -> None:
    data = _encoded(records)
    _agrees_with_the_parser(data)


@settings(max_examples=300, deadline=None)
@given(_records, st.lists(st.tuples(st.integers(0, 1 << 30), st.integers(0, 255)), min_size=1, max_size=4))
def test_the_walk_is_never_more_lenient_than_the_parser_on_mutated_records(
    records: list[Record], flips: list[tuple[int, int]]
) -> None:
    data = bytearray(_encoded(records))
    for where, byte in flips:
        data[BATCH_HEADER_SIZE + where % (len(data) - BATCH_HEADER_SIZE)] = byte
    try:
        _agrees_with_the_parser(data)
    except DecodeError:
        pytest.fail("the walk accepted records the parser refuses")


@pytest.mark.parametrize("compression", list(Compression))
def test_ordinary_producer_batches_are_accepted_without_the_full_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compression: Compression
) -> None:
    """Compressed ones too: decompressed once (as Kafka does), then walked."""
    monkeypatch.setattr(validation, "parse_records", _not_called)
    log = PartitionLog(tmp_path / "t-0", LogConfig(), now_ms=NOW)
    records = [Record(i, i, b"k", b"v" * 1000, [("h", b"x")]) for i in range(200)]
    batch = encode_batch(RecordBatch.from_records(records, base_timestamp=NOW, compression=compression))
    assert log.append(batch, now_ms=NOW).base_offset == 0
    assert log.append(make_batch(3, timestamp=NOW, compression=compression), now_ms=NOW).base_offset == 200
    assert offsets_of(log.read(0, 1 << 22)) == list(range(203))


@pytest.mark.parametrize(
    ("count", "value_size"), [(9_000, 1), (2, 300_000)], ids=["offset deltas of three bytes", "a 300 KB value"]
)
def test_three_byte_varints_are_walked_too(monkeypatch: pytest.MonkeyPatch, count: int, value_size: int) -> None:
    monkeypatch.setattr(validation, "parse_records", _not_called)
    batch = _encoded([Record(0, 0, b"k", b"v" * value_size) for _ in range(count)])
    checked = validation.validate_and_assign_offsets(batch, next_offset=7, now_ms=NOW, config=LogConfig())
    assert (checked.first_offset, checked.last_offset, checked.max_timestamp) == (7, 7 + count - 1, NOW)


def _not_called(*_: object, **__: object) -> None:
    raise AssertionError("the full parse ran for a batch the walk should accept")


def _with_count(batch: bytes, count: int) -> bytes:
    """`batch` with recordCount and lastOffsetDelta both set to agree with `count`, CRC recomputed: a batch whose
    header is consistent but whose records are more or fewer than it says."""
    data = bytearray(batch)
    struct.pack_into(">i", data, 23, count - 1)  # lastOffsetDelta
    struct.pack_into(">i", data, 57, count)  # recordCount
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    return bytes(data)


@pytest.mark.parametrize("count", [2, 4])
def test_a_record_count_that_lies_is_refused_and_nothing_is_written(tmp_path: Path, count: int) -> None:
    log = PartitionLog(tmp_path / "t-0", LogConfig(), now_ms=NOW)
    with pytest.raises(CorruptRecordError):
        log.append(_with_count(make_batch(3, timestamp=NOW), count), now_ms=NOW)
    assert log.log_end_offset == 0
    assert log.size_in_bytes == 0


def test_a_bad_crc_is_corrupt_message(tmp_path: Path) -> None:
    data = bytearray(make_batch(3, timestamp=NOW))
    data[-1] ^= 0xFF
    log = PartitionLog(tmp_path / "t-0", LogConfig(), now_ms=NOW)
    with pytest.raises(CorruptRecordError, match="CRC"):
        log.append(bytes(data), now_ms=NOW)
    assert log.log_end_offset == 0


def test_a_timestamp_out_of_the_window_lists_every_late_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small deltas (the walk reads them) on a base 62 s old: the window check on the range sends the batch to the
    full parse, which names each record, as Kafka does."""
    deltas = (0, 1_000, 4_000)
    old = NOW - 62_000
    log = PartitionLog(tmp_path / "t-0", WINDOW, now_ms=NOW)
    with pytest.raises(InvalidTimestampError) as raised:
        log.append(_encoded([Record(0, d, b"k", b"v") for d in deltas], base_timestamp=old), now_ms=NOW)
    assert [index for index, _ in raised.value.record_errors] == [0, 1]
    assert f"Timestamp {old} of message with offset 0 is out of range" in raised.value.record_errors[0][1]
    assert log.log_end_offset == 0
    # 3 s later all are inside the window: accepted by the walk, the max timestamp taken from the records
    monkeypatch.setattr(validation, "parse_records", _not_called)
    fresh = _encoded([Record(0, d, b"k", b"v") for d in deltas], base_timestamp=NOW - 59_000)
    checked = validation.validate_and_assign_offsets(fresh, next_offset=0, now_ms=NOW, config=WINDOW)
    assert checked.max_timestamp == NOW - 55_000


@pytest.mark.parametrize("compression", [Compression.NONE, Compression.ZSTD])
def test_a_keyless_record_on_a_compacted_topic_is_invalid_record(tmp_path: Path, compression: Compression) -> None:
    records = [Record(0, 0, b"k", b"v"), Record(1, 0, None, b"v"), Record(2, 0, b"k2", b"v")]
    batch = encode_batch(RecordBatch.from_records(records, base_timestamp=NOW, compression=compression))
    log = PartitionLog(tmp_path / "t-0", COMPACTED, now_ms=NOW)
    with pytest.raises(InvalidRecordError) as raised:
        log.append(batch, now_ms=NOW)
    assert type(raised.value) is InvalidRecordError
    assert raised.value.record_errors == [(1, "Compacted topic cannot accept message without key.")]
    assert log.log_end_offset == 0
    # the same batch is fine where keys are not required
    assert PartitionLog(tmp_path / "u-0", LogConfig(), now_ms=NOW).append(batch, now_ms=NOW).base_offset == 0
