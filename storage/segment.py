"""One log segment: ``<base>.log`` (concatenated v2 batches) with its ``.index``, ``.timeindex`` and ``.txnindex``.

A segment knows positions, not topics: it appends already validated bytes, finds the batch holding an offset
(sparse index floor, then a short scan of batch headers), and recovers itself on open. Recovery is the one place
where on-disk bytes are distrusted: a full scan checks every batch's framing, CRC and offset order. Bytes that fail
are a damaged range: the scan looks for the next batch that validates (CRC included, offsets after the last good
batch) and goes on from there, so the segment serves everything valid around the damage and readers skip it. Only
the active segment's unflushed tail is cut off (Kafka's recovery): the first damage past the recovery point, or a
torn end with nothing valid after it. Segments that were flushed before the last checkpoint get the cheaper check
instead: the index files must pass sanity checks and the batches after the last index entry must walk cleanly to
the end of the file; anything else falls back to the full scan. Damage the cheap check cannot see (a CRC, a
header before the last index entry) is found by readers: a header walk that meets invalid bytes, or a verified
read whose CRC fails, records the damaged range once and resumes at the next valid batch.

The aborted-transaction index (:mod:`storage.txn_index`) is loaded and sanity-checked with the other indexes but
cannot be rebuilt from the segment alone (a transaction may start in an earlier segment): a segment that was
recovered by the full scan, or whose file fails the check, marks it untrusted, and the log's producer-state replay
rebuilds it (:mod:`storage.txn_replay`).

File names follow Kafka: the base offset zero-padded to 20 digits, plus a suffix while a cleaner is building a
replacement (``.cleaned``) or swapping it in (``.swap``).
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import structlog

from protocol.errors import DecodeError
from protocol.records import (
    BATCH_HEADER_SIZE,
    LOG_OVERHEAD,
    NO_TIMESTAMP,
    BatchHeader,
    TimestampType,
    iter_batch_headers,
    peek_batch_header,
    read_batch_records,
)
from storage.config import INT32_MAX
from storage.descriptors import SEGMENT_DESCRIPTORS
from storage.errors import CorruptLogError, CorruptRecordError, os_error_fields
from storage.files import pread_fully
from storage.index import OffsetIndex, TimeIndex
from storage.resync import next_valid_batch
from storage.txn_index import TXN_INDEX_SUFFIX, TransactionIndex
from storage.validation import BatchMeta

__all__ = [
    "CLEANED_SUFFIX",
    "INDEX_SUFFIX",
    "LOG_SUFFIX",
    "SWAP_SUFFIX",
    "TIME_INDEX_SUFFIX",
    "TXN_INDEX_SUFFIX",
    "LogSegment",
    "SegmentSpec",
    "TimestampOffset",
    "parse_segment_name",
    "segment_name",
]

_log = structlog.get_logger("storage")

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"

#: Read size when walking headers: covers an index interval of small batches in one system call.
_HEADER_CHUNK = 64 * 1024
#: Read size when a reader checks batches that nothing proved valid yet (segments trusted at open).
_VERIFY_CHUNK = 4 * 1024 * 1024
#: Read size of the recovery scan, which needs whole batches to check CRCs.
_RECOVERY_CHUNK = 8 * 1024 * 1024

DamageHook = Callable[["LogSegment", int, int, str], None]
"""Told once about each damaged byte range ``[start, end)`` a segment finds (:mod:`storage.damage`)."""


def segment_name(base_offset: int) -> str:
    return f"{base_offset:020d}"


def parse_segment_name(file_name: str, suffix: str) -> int | None:
    """Base offset of ``<20 digits><suffix>``, or None for any other file name."""
    if not file_name.endswith(suffix):
        return None
    stem = file_name[: len(file_name) - len(suffix)]
    if len(stem) != 20 or not stem.isdigit():
        return None
    return int(stem)


class TimestampOffset(NamedTuple):
    """The record a ListOffsets by timestamp resolves to, with the leader epoch of its batch (ListOffsets v4+)."""

    offset: int
    timestamp: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class SegmentSpec:
    """What a segment is made from besides its bytes: the log builds one (:meth:`PartitionLog._spec`) for every
    segment it creates or opens, so the topic's settings travel as one value."""

    directory: Path
    base_offset: int
    index_interval_bytes: int
    max_index_bytes: int
    #: When the segment counts as created, for ``segment.ms`` (a segment opened at startup: the load time).
    now_ms: int
    #: ``.cleaned`` or ``.swap`` while the cleaner builds or swaps in a replacement, else empty.
    suffix: str = ""


class _StopWalk(Exception):
    """A walk met bytes that are not the next valid batch; ``position`` is where valid data ends."""

    def __init__(self, position: int, reason: str) -> None:
        super().__init__(reason)
        self.position = position
        self.reason = reason


class LogSegment:
    """A segment's files and the state derived from them (size, next offset, max timestamp, indexes).

    Not thread-safe and not re-entrant: the broker calls it from one thread. Reads copy bytes out, so a segment
    may be deleted right after a read returns.
    """

    def __init__(self, spec: SegmentSpec) -> None:
        self.directory = directory = spec.directory
        self.base_offset = base_offset = spec.base_offset
        self.suffix = spec.suffix
        self.index_interval_bytes = spec.index_interval_bytes
        self._max_index_bytes = spec.max_index_bytes
        self.log_path = directory / f"{segment_name(base_offset)}{LOG_SUFFIX}{spec.suffix}"
        self.index = OffsetIndex(self._index_path(INDEX_SUFFIX), base_offset, self._entries(OffsetIndex))
        self.time_index = TimeIndex(self._index_path(TIME_INDEX_SUFFIX), base_offset, self._entries(TimeIndex))
        self.txn_index = TransactionIndex(self._index_path(TXN_INDEX_SUFFIX), base_offset)
        #: False until the producer-state replay rebuilt ``txn_index`` when its file cannot be trusted.
        self.txn_index_trusted = True
        #: Why the ``.txnindex`` file failed its check at open (the log quarantines it), else None.
        self.txn_index_damage: str | None = None
        #: End of the last valid batch: appends go here, reads stop here.
        self.size = 0
        #: Size of the file when it was opened (larger than ``size`` when its tail is damaged).
        self.file_bytes = 0
        #: Damaged byte ranges ``(start, end, reason)``, sorted, never overlapping; readers skip them.
        self.damaged: list[tuple[int, int, str]] = []
        #: Byte ranges whose batches are known to be valid (CRC included): scanned at recovery, appended by this
        #: broker, or checked by an earlier read. Sorted, disjoint, merged; readers check only what lies outside.
        self._proven: list[tuple[int, int]] = []
        #: Where the active segment's unflushed tail starts (recovery found it; ``cut_tail`` removes it).
        self.torn_at: int | None = None
        self.on_damage: DamageHook | None = None
        #: Offset after the last batch (the base offset while empty).
        self.next_offset = base_offset
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = -1
        #: Max timestamp of the first batch: Kafka measures segment.ms from it when it is set.
        self.rolling_base_timestamp: int | None = None
        self.created_ms = spec.now_ms
        #: When data was last appended (Kafka's ``lastModified``): what retention.ms compares with when no batch
        #: carries a timestamp. A new segment starts at its creation time, an opened one at its file's mtime.
        self.last_modified_ms = spec.now_ms
        self._bytes_since_index = 0
        self._fd: int | None = None
        #: Bytes written since the last fsync.
        self.dirty = False
        #: A failed append may have left bytes after ``size`` that could not be cut off yet.
        self._partial_tail = False
        self.closed = False

    def _entries(self, kind: type[OffsetIndex | TimeIndex]) -> int:
        """How many entries of ``kind`` fit in ``segment.index.bytes`` (a full index rolls the segment)."""
        return self._max_index_bytes // kind.ENTRY_SIZE

    def _index_path(self, kind: str) -> Path:
        return self.directory / f"{segment_name(self.base_offset)}{kind}{self.suffix}"

    def __repr__(self) -> str:
        return f"LogSegment({self.log_path.name}, offsets=[{self.base_offset}, {self.next_offset}), size={self.size})"

    # --- lifecycle ----------------------------------------------------------------------------------------------

    @classmethod
    def create(cls, spec: SegmentSpec) -> LogSegment:
        """A new empty segment; an existing non-empty file of that name is an error, an empty one is reused."""
        segment = cls(spec)
        # The file is created and closed again: it is opened on first use (storage.descriptors bounds how many
        # segment files are open at once, so thousands of new partitions cost no descriptors).
        try:
            os.close(os.open(segment.log_path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644))
        except FileExistsError:
            if segment.log_path.stat().st_size:
                raise CorruptLogError(f"segment file {segment.log_path} already exists and is not empty") from None
        # Stale index files of an earlier segment with this base would otherwise be loaded later.
        segment.index.delete()
        segment.time_index.delete()
        segment.txn_index.delete()
        segment.dirty = True
        return segment

    @classmethod
    def open(cls, spec: SegmentSpec, *, recover: bool, unflushed_from: int | None = None) -> LogSegment:
        """Open an existing segment; nothing on disk changes.

        ``recover=True`` scans every batch (CRC included) and rebuilds the indexes; otherwise the index files
        are trusted after the sanity checks, and the full scan only runs if they fail. The scan records damaged
        ranges in ``damaged`` (not yet reported). ``unflushed_from`` makes this the active segment whose data from
        that offset on was never flushed: the first damage there, or damage with nothing valid after it, ends the
        valid data at ``torn_at`` for the caller to cut (:meth:`cut_tail`).
        """
        segment = cls(spec)
        stat = segment.log_path.stat()
        file_size = segment.file_bytes = stat.st_size
        segment.last_modified_ms = stat.st_mtime_ns // 1_000_000
        if file_size > INT32_MAX:
            raise CorruptLogError(f"segment {segment.log_path} is larger than 2 GiB")
        recovered = recover or not segment._load_indexes(file_size)
        if recovered:
            segment._recover(file_size, unflushed_from)
        segment._load_txn_index(trusted=not recovered)
        return segment

    def _load_txn_index(self, *, trusted: bool) -> None:
        """Kafka trusts the aborted-transaction index of a segment it did not have to recover, once it passes the
        sanity check; anything else is rebuilt by the log's replay."""
        index, damage = TransactionIndex.load(self.txn_index.path, self.base_offset)
        self.txn_index = index
        self.txn_index_damage = damage
        self.txn_index_trusted = trusted and damage is None

    def close(self) -> None:
        """Seal the time index, write index files (no fsync) and release the file descriptor.

        The descriptor is released and the segment marked closed even when the index files cannot be written
        (disk full, directory already renamed for deletion): indexes are derived data that the next open checks
        and rebuilds, and a close that leaked its descriptor would cost more than a rebuild.
        """
        if self.closed:
            return
        try:
            self.seal()
            self.write_indexes()
        except OSError as exc:
            _log.warning("segment_index_write_failed", segment=str(self.log_path), **os_error_fields(exc))
        finally:
            self.release()
            self.closed = True

    def delete(self) -> None:
        """Close and remove the segment's files."""
        self.release()
        self.closed = True
        self.log_path.unlink(missing_ok=True)
        self.index.delete()
        self.time_index.delete()
        self.txn_index.delete()

    def rename_suffix(self, suffix: str) -> None:
        """Rename all three files to carry ``suffix`` (used by the cleaner's swap); the descriptor stays valid."""
        self.suffix = suffix
        new_log = self.directory / f"{segment_name(self.base_offset)}{LOG_SUFFIX}{suffix}"
        os.replace(self.log_path, new_log)
        self.log_path = new_log
        self.index.rename(self._index_path(INDEX_SUFFIX))
        self.time_index.rename(self._index_path(TIME_INDEX_SUFFIX))
        self.txn_index.rename(self._index_path(TXN_INDEX_SUFFIX))

    def seal(self) -> None:
        """Record the final max timestamp in the time index, as Kafka does when a segment stops being active, and
        cut off what a failed write may have left after the last batch (no later append will do it now)."""
        if self._partial_tail:
            os.ftruncate(self._file(), self.size)
            self._partial_tail = False
        if self.max_timestamp >= 0:
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)

    def write_indexes(self, *, fsync: bool = False) -> None:
        self.index.flush(fsync=fsync)
        self.time_index.flush(fsync=fsync)

    def flush(self) -> None:
        """fsync the log, then write and fsync the index files (a closed segment's indexes are trusted on load)."""
        self.flush_data()
        self.write_indexes(fsync=True)
        self.txn_index.flush()

    def flush_data(self) -> None:
        """fsync the log file only; fsync covers the file, so a reopened descriptor works too."""
        if self.dirty:
            os.fsync(self._file())
        self.dirty = False

    def _file(self) -> int:
        """The log file's descriptor, opened on first use; idle ones are closed by the shared cache."""
        if self.closed:
            raise CorruptLogError(f"segment {self.log_path} is closed")
        return SEGMENT_DESCRIPTORS.acquire(self)

    def _open_path(self) -> str:
        return str(self.log_path)

    def release(self) -> None:
        """Close the descriptor now (a segment no longer appended to); the next use reopens it."""
        SEGMENT_DESCRIPTORS.release(self)

    # --- state tracking ---------------------------------------------------------------------------------------

    def _track(self, position: int, size: int, last_offset: int, max_timestamp: int) -> None:
        """Account for one batch written or found at ``position`` (Kafka's per-batch index rule)."""
        if self.rolling_base_timestamp is None:
            self.rolling_base_timestamp = max_timestamp
        if max_timestamp > self.max_timestamp:
            self.max_timestamp = max_timestamp
            self.offset_of_max_timestamp = last_offset
        if self._bytes_since_index > self.index_interval_bytes:
            self.index.append(last_offset, position)
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
            self._bytes_since_index = 0
        self._bytes_since_index += size
        self.next_offset = last_offset + 1
        self.size = position + size

    def _reset_state(self) -> None:
        self.size = 0
        self.next_offset = self.base_offset
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = -1
        self.rolling_base_timestamp = None
        self._bytes_since_index = 0

    # --- writing ----------------------------------------------------------------------------------------------

    def should_roll(
        self,
        *,
        append_size: int,
        max_timestamp: int,
        last_offset: int,
        now_ms: int,
        segment_bytes: int,
        segment_ms: int,
    ) -> bool:
        """Kafka's ``LogSegment.shouldRoll``: size, age, full indexes, or offsets beyond int32 of the base."""
        if self.size == 0:
            return False
        if self.size > segment_bytes - append_size:
            return True
        base = self.rolling_base_timestamp
        waited = max_timestamp - base if base is not None and base >= 0 else now_ms - self.created_ms
        if waited > segment_ms:
            return True
        if self.index.is_full or self.time_index.is_full:
            return True
        return last_offset - self.base_offset > INT32_MAX

    def append(self, data: bytes | bytearray | memoryview, batches: Sequence[BatchMeta], *, now_ms: int) -> None:
        """Write validated batches at the end of the file (page cache only) and index them, at ``now_ms``.

        A failed write (disk full, I/O error) is cut back off, so the file never keeps a partial batch from it and
        the segment's size, next offset and indexes stay as they were. Should even that ftruncate fail, the next
        append cuts the file first: bytes of a failed batch never end up behind a later one.
        """
        fd = self._file()
        start = self.size
        if self._partial_tail:
            os.ftruncate(fd, start)
            self._partial_tail = False
        view = memoryview(data)
        written = 0
        try:
            while written < len(view):
                written += os.pwrite(fd, view[written:], start + written)
        except OSError:
            self._cut_back(fd, start)
            raise
        finally:
            view.release()
        self.dirty = True
        self.last_modified_ms = now_ms
        for meta in batches:
            self._track(start + meta.position, meta.size, meta.last_offset, meta.max_timestamp)
        self._mark_proven(start, start + len(data))

    def _cut_back(self, fd: int, size: int) -> None:
        """Remove what a failed write left after ``size``; if that fails too, remember to do it before the next."""
        try:
            os.ftruncate(fd, size)
        except OSError:
            self._partial_tail = True

    def append_batches(self, data: bytes | bytearray) -> None:
        """Append batches that already carry their offsets (a cleaner writing a replacement segment).

        Each batch is checked (framing, CRC) and must start at or after this segment's next offset.
        """
        metas: list[BatchMeta] = []
        expected = self.next_offset
        scan = iter_batch_headers(data, 0, verify_crc=True)
        try:
            for position, header in scan:
                if header.base_offset < expected or header.last_offset_delta < 0:
                    raise CorruptRecordError(f"batch at {position} has offset {header.base_offset} < {expected}")
                metas.append(
                    BatchMeta(
                        position,
                        header.size,
                        header.base_offset,
                        header.last_offset,
                        header.max_timestamp,
                        header.record_count,
                    )
                )
                expected = header.next_offset
        except DecodeError as exc:
            raise CorruptRecordError(str(exc)) from None
        if scan.truncated or scan.valid_end != len(data):
            raise CorruptRecordError("data ends inside a batch")
        if metas and metas[-1].last_offset - self.base_offset > INT32_MAX:
            raise CorruptRecordError("offsets too far from the segment's base offset")
        # A cleaned segment keeps the time it was made (created_ms) until the swap hands it its group's.
        self.append(data, metas, now_ms=self.last_modified_ms)

    # --- reading ----------------------------------------------------------------------------------------------

    def open_reader(self) -> int:
        """A descriptor of this segment's file that stays valid after the segment is closed, renamed or deleted."""
        return os.dup(self._file())

    def read(self, position: int, length: int) -> bytes:
        """Copy ``length`` bytes from ``position`` (fewer only at the end of the file)."""
        return pread_fully(self._file(), length, position)

    def iter_headers(self, start: int = 0, end: int | None = None) -> Iterator[tuple[int, BatchHeader]]:
        """``(position, header)`` of each batch in ``[start, end)``, reading headers only, skipping damaged ranges.

        Bytes that are not the next batch (damage the cheap open could not see) become a damaged range, reported
        once; the walk resumes at the next valid batch.
        """
        end = self.size if end is None else end
        pos = start
        expected = self.base_offset
        while True:
            try:
                for position, header in self._walk_headers(pos, end):
                    yield position, header
                    expected = header.next_offset
                return
            except _StopWalk as stop:
                resume = self._resync(stop.position, end, expected)
                self.note_damage(stop.position, resume, stop.reason)
                pos = resume

    def _walk_headers(self, start: int, end: int) -> Iterator[tuple[int, BatchHeader]]:
        pos = start
        buf = b""
        buf_start = start
        while pos < end:
            if self.damaged:
                skipped = self.skip_damage(pos)
                if skipped != pos:
                    pos = buf_start = skipped
                    buf = b""
                    continue
            rel = pos - buf_start
            if rel + BATCH_HEADER_SIZE > len(buf):
                buf = self.read(pos, min(_HEADER_CHUNK, end - pos))
                buf_start = pos
                rel = 0
                if len(buf) < BATCH_HEADER_SIZE:
                    raise _StopWalk(pos, f"{len(buf)} bytes left, less than a batch header")
            try:
                header = peek_batch_header(buf, rel)
            except DecodeError as exc:
                raise _StopWalk(pos, exc.reason) from None
            if pos + header.size > end:
                raise _StopWalk(pos, f"batch of {header.size} bytes runs past the end at {end}")
            yield pos, header
            pos += header.size

    # --- damaged ranges ---------------------------------------------------------------------------------------

    def skip_damage(self, pos: int) -> int:
        """``pos``, or the end of the damaged range holding it."""
        i = bisect.bisect_right(self.damaged, (pos, INT32_MAX * 2, "")) - 1
        if i >= 0 and self.damaged[i][0] <= pos < self.damaged[i][1]:
            return self.damaged[i][1]
        return pos

    def next_damage(self, pos: int) -> int | None:
        """Start of the first damaged range at or after ``pos`` (where a contiguous read must stop)."""
        i = bisect.bisect_left(self.damaged, (pos, -1, ""))
        return self.damaged[i][0] if i < len(self.damaged) else None

    def note_damage(self, start: int, end: int, reason: str) -> None:
        """Record damaged bytes ``[start, end)`` so readers skip them, and tell ``on_damage`` once per new range.

        Bytes already inside a known range are not reported again; the parts of ``[start, end)`` outside every
        known range are (a CRC failure found just before a range a header walk noted earlier is new damage, and
        must be skipped too, or a reader would find the same bad batch again and again).
        """
        pos = start
        for known_start, known_end, _ in list(self.damaged):
            if known_end <= pos or known_start >= end:
                continue
            if known_start > pos:
                self._add_damage(pos, known_start, reason)
            pos = max(pos, known_end)
        if pos < end:
            self._add_damage(pos, end, reason)

    def _add_damage(self, start: int, end: int, reason: str) -> None:
        bisect.insort(self.damaged, (start, end, reason))
        if self.on_damage is not None:
            self.on_damage(self, start, end, reason)

    def _resync(self, pos: int, end: int, min_offset: int) -> int:
        """Position of the first valid batch after ``pos`` (before ``end``), or ``end`` when there is none.

        Valid means what recovery demands (:func:`storage.resync.next_valid_batch`): a header that parses, offsets
        from ``min_offset`` on and within int32 of the base offset, the whole batch before ``end``, and a matching
        CRC.
        """

        def accept(position: int, header: BatchHeader) -> bool:
            return header.base_offset >= min_offset and header.last_offset - self.base_offset <= INT32_MAX

        found = next_valid_batch(self.read, pos + 1, end, accept)
        return end if found is None else found[0]

    def proven_prefix(self, position: int, length: int) -> tuple[int, int]:
        """How many bytes of whole, valid batches (CRC included) start at ``position`` within ``length``, and the
        offset after the last of them (-1 when there is none).

        Bytes proven before (by recovery's scan, by our own appends, by an earlier read) are not checked again;
        the rest is read and checked in chunks of whole batches, so memory stays bounded whatever ``length`` is.
        The first damaged batch becomes a damaged range up to the next valid batch, so the next read skips it.
        """
        end = position + length
        pos = position
        next_offset = -1
        while pos < end:
            proven_end = min(self._proven_until(pos), end)
            if proven_end > pos:
                for _, header in self.iter_headers(pos, proven_end):
                    next_offset = header.next_offset
                pos = proven_end
                continue
            chunk_end = self.last_boundary_before(min(pos + _VERIFY_CHUNK, end), pos)
            if chunk_end == pos:  # one batch larger than a chunk
                first = next(self.iter_headers(pos, end), None)
                chunk_end = pos + first[1].size if first is not None else end
            chunk_end = min(chunk_end, end)  # a boundary found past skipped damage must not take us beyond `end`
            data = self.read(pos, chunk_end - pos)
            scan = iter_batch_headers(data, 0, verify_crc=True)
            try:
                for _, header in scan:
                    next_offset = header.next_offset
            except DecodeError as exc:
                self._mark_proven(pos, pos + scan.valid_end)
                self.damage_from(pos + scan.valid_end, exc.reason, next_offset)
                return pos + scan.valid_end - position, next_offset
            self._mark_proven(pos, chunk_end)
            pos = chunk_end
        return pos - position, next_offset

    def _proven_until(self, pos: int) -> int:
        """End of the proven range holding ``pos``, or ``pos`` itself when it is not proven."""
        i = bisect.bisect_right(self._proven, (pos, INT32_MAX * 2)) - 1
        if i >= 0 and self._proven[i][0] <= pos < self._proven[i][1]:
            return self._proven[i][1]
        return pos

    def _mark_proven(self, start: int, end: int) -> None:
        if end <= start:
            return
        proven = self._proven
        if proven and proven[-1][0] <= start <= proven[-1][1]:
            # An append right after the proven bytes (every append of a healthy segment): it can only extend the
            # last range, since the ranges are sorted and never touch (touching ones are merged below).
            last_start, last_end = proven[-1]
            proven[-1] = (last_start, max(last_end, end))
            return
        merged = [(s, e) for s, e in self._proven if e < start or s > end]
        overlapping = [(s, e) for s, e in self._proven if not (e < start or s > end)]
        low = min([start, *(s for s, _ in overlapping)])
        high = max([end, *(e for _, e in overlapping)])
        bisect.insort(merged, (low, high))
        self._proven = merged

    def damage_from(self, position: int, reason: str, min_offset: int) -> None:
        """Bytes at ``position`` are not a valid batch: note them as damaged up to the next valid batch whose offsets
        start at ``min_offset`` or later (the offset after the last good batch; -1 when unknown)."""
        self.note_damage(position, self._resync(position, self.size, max(min_offset, self.base_offset)), reason)

    def find(self, offset: int) -> tuple[int, BatchHeader] | None:
        """The first batch whose last offset is >= ``offset`` (the batch holding it, or the next one after a gap).

        None when the segment has nothing at or after ``offset``.
        """
        if offset >= self.next_offset:
            return None
        for position, header in self.iter_headers(self.index.lookup(offset)):
            if header.last_offset >= offset:
                return position, header
        return None

    def last_boundary_before(self, limit: int, start: int) -> int:
        """Largest batch boundary in ``[start, limit]``: where a read of whole batches from ``start`` must stop."""
        if limit >= self.size:
            return self.size
        pos = max(start, self.index.floor_position(limit))
        for position, header in self.iter_headers(pos):
            if position + header.size > limit:
                return position
        return self.size

    def find_timestamp(self, timestamp: int, start_offset: int) -> TimestampOffset | None:
        """First record at or after ``start_offset`` with timestamp >= ``timestamp`` (Kafka's time lookup)."""
        if self.max_timestamp < timestamp:
            return None
        offset = max(self.time_index.lookup(timestamp), start_offset)
        for position, header in self.iter_headers(self.index.lookup(offset)):
            if header.max_timestamp < timestamp or header.last_offset < start_offset:
                continue
            data = self.read(position, header.size)
            try:
                records = read_batch_records(data, 0, header)
            except DecodeError as exc:
                raise CorruptLogError(f"{self.log_path} at {position}: {exc.reason}") from None
            append_time = header.timestamp_type is TimestampType.LOG_APPEND_TIME
            for record in records:
                record_offset = header.base_offset + record.offset_delta
                record_ts = header.max_timestamp if append_time else header.base_timestamp + record.timestamp_delta
                if record_ts >= timestamp and record_offset >= start_offset:
                    return TimestampOffset(record_offset, record_ts, header.partition_leader_epoch)
        return None

    def largest_timestamp(self) -> int:
        """What time-based retention compares with: the max timestamp, or the last append's time when none is set
        (Kafka's ``largestTimestamp``, which falls back on the file's last-modified time)."""
        if self.max_timestamp >= 0:
            return self.max_timestamp
        return self.last_modified_ms

    # --- truncation -------------------------------------------------------------------------------------------

    def truncate_to(self, offset: int) -> int:
        """Drop every batch whose last offset is >= ``offset`` (a batch holding it goes whole, as in Kafka).

        Returns the number of bytes removed.
        """
        found = self.find(offset)
        if found is None:
            return 0
        position, header = found
        removed = self.size - position
        os.ftruncate(self._file(), position)
        self.damaged = [d for d in self.damaged if d[1] <= position]
        self._proven = [(start, min(end, position)) for start, end in self._proven if start < position]
        self.dirty = True
        self.index.truncate_to_position(position)
        self.time_index.truncate_to_offset(header.base_offset)
        self.txn_index.truncate_to(header.base_offset)
        # Rebuild the derived state from the last surviving index entry; the walk covers about an index interval.
        last = self.index.last_entry()
        start = last[1] if last is not None else 0
        self._reset_state()
        self._restore_from_time_index()
        self.size = start
        try:
            self._walk(start, position, verify_crc=False, first_last_offset=None)
        except _StopWalk as stop:
            raise CorruptLogError(f"{self.log_path} at {stop.position}: {stop.reason}") from None
        self.write_indexes()
        return removed

    def _restore_from_time_index(self) -> None:
        entry = self.time_index.last_entry()
        if entry is not None:
            self.max_timestamp, self.offset_of_max_timestamp = entry
        first = self._first_header()
        self.rolling_base_timestamp = first.max_timestamp if first is not None else None

    def _first_header(self) -> BatchHeader | None:
        data = self.read(0, BATCH_HEADER_SIZE)
        if len(data) < BATCH_HEADER_SIZE:
            return None
        try:
            return peek_batch_header(data, 0)
        except DecodeError:
            return None

    # --- recovery ---------------------------------------------------------------------------------------------

    def _walk(self, start: int, end: int, *, verify_crc: bool, first_last_offset: int | None) -> None:
        """Track every valid batch in ``[start, end)``; raise _StopWalk where the valid data ends.

        Besides framing (and CRC), offsets must increase and stay within int32 of the base offset; the batch at
        ``start`` must end at ``first_last_offset`` when that is given (it is the last index entry's batch).
        """
        expected = self.next_offset
        walker = self._walk_batches(start, end) if verify_crc else self._walk_headers(start, end)
        for position, header in walker:
            if first_last_offset is not None and position == start and header.last_offset != first_last_offset:
                raise _StopWalk(position, f"index entry offset {first_last_offset} != batch {header.last_offset}")
            if header.base_offset < expected or header.last_offset_delta < 0:
                raise _StopWalk(position, f"batch offset {header.base_offset} before expected {expected}")
            if header.last_offset - self.base_offset > INT32_MAX:
                raise _StopWalk(position, "batch offset too far from the segment base offset")
            self._track(position, header.size, header.last_offset, header.max_timestamp)
            expected = header.next_offset

    def _walk_batches(self, start: int, end: int) -> Iterator[tuple[int, BatchHeader]]:
        """Like _walk_headers but reads whole batches and checks their CRCs (the recovery scan)."""
        pos = start
        need = 0
        while pos < end:
            buf = self.read(pos, min(max(_RECOVERY_CHUNK, need), end - pos))
            scan = iter_batch_headers(buf, 0, verify_crc=True)
            try:
                for rel, header in scan:
                    yield pos + rel, header
            except DecodeError as exc:
                raise _StopWalk(pos + scan.valid_end, exc.reason) from None
            if scan.valid_end:
                pos += scan.valid_end
                need = 0
                continue
            # Not even one batch fit: either a batch larger than the chunk, or a torn tail.
            if len(buf) >= LOG_OVERHEAD:
                size = int.from_bytes(buf[8:12], "big", signed=True) + LOG_OVERHEAD
                if len(buf) < size <= end - pos:
                    need = size
                    continue
            raise _StopWalk(pos, f"incomplete batch ({end - pos} bytes left)")

    def _recover(self, file_size: int, unflushed_from: int | None) -> None:
        """Full scan: rebuild indexes from scratch, note damaged ranges, find the active segment's torn tail."""
        self.index = OffsetIndex(self.index.path, self.base_offset, self.index.max_entries)
        self.time_index = TimeIndex(self.time_index.path, self.base_offset, self.time_index.max_entries)
        self._reset_state()
        self.damaged = []
        pos = 0
        while pos < file_size:
            try:
                self._walk(pos, file_size, verify_crc=True, first_last_offset=None)
                break
            except _StopWalk as stop:
                if unflushed_from is not None and self.next_offset >= unflushed_from:
                    self.torn_at = stop.position  # damage in data never flushed: Kafka cuts it off
                    break
                # Damage in flushed data is kept and skipped, even at the end of the active segment: those
                # offsets were handed out (and maybe acknowledged), so the log must never give them out again.
                resume = self._resync(stop.position, file_size, self.next_offset)
                self.damaged.append((stop.position, resume, stop.reason))
                pos = resume
        self._proven = [(0, self.size)]  # readers never enter the damaged ranges inside it
        self.index.rewrite()
        self.time_index.rewrite()

    def cut_tail(self) -> int:
        """Truncate the file at ``torn_at`` (the active segment's unflushed tail); returns the bytes removed."""
        if self.torn_at is None:
            return 0
        removed = self.file_bytes - self.torn_at
        os.ftruncate(self._file(), self.torn_at)
        self.dirty = True
        self.file_bytes = self.torn_at
        self.torn_at = None
        return removed

    def _load_indexes(self, file_size: int) -> bool:
        """Trust the index files if they pass the checks and the tail walks cleanly to the end of the file."""
        index = OffsetIndex.load(self.index.path, self.base_offset, self._entries(OffsetIndex), file_size)
        time_index = TimeIndex.load(self.time_index.path, self.base_offset, self._entries(TimeIndex))
        if index is None or time_index is None:
            return False
        self.index = index
        self.time_index = time_index
        if file_size == 0:
            return len(index) == 0 and len(time_index) == 0
        last = index.last_entry()
        start = last[1] if last is not None else 0
        self._restore_from_time_index()
        self.size = start
        try:
            self._walk(start, file_size, verify_crc=False, first_last_offset=None if last is None else last[0])
        except _StopWalk:
            return False
        entry = time_index.last_entry()
        if entry is not None and entry[1] >= self.next_offset:
            return False
        return self.size == file_size
