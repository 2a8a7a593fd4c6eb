"""Log cleaner throughput on ``__consumer_offsets``-shaped partitions. Figures only, nothing asserted.

* ``few keys``: one group committing 10 partitions (the acceptance-test shape): nearly every record is
  superseded, so the pass is dominated by the key scan of the offset map and the filter.
* ``many keys``: 50,000 group/partition keys, each committed four times; a quarter of the records survive, so
  batches are rewritten (decoded and re-encoded), the expensive path.

Each row times one full pass over a log written beforehand (page cache, no fsync between appends).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from protocol import consumer_offsets
from protocol.messages.offset_commit_key import OffsetCommitKey
from protocol.messages.offset_commit_value import OffsetCommitValue
from protocol.records import Record, RecordBatch, encode_batch
from storage.cleaner import clean
from storage.config import LogConfig
from storage.partition_log import AppendOrigin, PartitionLog

NOW = 1_700_000_000_000
RECORDS = 200_000
PER_BATCH = 1_000
CONFIG = LogConfig(segment_bytes=1 << 20, cleanup_policy=("compact",))


def _build(directory: Path, key_count: int) -> PartitionLog:
    keys = [
        consumer_offsets.encode_key(OffsetCommitKey(group=f"group-{k // 10}", topic="orders", partition=k % 10))
        for k in range(key_count)
    ]
    log = PartitionLog(directory, CONFIG, now_ms=NOW)
    for first in range(0, RECORDS, PER_BATCH):
        records = [
            Record(
                offset_delta=i,
                timestamp_delta=0,
                key=keys[(first + i) % key_count],
                value=consumer_offsets.encode_value(OffsetCommitValue(offset=first + i, commit_timestamp=NOW)),
            )
            for i in range(PER_BATCH)
        ]
        batch = encode_batch(RecordBatch.from_records(records, base_timestamp=NOW))
        log.append(batch, now_ms=NOW, origin=AppendOrigin.COORDINATOR)
    return log


def _pass(name: str, key_count: int) -> list[tuple[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        log = _build(Path(tmp) / "__consumer_offsets-0", key_count)
        size = log.size_in_bytes
        segments = log.segment_count
        start = time.perf_counter()
        result = clean(log, NOW)
        elapsed = time.perf_counter() - start
        rows = [
            (f"{name}: records/s", RECORDS / elapsed),
            (f"{name}: MB/s", size / elapsed / 1e6),
            (f"{name}: pass ms", elapsed * 1e3),
            (f"{name}: segments before", float(segments)),
            (f"{name}: segments after", float(log.segment_count)),
            (f"{name}: records kept", float(result.stats.records_kept)),
        ]
        log.close()
        return rows


def run() -> list[tuple[str, float]]:
    return _pass("few keys (10)", 10) + _pass("many keys (50,000)", 50_000)
