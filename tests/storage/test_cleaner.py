"""Log compaction (storage/cleaner.py): latest value per key, offsets, tombstones, crash safety, threads, volume."""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from protocol import consumer_offsets
from protocol.messages.offset_commit_key import OffsetCommitKey
from protocol.messages.offset_commit_value import OffsetCommitValue
from protocol.records import Compression, Record, RecordBatch, encode_batch
from storage.cleaner import CleanerConfig, LogCleaner, clean
from storage.config import LogConfig
from storage.log_manager import LogManager
from storage.partition_log import AppendOrigin, PartitionLog
from storage.segment import CLEANED_SUFFIX, SWAP_SUFFIX, LogSegment
from tests.storage.helpers import NOW, Op, Stored, append, decode_all
from tests.storage.on_disk import batch_positions, flip

DAY = 86_400_000


def compact(segment_bytes: int = 1_000, policy: tuple[str, ...] = ("compact",)) -> LogConfig:
    return LogConfig(segment_bytes=segment_bytes, index_interval_bytes=256, cleanup_policy=policy)


def open_log(directory: Path, segment_bytes: int = 1_000, policy: tuple[str, ...] = ("compact",)) -> PartitionLog:
    return PartitionLog(directory, compact(segment_bytes, policy), now_ms=NOW)


def stored(data: bytes) -> list[Stored]:
    return [
        Stored(offset, ts, r.key, r.value, tuple(r.headers))
        for batch in decode_all(data)
        for offset, ts, r in batch.absolute()
    ]


def log_records(log: PartitionLog) -> list[Stored]:
    """Everything a consumer reading from the log start gets (CRC-checked)."""
    return stored(log.read(log.log_start_offset, 1 << 30))


def segment_records(segment: LogSegment) -> list[Stored]:
    return stored(segment.read(0, segment.size))


def replay(records: Iterable[Stored]) -> dict[bytes | None, bytes | None]:
    """What a consumer rebuilding a table from the topic ends up with (a tombstone maps to None)."""
    return {r.key: r.value for r in records}


def live(table: dict[bytes | None, bytes | None]) -> dict[bytes | None, bytes | None]:
    return {k: v for k, v in table.items() if v is not None}


def assert_compacted(log: PartitionLog, originals: dict[int, Stored]) -> None:
    """Invariants after a pass with no appends since: every record is an original one at its original offset,
    offsets increase, and nothing in a closed segment is superseded by a later record of the log."""
    records = log_records(log)
    offsets = [r.offset for r in records]
    assert offsets == sorted(set(offsets))
    for r in records:
        assert originals[r.offset] == r
    last_offset = {r.key: r.offset for r in records}
    for segment in log.closed_segments():
        for r in segment_records(segment):
            assert r.key is not None
            assert last_offset[r.key] == r.offset, f"{r} is superseded but still in {segment}"


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith((CLEANED_SUFFIX, SWAP_SUFFIX)))


# --- the dict model ------------------------------------------------------------------------------------------------

op_lists = st.lists(
    st.lists(
        st.tuples(st.integers(0, 7), st.one_of(st.none(), st.binary(max_size=30))),
        min_size=1,
        max_size=8,
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=op_lists, clean_every=st.integers(2, 12))
def test_compaction_matches_a_dict_model(batches: list[list[tuple[int, bytes | None]]], clean_every: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = open_log(Path(tmp) / "t-0", segment_bytes=600)
        originals: dict[int, Stored] = {}
        model: dict[bytes | None, bytes | None] = {}
        for n, batch in enumerate(batches):
            ops: list[Op] = [(b"k%d" % k, v) for k, v in batch]
            originals.update((r.offset, r) for r in append(log, ops, timestamp=NOW + n))
            model.update(ops)
            if n % clean_every == clean_every - 1:
                clean(log, NOW)
                assert_compacted(log, originals)
                assert replay(log_records(log)) == model
        end = log.log_end_offset
        clean(log, NOW)
        assert_compacted(log, originals)
        assert replay(log_records(log)) == model
        assert log.log_end_offset == end and log.log_start_offset == 0
        # A day later every tombstone the cleaner has seen is past its horizon and goes from the cleaned segments.
        clean(log, NOW + DAY)
        assert live(replay(log_records(log))) == live(model)
        assert all(r.value is not None for s in log.closed_segments() for r in segment_records(s))
        assert_compacted(log, originals)
        log.close()


# --- what is kept and how ----------------------------------------------------------------------------------------


def test_keeps_the_latest_record_per_key_with_offsets_timestamps_and_headers(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    originals: dict[int, Stored] = {}
    for n in range(40):
        ops: list[Op] = [(b"key-%d" % ((n + i) % 6), b"value-%d-%d" % (n, i)) for i in range(4)]
        originals.update((r.offset, r) for r in append(log, ops, timestamp=NOW + 10 * n))
    assert log.segment_count > 5
    before = replay(log_records(log))
    result = clean(log, NOW)
    assert result.aborted is None
    assert replay(log_records(log)) == before
    assert_compacted(log, originals)
    assert result.stats.superseded > 100 and result.stats.records_kept < 10
    assert result.clean_end_offset == log.segments()[-1].base_offset


def test_batches_keep_their_offset_span_and_producer_fields(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    append(log, [(b"a", b"1"), (b"b", b"1"), (b"c", b"1"), (b"d", b"1")], producer=(5, 0, 0))
    append(log, [(b"a", b"2"), (b"d", b"2")])
    log.roll(now_ms=NOW)
    clean(log, NOW)
    first = decode_all(log.read(0, 1 << 20))[0]
    # b and c survive; the batch still spans offsets 0-3 and keeps its producer id, epoch and base sequence.
    assert (first.base_offset, first.last_offset_delta) == (0, 3)
    assert (first.producer_id, first.producer_epoch, first.base_sequence, first.last_sequence) == (5, 0, 0, 3)
    assert [(o, r.key) for o, _, r in first.absolute()] == [(1, b"b"), (2, b"c")]
    # A fetch at a removed offset returns the batch spanning it; the consumer skips to the next record, 4.
    assert next(r.offset for r in stored(log.read(3, 1 << 20)) if r.offset >= 3) == 4


def test_unchanged_batches_are_copied_byte_for_byte(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    append(log, [(b"a", b"1"), (b"b", b"1")])
    log.roll(now_ms=NOW)
    raw = log.segments()[0].read(0, log.segments()[0].size)
    clean(log, NOW)
    assert log.read(0, 1 << 20) == raw


def test_compressed_batches_stay_compressed(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", segment_bytes=10_000)
    append(log, [(b"k%d" % i, b"x" * 50) for i in range(20)], compression=Compression.GZIP)
    append(log, [(b"k%d" % i, b"y" * 50) for i in range(10)])
    log.roll(now_ms=NOW)
    clean(log, NOW)
    batches = decode_all(log.read(0, 1 << 20))
    assert batches[0].compression is Compression.GZIP
    assert [r.key for r in batches[0].records] == [b"k%d" % i for i in range(10, 20)]


def test_records_without_a_key_are_dropped(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    append(log, [(None, b"orphan"), (b"a", b"1")])
    log.roll(now_ms=NOW)
    result = clean(log, NOW)
    assert result.stats.keyless_removed == 1
    assert [(r.offset, r.key) for r in log_records(log)] == [(1, b"a")]


def test_control_batches_are_kept(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    append(log, [(b"a", b"1")], producer=(9, 0, 0))
    marker = Record(offset_delta=0, timestamp_delta=0, key=b"\x00\x00\x00\x01", value=b"\x00\x00\x00\x00\x00\x03")
    control = RecordBatch.from_records(
        [marker], base_timestamp=NOW, producer_id=9, producer_epoch=0, is_transactional=True, is_control=True
    )
    log.append(encode_batch(control), now_ms=NOW, origin=AppendOrigin.COORDINATOR)
    append(log, [(b"a", b"2")])
    log.roll(now_ms=NOW)
    raw_control = decode_all(log.read(1, 1 << 20))[0]
    clean(log, NOW)
    batches = decode_all(log.read(0, 1 << 20))
    assert raw_control in batches
    # Producer 9's superseded batch stays as an empty batch: it is its last *data* batch (a marker is not data,
    # Kafka's lastDataOffset), which holds its sequence state.
    assert [(b.is_control, len(b.records)) for b in batches] == [(False, 0), (True, 1), (False, 1)]


def test_last_batch_of_an_idempotent_producer_is_kept_empty(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    append(log, [(b"a", b"1"), (b"b", b"1")], producer=(7, 2, 10), timestamp=NOW)
    append(log, [(b"a", b"2"), (b"b", b"2")])
    log.roll(now_ms=NOW)
    result = clean(log, NOW + 1000)
    assert result.stats.empty_batches_kept == 1
    empty = decode_all(log.read(0, 1 << 20))[0]
    assert (empty.base_offset, empty.last_offset_delta, empty.records) == (0, 1, [])
    assert (empty.producer_id, empty.producer_epoch, empty.base_sequence, empty.last_sequence) == (7, 2, 10, 11)
    # Once the producer has expired (producer.id.expiration.ms), its state is not worth keeping.
    clean(log, NOW + DAY + 1)
    assert decode_all(log.read(0, 1 << 20))[0].producer_id == -1


# --- tombstones ----------------------------------------------------------------------------------------------------


def test_tombstones_are_kept_until_their_delete_horizon_then_removed(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    config = CleanerConfig(delete_retention_ms=1_000)
    append(log, [(b"a", b"1"), (b"b", b"1")], timestamp=NOW - 5_000)
    (tombstone,) = append(log, [(b"a", None)], timestamp=NOW - 4_000)
    log.roll(now_ms=NOW)

    first = clean(log, NOW, config=config)
    assert first.stats.horizons_set == 1 and first.next_delete_horizon_ms == NOW + 1_000
    assert log_records(log) == [Stored(1, NOW - 5_000 + 1, b"b", b"1", (("h", b"1"),)), tombstone]
    batch = decode_all(log.read(2, 1 << 20))[0]
    assert batch.has_delete_horizon and batch.base_timestamp == NOW + 1_000  # KIP-534
    assert batch.timestamp_of(batch.records[0]) == NOW - 4_000  # the record keeps its own timestamp

    assert clean(log, NOW + 999, config=config).stats.tombstones_removed == 0
    assert tombstone in log_records(log)
    last = clean(log, NOW + 1_000, config=config)
    assert last.stats.tombstones_removed == 1 and last.next_delete_horizon_ms is None
    assert [(r.key, r.value) for r in log_records(log)] == [(b"b", b"1")]


def test_a_tombstone_in_the_active_segment_removes_older_values_but_stays(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    append(log, [(b"a", b"1"), (b"b", b"1")])
    log.roll(now_ms=NOW)
    append(log, [(b"a", None)])
    clean(log, NOW + 10 * DAY)
    assert [(r.key, r.value) for r in log_records(log)] == [(b"b", b"1"), (b"a", None)]


# --- segments ------------------------------------------------------------------------------------------------------


def test_active_segment_is_never_touched(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    append(log, [(b"a", b"1"), (b"b", b"1")])
    log.roll(now_ms=NOW)
    append(log, [(b"a", b"2"), (b"a", b"3")])
    active = log.segments()[-1]
    raw = active.read(0, active.size)
    clean(log, NOW)
    assert log.segments()[-1] is active and active.read(0, active.size) == raw
    assert active.log_path.read_bytes() == raw
    # The key whose latest value is in the active segment is gone from the cleaned segment.
    assert [r.key for r in segment_records(log.segments()[0])] == [b"b"]
    assert [r.value for r in log_records(log)] == [b"1", b"2", b"3"]


@pytest.mark.parametrize("write_chunk", [None, 64])
def test_output_is_grouped_into_segments_of_at_most_segment_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_chunk: int | None
) -> None:
    if write_chunk is not None:
        # Output reaches the .cleaned file in small appends, so a segment that does not fit must be cut back out.
        monkeypatch.setattr("storage.cleaner._WRITE_CHUNK", write_chunk)
    log = open_log(tmp_path / "t-0", segment_bytes=1_000)
    for n in range(150):
        append(log, [(b"key-%03d" % ((7 * n + i) % 150), b"v%d" % n) for i in range(5)])
    assert log.segment_count > 20
    bases = {s.base_offset for s in log.segments()}
    result = clean(log, NOW)
    closed = log.closed_segments()
    assert 1 < len(closed) < 10 and result.stats.segments_written == len(closed)
    assert all(0 < s.size <= 1_000 for s in closed)
    # Greedy on the cleaned size: a group is closed only when the next segment's output did not fit in it.
    assert all(a.size + b.size > 1_000 for a, b in itertools.pairwise(closed))
    assert {s.base_offset for s in closed} <= bases
    # A second pass with nothing new keeps the layout.
    before = [(s.base_offset, s.size) for s in log.segments()]
    clean(log, NOW)
    assert [(s.base_offset, s.size) for s in log.segments()] == before


def test_cleaned_log_reopens_identically(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    for n in range(30):
        append(log, [(b"k%d" % (n % 4), b"v%d" % n), (b"k%d" % (n % 9), None)])
    clean(log, NOW)
    served = log.read(0, 1 << 30)
    end = log.log_end_offset
    log.flush()
    log.close()
    again = open_log(tmp_path / "t-0")
    assert again.read(0, 1 << 30) == served and again.log_end_offset == end
    assert leftovers(tmp_path / "t-0") == []


def test_stale_cleaned_file_of_a_failed_pass_does_not_block_cleaning(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    append(log, [(b"a", b"1")])
    append(log, [(b"a", b"2")])
    log.roll(now_ms=NOW)
    stale = tmp_path / "t-0" / f"{log.segments()[0].log_path.name}{CLEANED_SUFFIX}"
    stale.write_bytes(b"garbage")
    assert clean(log, NOW).aborted is None
    assert [r.value for r in log_records(log)] == [b"2"]
    assert leftovers(tmp_path / "t-0") == []


def test_clean_refuses_a_log_that_is_not_compacted(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", policy=("delete",))
    with pytest.raises(ValueError, match="compact"):
        clean(log, NOW)


# --- concurrency and failures ---------------------------------------------------------------------------------


def test_pass_is_abandoned_when_retention_deletes_its_segments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = open_log(tmp_path / "t-0", policy=("compact", "delete"))
    for n in range(20):
        append(log, [(b"k%d" % (n % 3), b"v%d" % n)] * 3)
    real = log.replace_segments

    def retention_first(old: Sequence[LogSegment], new: Sequence[LogSegment]) -> None:
        log.delete_segments_before(log.segments()[1].base_offset)
        real(old, new)

    monkeypatch.setattr(log, "replace_segments", retention_first)
    before = log_records(log)
    result = clean(log, NOW)
    assert result.aborted is not None and "refused" in result.aborted
    start = log.log_start_offset
    assert log_records(log) == [r for r in before if r.offset >= start]
    assert leftovers(tmp_path / "t-0") == []


class Crash(Exception):
    """The process dies here."""


def crash_on_rename(monkeypatch: pytest.MonkeyPatch, suffix: str, occurrence: int = 1) -> None:
    real = LogSegment.rename_suffix
    seen = 0

    def rename(segment: LogSegment, new_suffix: str) -> None:
        nonlocal seen
        if new_suffix == suffix:
            seen += 1
            if seen == occurrence:
                raise Crash(f"crash before renaming {segment} to {suffix!r}")
        real(segment, new_suffix)

    monkeypatch.setattr(LogSegment, "rename_suffix", rename)


def crash_on_first_dir_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    def fsync_dir(path: Path) -> None:
        raise Crash("crash at the commit point's directory fsync")

    monkeypatch.setattr("storage.partition_log.fsync_dir", fsync_dir)


@pytest.mark.parametrize(
    "step",
    ["before-commit", "after-swap-rename", "after-old-deleted", "second-group-before-commit"],
)
def test_crash_mid_swap_recovers_to_old_or_new_segments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory)
    originals: dict[int, Stored] = {}
    model: dict[bytes | None, bytes | None] = {}
    for n in range(80):
        ops: list[Op] = [(b"key-%03d" % ((5 * n + i) % 200), b"v%d" % n if n % 7 else None) for i in range(3)]
        originals.update((r.offset, r) for r in append(log, ops))
        model.update(ops)
    before = log.read(0, 1 << 30)
    with monkeypatch.context() as patch:
        if step == "before-commit":
            crash_on_rename(patch, SWAP_SUFFIX)
        elif step == "after-swap-rename":
            crash_on_first_dir_fsync(patch)
        elif step == "after-old-deleted":
            crash_on_rename(patch, "")
        else:
            crash_on_rename(patch, SWAP_SUFFIX, occurrence=2)
        with pytest.raises(Crash):
            clean(log, NOW)
    names = {p.name for p in directory.iterdir()}
    if step == "before-commit":
        assert any(n.endswith(".log" + CLEANED_SUFFIX) for n in names)
    elif step != "second-group-before-commit":
        assert any(n.endswith(".log" + SWAP_SUFFIX) for n in names)
    for segment in log.segments():
        segment.release()  # the crashed process's descriptors; nothing is flushed or closed cleanly

    again = open_log(directory)
    assert leftovers(directory) == []
    assert replay(log_records(again)) == model
    assert_offsets_are_originals(log_records(again), originals)
    if step == "before-commit":
        assert again.read(0, 1 << 30) == before
    else:
        assert len(log_records(again)) < len(originals)
    # The recovered log cleans normally.
    assert clean(again, NOW).aborted is None
    assert_compacted(again, originals)
    assert replay(log_records(again)) == model


def assert_offsets_are_originals(records: list[Stored], originals: dict[int, Stored]) -> None:
    assert [r.offset for r in records] == sorted({r.offset for r in records})
    assert all(originals[r.offset] == r for r in records)


def test_reads_and_appends_while_cleaning_in_a_thread(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", segment_bytes=2_000)
    model: dict[bytes | None, bytes | None] = {}
    originals: dict[int, Stored] = {}
    errors: list[BaseException] = []
    passes = 0
    done = threading.Event()

    def cleaner() -> None:
        nonlocal passes
        try:
            while not done.is_set():
                if clean(log, NOW).aborted is None:
                    passes += 1
        except BaseException as exc:
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    thread = threading.Thread(target=cleaner)
    thread.start()
    try:
        for n in range(400):
            ops: list[Op] = [(b"k%d" % ((3 * n + i) % 17), b"v%d-%d" % (n, i)) for i in range(3)]
            originals.update((r.offset, r) for r in append(log, ops))
            model.update(ops)
            records = log_records(log)  # CRC-checked whole batches, whatever the cleaner is doing
            assert_offsets_are_originals(records, originals)
            assert replay(records) == model
            if n % 50 == 0:
                assert stored(log.read(records[-1].offset, 1 << 20))[-1] == records[-1]
    finally:
        done.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert not errors
    assert passes > 0
    assert clean(log, NOW).aborted is None
    assert_compacted(log, originals)


# --- LogCleaner ----------------------------------------------------------------------------------------------------


def test_dirty_ratio_decides_when_a_log_needs_cleaning(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", segment_bytes=1_000)
    cleaner = LogCleaner()
    assert not cleaner.needs_cleaning(log, now_ms=NOW)  # only an active segment
    for n in range(12):
        append(log, [(b"unique-%d-%d" % (n, i), b"v") for i in range(10)])
    assert cleaner.dirty_ratio(log, now_ms=NOW) == 1.0
    assert cleaner.needs_cleaning(log, now_ms=NOW)
    result = cleaner.clean(log, NOW)
    assert cleaner.first_dirty_offset(log) == result.clean_end_offset == log.segments()[-1].base_offset
    assert cleaner.dirty_ratio(log, now_ms=NOW) == 0.0
    assert not cleaner.needs_cleaning(log, now_ms=NOW)
    clean_bytes = sum(s.size for s in log.closed_segments())
    assert clean_bytes > 0
    while sum(s.size for s in log.closed_segments()) - clean_bytes < clean_bytes:
        append(log, [(b"k%d" % i, b"w") for i in range(10)])
        if sum(s.size for s in log.closed_segments()) > clean_bytes:
            assert cleaner.needs_cleaning(log, now_ms=NOW) == (cleaner.dirty_ratio(log, now_ms=NOW) >= 0.5)
    assert cleaner.needs_cleaning(log, now_ms=NOW)
    assert not cleaner.needs_cleaning(log, config=CleanerConfig(min_cleanable_ratio=0.99), now_ms=NOW)


def test_a_passed_delete_horizon_makes_a_log_cleanable(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    cleaner = LogCleaner(CleanerConfig(delete_retention_ms=1_000))
    append(log, [(b"a", b"1"), (b"a", None), (b"b", b"1")])
    log.roll(now_ms=NOW)
    cleaner.clean(log, NOW)
    assert not cleaner.needs_cleaning(log, now_ms=NOW + 999)
    assert cleaner.needs_cleaning(log, now_ms=NOW + 1_000)
    cleaner.clean(log, NOW + 1_000)
    assert [r.key for r in log_records(log)] == [b"b"]
    assert not cleaner.needs_cleaning(log, now_ms=NOW + 10 * DAY)


def test_min_compaction_lag_keeps_recent_segments_uncleaned(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    append(log, [(b"a", b"old"), (b"b", b"old")], timestamp=NOW - 10_000)
    log.roll(now_ms=NOW)
    append(log, [(b"a", b"new"), (b"b", b"new")], timestamp=NOW - 10)
    log.roll(now_ms=NOW)
    result = clean(log, NOW, config=CleanerConfig(min_compaction_lag_ms=1_000))
    assert result.clean_end_offset == 2
    assert [r.value for r in log_records(log)] == [b"new", b"new"]  # the first segment was cleaned
    assert [r.value for r in segment_records(log.segments()[1])] == [b"new", b"new"]


def test_config_from_broker_properties_and_topic_overrides() -> None:
    config = CleanerConfig.from_broker_properties(
        {"log.cleaner.delete.retention.ms": 5, "log.cleaner.min.cleanable.ratio": "0.25", "unrelated": 1}
    )
    assert (config.delete_retention_ms, config.min_cleanable_ratio) == (5, 0.25)
    topic = config.with_topic_overrides({"min.cleanable.dirty.ratio": "0.9", "min.compaction.lag.ms": "7"})
    assert (topic.delete_retention_ms, topic.min_cleanable_ratio, topic.min_compaction_lag_ms) == (5, 0.9, 7)


def test_clean_all_cleans_compacted_topics_with_their_overrides(tmp_path: Path) -> None:
    manager = LogManager([tmp_path], LogConfig(segment_bytes=1_000), now_ms=NOW)
    manager.create_topic("table", 2, {"cleanup.policy": "compact", "delete.retention.ms": "0"}, now_ms=NOW)
    manager.create_topic("events", 1, {}, now_ms=NOW)
    for log in manager.logs().values():
        for n in range(10):
            append(log, [(b"k%d" % (n % 3), b"v%d" % n), (b"gone", None)])
        log.roll(now_ms=NOW)
    events_before = manager.get("events", 0).read(0, 1 << 30)  # type: ignore[union-attr]
    cleaner = LogCleaner()
    results = cleaner.clean_all(manager, NOW)
    assert sorted(results) == [("table", 0), ("table", 1)]
    assert manager.get("events", 0).read(0, 1 << 30) == events_before  # type: ignore[union-attr]
    table = manager.get("table", 0)
    assert table is not None
    assert {r.key for r in log_records(table)} == {b"k0", b"k1", b"k2", b"gone"}
    # delete.retention.ms=0: the tombstones' horizon is the first pass itself, so the next pass drops them.
    assert sorted(cleaner.clean_all(manager, NOW)) == [("table", 0), ("table", 1)]
    assert {r.key for r in log_records(table)} == {b"k0", b"k1", b"k2"}
    assert cleaner.clean_all(manager, NOW) == {}
    manager.close()


def test_stop_ends_a_pass_early_and_leaves_the_log_consistent(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    for n in range(40):
        append(log, [(b"k%d" % (n % 5), b"v%d" % n)] * 2)
    before = replay(log_records(log))
    cleaner = LogCleaner()
    cleaner.stop()
    result = cleaner.clean(log, NOW)
    assert result.aborted == "stop requested"
    assert cleaner.first_dirty_offset(log) == 0
    assert replay(log_records(log)) == before
    assert leftovers(tmp_path / "t-0") == []


# --- volume: __consumer_offsets under commit load --------------------------------------------------------------

VOLUME = int(os.environ.get("CLEANER_VOLUME_RECORDS", "1000000"))


@pytest.mark.slow
def test_offsets_topic_volume_stays_a_few_segments(tmp_path: Path) -> None:
    """The issue's acceptance test, in storage terms: one group committing 10 partitions VOLUME times in total.

    Batches of 1,000 OffsetCommit records (as the broker's group commit writes them) go to a 1 MiB-segment
    ``__consumer_offsets`` partition; the cleaner runs after every 100,000 records when the dirty ratio says so.
    """
    log = PartitionLog(tmp_path / "__consumer_offsets-0", compact(segment_bytes=1 << 20), now_ms=NOW)
    keys = [
        consumer_offsets.encode_key(OffsetCommitKey(group="billing", topic="orders", partition=p)) for p in range(10)
    ]
    cleaner = LogCleaner()
    per_batch, per_chunk = 1_000, 100_000
    started = time.monotonic()
    passes = 0
    cleaning_ms = 0.0
    max_segments = 0
    for first in range(0, VOLUME, per_batch):
        records = [
            Record(
                offset_delta=i,
                timestamp_delta=0,
                key=keys[(first + i) % 10],
                value=consumer_offsets.encode_value(
                    OffsetCommitValue(offset=first + i, leader_epoch=0, commit_timestamp=NOW + first + i)
                ),
            )
            for i in range(min(per_batch, VOLUME - first))
        ]
        batch = RecordBatch.from_records(records, base_timestamp=NOW + first)
        log.append(encode_batch(batch), now_ms=NOW, origin=AppendOrigin.COORDINATOR, leader_epoch=0)
        max_segments = max(max_segments, log.segment_count)
        if (first + per_batch) % per_chunk == 0 and cleaner.needs_cleaning(log, now_ms=NOW):
            result = cleaner.clean(log, NOW)
            assert result.aborted is None
            passes += 1
            cleaning_ms += result.stats.elapsed_ms
    elapsed = time.monotonic() - started
    assert passes >= VOLUME // per_chunk - 1
    assert log.segment_count <= 4, [str(s) for s in log.segments()]
    assert log.size_in_bytes <= 2 << 20
    latest: dict[int, int] = {}
    for record in log_records(log):
        key = consumer_offsets.decode_key(record.key or b"")
        value = consumer_offsets.decode_value(key, record.value)  # type: ignore[arg-type]
        assert isinstance(key, OffsetCommitKey) and isinstance(value, OffsetCommitValue)
        assert value.offset == record.offset  # each commit's offset was its own log offset
        latest[key.partition] = value.offset
    assert latest == {p: max(i for i in range(VOLUME - 10, VOLUME) if i % 10 == p) for p in range(10)}
    print(
        f"{VOLUME} records, {passes} passes ({cleaning_ms / 1000:.1f}s cleaning), {elapsed:.1f}s in all,"
        f" {log.segment_count} segments (at most {max_segments})"
    )


@settings(max_examples=60, deadline=None)
@given(
    records=st.lists(
        st.tuples(
            st.one_of(st.none(), st.binary(max_size=200)),
            st.one_of(st.none(), st.binary(max_size=300)),
            st.integers(-(2**40), 2**40),
            st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=5))), max_size=2),
        ),
        min_size=1,
        max_size=20,
    ),
    gap=st.integers(1, 100_000),
    compression=st.sampled_from(list(Compression)),
)
def test_record_scanner_agrees_with_the_full_decoder(
    records: list[tuple[bytes | None, bytes | None, int, list[tuple[str, bytes | None]]]],
    gap: int,
    compression: Compression,
) -> None:
    from protocol.records import peek_batch_header, read_batch_records
    from storage.cleaner import _scan_records

    built = [
        Record(offset_delta=i * gap, timestamp_delta=ts, key=k, value=v, headers=h)
        for i, (k, v, ts, h) in enumerate(records)
    ]
    data = encode_batch(RecordBatch.from_records(built, base_timestamp=NOW, compression=compression))
    header = peek_batch_header(data)
    expected = [(r.offset_delta, r.key, r.value is None) for r in read_batch_records(data, 0, header)]
    assert _scan_records(data, 0, header) == expected


# --- damaged segments (Decision 9: damaged data is never deleted or silently skipped) ---------------------------


def damaged_compacted_log(directory: Path, *, known: bool) -> tuple[PartitionLog, Path, tuple[int, int], list[Stored]]:
    """A compacted log of several closed segments full of superseded records, its third segment holding one
    CRC-failing batch (its second); reopened so that recovery finds the damage (``known``) or trusts the segment
    and leaves the damage for a reader (the cleaner) to find. Returns the log, the damaged segment, the damaged
    byte range and every record outside the damaged batch."""
    log = open_log(directory)
    originals: list[Stored] = []
    for n in range(60):
        originals += append(log, [(b"k%d" % (n % 5), b"v%d" % n), (b"k%d" % ((n + 1) % 5), b"w%d" % n)])
    log.flush()
    end = log.log_end_offset
    log.close()
    segment = sorted(directory.glob("*.log"))[2]
    start, stop = batch_positions(segment)[1]
    flip(segment, start + 70)  # a record byte: only the CRC sees it
    log = PartitionLog(directory, compact(), recovery_point=None if known else end, now_ms=NOW)
    assert len(log.damaged_ranges()) == (1 if known else 0)
    lost = int(segment.name[:20]) + 2  # the damaged batch's two records
    return log, segment, (start, stop), [r for r in originals if not lost <= r.offset < lost + 2]


@pytest.mark.parametrize("known", [True, False], ids=["known_at_recovery", "found_by_the_cleaner"])
def test_a_damaged_segment_is_left_as_it_is_and_the_rest_is_cleaned(tmp_path: Path, known: bool) -> None:
    log, damaged, (start, stop), readable_before = damaged_compacted_log(tmp_path / "t-0", known=known)
    damaged_bytes = damaged.read_bytes()
    segments_before = log.segment_count
    cleaner = LogCleaner()
    with capture_logs() as logs:
        first = cleaner.clean(log, NOW)
        second = cleaner.clean(log, NOW)
    assert first.aborted is None and second.aborted is None
    assert damaged.read_bytes() == damaged_bytes  # byte for byte, never rewritten
    assert damaged.name in {s.log_path.name for s in log.closed_segments()}
    assert log.segment_count < segments_before  # the segments before and after it were cleaned and merged
    # every record outside the damaged segment is the latest of its key (only the damaged segment keeps old ones)
    records = log_records(log)
    latest = {r.key: r.offset for r in records}
    damaged_base = int(damaged.name[:20])
    for segment in log.closed_segments():
        if segment.base_offset != damaged_base:
            assert all(latest[r.key] == r.offset for r in segment_records(segment))
    assert replay(records) == replay(readable_before)  # nothing readable lost
    [damage] = log.damaged_ranges()
    assert (damage.segment, damage.start, damage.end) == (damaged.name, start, stop)
    events = [e["event"] for e in logs]
    assert events.count("log_damaged_range") == (0 if known else 1)  # reported once, by the log's own reporting
    assert events.count("log_cleaning_skipped_damaged_segment") == 1  # once, not on every pass
    assert "log_cleaning_failed" not in events
    log.close()
