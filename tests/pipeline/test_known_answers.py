"""The Spark tables against known answers: one scenario per status, Burrow's vectors as logs, a rebalance story.

Every expectation comes from ``tests/pipeline/scenarios.py``, worked out by hand. The full analysis runs once (see
conftest); the allowed-lag and min-distance variants re-run only the status evaluation on the cached tables.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="the pipeline extra is not installed")

import dataclasses

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pipeline.burrow import evaluate
from pipeline.describe import describe
from pipeline.rules import Status
from pipeline.rules_sql import with_status
from tests.pipeline.conftest import Known
from tests.pipeline.scenarios import TEST_CONFIG, Check
from tests.pipeline.vectors import VECTORS

pytestmark = pytest.mark.slow


def _history(known: Known, name: str = "status_history") -> DataFrame:
    spark = SparkSession.getActiveSession()
    assert spark is not None
    return spark.read.parquet(str(known.out_dir / "tables" / name))


def _statuses(history: DataFrame, checks: list[Check]) -> dict[tuple[str, int], tuple[str, str]]:
    wanted = {(c.group, c.tick_ms) for c in checks}
    rows = (
        history.where(F.col("partition") == 0)
        .where(F.col("group").isin(sorted({g for g, _ in wanted})))
        .select("group", "tick_ms", "status", "rule")
        .collect()
    )
    return {(r["group"], r["tick_ms"]): (r["status"], r["rule"]) for r in rows if (r["group"], r["tick_ms"]) in wanted}


def test_every_partition_check_with_allowed_lag_0(known: Known) -> None:
    checks = [c for c in known.expected.checks if c.allowed_lag == 0]
    found = _statuses(_history(known), checks)
    for c in checks:
        status, rule = found.get((c.group, c.tick_ms), ("missing", "missing"))
        assert status == c.status, f"{c.group} at {c.tick_ms}: {status} ({rule}), expected {c.status}"
        if c.rule is not None:
            assert rule == c.rule, f"{c.group} at {c.tick_ms}: rule {rule}, expected {c.rule}"


@pytest.mark.parametrize("allowed", [1, 99])
def test_checks_under_allowed_lag(known: Known, allowed: int) -> None:
    checks = [c for c in known.expected.checks if c.allowed_lag == allowed]
    groups = sorted({c.group for c in checks})
    t = known.tables
    cfg = dataclasses.replace(TEST_CONFIG.burrow, allowed_lag=allowed)
    tables = evaluate(
        t.commits.where(F.col("group").isin(groups)),
        t.generations.where(F.col("group").isin(groups)),
        t.assignments,
        t.leo,
        cfg,
        as_of_ms=known.analysis.summary.as_of_ms,
        tick_ms=TEST_CONFIG.tick_ms,
    )
    found = _statuses(tables.status_history, checks)
    assert {k: v[0] for k, v in found.items()} == {(c.group, c.tick_ms): c.status for c in checks}


def test_group_roll_up_and_expire_group(known: Known) -> None:
    groups = _history(known, "group_status_history")
    expected = known.expected.group_checks
    rows = groups.where(F.col("group").isin(sorted({g for g, _, _ in expected}))).collect()
    found = {(r["group"], r["tick_ms"]): r["status"] for r in rows}
    assert {(g, t): found.get((g, t)) for g, t, _ in expected} == {(g, t): s for g, t, s in expected}
    fresh = _history(known).where((F.col("group") == "s-expire") & (F.col("tick_ms") == 1_900_000)).collect()
    assert [r["window_size"] for r in fresh] == [1]  # forgotten at 1750 s, so the ring starts again
    stall = groups.where((F.col("group") == "s-stall") & (F.col("tick_ms") == 500_000)).collect()[0]
    assert (stall["status"], stall["n_stall"], stall["total_lag"]) == ("ERR", 1, 1100)


def test_min_distance_merges_commits_into_the_newest_slot(known: Known) -> None:
    t = known.tables
    cfg = dataclasses.replace(TEST_CONFIG.burrow, min_distance_s=60)
    tables = evaluate(
        t.commits.where(F.col("group") == "s-mindist"),
        t.generations.where(F.col("group") == "s-mindist"),
        t.assignments,
        t.leo,
        cfg,
        as_of_ms=known.analysis.summary.as_of_ms,
        tick_ms=TEST_CONFIG.tick_ms,
    )
    row = (
        tables.status_history.where(F.col("tick_ms") == 200_000)
        .select("start_offset", "start_ts_ms", "end_offset", "end_ts_ms")
        .collect()
    )
    assert [tuple(r) for r in row] == [(30, 100_000, 60, 160_000)]
    assert [(o, ts) for o, ts in known.expected.min_distance_window] == [(30, 100_000), (60, 160_000)]


def test_rebalances_table(known: Known) -> None:
    rows = _history(known, "rebalances").where(F.col("group") == "s-rebalance").orderBy("generation").collect()
    keys = list(known.expected.rebalances[0])
    assert [{k: r[k] for k in keys} for r in rows] == known.expected.rebalances


def test_describe_as_of_a_past_time(known: Known) -> None:
    t = known.tables
    rows = describe(t.commits, t.generations, t.leo, as_of_ms=250_000).where(F.col("group") == "s-rebalance")
    assert sorted((r.asDict() for r in rows.collect()), key=lambda r: r["partition"]) == known.expected.describe_at_250s


def test_describe_of_an_empty_group_has_no_members(known: Known) -> None:
    rows = _history(known, "describe").where(F.col("group") == "s-rebalance").orderBy("partition").collect()
    assert [(r["current_offset"], r["log_end_offset"], r["lag"], r["consumer_id"]) for r in rows] == [
        (118, 120, 2, None),
        (117, 120, 3, None),
    ]


def test_spark_rule_expression_passes_burrows_vectors(spark: SparkSession) -> None:
    rows = [
        (
            v.index,
            [(e.offset, e.timestamp, e.lag) for e in v.window],
            list(v.brokers),
            v.current_lag,
            v.now_s * 1000,
            v.allowed_lag,
        )
        for v in VECTORS
    ]
    df = spark.createDataFrame(
        rows,
        "index int, win array<struct<offset:long,ts:long,lag:long>>, brokers array<long>, cur long, now_ms long, "
        "allowed int",
    )
    results: dict[int, str] = {}
    for allowed in sorted({v.allowed_lag for v in VECTORS}):
        part = with_status(
            df.where(F.col("allowed") == allowed), allowed_lag=allowed, minimum_complete=0.0, intervals=15
        )
        results.update({r["index"]: r["status"] for r in part.select("index", "status").collect()})
    assert results == {v.index: v.expected.name for v in VECTORS}
    assert {s.name for s in Status} >= set(results.values())
