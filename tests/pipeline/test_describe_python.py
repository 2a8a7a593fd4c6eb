"""The pure-Python ``describe`` engine on hand-worked logs, and the command line that runs it without Spark.

Expected rows come from :mod:`tests.pipeline.describe_logs`, worked out by hand. Nothing here needs the pipeline
extra: the engine and the command line must work where pyspark is not installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.describe_python import describe_python
from pipeline.describe_rules import ENGINE_AUTO_MAX_BYTES, choose_engine
from pipeline.layout import SegmentFile
from tests.pipeline.cli_run import run_cli
from tests.pipeline.describe_logs import D1, M1, M2, build_edges, ordered, row


@pytest.fixture(scope="module")
def edges(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("describe-edges") / "data"
    build_edges(data)
    return data


def at(ms: int) -> str:
    return f"1970-01-01T00:00:{ms // 1000:02d}.{ms % 1000:03d}Z"


def test_before_any_record_there_is_nothing_to_describe(edges: Path) -> None:
    assert describe_python(edges, at(500)) == []


def test_a_batch_stamped_exactly_at_the_as_of_time_counts_and_the_newest_commit_wins_a_tie(edges: Path) -> None:
    assert ordered(describe_python(edges, at(3000))) == ordered(
        [
            row("g", "t", 0, 6, 6, M1),  # 5 and 6 both at 3000 ms: the later record (6) wins; LEO 6 includes 3000
            row("g", "t", 1, 0, 0, M1),
            row("g", "u", 0, 0, 0, None),  # committed, owned by nobody: member columns empty
            row("dead", "u", 0, 1, 0, D1),  # lag is not clamped
        ]
    )
    assert row("g", "t", 0, 3, 4, M1) in describe_python(edges, at(2999))  # one ms earlier: neither 3000 batch is in


def test_a_tombstone_removes_the_commit_until_the_partition_is_committed_again(edges: Path) -> None:
    assert row("g", "t", 1, None, 3, M1) in describe_python(edges, at(4500))  # no commit: current and lag empty
    assert row("g", "t", 1, 2, 3, M1) in describe_python(edges, at(5000))


def test_a_dead_group_is_gone_and_a_damaged_batch_is_never_a_commit(edges: Path) -> None:
    rows = describe_python(edges, at(6500))
    assert {r["group"] for r in rows} == {"g"}
    assert row("g", "t", 0, 6, 6, M1) in rows  # 999 was in the batch with the broken CRC
    assert describe_python(edges, at(6500), group="dead") == []


def test_the_newest_generation_owns_and_an_uncommitted_partition_has_no_lag(edges: Path) -> None:
    assert ordered(describe_python(edges, at(7000))) == ordered(
        [
            row("g", "t", 0, 6, 6, M2),
            row("g", "t", 1, 2, 3, M2),
            row("g", "t", 2, None, 100, M2),  # truncated partition: LEO is its log start
            row("g", "u", 0, 0, 0, None),
        ]
    )


def test_max_is_the_latest_time_in_the_logs_and_leo_follows_the_running_max_timestamp(edges: Path) -> None:
    rows = describe_python(edges, "max", group="g")
    assert row("g", "u", 0, 0, 7, None) in rows  # 5 records at 8000 and 2 at 7500: all 7 by 8000
    assert describe_python(edges, "max") == describe_python(edges, at(8000))


def test_auto_engine_is_python_below_the_size_threshold_and_spark_above() -> None:
    small = [SegmentFile("t", 0, 0, "/x", ENGINE_AUTO_MAX_BYTES - 1)]
    big = [
        SegmentFile("t", 0, 0, "/x", ENGINE_AUTO_MAX_BYTES // 2),
        SegmentFile("t", 1, 0, "/y", ENGINE_AUTO_MAX_BYTES),
    ]
    assert choose_engine("auto", small) == "python"
    assert choose_engine("auto", big) == "spark"
    assert choose_engine("spark", small) == "spark"
    assert choose_engine("python", big) == "python"


def test_cli_engine_python_prints_kafkas_table_without_importing_pyspark(edges: Path) -> None:
    result = run_cli("describe", "--data-dir", str(edges), "--engine", "python", "--group", "g", "--as-of", at(7000))
    assert result.returncode == 0, result.stderr
    table, marker = result.stdout.rsplit("pyspark imported: ", 1)
    assert marker.strip() == "False"
    assert table.splitlines() == [
        "GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             "
        "CONSUMER-ID     HOST            CLIENT-ID",
        "g               t               0          6               6               0               "
        "m2              /10.0.0.2       c2",
        "g               t               1          2               3               1               "
        "m2              /10.0.0.2       c2",
        "g               t               2          -               100             -               "
        "m2              /10.0.0.2       c2",
        "g               u               0          0               0               0               "
        "-               -               -",
    ]
    lines = result.stderr.splitlines()
    assert "decoding 6 segments and describing ..." in lines
    assert not any("Spark" in line for line in lines)


def test_cli_auto_engine_on_a_small_log_needs_no_spark_and_keeps_the_missing_group_error(edges: Path) -> None:
    result = run_cli("describe", "--data-dir", str(edges), "--group", "nosuch")
    assert result.returncode == 1, result.stderr
    assert "Error: Consumer group 'nosuch' does not exist." in result.stderr
    assert result.stdout.strip() == "pyspark imported: False"


def test_describe_help_documents_the_engine_and_its_threshold() -> None:
    result = run_cli("describe", "--help")
    assert result.returncode == 0
    assert "--engine {auto,python,spark}" in result.stdout
    assert "256 MiB" in " ".join(result.stdout.split())
