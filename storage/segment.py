"""One log segment: ``<base>.log`` (concatenated v2 batches) with its ``.index`` and ``.timeindex``.

A segment knows positions, not topics: it appends already validated bytes, finds the batch holding an offset
(sparse index floor, then a short scan of batch headers), and recovers itself on open. Recovery is the one place
where on-disk bytes are distrusted: a full scan checks every batch's framing, CRC and offset order and cuts the
file at the first batch that fails, so a torn or corrupt tail is never served. Segments that were flushed before
the last checkpoint get the cheaper check instead: the index files must pass sanity checks and the batches after
the last index entry must walk cleanly to the end of the file; anything else falls back to the full scan.

File names follow Kafka: the base offset zero-padded to 20 digits, plus a suffix while a cleaner is building a
replacement (``.cleaned``) or swapping it in (``.swap``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

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
from storage.errors import CorruptLogError, CorruptRecordError
from storage.index import OffsetIndex, TimeIndex
from storage.validation import BatchMeta

__all__ = [
    "CLEANED_SUFFIX",
    "INDEX_SUFFIX",
    "LOG_SUFFIX",
    "SWAP_SUFFIX",
    "TIME_INDEX_SUFFIX",
    "LogSegment",
    "TimestampOffset",
    "parse_segment_name",
    "segment_name",
]

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"

#: Read size when walking headers: covers an index interval of small batches in one system call.
_HEADER_CHUNK = 64 * 1024
#: Read size of the recovery scan, which needs whole batches to check CRCs.
_RECOVERY_CHUNK = 8 * 1024 * 1024


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

    def __init__(
        self,
        directory: Path,
        base_offset: int,
        *,
        index_interval_bytes: int,
        max_index_bytes: int,
        now_ms: int,
        suffix: str = "",
    ) -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.suffix = suffix
        self.index_interval_bytes = index_interval_bytes
        self._max_index_bytes = max_index_bytes
        name = segment_name(base_offset)
        self.log_path = directory / f"{name}{LOG_SUFFIX}{suffix}"
        self.index = OffsetIndex(self._index_path(INDEX_SUFFIX), base_offset, max_index_bytes // OffsetIndex.ENTRY_SIZE)
        self.time_index = TimeIndex(
            self._index_path(TIME_INDEX_SUFFIX), base_offset, max_index_bytes // TimeIndex.ENTRY_SIZE
        )
        #: Bytes of valid batches in the file.
        self.size = 0
        #: Offset after the last batch (the base offset while empty).
        self.next_offset = base_offset
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = -1
        #: Max timestamp of the first batch: Kafka measures segment.ms from it when it is set.
        self.rolling_base_timestamp: int | None = None
        self.created_ms = now_ms
        self._bytes_since_index = 0
        self._fd: int | None = None
        #: Bytes written since the last fsync.
        self.dirty = False
        self.closed = False

    def _index_path(self, kind: str) -> Path:
        return self.directory / f"{segment_name(self.base_offset)}{kind}{self.suffix}"

    def __repr__(self) -> str:
        return f"LogSegment({self.log_path.name}, offsets=[{self.base_offset}, {self.next_offset}), size={self.size})"

    # --- lifecycle ----------------------------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        directory: Path,
        base_offset: int,
        *,
        index_interval_bytes: int,
        max_index_bytes: int,
        now_ms: int,
        suffix: str = "",
    ) -> LogSegment:
        """A new empty segment; an existing non-empty file of that name is an error, an empty one is reused."""
        segment = cls(
            directory,
            base_offset,
            index_interval_bytes=index_interval_bytes,
            max_index_bytes=max_index_bytes,
            now_ms=now_ms,
            suffix=suffix,
        )
        try:
            segment._fd = os.open(segment.log_path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            if segment.log_path.stat().st_size:
                raise CorruptLogError(f"segment file {segment.log_path} already exists and is not empty") from None
            segment._fd = os.open(segment.log_path, os.O_RDWR)
        # Stale index files of an earlier segment with this base would otherwise be loaded later.
        segment.index.delete()
        segment.time_index.delete()
        segment.dirty = True
        return segment

    @classmethod
    def open(
        cls,
        directory: Path,
        base_offset: int,
        *,
        index_interval_bytes: int,
        max_index_bytes: int,
        now_ms: int,
        recover: bool,
        suffix: str = "",
    ) -> tuple[LogSegment, int]:
        """Open an existing segment; returns it with the number of bytes recovery cut off its end.

        ``recover=True`` scans every batch (CRC included) and rebuilds the indexes; otherwise the index files
        are trusted after the sanity checks, and the full scan only runs if they fail.
        """
        segment = cls(
            directory,
            base_offset,
            index_interval_bytes=index_interval_bytes,
            max_index_bytes=max_index_bytes,
            now_ms=now_ms,
            suffix=suffix,
        )
        file_size = segment.log_path.stat().st_size
        if file_size > INT32_MAX:
            raise CorruptLogError(f"segment {segment.log_path} is larger than 2 GiB")
        if not recover and segment._load_indexes(file_size):
            return segment, 0
        return segment, segment._recover(file_size)

    def close(self) -> None:
        """Seal the time index, write index files (no fsync) and release the file descriptor."""
        if self.closed:
            return
        self.seal()
        self.write_indexes()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self.closed = True

    def delete(self) -> None:
        """Close and remove the segment's files."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self.closed = True
        self.log_path.unlink(missing_ok=True)
        self.index.delete()
        self.time_index.delete()

    def rename_suffix(self, suffix: str) -> None:
        """Rename all three files to carry ``suffix`` (used by the cleaner's swap); the descriptor stays valid."""
        self.suffix = suffix
        new_log = self.directory / f"{segment_name(self.base_offset)}{LOG_SUFFIX}{suffix}"
        os.replace(self.log_path, new_log)
        self.log_path = new_log
        self.index.rename(self._index_path(INDEX_SUFFIX))
        self.time_index.rename(self._index_path(TIME_INDEX_SUFFIX))

    def seal(self) -> None:
        """Record the final max timestamp in the time index, as Kafka does when a segment stops being active."""
        if self.max_timestamp >= 0:
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)

    def write_indexes(self, *, fsync: bool = False) -> None:
        self.index.flush(fsync=fsync)
        self.time_index.flush(fsync=fsync)

    def flush(self) -> None:
        """fsync the log, then write and fsync the index files (a closed segment's indexes are trusted on load)."""
        self.flush_data()
        self.write_indexes(fsync=True)

    def flush_data(self) -> None:
        """fsync the log file only; fsync covers the file, so a reopened descriptor works too."""
        if self.dirty:
            os.fsync(self._file())
        self.dirty = False

    def _file(self) -> int:
        if self._fd is None:
            if self.closed:
                raise CorruptLogError(f"segment {self.log_path} is closed")
            self._fd = os.open(self.log_path, os.O_RDWR)
        return self._fd

    def release(self) -> None:
        """Close the descriptor of a segment that is no longer appended to; the next read reopens it.

        Keeps descriptor use proportional to partitions, not to segments.
        """
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

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

    def append(self, data: bytes | bytearray | memoryview, batches: Sequence[BatchMeta]) -> None:
        """Write validated batches at the end of the file (page cache only) and index them.

        A failed write (disk full) is cut back off, so the file never keeps a partial batch from it.
        """
        fd = self._file()
        start = self.size
        view = memoryview(data)
        written = 0
        try:
            while written < len(view):
                written += os.pwrite(fd, view[written:], start + written)
        except OSError:
            os.ftruncate(fd, start)
            raise
        finally:
            view.release()
        self.dirty = True
        for meta in batches:
            self._track(start + meta.position, meta.size, meta.last_offset, meta.max_timestamp)

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
        self.append(data, metas)

    # --- reading ----------------------------------------------------------------------------------------------

    def open_reader(self) -> int:
        """A descriptor of this segment's file that stays valid after the segment is closed, renamed or deleted."""
        return os.dup(self._file())

    def read(self, position: int, length: int) -> bytes:
        """Copy ``length`` bytes from ``position`` (fewer only at the end of the file)."""
        fd = self._file()
        data = os.pread(fd, length, position)
        if len(data) == length or not data:
            return data
        parts = [data]
        got = len(data)
        while got < length:
            more = os.pread(fd, length - got, position + got)
            if not more:
                break
            parts.append(more)
            got += len(more)
        return b"".join(parts)

    def iter_headers(self, start: int = 0, end: int | None = None) -> Iterator[tuple[int, BatchHeader]]:
        """``(position, header)`` of each batch in ``[start, end)``, reading headers only.

        Raises CorruptLogError if the bytes are not a chain of batches, which after recovery means the disk
        changed under us.
        """
        try:
            yield from self._walk_headers(start, self.size if end is None else end)
        except _StopWalk as stop:
            raise CorruptLogError(f"{self.log_path} at {stop.position}: {stop.reason}") from None

    def _walk_headers(self, start: int, end: int) -> Iterator[tuple[int, BatchHeader]]:
        pos = start
        buf = b""
        buf_start = start
        while pos < end:
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
        """What time-based retention compares with: the max timestamp, or the file's mtime when none is set."""
        if self.max_timestamp >= 0:
            return self.max_timestamp
        return self.log_path.stat().st_mtime_ns // 1_000_000

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
        self.dirty = True
        self.index.truncate_to_position(position)
        self.time_index.truncate_to_offset(header.base_offset)
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

    def _recover(self, file_size: int) -> int:
        """Full scan: rebuild indexes from scratch and cut the file at the first invalid byte."""
        self.index = OffsetIndex(self.index.path, self.base_offset, self.index.max_entries)
        self.time_index = TimeIndex(self.time_index.path, self.base_offset, self.time_index.max_entries)
        self._reset_state()
        # The walk stops at the first invalid byte; everything before it is kept, everything after is cut.
        with contextlib.suppress(_StopWalk):
            self._walk(0, file_size, verify_crc=True, first_last_offset=None)
        truncated = file_size - self.size
        if truncated:
            os.ftruncate(self._file(), self.size)
            self.dirty = True
        self.index.rewrite()
        self.time_index.rewrite()
        return truncated

    def _load_indexes(self, file_size: int) -> bool:
        """Trust the index files if they pass the checks and the tail walks cleanly to the end of the file."""
        entries = self._max_index_bytes
        index = OffsetIndex.load(self.index.path, self.base_offset, entries // OffsetIndex.ENTRY_SIZE, file_size)
        time_index = TimeIndex.load(self.time_index.path, self.base_offset, entries // TimeIndex.ENTRY_SIZE)
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
