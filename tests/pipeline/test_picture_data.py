"""The pictures' data, aggregated in Spark from the known-answer analysis: bands, markers, chosen groups.

The scenario's answers (``tests/pipeline/scenarios.py``): s-stall is STALL at 500 s and STOP by the as-of time
(1900 s), having last committed at 500 s; s-stop last committed at 300 s and is STOP by 700 s; s-rebalance has
generations 1-4 at 100, 200, 300 and 400 s (the last one Empty), is the only group with GroupMetadata
records, and last committed at 390 s.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="the pipeline extra is not installed")

from pyspark.sql import DataFrame, SparkSession

from pipeline.picture_data import MAX_GENERATIONS, markers, rebalance_picture_rows, status_bands
from pipeline.tables import read_table
from tests.pipeline.conftest import Known

AS_OF_MS = 1_900_000
S = 1000


def _table(spark: SparkSession, known: Known, name: str) -> DataFrame:
    return spark.read.parquet(str(known.out_dir / "tables" / name))


def test_bands_are_runs_of_the_detailed_status_ending_at_as_of(spark: SparkSession, known: Known) -> None:
    groups = spark.createDataFrame([("s-stall",), ("s-stop",)], "group string")
    bands = status_bands(_table(spark, known, "group_status_history"), groups, AS_OF_MS).toPandas()
    for group, runs in bands.groupby("group"):
        runs = runs.sort_values("start_ms")
        assert list(runs["end_ms"])[-1] == AS_OF_MS, group
        assert list(runs["start_ms"])[1:] == list(runs["end_ms"])[:-1], group  # contiguous, one band per run
        assert all(a != b for a, b in zip(runs["status"], list(runs["status"])[1:], strict=False)), group
    stall = bands[bands["group"] == "s-stall"]
    at_500 = stall[(stall["start_ms"] <= 500 * S) & (stall["end_ms"] > 500 * S)]
    assert list(at_500["status"]) == ["STALL"]  # Burrow's group status says ERR; the band says which
    assert stall.sort_values("start_ms")["status"].iloc[-1] == "STOP"
    assert "ERR" not in set(bands["status"])


def test_markers_are_generation_changes_and_where_commits_stopped(spark: SparkSession, known: Known) -> None:
    groups = spark.createDataFrame([("s-stall",), ("s-stop",), ("s-rebalance",)], "group string")
    found = markers(_table(spark, known, "rebalances"), _table(spark, known, "status_history"), groups).toPandas()
    got = sorted((r.group, r.kind, int(r.ts_ms)) for r in found.itertuples())
    assert got == [
        ("s-rebalance", "commit-stop", 390 * S),  # its last commit round, before the group went Empty at 400 s
        ("s-rebalance", "rebalance", 100 * S),
        ("s-rebalance", "rebalance", 200 * S),
        ("s-rebalance", "rebalance", 300 * S),
        ("s-rebalance", "rebalance", 400 * S),
        ("s-stall", "commit-stop", 500 * S),
        ("s-stop", "commit-stop", 300 * S),
    ]


def test_the_analysis_writes_bounded_picture_tables_chosen_in_spark(known: Known) -> None:
    lag = read_table(known.out_dir, "group_lag")
    expected = lag.groupby("group")["total_lag"].max().reset_index()
    expected = expected.sort_values(["total_lag", "group"], ascending=[False, True])["group"].head(8).tolist()
    points = read_table(known.out_dir, "picture_lag")
    chosen = points.drop_duplicates("group").sort_values("rank")["group"].tolist()
    assert chosen == expected
    assert len(points) == len(lag[lag["group"].isin(expected)])
    gens = read_table(known.out_dir, "picture_generations")
    assert set(gens["group"]) == {"s-rebalance"}
    assert [list(x) for x in gens.sort_values("generation")["joined"]] == [["a-1"], ["b-1"], [], []]
    status = read_table(known.out_dir, "report_status").set_index("group")
    assert status.loc["s-stall", ["status", "worst_topic", "worst_status", "worst_rule"]].tolist() == [
        "ERR",
        "t-s-stall",
        "STOP",
        "stop",
    ]


def test_a_group_with_more_generations_than_drawn_keeps_its_newest(spark: SparkSession) -> None:
    rows = [("busy", g, g * S, S, 1, ["m"], [], [], False, 0, g) for g in range(1, MAX_GENERATIONS + 101)]
    rebalances = spark.createDataFrame(
        rows,
        "group string, generation int, ts_ms long, lifetime_ms long, member_count int, member_ids array<string>, "
        "joined array<string>, left array<string>, became_empty boolean, log_partition int, log_offset long",
    )
    drawn = rebalance_picture_rows(rebalances).toPandas()
    assert sorted(drawn["generation"]) == list(range(101, MAX_GENERATIONS + 101))
    assert set(drawn["generations"]) == {MAX_GENERATIONS + 100} and set(drawn["rank"]) == {0}
