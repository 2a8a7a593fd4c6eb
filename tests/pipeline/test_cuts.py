"""Segments cut anywhere: each task resolves its own byte range to the batches it owns, so the ranges tile the file.

The planner cuts segments at byte positions chosen from file sizes alone; a task starts at the first batch that
validates at or after its start (resyncing across damage) and stops where the next task starts
(:func:`pipeline.framing.first_batch_at`). These tests cut damaged copies of the clean log of
:mod:`tests.pipeline.damaged_logs` at every byte position and check that the tasks together read every record
exactly once and report the same skipped ranges as one reader of the whole file.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from pipeline.framing import Batch, Cut, SkipKind, first_batch_at, walk
from pipeline.layout import file_reader, fixed_cuts
from pipeline.scan import offsets_columns, topic_columns
from tests.pipeline.damaged_logs import (
    OFFSETS_SEGMENT,
    TOPIC_SEGMENT,
    CleanLog,
    batch_at_offset,
    batches,
    build_clean,
    copy_log,
    edit,
    flip_byte,
    set_length,
    truncate,
)

Damage = Callable[[Path, CleanLog], None]


def _crc_flip(segment: Path, clean: CleanLog) -> None:
    pos, header = batch_at_offset(segment, clean.victim_offset)
    flip_byte(segment, pos + header.size - 1)


def _garbage(segment: Path, clean: CleanLog) -> None:
    pos, _ = batch_at_offset(segment, clean.victim_offset)
    edit(segment, pos, b"\x00" * 64, insert=True)


def _bad_length(segment: Path, clean: CleanLog) -> None:
    pos, _ = batch_at_offset(segment, clean.victim_offset)
    set_length(segment, pos, 10_000_000)


def _torn_tail(segment: Path, clean: CleanLog) -> None:
    truncate(segment, segment.stat().st_size - 30)


DAMAGE: dict[str, Damage] = {
    "clean": lambda segment, clean: None,
    "crc": _crc_flip,
    "garbage": _garbage,
    "framing": _bad_length,
    "torn-tail": _torn_tail,
}


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> CleanLog:
    return build_clean(tmp_path_factory.mktemp("clean") / "data")


@pytest.fixture(params=sorted(DAMAGE))
def damaged_offsets(request: pytest.FixtureRequest, clean: CleanLog, tmp_path: Path) -> Path:
    segment = copy_log(clean, tmp_path / "damaged") / OFFSETS_SEGMENT
    DAMAGE[request.param](segment, clean)
    return segment


def _offsets_rows(segment: Path, ranges: list[tuple[int, int]], limit: int | None) -> list[tuple[Any, ...]]:
    """Every row the given ranges read, in order, but the wording of a skipped range's detail (which names the
    bytes the task had)."""
    rows: list[tuple[Any, ...]] = []
    for lo, hi in ranges:
        for cols in offsets_columns(str(segment), 0, 0, lo, hi, SkipKind.TORN_TAIL, limit):
            names = [n for n in cols if n != "skip_detail"]
            rows.extend(zip(*(cols[n] for n in names), strict=True))
    return rows


def test_two_tasks_cut_at_every_byte_read_each_record_once(damaged_offsets: Path) -> None:
    size = damaged_offsets.stat().st_size
    whole = _offsets_rows(damaged_offsets, [(0, size)], None)
    assert any(row[4] == "offset_commit" for row in whole)
    for cut in range(1, size):
        assert _offsets_rows(damaged_offsets, [(0, cut), (cut, size)], size) == whole, f"cut at byte {cut}"


def test_many_small_tasks_tile_the_file(damaged_offsets: Path) -> None:
    size = damaged_offsets.stat().st_size
    whole = _offsets_rows(damaged_offsets, [(0, size)], None)
    for step in (37, 100, 251, 1000):
        ranges = list(pairwise(fixed_cuts(0, size, step)))
        assert len(ranges) > 1
        assert _offsets_rows(damaged_offsets, ranges, size) == whole, f"cut every {step} bytes"


def test_an_exact_range_read_in_small_chunks_reads_the_same_rows(
    damaged_offsets: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    size = damaged_offsets.stat().st_size
    whole = _offsets_rows(damaged_offsets, [(0, size)], None)
    monkeypatch.setattr("pipeline.scan.READ_CHUNK", 97)  # many spans inside the one task
    assert _offsets_rows(damaged_offsets, [(0, size)], None) == whole
    assert _offsets_rows(damaged_offsets, [(0, size // 2), (size // 2, size)], size) == whole


def test_first_batch_at_resyncs_past_damage_to_a_batch_start(clean: CleanLog, tmp_path: Path) -> None:
    segment = copy_log(clean, tmp_path / "damaged") / OFFSETS_SEGMENT
    pos, header = batch_at_offset(segment, clean.victim_offset)
    flip_byte(segment, pos + header.size - 1)
    size = segment.stat().st_size
    with open(segment, "rb") as f:
        read = file_reader(f)
        after = Cut(pos + header.size, header.next_offset)
        assert first_batch_at(read, 0, size) == Cut(0)
        assert first_batch_at(read, pos, size) == after  # the CRC-failed batch is not a start
        assert first_batch_at(read, pos + 1, size) == after
        assert first_batch_at(read, size - 1, size) == Cut(size)  # inside the last batch: nothing after it
        assert first_batch_at(read, size + 5, size) == Cut(size)


def _topic_items(segment: Path, cut: int, size: int) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of each batch or skipped range two tasks cut at ``cut`` read, in order."""
    items: list[tuple[int, int, str]] = []
    with open(segment, "rb") as f:
        read = file_reader(f)
        for lo, hi in pairwise([0, first_batch_at(read, cut, size).position, size]):
            for item in walk(read, lo, hi, tail=SkipKind.TORN_TAIL if hi == size else SkipKind.FRAMING):
                if isinstance(item, Batch):
                    items.append((item.position, item.position + item.header.size, "batch"))
                else:
                    items.append((item.start, item.end, item.kind.value))
    return items


def test_topic_tasks_cut_at_every_byte_tile_the_segment(clean: CleanLog, tmp_path: Path) -> None:
    segment = copy_log(clean, tmp_path / "damaged") / TOPIC_SEGMENT
    pos, _ = batches(segment)[2]
    edit(segment, pos, b"\x07" * 50, insert=True)
    size = segment.stat().st_size
    for cut in range(1, size):
        items = _topic_items(segment, cut, size)
        assert [start for start, _, _ in items] == [0, *(end for _, end, _ in items[:-1])], f"cut at byte {cut}"
        assert items[-1][1] == size
        assert [kind for _, _, kind in items].count("garbage") == 1
        assert [kind for _, _, kind in items].count("batch") == len(batches(clean.data_dir / TOPIC_SEGMENT))


def test_topic_columns_leave_in_chunks_of_bounded_rows(
    clean: CleanLog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    segment = clean.data_dir / TOPIC_SEGMENT
    size = segment.stat().st_size
    monkeypatch.setattr("pipeline.scan.TOPIC_ROWS", 2)
    chunks = list(topic_columns("t", 1, 0, str(segment), 0, size, SkipKind.TORN_TAIL))
    assert [len(c["base_offset"]) for c in chunks] == [2, 2, 1]
    assert [o for c in chunks for o in c["base_offset"]] == [h.base_offset for _, h in batches(segment)]
