"""Rates at the edges of the run: a window only partly inside the run is divided by the part inside it.

A steady producer (one record every 50 ms, i.e. 20 rec/s) and a steady committer (every 500 ms, 10 offsets a
time) start 22.5 s into a 60 s window and run until the as-of time, 37.5 s into the last window. Every window,
the two partial ones included, must show exactly those rates.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="the pipeline extra is not installed")

from pyspark.sql import SparkSession

from pipeline.rates import commit_rates, produce_rates

WIDTH_MS = 60_000
START_MS = 10 * WIDTH_MS + 22_500  # 22.5 s into the window starting at 600 s
AS_OF_MS = 13 * WIDTH_MS + 37_500  # 37.5 s into the window starting at 780 s
WINDOWS = [10 * WIDTH_MS, 11 * WIDTH_MS, 12 * WIDTH_MS, 13 * WIDTH_MS]


def test_a_steady_20_records_per_second_is_20_in_every_window_edges_included(spark: SparkSession) -> None:
    batches = spark.createDataFrame(
        [("steady", t, 1, False) for t in range(START_MS, AS_OF_MS, 50)],
        "topic string, max_ts_ms long, record_count long, is_control boolean",
    )
    rows = produce_rates(batches, width_ms=WIDTH_MS, as_of_ms=AS_OF_MS).orderBy("window_start_ms").collect()
    assert [r["window_start_ms"] for r in rows] == WINDOWS
    assert [r["observed_s"] for r in rows] == [37.5, 60.0, 60.0, 37.5]
    assert [r["records_per_s"] for r in rows] == [20.0, 20.0, 20.0, 20.0]


def test_a_steady_committer_has_its_rates_in_the_edge_windows_too(spark: SparkSession) -> None:
    commits = spark.createDataFrame(
        [("g", "steady", 0, 10 * k, t, False, 0, k) for k, t in enumerate(range(START_MS, AS_OF_MS, 500))],
        "group string, topic string, partition int, committed_offset long, ts_ms long, is_tombstone boolean, "
        "log_partition int, log_offset long",
    )
    rows = commit_rates(commits, width_ms=WIDTH_MS, as_of_ms=AS_OF_MS).orderBy("window_start_ms").collect()
    assert [r["commits_per_s"] for r in rows] == [2.0, 2.0, 2.0, 2.0]
    # 10 offsets per 500 ms; the run's very first commit has no previous one, so the first window is one short
    assert [r["offsets_advanced"] for r in rows] == [740, 1200, 1200, 750]
    assert [r["consume_rate_per_s"] for r in rows][1:] == [20.0, 20.0, 20.0]
