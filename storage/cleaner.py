"""Log compaction for ``cleanup.policy=compact`` topics, after Kafka's ``LogCleaner``.

A compacted log keeps, for every key, at least its latest record. A cleaner pass over one partition:

1. **Snapshot.** Takes the segment list and the active segment's size at that instant. Closed segments are
   immutable, so everything the pass reads is stable while the event loop keeps appending; the active segment is
   only read up to the snapshot size (bytes below it were fully written before the size was published) and is
   never rewritten.
2. **Offset map.** Reads every record from the first dirty offset to the snapshot end, the active segment
   included, and maps each key to its latest offset. Kafka maps only the dirty closed segments; mapping the active
   segment too means a key whose latest value was just written is already dropped from the cleaned segments.
   Segments below the first dirty offset were cleaned by an earlier pass against everything up to its own
   snapshot, so they hold no duplicates among themselves and only need checking against this map (Kafka's
   "clean section"). The first dirty offset is kept in memory by :class:`LogCleaner` (see there).
3. **Filter.** Rewrites every cleanable closed segment (the whole log below the first uncleanable offset: the
   active segment's base, or earlier with ``min.compaction.lag.ms``) into ``.cleaned`` segments, keeping a record
   only if its offset is the latest for its key. Offsets are never renumbered: a batch keeps its base offset and
   last offset delta (so a producer's last sequence survives, as in Kafka's ``buildRetainedRecordsInto``) and
   simply holds fewer records. A batch that loses nothing is copied byte for byte.
4. **Swap.** Consecutive input segments are merged into one output segment while the output stays within
   ``segment.bytes`` (measured on the cleaned bytes, so a single pass collapses many mostly-obsolete segments into
   one; Kafka groups by input size and needs several passes for that). Each group is swapped in with
   :meth:`~storage.partition_log.PartitionLog.replace_segments`, one new segment per call, so each swap is a
   single atomic rename and a crash leaves every group either old or new.

What is dropped, as Kafka does:

* records whose key has a later record (anywhere up to the snapshot end);
* records without a key (a compacted topic cannot hold them; they only arrive from before a policy change);
* tombstones (null values) once their **delete horizon** has passed. Tombstone age follows KIP-534, not segment
  mtimes: the first pass that keeps a tombstone stamps its batch with ``deleteHorizonMs = now +
  delete.retention.ms`` (attribute bit 6, stored in ``baseTimestamp``; record timestamp deltas are re-based so
  every record keeps its absolute timestamp), and a later pass at or after the horizon drops it. A file's mtime
  changes whenever it is rewritten or copied, a horizon in the batch does not. A consumer that starts reading
  the partition is thus guaranteed to see a tombstone for ``delete.retention.ms`` after it was first cleaned.

Transactions (T44), as Kafka's cleaner handles them:

* nothing at or after the log's last stable offset is cleaned: the segment holding it is uncleanable (Kafka's
  ``firstUncleanableDirtyOffset`` includes the LSO), and records at or after it are not mapped, so the write of an
  open transaction, which may still abort, never makes an older value obsolete;
* the batches of aborted transactions (known from the aborted-transaction indexes: producer id and offset range)
  are dropped whole, and are not mapped either, so an aborted write supersedes nothing;
* markers (control batches) are kept, whole. Kafka removes a marker once no batch of its transaction is left and
  its delete horizon has passed; keeping them costs a few bytes per transaction and keeps every index entry
  describing a marker that is still in the log, so the producer state and the aborted-transaction indexes replay
  the same after a restart (:meth:`~storage.partition_log.PartitionLog.replace_segments` carries the entries of the
  replaced segments over).

What is kept: markers, as said; and for idempotent and transactional producers, the batch holding a producer's last
data (its last sequence) even when all its records go, aborted ones included (as an empty batch, Kafka's
``RETAIN_EMPTY``), unless its timestamp is older than ``producer.id.expiration.ms`` (Kafka keeps it while the
producer is active; the broker rebuilds producer state from batch headers, which needs it).

Threads: :func:`clean` is synchronous and meant for a worker thread (``asyncio.to_thread``). It reads segment
files through its own descriptors, never through the shared :class:`~storage.segment.LogSegment` objects the loop
thread uses, and relies on ``replace_segments`` (which takes the log's lock) for the swap. If retention deletes a
segment of the pass, or the log is closed, the pass is abandoned (``CleanResult.aborted``) and its ``.cleaned``
files removed. Truncating a log while it is being cleaned is not supported (Kafka aborts cleaning first); the
broker never truncates.

Damaged segments (Decision 9: damaged data is never deleted or silently skipped). A closed segment that holds a
damaged range (``PartitionLog.damaged_ranges()``, or invalid bytes the pass itself finds, which it reports
through :meth:`~storage.partition_log.PartitionLog.report_damage`, the log's once-only reporting) is never
rewritten: rewriting keeps only what parses, so it would drop the damaged bytes. The pass leaves its file byte for
byte as it is, cleans the segment runs before and after it, and does not map its keys (so its records supersede
nothing: older values elsewhere are kept, never more dropped). Kafka marks the whole partition uncleanable until
a restart instead; leaving only the damaged segment keeps ``__consumer_offsets`` compacted around it.
:class:`LogCleaner` logs each such segment once (``log_cleaning_skipped_damaged_segment``), not on every pass.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import structlog

from protocol.errors import DecodeError
from protocol.records import (
    BATCH_HEADER_SIZE,
    LOG_OVERHEAD,
    BatchHeader,
    Compression,
    Record,
    RecordBatch,
    TimestampType,
    decompress,
    encode_batch,
    iter_batch_headers,
    read_batch_records,
)
from storage.config import INT32_MAX, INT64_MAX
from storage.errors import LogClosedError, StorageError
from storage.files import pread_fully
from storage.partition_log import PartitionLog
from storage.segment import CLEANED_SUFFIX, LogSegment

if TYPE_CHECKING:
    from storage.log_manager import LogManager, TopicPartition

__all__ = [
    "CleanResult",
    "CleanerConfig",
    "CleanerStats",
    "LogCleaner",
    "clean",
]

_log = structlog.get_logger("storage")

#: Read size for segment files; a batch larger than this is read whole.
_READ_CHUNK = 1024 * 1024
#: Cleaned output is buffered up to this much before it is appended to the ``.cleaned`` segment.
_WRITE_CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class CleanerConfig:
    """The cleaner settings of one log: broker ``log.cleaner.*`` defaults with the topic's overrides."""

    #: delete.retention.ms / log.cleaner.delete.retention.ms: how long a cleaned tombstone stays readable.
    delete_retention_ms: int = 86_400_000
    #: min.cleanable.dirty.ratio / log.cleaner.min.cleanable.ratio: dirty share of the log that triggers a pass.
    min_cleanable_ratio: float = 0.5
    #: min.compaction.lag.ms / log.cleaner.min.compaction.lag.ms: segments with newer records stay uncleaned.
    min_compaction_lag_ms: int = 0
    #: producer.id.expiration.ms: an idempotent producer's last batch is kept while it is younger than this.
    producer_id_expiration_ms: int = 86_400_000

    @classmethod
    def from_broker_properties(cls, props: Mapping[str, object]) -> CleanerConfig:
        """Defaults from broker properties (Kafka's names); absent or None values keep Kafka's defaults."""
        base = cls()
        names = {
            "log.cleaner.delete.retention.ms": "delete_retention_ms",
            "log.cleaner.min.cleanable.ratio": "min_cleanable_ratio",
            "log.cleaner.min.compaction.lag.ms": "min_compaction_lag_ms",
            "producer.id.expiration.ms": "producer_id_expiration_ms",
        }
        return base._replaced({attr: props.get(name) for name, attr in names.items()})

    def with_topic_overrides(self, configs: Mapping[str, str]) -> CleanerConfig:
        """This config with a topic's ``delete.retention.ms``/``min.cleanable.dirty.ratio``/... applied.

        The values were validated when the topic was created (storage.config), so they parse here.
        """
        names = {
            "delete.retention.ms": "delete_retention_ms",
            "min.cleanable.dirty.ratio": "min_cleanable_ratio",
            "min.compaction.lag.ms": "min_compaction_lag_ms",
        }
        return self._replaced({attr: configs.get(name) for name, attr in names.items()})

    def _replaced(self, values: Mapping[str, object]) -> CleanerConfig:
        current = {f.name: getattr(self, f.name) for f in fields(self)}
        for attr, raw in values.items():
            if raw is None:
                continue
            current[attr] = float(str(raw)) if attr == "min_cleanable_ratio" else int(str(raw))
        return CleanerConfig(**current)


@dataclass(slots=True)
class CleanerStats:
    """What one pass did; figures for logs, metrics and tests."""

    segments_read: int = 0
    batches_read: int = 0
    records_read: int = 0
    bytes_read: int = 0
    #: Records read to build the offset map (dirty section and the active segment up to the snapshot).
    map_records: int = 0
    map_keys: int = 0
    records_kept: int = 0
    batches_written: int = 0
    bytes_written: int = 0
    segments_written: int = 0
    #: Records dropped because their key has a later record.
    superseded: int = 0
    #: Tombstones dropped because their delete horizon had passed.
    tombstones_removed: int = 0
    #: Records dropped for having no key.
    keyless_removed: int = 0
    #: Batches given a delete horizon by this pass (they held the first-cleaned tombstones).
    horizons_set: int = 0
    #: Batches kept with no records to preserve an idempotent producer's last sequence.
    empty_batches_kept: int = 0
    #: Records dropped because their transaction was aborted.
    aborted_removed: int = 0
    elapsed_ms: float = 0.0

    def add(self, other: CleanerStats) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclass(frozen=True, slots=True)
class CleanResult:
    """The outcome of :func:`clean` on one log."""

    stats: CleanerStats
    #: Where the offset map started (records below it were assumed already clean).
    first_dirty_offset: int
    #: Offsets below this are clean now: the next pass's first dirty offset (unchanged by an aborted pass).
    clean_end_offset: int
    segments_before: int
    segments_after: int
    #: Earliest delete horizon of a tombstone still in the cleaned segments; None when none is left.
    next_delete_horizon_ms: int | None = None
    #: Why the pass stopped early (the log is then unchanged past the last swapped group), or None.
    aborted: str | None = None
    #: Cleanable segment files left as they were because they hold damaged ranges (Decision 9).
    damaged_segments: tuple[str, ...] = ()


class _Aborted(Exception):
    """Internal: stop the pass and clean up (log closed, segment gone, stop requested)."""


class _BadBytes(Exception):
    """Internal: bytes at ``position`` of a closed segment file are not a valid batch (``min_offset``: the offset
    after the last good batch before them, -1 when there is none)."""

    def __init__(self, position: int, reason: str, min_offset: int) -> None:
        super().__init__(f"at {position}: {reason}")
        self.position = position
        self.reason = reason
        self.min_offset = min_offset


class _SegmentDamaged(Exception):
    """Internal: the segment being read holds damaged bytes (now reported); the pass leaves it as it is."""


# --- reading segment files --------------------------------------------------------------------------------------


def _file_batches(path: Path, end: int, *, tolerate_tail: bool) -> Iterator[tuple[BatchHeader, bytes, int, int]]:
    """``(header, buffer, position in buffer, position in file)`` for each CRC-checked batch in ``[0, end)`` of the
    file at ``path``.

    Opens its own descriptor: the loop thread may release or reopen the segment's descriptor at any moment, and an
    unlinked file stays readable through an open descriptor. Bytes that are not a valid batch raise _BadBytes,
    except with ``tolerate_tail`` (the active segment, where a concurrent truncation could leave anything past the
    snapshot), where they end the walk.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise _Aborted(f"segment {path.name} was deleted") from None
    try:
        pos = 0
        need = _READ_CHUNK
        next_offset = -1
        while pos < end:
            buf = pread_fully(fd, min(need, end - pos), pos)
            scan = iter_batch_headers(buf, 0, verify_crc=True)
            try:
                for rel, header in scan:
                    yield header, buf, rel, pos + rel
                    next_offset = header.next_offset
            except DecodeError as exc:
                if tolerate_tail:
                    return
                raise _BadBytes(pos + scan.valid_end, exc.reason, next_offset) from None
            if scan.valid_end:
                pos += scan.valid_end
                need = _READ_CHUNK
                continue
            size = int.from_bytes(buf[8:12], "big", signed=True) + LOG_OVERHEAD if len(buf) >= LOG_OVERHEAD else 0
            if len(buf) < size <= end - pos:
                need = size
                continue
            if tolerate_tail:
                return
            raise _BadBytes(pos, f"incomplete batch ({end - pos} bytes left)", next_offset)
    finally:
        os.close(fd)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """A zigzag varint/varlong at ``pos`` (the record scanner inlines the one-byte case before calling this)."""
    result = 0
    shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
        if shift > 63:
            raise DecodeError("varint longer than 10 bytes", path="record", offset=pos)


def _scan_records(buf: bytes, pos: int, header: BatchHeader) -> list[tuple[int, bytes | None, bool]]:
    """``(offset delta, key, is tombstone)`` of every record in the batch at ``pos``, without building records.

    Both passes need only these three things per record, and most records of a compacted log are read only to be
    dropped; skipping timestamps, values and headers makes this about four times cheaper than a full decode, which
    is kept for the batches that must be rewritten. The batch's CRC has been checked, so the bytes are the ones
    that were appended; anything that still does not parse is a DecodeError.
    """
    start = pos + BATCH_HEADER_SIZE
    end = pos + header.size
    data = buf
    if header.compression is not Compression.NONE:
        with memoryview(buf) as view:
            data = decompress(header.compression, view[start:end])
        start, end = 0, len(data)
    out: list[tuple[int, bytes | None, bool]] = []
    append = out.append
    pos = start
    try:
        for _ in range(header.record_count):
            byte = data[pos]
            if byte < 0x80:
                length, pos = (byte >> 1) ^ -(byte & 1), pos + 1
            else:
                length, pos = _varint(data, pos)
            record_end = pos + length
            if length <= 0 or record_end > end:
                raise DecodeError(f"record length {length} out of bounds", path="record", offset=pos)
            pos += 1  # attributes
            while data[pos] >= 0x80:  # timestamp delta, not needed
                pos += 1
            byte = data[pos + 1]
            if byte < 0x80:
                delta, pos = (byte >> 1) ^ -(byte & 1), pos + 2
            else:
                delta, pos = _varint(data, pos + 1)
            byte = data[pos]
            if byte < 0x80:
                key_length, pos = (byte >> 1) ^ -(byte & 1), pos + 1
            else:
                key_length, pos = _varint(data, pos)
            key = None
            if key_length >= 0:
                key = data[pos : pos + key_length]
                pos += key_length
            if pos >= record_end:
                raise DecodeError("record ends inside its key", path="record", offset=pos)
            append((delta, key, data[pos] == 1))  # value length -1 (zigzag 1): a tombstone
            pos = record_end
    except IndexError:
        raise DecodeError("record runs past the batch", path="record", offset=pos) from None
    if pos != end:
        raise DecodeError(f"{end - pos} bytes left after {header.record_count} records", path="record", offset=pos)
    return out


# --- the pass ---------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Pass:
    """State shared by the phases of one :func:`clean` call."""

    log: PartitionLog
    now_ms: int
    config: CleanerConfig
    segment_bytes: int
    stop: Callable[[], bool]
    offset_map: dict[bytes, int] = field(default_factory=dict)
    #: producer id -> (last offset, max timestamp) of its last batch up to the snapshot end.
    producers: dict[int, tuple[int, int]] = field(default_factory=dict)
    stats: CleanerStats = field(default_factory=CleanerStats)
    min_horizon: int | None = None
    #: Names of the segment files known to hold damaged ranges: never rewritten (Decision 9).
    damaged: set[str] = field(default_factory=set)
    #: The log's last stable offset when the pass started: nothing at or after it is mapped.
    lso: int = INT64_MAX
    #: producer id -> (first offset, marker offset) of its aborted transactions, by first offset.
    aborted: dict[int, list[tuple[int, int]]] = field(default_factory=dict)

    def check(self) -> None:
        if self.stop():
            raise _Aborted("stop requested")
        if self.log.closed:
            raise _Aborted("log closed")

    # -- damaged segments -------------------------------------------------------------------------------------

    def is_damaged(self, segment: LogSegment) -> bool:
        return segment.log_path.name in self.damaged

    def batches(self, segment: LogSegment) -> Iterator[tuple[BatchHeader, bytes, int, int]]:
        """The batches of a closed segment; bytes that are not a valid batch end the walk (:meth:`damage`)."""
        try:
            yield from _file_batches(segment.log_path, segment.size, tolerate_tail=False)
        except _BadBytes as exc:
            self.damage(segment, exc.position, exc.reason, min_offset=exc.min_offset)

    def damage(
        self, segment: LogSegment, position: int, reason: str, *, end: int | None = None, min_offset: int = -1
    ) -> NoReturn:
        """Report damage the pass found through the log (once, like every reader's) and leave the segment alone."""
        self.log.report_damage(segment, position, reason, end=end, min_offset=min_offset)
        self.damaged.add(segment.log_path.name)
        raise _SegmentDamaged(segment.log_path.name)

    # -- phase 2: the offset map ---------------------------------------------------------------------------

    def is_aborted(self, header: BatchHeader) -> bool:
        """Whether a data batch belongs to an aborted transaction of its producer."""
        ranges = self.aborted.get(header.producer_id) if header.is_transactional else None
        if not ranges:
            return False
        i = bisect.bisect_right(ranges, (header.base_offset, INT64_MAX)) - 1
        return i >= 0 and ranges[i][0] <= header.base_offset <= ranges[i][1]

    def note_producer(self, header: BatchHeader) -> None:
        """Remember each producer's last data batch (a marker is not data: Kafka's ``lastDataOffset``)."""
        if header.producer_id >= 0 and not header.is_control:
            known = self.producers.get(header.producer_id)
            if known is None or header.last_offset > known[0]:
                self.producers[header.producer_id] = (header.last_offset, header.max_timestamp)

    def scan_producers(self, segment: LogSegment) -> None:
        """Header-only walk of a clean-section segment: its producers' last batches may be there."""
        for header, _, _, _ in self.batches(segment):
            self.note_producer(header)
        self.check()

    def map_segment(self, segment: LogSegment, end: int, first_dirty: int, *, active: bool) -> None:
        """Map the keys of ``segment`` up to ``end``. The active segment's walk ends quietly at anything invalid
        (its tail may be cut concurrently; records not mapped only mean fewer records dropped)."""
        offset_map = self.offset_map
        batches = _file_batches(segment.log_path, end, tolerate_tail=True) if active else self.batches(segment)
        for header, buf, pos, at in batches:
            self.note_producer(header)
            if header.is_control or header.last_offset < first_dirty or header.base_offset >= self.lso:
                continue
            if self.is_aborted(header):
                continue
            try:
                records = _scan_records(buf, pos, header)
            except DecodeError as exc:
                if active:
                    return
                self.damage(segment, at, exc.reason, end=at + header.size)
            base = header.base_offset
            for delta, key, _ in records:
                if key is not None:
                    offset = base + delta
                    if offset >= first_dirty:
                        offset_map[key] = offset
            self.stats.map_records += len(records)
            self.check()

    # -- phase 3: filtering -----------------------------------------------------------------------------------

    def producer_state_batch(self, header: BatchHeader) -> bool:
        """Whether this batch holds the last sequence of a still-active idempotent producer."""
        if header.producer_id < 0:
            return False
        last = self.producers.get(header.producer_id)
        if last is None or last[0] != header.last_offset:
            return False
        return self.now_ms - last[1] < self.config.producer_id_expiration_ms

    def filter_batch(self, header: BatchHeader, buf: bytes, pos: int, stats: CleanerStats) -> bytes | None:
        """The batch as it should be written to the cleaned segment, or None to drop it."""
        raw_end = pos + header.size
        if header.is_control:
            return buf[pos:raw_end]
        if self.is_aborted(header):
            stats.aborted_removed += header.record_count
            if self.producer_state_batch(header):
                stats.empty_batches_kept += 1
                return encode_batch(_empty_batch(header))
            return None
        scanned = _scan_records(buf, pos, header)
        stats.records_read += len(scanned)
        keep: list[int] = []
        new_tombstone = False
        horizon_passed = header.has_delete_horizon and self.now_ms >= header.base_timestamp
        get = self.offset_map.get
        base = header.base_offset
        for index, (delta, key, tombstone) in enumerate(scanned):
            if key is None:
                stats.keyless_removed += 1
                continue
            latest = get(key)
            if latest is not None and base + delta < latest:
                stats.superseded += 1
                continue
            if tombstone:
                if horizon_passed:
                    stats.tombstones_removed += 1
                    continue
                new_tombstone = True
            keep.append(index)
        stats.records_kept += len(keep)
        if keep:
            needs_horizon = new_tombstone and not header.has_delete_horizon
            if new_tombstone:
                horizon = header.base_timestamp if header.has_delete_horizon else self.delete_horizon()
                self.min_horizon = horizon if self.min_horizon is None else min(self.min_horizon, horizon)
            if len(keep) == len(scanned) and not needs_horizon:
                return buf[pos:raw_end]
            if needs_horizon:
                stats.horizons_set += 1
            records = read_batch_records(buf, pos, header)
            return encode_batch(self.rewritten(header, [records[i] for i in keep], needs_horizon))
        if self.producer_state_batch(header):
            stats.empty_batches_kept += 1
            return encode_batch(_empty_batch(header))
        return None

    def delete_horizon(self) -> int:
        return min(self.now_ms + self.config.delete_retention_ms, INT64_MAX)

    def rewritten(self, header: BatchHeader, kept: list[Record], set_horizon: bool) -> RecordBatch:
        """A batch with only ``kept``: same offsets span, producer fields, epoch and codec (Kafka keeps them too).

        With a new delete horizon the base timestamp becomes the horizon and each record's timestamp delta is
        re-based on it, so every record keeps its absolute timestamp.
        """
        base_timestamp = self.delete_horizon() if set_horizon else header.base_timestamp
        shift = header.base_timestamp - base_timestamp
        if shift:
            kept = [
                Record(r.offset_delta, r.timestamp_delta + shift, r.key, r.value, r.headers, r.attributes) for r in kept
            ]
        if header.timestamp_type is TimestampType.LOG_APPEND_TIME:
            max_timestamp = header.max_timestamp
        else:
            max_timestamp = max(base_timestamp + r.timestamp_delta for r in kept)
        return RecordBatch(
            base_offset=header.base_offset,
            partition_leader_epoch=header.partition_leader_epoch,
            compression=header.compression,
            timestamp_type=header.timestamp_type,
            is_transactional=header.is_transactional,
            is_control=header.is_control,
            has_delete_horizon=header.has_delete_horizon or set_horizon,
            last_offset_delta=header.last_offset_delta,
            base_timestamp=base_timestamp,
            max_timestamp=max_timestamp,
            producer_id=header.producer_id,
            producer_epoch=header.producer_epoch,
            base_sequence=header.base_sequence,
            records=kept,
        )

    def clean_into(self, segment: LogSegment, dest: LogSegment, *, may_overflow: bool) -> bool:
        """Filter ``segment`` into ``dest``; False (with ``dest`` cut back to where it was) if the result would
        push ``dest`` past ``segment.bytes`` and ``may_overflow`` is not set.

        ``may_overflow`` is set for a group's first segment, which has to go somewhere: its output is about the
        size of its input at most (a rewritten batch can grow by a few bytes, as in Kafka, when timestamps are
        re-based on a delete horizon), and the input fit in a segment when it was written.
        """
        stats = CleanerStats(segments_read=1)
        out = bytearray()
        limit = self.segment_bytes
        try:
            for header, buf, pos, at in self.batches(segment):
                self.check()
                stats.batches_read += 1
                stats.bytes_read += header.size
                try:
                    batch = self.filter_batch(header, buf, pos, stats)
                except DecodeError as exc:
                    self.damage(segment, at, exc.reason, end=at + header.size)
                if batch is None:
                    continue
                if not may_overflow and (dest.size + len(out) + len(batch) > limit or dest.index.is_full):
                    dest.truncate_to(segment.base_offset)
                    return False
                out += batch
                stats.batches_written += 1
                stats.bytes_written += len(batch)
                if len(out) >= _WRITE_CHUNK:
                    dest.append_batches(out)
                    out = bytearray()
            if out:
                dest.append_batches(out)
        except _SegmentDamaged:
            dest.truncate_to(segment.base_offset)  # none of the damaged segment's output goes anywhere
            raise
        self.stats.add(stats)
        return True


def _empty_batch(header: BatchHeader) -> RecordBatch:
    """Kafka's empty batch header: offsets, producer id/epoch/sequence and timestamps of the original, no records."""
    return RecordBatch(
        base_offset=header.base_offset,
        partition_leader_epoch=header.partition_leader_epoch,
        compression=Compression.NONE,
        timestamp_type=header.timestamp_type,
        is_transactional=header.is_transactional,
        last_offset_delta=header.last_offset_delta,
        base_timestamp=header.max_timestamp,
        max_timestamp=header.max_timestamp,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
    )


#: Logs with a pass in progress: two passes on one log would race for the same ``.cleaned`` files.
_running: weakref.WeakSet[PartitionLog] = weakref.WeakSet()
_running_lock = threading.Lock()


def _first_uncleanable(
    closed: list[LogSegment], active: LogSegment, first_dirty: int, now_ms: int, lag: int, lso: int
) -> int:
    """Kafka's firstUncleanableDirtyOffset: the active segment, the segment holding the last stable offset, or the
    first dirty segment inside the lag, whichever comes first (whole segments: one holding the LSO is not cleaned)."""
    for segment in closed:
        if lso < segment.next_offset:
            return segment.base_offset
        if lag > 0 and segment.base_offset >= first_dirty and segment.largest_timestamp() > now_ms - lag:
            return segment.base_offset
    return active.base_offset


def _aborted_ranges(log: PartitionLog, lso: int) -> dict[int, list[tuple[int, int]]]:
    """The aborted transactions below the last stable offset, per producer (from the aborted-transaction indexes)."""
    ranges: dict[int, list[tuple[int, int]]] = {}
    for txn in log.aborted_transactions(log.log_start_offset, lso):
        ranges.setdefault(txn.producer_id, []).append((txn.first_offset, txn.last_offset))
    for spans in ranges.values():
        spans.sort()
    return ranges


def clean(
    log: PartitionLog,
    now_ms: int,
    *,
    config: CleanerConfig | None = None,
    first_dirty_offset: int | None = None,
    stop: Callable[[], bool] | None = None,
) -> CleanResult:
    """One compaction pass over ``log`` (see the module docstring); safe to run in a worker thread.

    ``first_dirty_offset`` is where the previous pass left the log clean (None: the log start, i.e. map the whole
    log, which is always correct). ``stop`` is polled before every batch; when it returns True the pass ends early,
    keeping the groups already swapped; every early end is reported in ``CleanResult.aborted``. Invalid bytes in a
    closed segment do not stop the pass: they are reported through the log and the segment is left as it is
    (``CleanResult.damaged_segments``).
    """
    if not log.config.compact_enabled:
        raise ValueError(f"log {log.directory.name} does not have cleanup.policy=compact")
    with _running_lock:
        if log in _running:
            raise RuntimeError(f"a cleaner pass is already running on {log.directory.name}")
        _running.add(log)
    try:
        return _clean(log, now_ms, config, first_dirty_offset, stop)
    finally:
        with _running_lock:
            _running.discard(log)


def _clean(
    log: PartitionLog,
    now_ms: int,
    config: CleanerConfig | None,
    first_dirty_offset: int | None,
    stop: Callable[[], bool] | None,
) -> CleanResult:
    started = time.monotonic()
    cfg = config if config is not None else CleanerConfig()
    work = _Pass(log, now_ms, cfg, log.config.segment_bytes, stop if stop is not None else lambda: False)
    work.damaged = {damage.segment for damage in log.damaged_ranges()}
    work.lso = log.last_stable_offset()  # before the snapshot: every offset at or after it is in the snapshot
    work.aborted = _aborted_ranges(log, work.lso)
    snapshot = log.segments()
    active = snapshot[-1]
    active_end = active.size
    closed = snapshot[:-1]
    log_start = max(snapshot[0].base_offset, log.log_start_offset)  # Kafka's: DeleteRecords may have moved it
    first_dirty = log_start if first_dirty_offset is None else max(log_start, first_dirty_offset)
    first_uncleanable = _first_uncleanable(closed, active, first_dirty, now_ms, cfg.min_compaction_lag_ms, work.lso)
    first_dirty = min(first_dirty, first_uncleanable)
    cleanable = [segment for segment in closed if segment.base_offset < first_uncleanable]

    def result(clean_end: int, aborted: str | None = None) -> CleanResult:
        work.stats.map_keys = len(work.offset_map)
        work.stats.elapsed_ms = (time.monotonic() - started) * 1000
        return CleanResult(
            stats=work.stats,
            first_dirty_offset=first_dirty,
            clean_end_offset=clean_end,
            segments_before=len(snapshot),
            segments_after=log.segment_count,
            next_delete_horizon_ms=work.min_horizon,
            aborted=aborted,
            damaged_segments=tuple(s.log_path.name for s in cleanable if work.is_damaged(s)),
        )

    if not cleanable:
        return result(first_dirty)
    try:
        for segment in closed:
            if work.is_damaged(segment):
                continue  # not mapped: its records then supersede nothing, so more is kept, never less
            with contextlib.suppress(_SegmentDamaged):
                if segment.next_offset <= first_dirty:
                    work.scan_producers(segment)
                else:
                    work.map_segment(segment, segment.size, first_dirty, active=False)
        work.map_segment(active, active_end, first_dirty, active=True)
        _clean_groups(work, cleanable, first_uncleanable)
    except _Aborted as exc:
        _log.info("log_cleaning_aborted", dir=str(log.directory), reason=str(exc))
        return result(first_dirty, str(exc))
    outcome = result(first_uncleanable)
    _log.info(
        "log_cleaned",
        dir=str(log.directory),
        first_dirty_offset=first_dirty,
        clean_end_offset=first_uncleanable,
        segments_before=outcome.segments_before,
        segments_after=outcome.segments_after,
        bytes_read=outcome.stats.bytes_read,
        bytes_written=outcome.stats.bytes_written,
        records_kept=outcome.stats.records_kept,
        damaged_segments_kept=len(outcome.damaged_segments),
        elapsed_ms=round(outcome.stats.elapsed_ms, 1),
    )
    return outcome


def _clean_groups(work: _Pass, cleanable: list[LogSegment], first_uncleanable: int) -> None:
    """Phases 3 and 4: filter the cleanable segments into as few ``segment.bytes``-sized groups as fit, swapping
    each group in as soon as it is complete. A damaged segment is never part of a group: the groups end before it
    and start again after it, and its file stays as it is."""
    group: list[LogSegment] = []
    dest: LogSegment | None = None

    def finish() -> None:
        nonlocal dest, group
        finished, dest = dest, None
        if finished is not None:
            if group:
                _swap(work, group, finished)
            else:
                finished.delete()
        group = []

    try:
        for i, segment in enumerate(cleanable):
            if work.is_damaged(segment):
                finish()
                continue
            upper = cleanable[i + 1].base_offset if i + 1 < len(cleanable) else first_uncleanable
            if dest is not None and upper - 1 - dest.base_offset > INT32_MAX:
                finish()  # relative offsets in the indexes are int32: start a new output segment
            if dest is None:
                dest = _new_dest(work, segment)
            try:
                if not work.clean_into(segment, dest, may_overflow=not group):
                    finish()
                    dest = _new_dest(work, segment)
                    work.clean_into(segment, dest, may_overflow=True)
            except _SegmentDamaged:
                finish()
                continue
            group.append(segment)
        finish()
    finally:
        if dest is not None:
            dest.delete()


def _new_dest(work: _Pass, segment: LogSegment) -> LogSegment:
    """A fresh ``.cleaned`` segment at ``segment``'s base, removing any leftover of an earlier failed pass first
    (only the cleaner makes ``.cleaned`` files, and only one pass runs on a log at a time)."""
    directory = work.log.directory
    for name in (segment.log_path.name, segment.index.path.name, segment.time_index.path.name):
        (directory / f"{name}{CLEANED_SUFFIX}").unlink(missing_ok=True)
    try:
        return work.log.new_cleaned_segment(segment.base_offset, now_ms=work.now_ms)
    except LogClosedError:
        raise _Aborted("log closed") from None
    except FileNotFoundError:
        raise _Aborted("log directory removed") from None


def _swap(work: _Pass, group: list[LogSegment], dest: LogSegment) -> None:
    """Hand ``dest`` to the log in place of ``group``, keeping the group's last mtime as Kafka's cleaner does.

    Deletes ``dest`` itself when the swap is refused before its commit point (retention or topic deletion got
    there first); after any other error the log may already hold it, so it is left to recovery.
    """
    try:
        mtime = group[-1].log_path.stat().st_mtime_ns
        os.utime(dest.log_path, ns=(mtime, mtime))
        dest.last_modified_ms = group[-1].last_modified_ms
    except FileNotFoundError:
        dest.delete()
        raise _Aborted(f"segment {group[-1].base_offset} was deleted") from None
    try:
        work.log.replace_segments(group, [dest])
    except (ValueError, LogClosedError) as exc:
        dest.delete()
        raise _Aborted(f"swap at {group[0].base_offset} refused: {exc}") from None
    work.stats.segments_written += 1


# --- scheduling -------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _LogState:
    first_dirty: int
    next_horizon: int | None = None


class LogCleaner:
    """Decides which compacted logs need a pass and runs it, remembering how far each log is clean.

    The first dirty offset of each log lives in memory, keyed by the log object, so a deleted and re-created topic
    starts from scratch. Kafka persists it in ``cleaner-offset-checkpoint``; without it, every compacted log
    counts as wholly dirty after a restart and is cleaned once, which is always safe (a full offset map) and cheap
    for logs that compaction keeps small.

    A log also needs a pass, whatever its dirty ratio, once the earliest delete horizon of its kept tombstones has
    passed (Kafka 3's KIP-534 scheduling), or tombstones would outlive ``delete.retention.ms`` on quiet logs.

    ``clean_all`` is meant for one worker thread at a time; :meth:`stop` makes a running pass end at the next batch
    (call it before closing the logs, then wait for the thread).
    """

    def __init__(self, config: CleanerConfig | None = None) -> None:
        self.config = config if config is not None else CleanerConfig()
        self._state: weakref.WeakKeyDictionary[PartitionLog, _LogState] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        #: Damaged segment files already logged as left uncleaned, per log (logged once, not on every pass).
        self._skipped: weakref.WeakKeyDictionary[PartitionLog, set[str]] = weakref.WeakKeyDictionary()

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def first_dirty_offset(self, log: PartitionLog) -> int:
        with self._lock:
            state = self._state.get(log)
        start = log.log_start_offset
        return start if state is None else max(start, state.first_dirty)

    def dirty_ratio(
        self, log: PartitionLog, *, config: CleanerConfig | None = None, now_ms: int | None = None
    ) -> float:
        """Kafka's cleanable ratio: dirty bytes / (clean + dirty bytes) below the first uncleanable offset."""
        clean_bytes, dirty_bytes = self._sizes(log, config, now_ms)
        total = clean_bytes + dirty_bytes
        return dirty_bytes / total if total else 0.0

    def needs_cleaning(
        self, log: PartitionLog, *, config: CleanerConfig | None = None, now_ms: int | None = None
    ) -> bool:
        """True when the dirty ratio reaches ``min.cleanable.dirty.ratio`` or a tombstone's horizon has passed."""
        if log.closed or not log.config.compact_enabled:
            return False
        cfg = config if config is not None else self.config
        now = log.clock() if now_ms is None else now_ms
        clean_bytes, dirty_bytes = self._sizes(log, cfg, now)
        if dirty_bytes > 0 and dirty_bytes / (clean_bytes + dirty_bytes) >= cfg.min_cleanable_ratio:
            return True
        with self._lock:
            state = self._state.get(log)
        return state is not None and state.next_horizon is not None and now >= state.next_horizon

    def _sizes(self, log: PartitionLog, config: CleanerConfig | None, now_ms: int | None) -> tuple[int, int]:
        cfg = config if config is not None else self.config
        now = log.clock() if now_ms is None else now_ms
        segments = log.segments()
        first_dirty = self.first_dirty_offset(log)
        lso = log.last_stable_offset()
        uncleanable = _first_uncleanable(segments[:-1], segments[-1], first_dirty, now, cfg.min_compaction_lag_ms, lso)
        clean_bytes = dirty_bytes = 0
        for segment in segments[:-1]:
            if segment.base_offset >= uncleanable:
                break
            if segment.next_offset <= first_dirty:
                clean_bytes += segment.size
            else:
                dirty_bytes += segment.size
        return clean_bytes, dirty_bytes

    def clean(self, log: PartitionLog, now_ms: int, *, config: CleanerConfig | None = None) -> CleanResult:
        """One pass over ``log`` from its remembered first dirty offset; remembers where it left the log clean."""
        outcome = clean(
            log,
            now_ms,
            config=config if config is not None else self.config,
            first_dirty_offset=self.first_dirty_offset(log),
            stop=self._stop.is_set,
        )
        with self._lock:
            if outcome.aborted is None:
                self._state[log] = _LogState(outcome.clean_end_offset, outcome.next_delete_horizon_ms)
            logged = self._skipped.setdefault(log, set())
            new = [name for name in outcome.damaged_segments if name not in logged]
            logged.update(new)
        for name in new:
            _log.warning(
                "log_cleaning_skipped_damaged_segment",
                topic=log.topic,
                partition=log.partition,
                segment=name,
                reason="holds damaged ranges (see log_damaged_range); kept as it is, the rest of the log is cleaned",
            )
        return outcome

    def clean_all(self, log_manager: LogManager, now_ms: int) -> dict[TopicPartition, CleanResult]:
        """Clean every compacted partition that needs it, dirtiest first; a log that fails is logged and skipped.

        Per-topic ``delete.retention.ms``, ``min.cleanable.dirty.ratio`` and ``min.compaction.lag.ms`` overrides
        apply on top of this cleaner's config.
        """
        candidates: list[tuple[float, TopicPartition, PartitionLog, CleanerConfig]] = []
        for tp, log in log_manager.logs().items():
            info = log_manager.topic(tp[0])
            if info is None or log.closed or not log.config.compact_enabled:
                continue
            cfg = self.config.with_topic_overrides(info.configs)
            try:  # the last stable offset may need the log's producer state replayed, which reads the files
                if self.needs_cleaning(log, config=cfg, now_ms=now_ms):
                    candidates.append((self.dirty_ratio(log, config=cfg, now_ms=now_ms), tp, log, cfg))
            except (StorageError, OSError) as exc:
                _log.warning("log_cleaning_failed", topic=tp[0], partition=tp[1], error=repr(exc))
        candidates.sort(key=lambda item: (-item[0], item[1]))
        results: dict[TopicPartition, CleanResult] = {}
        for _, tp, log, cfg in candidates:
            if self.stopped:
                break
            try:
                results[tp] = self.clean(log, now_ms, config=cfg)
            except (StorageError, OSError) as exc:
                _log.warning("log_cleaning_failed", topic=tp[0], partition=tp[1], error=repr(exc))
        return results
