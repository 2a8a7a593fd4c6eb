"""Damaged data (Decision 9): reported once, kept on disk, skipped by readers; files that are not segments are
quarantined; only the active segment's unflushed tail is ever truncated."""

from __future__ import annotations

import dataclasses
import os
import struct
from pathlib import Path

from storage.damage import QUARANTINE_DIR
from storage.partition_log import PartitionLog
from tests.storage.helpers import decode_all, make_batch, offsets_of
from tests.storage.on_disk import BATCHES, CONFIG, RECORDS, batch_positions, build, flip, reopen

END = BATCHES * RECORDS


def segment_files(directory: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in sorted(directory.glob("*.log"))}


def first_offset(path: Path, batch: int) -> int:
    """The base offset of batch number ``batch`` of a segment file (before it was damaged)."""
    return int(path.name[:20]) + batch * RECORDS


def quarantined(tmp_path: Path) -> list[str]:
    root = tmp_path / QUARANTINE_DIR / "topic-0"
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def test_corrupt_batch_in_an_old_segment_is_reported_kept_and_skipped(tmp_path: Path) -> None:
    directory, _everything = build(tmp_path)
    before = segment_files(directory)
    second = sorted(directory.glob("*.log"))[1]
    start, end = batch_positions(second)[2]
    flip(second, start + 70)  # a record byte: only the CRC sees it
    damaged_first = first_offset(second, 2)
    log = reopen(directory, None)  # every segment is scanned
    assert segment_files(directory) == before  # nothing cut, nothing deleted
    assert log.log_end_offset == END
    expected = [o for o in range(END) if not damaged_first <= o < damaged_first + RECORDS]
    assert offsets_of(log.read(0, 10**9)) == expected
    [damage] = log.damaged_ranges()
    assert (damage.topic, damage.partition, damage.segment) == ("topic", 0, second.name)
    assert (damage.start, damage.end) == (start, end)
    assert "crc" in damage.reason.lower()
    # a consumer fetching inside the damaged batch gets the next valid batch, not garbage and not stuck
    assert decode_all(log.read(damaged_first + 1, 1))[0].base_offset == damaged_first + RECORDS
    assert [b.base_offset for b in log.iter_batches_from()] == [o for o in expected if o % RECORDS == 0]
    assert len(log.damaged_ranges()) == 1  # reported once, not on every read


def test_crc_damage_in_a_trusted_segment_is_found_by_readers_once(tmp_path: Path) -> None:
    directory, _everything = build(tmp_path)
    second = sorted(directory.glob("*.log"))[1]
    start, end = batch_positions(second)[1]
    flip(second, start + 80)
    damaged_first = first_offset(second, 1)
    log = reopen(directory, END)  # below the recovery point: trusted, no scan sees a CRC
    assert log.damaged_ranges() == []
    expected = [o for o in range(END) if not damaged_first <= o < damaged_first + RECORDS]
    for _ in range(3):
        assert offsets_of(log.read(0, 10**9)) == expected
    assert [b.base_offset for b in log.iter_batches_from()] == [o for o in expected if o % RECORDS == 0]
    assert decode_all(log.read(damaged_first, 1))[0].base_offset == damaged_first + RECORDS
    [damage] = log.damaged_ranges()
    assert (damage.segment, damage.start, damage.end) == (second.name, start, end)


def test_streamed_fetch_slices_skip_damage_in_a_trusted_segment_as_read_does(tmp_path: Path) -> None:
    """Fetch streams file ranges (`read_slices`) instead of bytes; they must leave out the same damaged batch."""
    directory, _everything = build(tmp_path)
    second = sorted(directory.glob("*.log"))[1]
    start, end = batch_positions(second)[1]
    flip(second, start + 80)
    damaged_first = first_offset(second, 1)
    log = reopen(directory, END)  # trusted at open: only a reader can find the bad CRC
    expected = [o for o in range(END) if not damaged_first <= o < damaged_first + RECORDS]
    for offset in (0, damaged_first, damaged_first + 1):
        slices = log.read_slices(offset, 10**9)
        streamed = b"".join(os.pread(piece.fd, piece.length, piece.position) for piece in slices)
        for piece in slices:
            piece.close()
        assert streamed == log.read(offset, 10**9)
        assert offsets_of(streamed)[0] == (offset if offset < damaged_first else damaged_first + RECORDS)
    assert offsets_of(log.read(0, 10**9)) == expected
    [damage] = log.damaged_ranges()
    assert (damage.segment, damage.start, damage.end) == (second.name, start, end)
    log.close()


def test_broken_header_in_a_trusted_segment_resumes_at_the_next_valid_batch(tmp_path: Path) -> None:
    directory, _everything = build(tmp_path)
    second = sorted(directory.glob("*.log"))[1]
    spans = batch_positions(second)
    data = bytearray(second.read_bytes())
    start = spans[1][0]
    data[start + 8 : start + 12] = struct.pack(">i", 7)  # a batch length below the minimum
    data[start + 16] = 9  # and a wrong magic
    second.write_bytes(bytes(data))
    log = reopen(directory, END)
    damaged_first = first_offset(second, 1)
    expected = [o for o in range(END) if not damaged_first <= o < damaged_first + RECORDS]
    assert offsets_of(log.read(0, 10**9)) == expected
    [damage] = log.damaged_ranges()
    assert (damage.start, damage.end) == spans[1]


def test_old_segment_cut_in_half_keeps_every_newer_segment(tmp_path: Path) -> None:
    directory, _everything = build(tmp_path)
    segments = sorted(directory.glob("*.log"))
    second = segments[1]
    spans = batch_positions(second)
    size = second.stat().st_size
    os.truncate(second, size // 2)
    cut_batch = next(i for i, (s, e) in enumerate(spans) if s < size // 2 < e)
    for recovery_point in (None, END):
        log = reopen(directory, recovery_point)
        assert [s.log_path.name for s in log.segments()] == [p.name for p in segments]
        assert log.log_end_offset == END
        lost = range(first_offset(second, cut_batch), int(segments[2].name[:20]))
        assert offsets_of(log.read(0, 10**9)) == [o for o in range(END) if o not in lost]
        [damage] = log.damaged_ranges()
        assert (damage.segment, damage.start, damage.end) == (second.name, spans[cut_batch][0], size // 2)
        log.close()


def test_stray_overlapping_segment_is_quarantined_and_nothing_is_deleted(tmp_path: Path) -> None:
    directory, everything = build(tmp_path)
    segments = segment_files(directory)
    stray = directory / f"{5:020d}.log"
    copy = sorted(directory.glob("*.log"))[2].read_bytes()
    stray.write_bytes(copy)  # a copy of a later segment, under a base offset inside the first one
    log = reopen(directory, END)
    assert segment_files(directory) == segments
    assert log.read(0, 10**9) == everything
    [moved] = log.quarantined_files()
    assert (moved.topic, moved.partition, moved.original) == ("topic", 0, stray.name)
    assert Path(moved.moved_to).read_bytes() == copy
    assert quarantined(tmp_path) == [Path(moved.moved_to).name]
    assert Path(moved.moved_to).name.endswith(f"-{stray.name}")
    assert "inside" in moved.reason


def test_files_that_are_not_segments_are_quarantined(tmp_path: Path) -> None:
    directory, everything = build(tmp_path)
    segments = segment_files(directory)
    (directory / "0005.log").write_bytes(b"short name")
    (directory / "garbage.index").write_bytes(b"x")
    (directory / f"{10**9:020d}.log").write_bytes(os.urandom(3000))  # junk far beyond the log end
    log = reopen(directory, END)
    assert segment_files(directory) == segments
    assert log.read(0, 10**9) == everything
    assert log.log_end_offset == END
    assert sorted(q.original for q in log.quarantined_files()) == sorted(
        ["0005.log", "garbage.index", f"{10**9:020d}.log"]
    )
    assert len(quarantined(tmp_path)) == 3
    assert log.append(make_batch(1), now_ms=0).base_offset == END


def test_closed_segment_without_a_valid_batch_is_quarantined(tmp_path: Path) -> None:
    directory, _everything = build(tmp_path)
    segments = sorted(directory.glob("*.log"))
    second = segments[1]
    second.write_bytes(os.urandom(second.stat().st_size))
    log = reopen(directory, None)
    assert [s.log_path.name for s in log.segments()] == [p.name for p in segments if p != second]
    assert log.log_end_offset == END
    [moved] = log.quarantined_files()
    assert moved.original == second.name


def test_active_segment_damage_below_the_recovery_point_is_kept(tmp_path: Path) -> None:
    directory, _everything = build(tmp_path)
    last = sorted(directory.glob("*.log"))[-1]
    spans = batch_positions(last)
    assert len(spans) >= 3
    size = last.stat().st_size
    flip(last, spans[0][0] + 70)
    log = reopen(directory, END)
    assert last.stat().st_size == size
    assert log.log_end_offset == END
    [damage] = log.damaged_ranges()
    assert (damage.start, damage.end) == spans[0]
    assert log.append(make_batch(1), now_ms=0).base_offset == END


def test_active_segment_damage_past_the_recovery_point_truncates_the_tail(tmp_path: Path) -> None:
    directory, _everything = build(tmp_path)
    last = sorted(directory.glob("*.log"))[-1]
    spans = batch_positions(last)
    flip(last, spans[1][0] + 70)
    log = reopen(directory, first_offset(last, 1))  # flushed up to the damaged batch: the rest is unflushed
    assert last.stat().st_size == spans[1][0]
    assert log.log_end_offset == first_offset(last, 1)
    assert log.damaged_ranges() == []


def test_log_without_damage_reports_nothing(tmp_path: Path) -> None:
    directory, everything = build(tmp_path)
    log = reopen(directory, None)
    assert log.read(0, 10**9) == everything
    assert (log.damaged_ranges(), log.quarantined_files()) == ([], [])
    assert not (tmp_path / QUARANTINE_DIR).exists()


def test_damage_is_skipped_across_a_restart_and_appends_continue(tmp_path: Path) -> None:
    directory, _everything = build(tmp_path)
    second = sorted(directory.glob("*.log"))[1]
    start, _end = batch_positions(second)[0]
    flip(second, start + 70)
    log = reopen(directory, None)
    log.append(make_batch(2), now_ms=0)
    log.flush()
    log.close()
    again = PartitionLog(directory, CONFIG, recovery_point=END + 2, now_ms=0)
    damaged_first = first_offset(second, 0)
    assert offsets_of(again.read(0, 10**9)) == [
        o for o in range(END + 2) if not damaged_first <= o < damaged_first + RECORDS
    ]
    assert len(again.damaged_ranges()) == 1


def test_a_crc_failure_just_before_a_range_a_header_walk_noted_is_skipped_too(tmp_path: Path) -> None:
    """A header walk notes a broken header first; a read then finds the batch before it fails its CRC. The new
    damage overlaps the known range and must still be recorded (its uncovered part), or the read would find the
    same bad batch forever."""
    config = dataclasses.replace(CONFIG, index_interval_bytes=1)
    directory = tmp_path / "topic-0"
    log = PartitionLog(directory, config, now_ms=0)
    for i in range(8):
        log.append(make_batch(RECORDS, tag=i), now_ms=0)
    log.roll(now_ms=0)
    log.append(make_batch(1), now_ms=0)
    positions = [position for position, _ in log.segments()[0].iter_headers()]
    log.flush()
    end = log.log_end_offset
    log.close()
    first = directory / f"{0:020d}.log"
    flip(first, positions[3] - 2)  # a record byte of batch 2: only its CRC shows it
    data = bytearray(first.read_bytes())
    data[positions[3] + 16] = 7  # batch 3's magic byte: its header is broken
    first.write_bytes(bytes(data))
    log = PartitionLog(directory, config, recovery_point=end, now_ms=0)  # trusted: nothing scanned at open
    list(log.segments()[0].iter_headers())  # what a producer-state replay does: notes batch 3
    assert [(d.start, d.end) for d in log.damaged_ranges()] == [(positions[3], positions[4])]
    served = offsets_of(log.read(2 * RECORDS, 1 << 20))
    assert served[0] == 4 * RECORDS  # batches 2 and 3 skipped, the read resumes at batch 4
    assert [(d.start, d.end) for d in log.damaged_ranges()] == [
        (positions[3], positions[4]),
        (positions[2], positions[3]),
    ]
    log.close()
