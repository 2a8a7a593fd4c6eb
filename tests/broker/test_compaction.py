"""The background compaction (broker/compaction.py) on a log with a damaged segment: every pass succeeds, the
damaged segment is logged once, and nothing is logged as failed pass after pass."""

from __future__ import annotations

import asyncio
from pathlib import Path

from structlog.testing import capture_logs

from broker.compaction import Compaction
from storage.cleaner import CleanerConfig
from storage.config import LogConfig
from storage.log_manager import LogManager
from storage.partition_log import PartitionLog
from tests.storage.helpers import NOW, append
from tests.storage.on_disk import batch_positions, flip
from tests.support.broker_process import wait_until_async

TOPIC_CONFIGS = {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01"}


def fill(log: PartitionLog, rounds: int, tag: int) -> None:
    """``rounds`` batches of records that supersede each other (five keys), then a roll."""
    for n in range(rounds):
        append(log, [(b"k%d" % (n % 5), b"v%d-%d" % (tag, n)), (b"k%d" % ((n + 1) % 5), b"w%d-%d" % (tag, n))])
    log.roll(now_ms=NOW)


async def test_a_damaged_segment_never_fails_a_compaction_pass(tmp_path: Path) -> None:
    manager = LogManager([tmp_path], LogConfig(segment_bytes=1_000), now_ms=NOW)
    manager.create_topic("table", 1, TOPIC_CONFIGS, now_ms=NOW)
    log = manager.get("table", 0)
    assert log is not None
    fill(log, 60, 0)
    manager.close()
    segment = sorted((tmp_path / "table-0").glob("*.log"))[2]
    start, _ = batch_positions(segment)[1]
    flip(segment, start + 70)  # below the recovery point: the cleaner is the first to read it
    damaged_bytes = segment.read_bytes()
    manager = LogManager([tmp_path], LogConfig(segment_bytes=1_000), now_ms=NOW)
    log = manager.get("table", 0)
    assert log is not None and log.damaged_ranges() == []
    compaction = Compaction(manager, CleanerConfig(), backoff_ms=1, wall_ms=lambda: NOW)
    with capture_logs() as logs:
        task = asyncio.create_task(compaction.run_forever())
        try:
            await wait_until_async(lambda: compaction.passes >= 3)
            fill(log, 30, 1)  # dirty again: the next passes clean the log around the damaged segment once more
            passes = compaction.passes
            await wait_until_async(lambda: compaction.passes >= passes + 3)
        finally:
            await compaction.stop()
            task.cancel()
    events = [entry["event"] for entry in logs]
    assert "compaction.failed" not in events
    assert "log_cleaning_failed" not in events
    assert events.count("log_cleaned") >= 2  # the log is still compacted, pass after pass
    assert events.count("log_damaged_range") == 1
    assert events.count("log_cleaning_skipped_damaged_segment") == 1
    assert segment.read_bytes() == damaged_bytes
    assert len(log.damaged_ranges()) == 1
    manager.close()
