"""``analyze`` on a damaged log, in the suite's Spark session: what report.txt and inputs.json say, and ``--strict``.

One damaged copy of :mod:`tests.pipeline.damaged_logs`' clean log carries every kind at once, so that one Spark run
covers them: garbage and a CRC-failed batch stamped in the year 2200 in ``__consumer_offsets``, a CRC-failed
topic batch stamped 2200, and topic partition t-1 cut in the middle of its fourth batch (a torn tail, and a log
end of 30 below the committed 45 and 50: truncated). Groups ``a`` and ``late`` (on t-0) are untouched, so their
statuses and describe rows must be the clean run's. Both runs go through the command line in process, as
``make report`` runs it; the per-kind checks without Spark are ``test_integrity.py``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="the pipeline extra is not installed")

import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from pipeline.cli import main
from pipeline.damage import SkippedRange
from pipeline.inputs import offsets_gap_caveats
from pipeline.tables import read_table
from tests.pipeline.damaged_logs import (
    OFFSETS_SEGMENT,
    TOPIC_SEGMENT,
    YEAR_2200_MS,
    batch_at_offset,
    batches,
    build_clean,
    copy_log,
    edit,
    set_max_timestamp,
    truncate,
)

UNTOUCHED = ["a", "late"]


@dataclass
class Runs:
    damaged: Path
    clean_out: Path
    damaged_out: Path
    strict_exit: int
    stderr: str
    expected: list[tuple[str, str, int, int]]  # (segment, kind, start, end) of every skipped range


@pytest.fixture(scope="module")
def runs(spark: SparkSession, workdir: Path) -> Runs:
    clean = build_clean(workdir / "integrity-clean")
    damaged = copy_log(clean, workdir / "integrity-damaged")
    offsets, topic = damaged / OFFSETS_SEGMENT, damaged / TOPIC_SEGMENT
    garbage_at, _ = batch_at_offset(offsets, clean.victim_offset - 1)
    victim_at, victim = batch_at_offset(offsets, clean.victim_offset)
    topic_batches = batches(topic)
    (crc_at, crc_header), (torn_at, _) = topic_batches[1], topic_batches[3]
    truncate(topic, torn_at + 30)
    set_max_timestamp(topic, crc_at, YEAR_2200_MS)
    set_max_timestamp(offsets, victim_at, YEAR_2200_MS)
    edit(offsets, garbage_at, b"\xff" * 100, insert=True)
    expected = [
        (OFFSETS_SEGMENT, "garbage", garbage_at, garbage_at + 100),
        (OFFSETS_SEGMENT, "crc", victim_at + 100, victim_at + 100 + victim.size),
        (TOPIC_SEGMENT, "crc", crc_at, crc_at + crc_header.size),
        (TOPIC_SEGMENT, "torn-tail", torn_at, torn_at + 30),
    ]
    clean_out, damaged_out = workdir / "integrity-clean-out", workdir / "integrity-damaged-out"
    common = ["--master", "local[2]", "--no-plots", "--conf", "spark.sql.shuffle.partitions=4"]
    assert main(["analyze", "--data-dir", str(clean.data_dir), "--out", str(clean_out), *common, "--strict"]) == 0
    captured = io.StringIO()
    with contextlib.redirect_stderr(captured):
        code = main(["analyze", "--data-dir", str(damaged), "--out", str(damaged_out), *common, "--strict"])
    return Runs(damaged, clean_out, damaged_out, code, captured.getvalue(), expected)


def summary(out: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((out / "inputs.json").read_text(encoding="utf-8"))
    return loaded


def untouched(out: Path, table: str, columns: list[str]) -> list[dict[str, Any]]:
    df = read_table(out, table, columns)
    rows: list[dict[str, Any]] = df[df["group"].isin(UNTOUCHED)].sort_values(columns).to_dict("records")
    return rows


def test_inputs_json_lists_every_skipped_range_and_the_truncated_partition(runs: Runs) -> None:
    found = summary(runs.damaged_out)
    assert [(r["segment"], r["kind"], r["start"], r["end"]) for r in found["skipped"]] == runs.expected
    assert [r["category"] for r in found["skipped"]] == ["corruption", "corruption", "corruption", "torn tail"]
    assert [(p["group"], p["committed_offset"], p["log_end_offset"]) for p in found["truncated"]] == [
        ("b", 45, 30),
        ("victim", 50, 30),
    ]
    assert found["latest_ms"] == summary(runs.clean_out)["latest_ms"] == 6000  # 2200 was never believed
    assert found["as_of_ms"] == 6000
    assert summary(runs.clean_out)["skipped"] == [] and summary(runs.clean_out)["truncated"] == []


def test_the_corrupt_batch_is_not_blamed_on_compaction(runs: Runs) -> None:
    caveats = summary(runs.damaged_out)["caveats"]
    assert not any(c.startswith("__consumer_offsets-0") for c in caveats), caveats
    assert any(c.startswith("t-1: log end 30 is below group b's committed offset 45") for c in caveats), caveats


def test_untouched_groups_keep_their_statuses_and_rows(runs: Runs) -> None:
    status_columns = ["group", "status", "total_lag", "partition_count"]
    assert untouched(runs.damaged_out, "group_status", status_columns) == untouched(
        runs.clean_out, "group_status", status_columns
    )
    describe_columns = ["group", "topic", "partition", "current_offset", "log_end_offset", "lag"]
    rows = untouched(runs.damaged_out, "describe", describe_columns)
    assert len(rows) == 2 and rows == untouched(runs.clean_out, "describe", describe_columns)


def test_report_names_each_skipped_range_and_strict_exits_3_after_writing(runs: Runs) -> None:
    report = (runs.damaged_out / "report.txt").read_text(encoding="utf-8")
    assert "Skipped ranges (4; nothing in them was used):" in report
    for segment, kind, start, end in runs.expected:
        assert f"{segment} bytes {start}-{end} ({end - start:,} bytes):" in report
        assert f"({kind})" in report
    assert "truncated (or its newest segments are missing)" in report
    assert runs.strict_exit == 3
    last = runs.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: --strict: the log is damaged (3 corrupt ranges, 1 torn tail, 2 truncated")
    assert "Skipped ranges: none" in (runs.clean_out / "report.txt").read_text(encoding="utf-8")


def test_decode_says_what_it_skipped(runs: Runs, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", "--data-dir", str(runs.damaged), "--out", str(workdir / "integrity-decode-out")]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("skipped ")]
    assert [line.split(" bytes ")[0] for line in notes] == [f"skipped {segment}" for segment, *_ in runs.expected]


def test_compaction_holes_a_log_start_and_damage_are_told_apart() -> None:
    def damaged(first: int, end: int) -> SkippedRange:
        return SkippedRange(
            "__consumer_offsets-3/00000000000000000000.log", 0, 1, "crc", "corruption", 1, None, first, end, "x"
        )

    # offsets 0-19: 15 records, 2 offsets in a damaged batch, so 3 removed by compaction
    assert offsets_gap_caveats(3, 0, 19, 15, [damaged(10, 12)]) == [
        "__consumer_offsets-3: 3 of the offsets below 20 are absent besides the 2 in damaged ranges (first record "
        "at 0): compaction removed history, so older commits and generations are not in these tables"
    ]
    starts = offsets_gap_caveats(3, 5, 19, 13, [damaged(10, 12)])  # 5-19 held 15 offsets: 13 records + 2 damaged
    assert len(starts) == 1 and starts[0].startswith("__consumer_offsets-3: the log starts at offset 5 ")
    assert offsets_gap_caveats(3, 5, 19, 15, [damaged(0, 5)]) == []  # the first offsets are the damaged batch's


def test_stream_reports_the_damage_it_ingested_and_strict_exits_3(
    runs: Runs, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Skipped ranges go through the raw Parquet rows a stream accumulates; the torn tail is not ingested yet."""
    out = workdir / "integrity-stream-out"
    assert main(["stream", "--once", "--strict", "--no-plots", "--data-dir", str(runs.damaged), "--out", str(out)]) == 3
    found = summary(out)
    assert [(r["segment"], r["kind"], r["start"], r["end"]) for r in found["skipped"]] == runs.expected[:3]
    assert len(found["truncated"]) == 2
    assert "Error: --strict: the log is damaged (3 corrupt ranges, 0 torn tails, 2 truncated" in capsys.readouterr().err
