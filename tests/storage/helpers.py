"""Batch builders for storage tests: real v2 batches from the project's codec."""

from __future__ import annotations

from protocol.records import Compression, Record, RecordBatch, encode_batch, iter_batches


def make_batch(
    count: int = 3,
    *,
    timestamp: int = 1_000,
    value_size: int = 10,
    key: bool = True,
    compression: Compression = Compression.NONE,
    tag: int = 0,
) -> bytes:
    """A producer-style batch (base offset 0) of ``count`` records, timestamps ``timestamp + i``."""
    records = [
        Record(
            offset_delta=i,
            timestamp_delta=i,
            key=f"k{tag}-{i}".encode() if key else None,
            value=(f"v{tag}-{i}-".encode() * value_size)[:value_size],
        )
        for i in range(count)
    ]
    return encode_batch(RecordBatch.from_records(records, base_timestamp=timestamp, compression=compression))


def decode_all(data: bytes) -> list[RecordBatch]:
    scan = iter_batches(data)
    batches = [batch for _, batch in scan]
    assert scan.valid_end == len(data), "read returned a partial batch"
    return batches


def offsets_of(data: bytes) -> list[int]:
    """Every record offset in ``data``."""
    return [offset for batch in decode_all(data) for offset, _, _ in batch.absolute()]
