"""Damaged logs, read without Spark: each kind of damage is skipped, reported where it is, and nothing else changes.

Every test damages one copy of the clean log of :mod:`tests.pipeline.damaged_logs` and checks (1) that the
``describe`` rows of the groups the damage did not touch are exactly the clean log's (the rest of the file was
read, nothing of the damaged batch was believed) and (2) the skipped range reported: its segment file, byte range
and kind. The Spark path (report.txt, inputs.json, ``--strict``) is ``test_integrity_spark.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pipeline.cli import main
from pipeline.damage import SkippedRange, merge_adjacent, truncated_from_rows
from pipeline.decode import SKIPPED, decode_offsets_range
from pipeline.describe_python import describe_python_checked
from pipeline.framing import Batch, SkipKind, Skipped, walk
from pipeline.layout import complete_end
from pipeline.scan import topic_columns
from protocol.records import Compression
from tests.pipeline.damaged_logs import (
    OFFSETS_SEGMENT,
    TOPIC_SEGMENT,
    YEAR_2200_MS,
    CleanLog,
    batch_at_offset,
    batches,
    build_clean,
    copy_log,
    edit,
    flip_byte,
    set_attributes_keeping_crc,
    set_length,
    set_max_timestamp,
    truncate,
)
from tests.pipeline.describe_logs import ordered


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> CleanLog:
    return build_clean(tmp_path_factory.mktemp("clean") / "data")


@pytest.fixture
def damaged(clean: CleanLog, tmp_path: Path) -> Path:
    return copy_log(clean, tmp_path / "damaged")


def rows_of(data: Path, groups: set[str] | None = None) -> list[dict[str, Any]]:
    rows, _ = describe_python_checked(data)
    return ordered([r for r in rows if groups is None or r["group"] in groups])


def only_skipped(data: Path) -> SkippedRange:
    _, skipped = describe_python_checked(data)
    assert len(skipped) == 1, skipped
    return skipped[0]


def test_a_crc_flip_skips_that_batch_only(clean: CleanLog, damaged: Path) -> None:
    segment = damaged / OFFSETS_SEGMENT
    pos, header = batch_at_offset(segment, clean.victim_offset)
    flip_byte(segment, pos + header.size - 1)  # the last byte of its record's value

    skipped = only_skipped(damaged)
    assert (skipped.segment, skipped.start, skipped.end) == (OFFSETS_SEGMENT, pos, pos + header.size)
    assert (skipped.kind, skipped.category, skipped.batches) == ("crc", "corruption", 1)
    assert (skipped.offsets_from, skipped.offsets_to) == (clean.victim_offset, clean.victim_offset + 1)
    assert rows_of(damaged) == rows_of(clean.data_dir)  # victim's later commits were read: its row is unchanged


def test_a_future_timestamp_in_a_crc_failed_batch_is_never_a_time(clean: CleanLog, damaged: Path) -> None:
    segment = damaged / OFFSETS_SEGMENT
    pos, _ = batch_at_offset(segment, clean.victim_offset)
    set_max_timestamp(segment, pos, YEAR_2200_MS)

    cols = decode_offsets_range(segment.read_bytes(), 0, 0)
    assert YEAR_2200_MS not in cols["log_ts_ms"]
    assert [kind for kind in cols["record_type"] if kind == SKIPPED] == [SKIPPED]
    assert cols["log_offset"][cols["record_type"].index(SKIPPED)] is None  # no field of the batch is kept
    assert only_skipped(damaged).kind == "crc"
    assert rows_of(damaged) == rows_of(clean.data_dir)  # as-of max is still the log's own latest time (6 s)


def test_a_bad_length_mid_file_resyncs_at_the_next_batch(clean: CleanLog, damaged: Path) -> None:
    segment = damaged / OFFSETS_SEGMENT
    pos, header = batch_at_offset(segment, clean.victim_offset)
    set_length(segment, pos, 1 << 30)  # runs far past the end of the file, as a torn tail would

    skipped = only_skipped(damaged)
    assert (skipped.start, skipped.end, skipped.kind) == (pos, pos + header.size, "framing")
    assert rows_of(damaged) == rows_of(clean.data_dir)  # the rest of the file was not dropped
    assert complete_end(str(segment)) == segment.stat().st_size


def test_a_plausible_wrong_length_is_framing_not_a_crc_flip(clean: CleanLog, damaged: Path) -> None:
    segment = damaged / OFFSETS_SEGMENT
    pos, header = batch_at_offset(segment, clean.victim_offset)
    set_length(segment, pos, header.batch_length + 7)  # lands inside the next batch

    skipped = only_skipped(damaged)
    assert (skipped.start, skipped.end, skipped.kind) == (pos, pos + header.size, "framing")
    assert rows_of(damaged) == rows_of(clean.data_dir)


def test_garbage_between_batches_is_skipped_and_named(clean: CleanLog, damaged: Path) -> None:
    segment = damaged / OFFSETS_SEGMENT
    pos, _ = batch_at_offset(segment, clean.victim_offset)
    edit(segment, pos, b"\xff" * 100, insert=True)

    skipped = only_skipped(damaged)
    assert (skipped.segment, skipped.start, skipped.end, skipped.kind) == (OFFSETS_SEGMENT, pos, pos + 100, "garbage")
    assert skipped.batches is None and skipped.records is None  # nothing is known about garbage
    assert rows_of(damaged) == rows_of(clean.data_dir)


def test_a_batch_whose_crc_holds_but_records_do_not_decode_is_skipped_with_its_counts(
    clean: CleanLog, damaged: Path
) -> None:
    segment = damaged / OFFSETS_SEGMENT
    pos, header = batch_at_offset(segment, clean.victim_offset)
    set_attributes_keeping_crc(segment, pos, header, Compression.GZIP)  # plain records claimed to be gzip

    skipped = only_skipped(damaged)
    assert (skipped.start, skipped.end, skipped.kind) == (pos, pos + header.size, "records")
    assert (skipped.batches, skipped.records) == (1, 1)  # the CRC matched: its header can be believed
    assert (skipped.offsets_from, skipped.offsets_to) == (clean.victim_offset, clean.victim_offset + 1)
    assert rows_of(damaged) == rows_of(clean.data_dir)


def test_damage_cut_by_a_read_boundary_is_one_range() -> None:
    def part(start: int, end: int, batches: int | None) -> SkippedRange:
        return SkippedRange(OFFSETS_SEGMENT, start, end, "garbage", "corruption", batches, None, None, None, "x")

    merged = merge_adjacent([part(500, 900, None), part(100, 500, None), part(950, 990, None)])
    assert [(r.start, r.end) for r in merged] == [(100, 900), (950, 990)]


def test_a_torn_tail_of_the_active_segment_is_reported_as_such(clean: CleanLog, damaged: Path) -> None:
    segment = damaged / OFFSETS_SEGMENT
    pos, _ = batch_at_offset(segment, clean.late_offset)
    truncate(segment, pos + 30)

    skipped = only_skipped(damaged)
    assert (skipped.start, skipped.end, skipped.kind, skipped.category) == (pos, pos + 30, "torn-tail", "torn tail")
    assert rows_of(damaged) == rows_of(clean.data_dir, {"a", "b", "victim"})  # only late's commit is gone
    assert complete_end(str(segment)) == pos  # the streaming reader still stops before the incomplete batch


def test_an_incomplete_batch_at_the_end_of_an_older_segment_is_truncation(clean: CleanLog) -> None:
    segment = clean.data_dir / OFFSETS_SEGMENT
    data = segment.read_bytes()
    end = batches(segment)[-1][0] + 30

    def read(position: int, length: int) -> bytes:
        return data[position : min(position + length, end)]

    *valid, last = walk(read, 0, end, tail=SkipKind.TRUNCATED)
    assert len(valid) == len(batches(segment)) - 1 and all(isinstance(item, Batch) for item in valid)
    assert isinstance(last, Skipped)
    assert last == Skipped(end - 30, end, SkipKind.TRUNCATED, last.detail, offsets_from=clean.late_offset)


def test_a_crc_flip_in_a_topic_batch_keeps_its_offsets_and_times_out(clean: CleanLog, damaged: Path) -> None:
    segment = damaged / TOPIC_SEGMENT
    pos, header = batches(segment)[2]
    set_max_timestamp(segment, pos, YEAR_2200_MS)

    (cols,) = topic_columns("t", 1, 0, str(segment), 0, segment.stat().st_size, SkipKind.TORN_TAIL)
    assert YEAR_2200_MS not in cols["max_ts_ms"]
    assert cols["skip_kind"] == [None, None, "crc", None, None]
    assert (cols["skip_start"][2], cols["skip_end"][2]) == (pos, pos + header.size)
    skipped = only_skipped(damaged)
    assert (skipped.segment, skipped.start, skipped.kind) == (TOPIC_SEGMENT, pos, "crc")
    # LEO comes from the later batches, so the describe rows are the clean log's
    assert rows_of(damaged) == rows_of(clean.data_dir)


def test_a_truncated_topic_partition_is_named_and_kafka_lag_kept(clean: CleanLog, damaged: Path) -> None:
    segment = damaged / TOPIC_SEGMENT
    truncate(segment, batches(segment)[2][0])  # t-1 keeps 20 records; victim committed 50, b 45

    rows, skipped = describe_python_checked(damaged)
    assert skipped == []  # cut at a batch boundary: nothing to skip, the partition is just shorter
    truncated = truncated_from_rows(rows)
    assert [(p.group, p.topic, p.partition, p.committed_offset, p.log_end_offset) for p in truncated] == [
        ("b", "t", 1, 45, 20),
        ("victim", "t", 1, 50, 20),
    ]
    assert "auto.offset.reset" in truncated[0].text()
    assert rows_of(damaged, {"a", "late"}) == rows_of(clean.data_dir, {"a", "late"})


def test_describe_says_what_it_skipped_and_strict_exits_3(
    clean: CleanLog, damaged: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    segment = damaged / OFFSETS_SEGMENT
    pos, header = batch_at_offset(segment, clean.victim_offset)
    flip_byte(segment, pos + header.size - 1)

    assert main(["describe", "--engine", "python", "--data-dir", str(damaged)]) == 0
    out, err = capsys.readouterr()
    assert "victim" in out
    assert f"skipped {OFFSETS_SEGMENT} bytes {pos}-{pos + header.size}" in err and "corruption (crc)" in err

    assert main(["describe", "--engine", "python", "--data-dir", str(damaged), "--strict"]) == 3
    out, err = capsys.readouterr()
    assert "victim" in out  # the table is printed before the verdict
    assert "Error: --strict: the log is damaged (1 corrupt range, 0 torn tails, 0 truncated partitions)" in err

    assert main(["describe", "--engine", "python", "--data-dir", str(clean.data_dir), "--strict"]) == 0
