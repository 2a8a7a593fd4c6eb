"""Sparse index lookups agree with a linear scan of the log, for arbitrary batch sizes and index intervals."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.records import RecordBatch
from storage.config import LogConfig
from storage.index import OffsetIndex, TimeIndex
from storage.partition_log import PartitionLog
from tests.storage.helpers import decode_all, make_batch

batch_specs = st.lists(
    st.tuples(
        st.integers(min_value=1, max_value=6),  # records
        st.integers(min_value=0, max_value=350),  # value size
        st.integers(min_value=0, max_value=5_000),  # timestamp
    ),
    min_size=1,
    max_size=60,
)


def build(directory: Path, specs: list[tuple[int, int, int]], interval: int, segment_bytes: int) -> PartitionLog:
    log = PartitionLog(directory, LogConfig(segment_bytes=segment_bytes, index_interval_bytes=interval), now_ms=0)
    for i, (count, size, timestamp) in enumerate(specs):
        log.append(make_batch(count, timestamp=timestamp, value_size=size, tag=i), now_ms=0)
    return log


def first_record_at_or_after(batches: list[RecordBatch], timestamp: int) -> tuple[int, int] | None:
    for batch in batches:
        for offset, ts, _ in batch.absolute():
            if ts >= timestamp:
                return offset, ts
    return None


@settings(max_examples=60, deadline=None)
@given(
    specs=batch_specs,
    interval=st.sampled_from([0, 1, 100, 700, 4096]),
    segment_bytes=st.sampled_from([2_600, 4_000, 1 << 20]),
    data=st.data(),
)
def test_lookups_match_a_linear_scan(
    specs: list[tuple[int, int, int]], interval: int, segment_bytes: int, data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = build(Path(tmp) / "t-0", specs, interval, segment_bytes)
        everything = log.read(0, 1 << 30)
        batches = decode_all(everything)
        end = log.log_end_offset
        assert end == sum(count for count, _, _ in specs)

        offsets = data.draw(st.lists(st.integers(min_value=0, max_value=end - 1), min_size=1, max_size=20))
        for offset in offsets:
            expected = next(b for b in batches if b.last_offset >= offset)
            got = decode_all(log.read(offset, 1))
            assert got[0].base_offset == expected.base_offset
            # Whole batches only, and a suffix of the log from the right batch when the budget allows it all.
            assert everything.endswith(log.read(offset, 1 << 30))

        for segment in log.segments():
            in_segment = [b for b in batches if segment.base_offset <= b.base_offset < segment.next_offset]
            for offset in range(segment.base_offset, segment.next_offset):
                found = segment.find(offset)
                assert found is not None
                expected = next(b for b in in_segment if b.last_offset >= offset)
                assert found[1].base_offset == expected.base_offset
            # Every index entry points at a batch boundary whose batch ends at the indexed offset.
            for offset, position in segment.index.entries():
                entry = segment.find(offset)
                assert entry is not None and entry[0] == position and entry[1].last_offset == offset

        timestamps = data.draw(st.lists(st.integers(min_value=0, max_value=5_100), min_size=1, max_size=10))
        for timestamp in timestamps:
            by_time = log.offset_for_timestamp(timestamp)
            expected_ts = first_record_at_or_after(batches, timestamp)
            assert (None if by_time is None else (by_time.offset, by_time.timestamp)) == expected_ts
        log.close()


@settings(max_examples=25, deadline=None)
@given(specs=batch_specs, interval=st.sampled_from([0, 150, 1000]))
def test_rebuilt_indexes_equal_incremental_ones(specs: list[tuple[int, int, int]], interval: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "t-0"
        log = build(directory, specs, interval, 3_000)
        reference = [(s.index.entries(), s.time_index.entries(), s.max_timestamp) for s in log.segments()]
        log.close()
        # Offset and time indexes only: a lost .txnindex comes back from the producer-state replay, not the open.
        sealed = {p.name: p.read_bytes() for p in directory.iterdir() if p.suffix in (".index", ".timeindex")}
        for path in directory.glob("*index"):
            path.unlink()
        log = PartitionLog(directory, LogConfig(segment_bytes=3_000, index_interval_bytes=interval), now_ms=0)
        rebuilt = [(s.index.entries(), s.time_index.entries(), s.max_timestamp) for s in log.segments()]
        # The active segment is not sealed until it is closed.
        assert rebuilt[:-1] == reference[:-1]
        assert rebuilt[-1][0] == reference[-1][0] and rebuilt[-1][2] == reference[-1][2]
        log.close()
        assert {p.name: p.read_bytes() for p in directory.iterdir() if p.suffix in (".index", ".timeindex")} == sealed


def test_offset_index_unit(tmp_path: Path) -> None:
    index = OffsetIndex(tmp_path / "x.index", 100, max_entries=3)
    assert index.lookup(150) == 0
    index.append(104, 500)
    index.append(110, 900)
    assert (index.lookup(103), index.lookup(104), index.lookup(109), index.lookup(10_000)) == (0, 500, 500, 900)
    assert index.floor_position(899) == 500
    index.append(120, 1300)
    assert index.is_full
    index.flush()
    loaded = OffsetIndex.load(tmp_path / "x.index", 100, 3, log_size=2000)
    assert loaded is not None and loaded.entries() == [(104, 500), (110, 900), (120, 1300)]
    assert OffsetIndex.load(tmp_path / "x.index", 100, 3, log_size=1300) is None
    index.truncate_to_position(900)
    index.flush()
    assert (tmp_path / "x.index").stat().st_size == 8


def test_time_index_unit(tmp_path: Path) -> None:
    index = TimeIndex(tmp_path / "x.timeindex", 0, max_entries=10)
    index.maybe_append(-1, 0)
    index.maybe_append(50, 3)
    index.maybe_append(50, 5)  # not larger: skipped
    index.maybe_append(80, 9)
    assert index.entries() == [(50, 3), (80, 9)]
    assert (index.lookup(10), index.lookup(50), index.lookup(79), index.lookup(99)) == (0, 3, 3, 9)
    index.truncate_to_offset(9)
    assert index.entries() == [(50, 3)]
