"""Partition log throughput: appends of 1 MiB and 16 KiB batches, then sequential Fetch-style reads.

Appends go to the page cache (no fsync, as in the broker); the final flush is timed separately. The
``client`` rows validate like a producer append (CRC, batch rules, every record parsed); the ``coordinator``
rows only check framing and CRC, which is what the broker's own writes cost. Figures only, nothing asserted.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from protocol.records import Record, RecordBatch, encode_batch, iter_batch_headers
from storage.config import LogConfig
from storage.partition_log import AppendOrigin, PartitionLog

VALUE_SIZE = 1000
TOTAL_BYTES = 128 * 1024 * 1024
READ_MAX_BYTES = 1024 * 1024
CONFIG = LogConfig(segment_bytes=64 * 1024 * 1024, max_message_bytes=2 * 1024 * 1024)


def _batch(target_size: int) -> bytes:
    count = max(1, target_size // (VALUE_SIZE + 12))
    records = [
        Record(offset_delta=i, timestamp_delta=i, key=f"key-{i:06d}".encode(), value=bytes([i % 251]) * VALUE_SIZE)
        for i in range(count)
    ]
    return encode_batch(RecordBatch.from_records(records, base_timestamp=1_700_000_000_000))


def _append(directory: Path, batch: bytes, origin: AppendOrigin) -> tuple[list[tuple[str, float]], PartitionLog]:
    log = PartitionLog(directory, CONFIG, now_ms=0)
    loops = max(1, TOTAL_BYTES // len(batch))
    start = time.perf_counter()
    for _ in range(loops):
        log.append(batch, now_ms=1_700_000_000_000, origin=origin)
    elapsed = time.perf_counter() - start
    flush_start = time.perf_counter()
    log.flush()
    flush = time.perf_counter() - flush_start
    name = f"append {len(batch) / 1024:,.0f} KiB batches ({origin.value})"
    results = [
        (f"{name} MB/s", loops * len(batch) / elapsed / 1e6),
        (f"{name} batches/s", loops / elapsed),
        (f"{name} then flush() ms", flush * 1e3),
    ]
    return results, log


def _read(log: PartitionLog, label: str) -> list[tuple[str, float]]:
    offset = log.log_start_offset
    total = 0
    reads = 0
    start = time.perf_counter()
    while offset < log.log_end_offset:
        data = log.read(offset, READ_MAX_BYTES)
        total += len(data)
        reads += 1
        # The next fetch offset: the last batch's base offset + lastOffsetDelta + 1, found from its header.
        offset = _next_offset(data)
    elapsed = time.perf_counter() - start
    name = f"read {label}, max_bytes 1 MiB"
    return [(f"{name} MB/s", total / elapsed / 1e6), (f"{name} reads/s", reads / elapsed)]


def _next_offset(data: bytes) -> int:
    last = 0
    for _, header in iter_batch_headers(data, verify_crc=False):
        last = header.next_offset
    return last


def run() -> list[tuple[str, float]]:
    """Return (metric name, value) pairs."""
    results: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-storage-") as tmp:
        for size_label, size in (("1 MiB", 1024 * 1024), ("16 KiB", 16 * 1024)):
            batch = _batch(size)
            for origin in (AppendOrigin.CLIENT, AppendOrigin.COORDINATOR):
                directory = Path(tmp) / f"t-{size}-{origin.value}"
                appended, log = _append(directory, batch, origin)
                results += appended
                if origin is AppendOrigin.COORDINATOR:
                    results += _read(log, f"{size_label} batches")
                log.delete()
    return results


def main() -> None:
    results = run()
    width = max(len(name) for name, _ in results)
    print(f"partition log: {TOTAL_BYTES // (1024 * 1024)} MiB per run, {VALUE_SIZE} B values, page cache (no fsync)")
    for name, value in results:
        print(f"  {name:<{width}}  {value:>14,.1f}")


if __name__ == "__main__":
    main()
