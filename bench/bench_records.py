"""Encode/decode cost of a typical produce batch: 100 records of 100-byte values, plain and zstd.

Numbers are best-of-repeats per batch, which is what a broker pays per Produce partition; no thresholds are
asserted anywhere, the figures are for comparing changes on one machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from protocol.records import Compression, Record, RecordBatch, decode_batch, encode_batch

RECORDS = 100
VALUE_SIZE = 100
REPEATS = 5


def _batch(codec: Compression) -> RecordBatch:
    records = [
        Record(
            offset_delta=i,
            timestamp_delta=i,
            key=f"key-{i:04d}".encode(),
            # Half repeated text, half varying digits: compresses like typical JSON-ish payloads, not like zeros.
            value=(f"{i:08d}" * 7 + "payload-" * 7)[:VALUE_SIZE].encode(),
        )
        for i in range(RECORDS)
    ]
    return RecordBatch.from_records(records, base_offset=0, base_timestamp=1_700_000_000_000, compression=codec)


def _best_seconds(fn: Callable[[], object], loops: int) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        best = min(best, (time.perf_counter() - start) / loops)
    return best


def _loops_for(fn: Callable[[], object], target_seconds: float = 0.1) -> int:
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, int(target_seconds / once))


def run() -> list[tuple[str, float]]:
    """Return (metric name, value) pairs: µs per batch and records per second for each operation."""
    results: list[tuple[str, float]] = []
    for codec in (Compression.NONE, Compression.ZSTD):
        batch = _batch(codec)
        encoded = encode_batch(batch)
        operations: list[tuple[str, Callable[[], object]]] = [
            ("encode", lambda batch=batch: encode_batch(batch)),
            ("decode", lambda encoded=encoded: decode_batch(encoded)),
        ]
        for op, fn in operations:
            seconds = _best_seconds(fn, _loops_for(fn))
            name = f"{op} {codec.name.lower()} ({len(encoded)} B)"
            results.append((f"{name} us/batch", seconds * 1e6))
            results.append((f"{name} records/s", RECORDS / seconds))
    return results


def main() -> None:
    results = run()
    width = max(len(name) for name, _ in results)
    print(f"record batch v2: {RECORDS} records x {VALUE_SIZE} B values, best of {REPEATS}")
    for name, value in results:
        print(f"  {name:<{width}}  {value:>14,.1f}")


if __name__ == "__main__":
    main()
