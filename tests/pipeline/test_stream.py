"""Streaming mode: each run decodes exactly the batches appended since the previous run's checkpoint."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="the pipeline extra is not installed")

from pathlib import Path

from pyspark.sql import SparkSession

from pipeline.preflight import pending_stream_kinds
from pipeline.stream import RAW_TABLES, ingest_once, raw_tables
from pipeline.synth import SyntheticLog


def test_stream_picks_up_exactly_what_was_appended(spark: SparkSession, workdir: Path) -> None:
    data, out = workdir / "stream-log", workdir / "stream-out"
    with SyntheticLog(data, offsets_partitions=1) as log:
        log.create_topic("t", 1)
        for i in range(5):
            log.produce("t", 0, 2, 1000 * i)
            log.commit("g", "t", 0, 2 * i, 1000 * i)
    first = ingest_once(spark, str(data), out)
    assert first == {"offsets_log": 5, "topic_batches": 5}
    assert pending_stream_kinds(data, out / "_checkpoints", RAW_TABLES) == []  # Spark's checkpoint, read without it

    log = SyntheticLog(data, offsets_partitions=1)  # the broker appends more, and is caught mid-append
    for i in range(5, 8):
        log.produce("t", 0, 2, 1000 * i)
        log.commit("g", "t", 0, 2 * i, 1000 * i)
    log.tear_commit("g", "t", 0, 99, 9000)
    assert pending_stream_kinds(data, out / "_checkpoints", RAW_TABLES) == ["offsets", "topics"]
    second = ingest_once(spark, str(data), out)
    assert second == {"offsets_log": 3, "topic_batches": 3}  # the torn batch is not read...

    log.mend()
    third = ingest_once(spark, str(data), out)
    assert third == {"offsets_log": 1, "topic_batches": 0}  # ...until it is complete

    offsets, _ = raw_tables(spark, out)
    rows = offsets.select("log_offset", "committed_offset").collect()
    assert sorted((r["log_offset"], r["committed_offset"]) for r in rows) == [
        *((i, 2 * i) for i in range(8)),
        (8, 99),
    ]
