"""Restart recovery: torn or corrupt tails are cut off, never served; indexes are rebuilt when untrustworthy."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from storage.config import LogConfig
from storage.partition_log import PartitionLog
from storage.segment import CLEANED_SUFFIX, LogSegment, SegmentSpec
from tests.storage.helpers import decode_all, make_batch, offsets_of
from tests.storage.on_disk import BATCHES, RECORDS, batch_spans, build, reopen


def last_segment(directory: Path) -> Path:
    return sorted(directory.glob("*.log"))[-1]


def assert_recovered_to(log: PartitionLog, everything: bytes, end_offset: int) -> None:
    """The log serves exactly the batches before ``end_offset`` and keeps appending from there."""
    assert log.log_end_offset == end_offset
    served = log.read(0, 10**9)
    assert offsets_of(served) == list(range(end_offset))
    assert everything.startswith(served)
    result = log.append(make_batch(2), now_ms=0)
    assert (result.base_offset, result.last_offset) == (end_offset, end_offset + 1)
    assert offsets_of(log.read(0, 10**9)) == list(range(end_offset + 2))


def last_batch_start(path: Path) -> int:
    return last_batch_start_in(path.read_bytes())


def last_batch_start_in(data: bytes) -> int:
    return batch_spans(data)[-1][0]


@pytest.mark.parametrize("recovery_point", [None, 0, BATCHES * RECORDS])
def test_clean_reopen_serves_everything(tmp_path: Path, recovery_point: int | None) -> None:
    directory, everything = build(tmp_path)
    log = reopen(directory, recovery_point)
    assert log.read(0, 10**9) == everything
    assert log.recovery_point == (recovery_point or 0)
    assert_recovered_to(log, everything, BATCHES * RECORDS)


UNFLUSHED_LAST = (BATCHES - 1) * RECORDS  # the checkpoint was taken before the last batch: it may be cut
FLUSHED_ALL = BATCHES * RECORDS  # the last batch was flushed (and maybe acknowledged): it must never be cut


@pytest.mark.parametrize("cut", [1, 10, 61, 100])
def test_truncated_last_batch(tmp_path: Path, cut: int) -> None:
    directory, everything = build(tmp_path)
    path = last_segment(directory)
    os.truncate(path, path.stat().st_size - cut)
    log = reopen(directory, UNFLUSHED_LAST)
    assert_recovered_to(log, everything, (BATCHES - 1) * RECORDS)
    assert path.stat().st_size == last_batch_start(path) + len(make_batch(2))


def test_corrupted_crc_in_last_batch(tmp_path: Path) -> None:
    directory, everything = build(tmp_path)
    path = last_segment(directory)
    data = bytearray(path.read_bytes())
    data[-5] ^= 0x01
    path.write_bytes(bytes(data))
    log = reopen(directory, UNFLUSHED_LAST)
    assert_recovered_to(log, everything, (BATCHES - 1) * RECORDS)


@pytest.mark.parametrize("damage", ["truncated", "crc"])
def test_damaged_last_batch_below_the_recovery_point_is_kept_and_its_offsets_never_reused(
    tmp_path: Path, damage: str
) -> None:
    """Kafka cuts only the unflushed tail: a flushed last batch that no longer validates is damage we keep and
    report, and new appends continue after every offset it held (a consumer may already have committed past them)."""
    directory, everything = build(tmp_path)
    path = last_segment(directory)
    if damage == "truncated":
        os.truncate(path, path.stat().st_size - 10)
    else:
        data = bytearray(path.read_bytes())
        data[-5] ^= 0x01
        path.write_bytes(bytes(data))
    size_on_disk = path.stat().st_size
    log = reopen(directory, FLUSHED_ALL)
    assert path.stat().st_size == size_on_disk  # nothing cut
    [damaged] = log.damaged_ranges()
    assert (damaged.segment, damaged.end) == (path.name, size_on_disk)
    assert log.log_end_offset == FLUSHED_ALL
    assert offsets_of(log.read(0, 10**9)) == list(range((BATCHES - 1) * RECORDS))
    result = log.append(make_batch(2), now_ms=0)
    assert result.base_offset == FLUSHED_ALL
    served = log.read(0, 10**9)
    assert offsets_of(served) == [*range((BATCHES - 1) * RECORDS), FLUSHED_ALL, FLUSHED_ALL + 1]
    assert everything.startswith(served[: last_batch_start_in(everything)])


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x00" * 4096,  # zero-filled extent after a power loss
        b"\xde\xad\xbe\xef" * 7,  # random junk shorter than a header
        os.urandom(5000),
        struct.pack(">qi", 120, 2_000_000_000) + b"\x00" * 100,  # nonsense length, runs past the end
        struct.pack(">qi", 120, 5) + b"\x00" * 100,  # nonsense length, below the minimum
    ],
)
def test_garbage_appended(tmp_path: Path, garbage: bytes) -> None:
    directory, everything = build(tmp_path)
    path = last_segment(directory)
    size = path.stat().st_size
    with open(path, "ab") as f:
        f.write(garbage)
    log = reopen(directory, BATCHES * RECORDS)
    assert path.stat().st_size == size
    assert_recovered_to(log, everything, BATCHES * RECORDS)


def test_batch_with_a_lower_offset_ends_the_valid_data(tmp_path: Path) -> None:
    directory, everything = build(tmp_path)
    path = last_segment(directory)
    with open(path, "ab") as f:
        f.write(make_batch(1))  # a valid batch, but base offset 0 again
    log = reopen(directory, BATCHES * RECORDS)
    assert_recovered_to(log, everything, BATCHES * RECORDS)


def test_corruption_in_a_closed_segment_keeps_what_follows(tmp_path: Path) -> None:
    directory, _everything = build(tmp_path)
    segments = sorted(directory.glob("*.log"))
    assert len(segments) >= 4
    second = segments[1]
    start = last_batch_start(second)
    data = bytearray(second.read_bytes())
    data[start + 70] ^= 0xFF
    second.write_bytes(bytes(data))
    # No recovery point: every segment is scanned, the bad CRC is found, reported and skipped (issue #10: it used
    # to truncate the segment and drop every segment after it).
    log = reopen(directory, None)
    first_bad = int(second.name[:20]) + len(offsets_of(bytes(data[:start])))
    assert offsets_of(log.read(0, 10**9)) == [o for o in range(BATCHES * RECORDS) if not 0 <= o - first_bad < RECORDS]
    assert sorted(directory.glob("*.log")) == segments
    assert [(d.segment, d.start) for d in log.damaged_ranges()] == [(second.name, start)]


def test_closed_segments_below_the_recovery_point_are_trusted(tmp_path: Path) -> None:
    directory, everything = build(tmp_path)
    second = sorted(directory.glob("*.log"))[1]
    data = bytearray(second.read_bytes())
    data[-5] ^= 0x01  # a CRC error no cheap check can see
    second.write_bytes(bytes(data))
    log = reopen(directory, BATCHES * RECORDS)
    assert log.log_end_offset == BATCHES * RECORDS
    assert log.damaged_ranges() == []  # not scanned at open...
    assert len(log.read(0, 10**9)) == len(everything) - (len(data) - last_batch_start(second))
    assert len(log.damaged_ranges()) == 1  # ...but a reader checks the CRC and skips the batch


def test_structural_damage_below_the_recovery_point_is_kept_and_skipped(tmp_path: Path) -> None:
    directory, _everything = build(tmp_path)
    second = sorted(directory.glob("*.log"))[1]
    start = last_batch_start(second)
    os.truncate(second, second.stat().st_size - 3)
    end = int(second.name[:20]) + len(offsets_of(second.read_bytes()[:start]))
    log = reopen(directory, BATCHES * RECORDS)
    assert second.stat().st_size == len(second.read_bytes())  # the torn tail stays on disk
    assert offsets_of(log.read(0, 10**9)) == [o for o in range(BATCHES * RECORDS) if not 0 <= o - end < RECORDS]
    assert [(d.start, d.end) for d in log.damaged_ranges()] == [(start, second.stat().st_size)]


def index_files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.suffix in (".index", ".timeindex")}


def test_indexes_rebuilt_identically(tmp_path: Path) -> None:
    directory, _everything = build(tmp_path)
    reference = index_files(directory)
    assert any(reference.values())
    for path in directory.glob("*index"):
        path.unlink()
    log = reopen(directory, BATCHES * RECORDS)
    log.close()
    assert index_files(directory) == reference


@pytest.mark.parametrize("damage", ["odd_size", "random", "beyond_log", "empty"])
def test_damaged_index_is_rebuilt(tmp_path: Path, damage: str) -> None:
    directory, everything = build(tmp_path)
    reference = index_files(directory)
    target = sorted(directory.glob("*.index"))[0]
    if damage == "odd_size":
        target.write_bytes(target.read_bytes()[:-3])
    elif damage == "random":
        target.write_bytes(os.urandom(len(reference[target.name])))
    elif damage == "beyond_log":
        target.write_bytes(reference[target.name] + struct.pack(">ii", 10_000, 1_000_000))
    else:
        target.write_bytes(b"")
    log = reopen(directory, BATCHES * RECORDS)
    assert log.read(0, 10**9) == everything
    for offset in range(0, BATCHES * RECORDS, 7):
        assert decode_all(log.read(offset, 1))[0].base_offset == offset - offset % RECORDS
    log.close()
    assert index_files(directory) == reference


def test_stale_time_index_is_rebuilt(tmp_path: Path) -> None:
    directory, _everything = build(tmp_path)
    target = sorted(directory.glob("*.timeindex"))[0]
    target.write_bytes(struct.pack(">qi", 5, 0) + struct.pack(">qi", 4, 1))  # not increasing
    log = reopen(directory, BATCHES * RECORDS)
    assert log.segments()[0].max_timestamp == 1_000 + log.segments()[0].next_offset // RECORDS - 1 + 2


def test_leftovers_of_an_interrupted_cleaning_are_discarded(tmp_path: Path) -> None:
    directory, everything = build(tmp_path)
    (directory / f"{0:020d}.log{CLEANED_SUFFIX}").write_bytes(b"partial")
    (directory / f"{0:020d}.index{CLEANED_SUFFIX}").write_bytes(b"")
    (directory / f"{999:020d}.index").write_bytes(b"")  # index without a log
    log = reopen(directory, BATCHES * RECORDS)
    assert log.read(0, 10**9) == everything
    names = {p.name for p in directory.iterdir()}
    assert not any(n.endswith(CLEANED_SUFFIX) for n in names)
    assert f"{999:020d}.index" not in names


def test_empty_segment_file_only(tmp_path: Path) -> None:
    directory = tmp_path / "topic-0"
    directory.mkdir()
    (directory / f"{50:020d}.log").write_bytes(b"")
    log = reopen(directory)
    assert (log.log_start_offset, log.log_end_offset) == (50, 50)
    assert log.append(make_batch(1), now_ms=0).base_offset == 50


def test_segment_create_refuses_to_clobber(tmp_path: Path) -> None:
    (tmp_path / f"{0:020d}.log").write_bytes(b"data")
    with pytest.raises(Exception, match="not empty"):
        LogSegment.create(SegmentSpec(tmp_path, 0, index_interval_bytes=4096, max_index_bytes=1024, now_ms=0))


def test_index_missing_its_last_entries_is_completed(tmp_path: Path) -> None:
    directory, everything = build(tmp_path)
    reference = index_files(directory)
    target = sorted(directory.glob("*.index"))[0]
    entries = len(reference[target.name]) // 8
    assert entries >= 3
    target.write_bytes(reference[target.name][: 8 * (entries // 2)])  # as if the last writes never reached disk
    log = reopen(directory, BATCHES * RECORDS)
    assert log.segments()[0].index.entries() == [
        (
            int.from_bytes(reference[target.name][i : i + 4], "big", signed=True),
            int.from_bytes(reference[target.name][i + 4 : i + 8], "big"),
        )
        for i in range(0, len(reference[target.name]), 8)
    ]
    assert log.read(0, 10**9) == everything
    log.close()
    assert index_files(directory) == reference


def test_stale_overlapping_segment_is_quarantined(tmp_path: Path) -> None:
    directory, _everything = build(tmp_path)
    segments = sorted(directory.glob("*.log"))
    stale = segments[2]
    saved = stale.read_bytes()
    log = PartitionLog(directory, LogConfig(segment_bytes=1 << 20), recovery_point=BATCHES * RECORDS, now_ms=0)
    log.truncate_to(int(segments[1].name[:20]) + 3)  # deletes segments[2:] durably (the directory is fsynced)
    for _ in range(15):  # the second segment grows past where the third one used to start
        log.append(make_batch(RECORDS, value_size=50), now_ms=0)
    end = log.log_end_offset
    log.close()
    stale.write_bytes(saved)  # a file whose base offset lies inside the second segment's offsets
    again = reopen(directory, None)
    assert again.log_end_offset == end
    assert offsets_of(again.read(0, 10**9)) == list(range(end))
    [moved] = again.quarantined_files()
    assert moved.original == stale.name and not stale.exists()
    assert Path(moved.moved_to).read_bytes() == saved


def _opened_for_writing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the files the code under test opens with ``open(..., "wb")`` (how an index is rewritten)."""
    import builtins

    written: list[str] = []
    real_open = builtins.open

    def spying_open(file: object, mode: str = "r", *args: object, **kwargs: object) -> object:
        if "w" in mode:
            written.append(Path(str(file)).name)
        return real_open(file, mode, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(builtins, "open", spying_open)
    return written


def test_reopening_an_empty_partition_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A restart loads every empty partition (100 coordinator partitions on a fresh cluster): the rebuilt indexes
    of an empty segment are what the files already hold, so none is written again."""
    PartitionLog(tmp_path / "t-0", now_ms=0).close()
    written = _opened_for_writing(monkeypatch)
    log = PartitionLog(tmp_path / "t-0", now_ms=0)
    assert (written, log.log_end_offset) == ([], 0)
    assert log.append(make_batch(2), now_ms=0).base_offset == 0


def test_an_empty_segments_index_with_entries_is_rewritten_empty(tmp_path: Path) -> None:
    PartitionLog(tmp_path / "t-0", now_ms=0).close()
    [index] = (tmp_path / "t-0").glob("*.index")
    index.write_bytes(struct.pack(">ii", 5, 100))  # an entry no batch backs
    log = PartitionLog(tmp_path / "t-0", now_ms=0)
    assert (index.read_bytes(), log.log_end_offset) == (b"", 0)
