"""Batch builders for storage tests: real v2 batches from the project's codec."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from protocol.records import Compression, Record, RecordBatch, encode_batch, iter_batches
from storage.partition_log import AppendOrigin, PartitionLog


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


#: The time the compaction tests run at.
NOW = 1_700_000_000_000

Op = tuple[bytes | None, bytes | None]


@dataclass(frozen=True)
class Stored:
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


def append(
    log: PartitionLog,
    ops: Sequence[Op],
    *,
    timestamp: int = NOW,
    compression: Compression = Compression.NONE,
    producer: tuple[int, int, int] | None = None,
    transactional: bool = False,
) -> list[Stored]:
    """One batch of ``ops``; returns the records as they were stored (to compare with what survives cleaning)."""
    records = [
        Record(offset_delta=i, timestamp_delta=i, key=key, value=value, headers=[("h", b"%d" % i)])
        for i, (key, value) in enumerate(ops)
    ]
    pid, epoch, seq = producer if producer is not None else (-1, -1, -1)
    batch = RecordBatch.from_records(
        records,
        base_timestamp=timestamp,
        compression=compression,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        is_transactional=transactional,
    )
    base = log.append(encode_batch(batch), now_ms=timestamp, origin=AppendOrigin.COORDINATOR).base_offset
    return [Stored(base + i, timestamp + i, k, v, (("h", b"%d" % i),)) for i, (k, v) in enumerate(ops)]


def producer_batch(
    *values: bytes,
    producer: tuple[int, int, int],
    transactional: bool = False,
    timestamp: int = 1_000,
    key: bytes | None = None,
    base_offset: int = 0,
) -> bytes:
    """A batch of ``values`` from producer ``(id, epoch, base sequence)``, transactional if asked."""
    pid, epoch, seq = producer
    records = [Record(offset_delta=i, timestamp_delta=0, key=key, value=v) for i, v in enumerate(values)]
    return encode_batch(
        RecordBatch.from_records(
            records,
            base_offset=base_offset,
            base_timestamp=timestamp,
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=seq,
            is_transactional=transactional,
        )
    )
