"""Sparse per-segment indexes in Kafka's file formats: ``.index`` (offset) and ``.timeindex`` (timestamp).

Kafka memory-maps preallocated index files. Here the entries live in ``array`` objects (8 and 12 bytes per
entry, one entry per ``index.interval.bytes`` of log, so about 0.2-0.3% of the log size) and the files are
append-only copies written on roll, flush and close. Indexes are derived data: recovery rebuilds them from the log
whenever they are missing or fail the sanity checks, so the files never need to be more current than the last
flush.

Entries store offsets relative to the segment's base offset as int32, big-endian like Kafka's, so the files
read the same as a real broker's.
"""

from __future__ import annotations

import bisect
import itertools
import os
import struct
import sys
from array import array
from pathlib import Path
from typing import ClassVar

__all__ = ["OffsetIndex", "TimeIndex"]

_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")
_LITTLE_ENDIAN = sys.byteorder == "little"


class _IndexFile:
    """Append-only persistence shared by both indexes: remembers how many entries the file already holds."""

    __slots__ = ("_written", "path")

    def __init__(self, path: Path, written: int) -> None:
        self.path = path
        self._written = written

    def sync(self, entries: list[bytes] | None, total: int, entry_size: int, *, fsync: bool) -> None:
        """Bring the file to ``total`` entries; ``entries`` are the encoded entries from ``_written`` on."""
        if entries is None and self._written == total and not fsync and self.path.exists():
            return
        with open(self.path, "r+b" if self.path.exists() else "wb") as f:
            if self._written > total:
                f.truncate(total * entry_size)
                self._written = total
            if entries:
                f.seek(self._written * entry_size)
                f.write(b"".join(entries))
                f.truncate()
                self._written = total
            if fsync:
                f.flush()
                os.fsync(f.fileno())

    def rewrite(self, data: bytes, total: int) -> None:
        with open(self.path, "wb") as f:
            f.write(data)
        self._written = total

    def rename(self, path: Path) -> None:
        if self.path.exists():
            os.replace(self.path, path)
        self.path = path

    def delete(self) -> None:
        self.path.unlink(missing_ok=True)


class _PairIndex:
    """What both index files share: two parallel columns of fixed-size entries, flushed incrementally."""

    ENTRY: ClassVar[struct.Struct]

    __slots__ = ("_file", "base_offset", "max_entries")

    def __init__(self, path: Path, base_offset: int, max_entries: int) -> None:
        self.base_offset = base_offset
        self.max_entries = max(1, max_entries)
        self._file = _IndexFile(path, 0)

    def _columns(self) -> tuple[array[int], array[int]]:
        raise NotImplementedError

    @property
    def path(self) -> Path:
        return self._file.path

    def __len__(self) -> int:
        return len(self._columns()[0])

    @property
    def is_full(self) -> bool:
        return len(self) >= self.max_entries

    def clear(self) -> None:
        for column in self._columns():
            del column[:]

    def flush(self, *, fsync: bool = False) -> None:
        first, second = self._columns()
        written = self._file._written
        total = len(first)
        pack = self.ENTRY.pack
        pending = [pack(first[i], second[i]) for i in range(written, total)] if total > written else None
        self._file.sync(pending, total, self.ENTRY.size, fsync=fsync)

    def rewrite(self) -> None:
        """Replace the file with the in-memory entries (after a rebuild)."""
        first, second = self._columns()
        pack = self.ENTRY.pack
        self._file.rewrite(b"".join(pack(a, b) for a, b in zip(first, second, strict=True)), len(first))

    def rename(self, path: Path) -> None:
        self._file.rename(path)

    def delete(self) -> None:
        self._file.delete()


class OffsetIndex(_PairIndex):
    """Maps offsets to the file position of a batch at or before them; a lookup is a floor search plus a scan.

    Each entry is ``(last offset of a batch, position of that batch)``, as Kafka writes them since 3.x; entries
    are strictly increasing in both fields, which is what the sanity check on load verifies.
    """

    ENTRY = _OFFSET_ENTRY
    ENTRY_SIZE = _OFFSET_ENTRY.size

    __slots__ = ("_positions", "_relative")

    def __init__(self, path: Path, base_offset: int, max_entries: int) -> None:
        super().__init__(path, base_offset, max_entries)
        self._relative = array("i")
        self._positions = array("i")

    def _columns(self) -> tuple[array[int], array[int]]:
        return self._relative, self._positions

    def entries(self) -> list[tuple[int, int]]:
        """``(absolute offset, position)`` pairs, for tests and tools."""
        base = self.base_offset
        return [(base + r, p) for r, p in zip(self._relative, self._positions, strict=True)]

    def last_entry(self) -> tuple[int, int] | None:
        if not self._relative:
            return None
        return self.base_offset + self._relative[-1], self._positions[-1]

    def append(self, offset: int, position: int) -> None:
        relative = offset - self.base_offset
        if self._relative and (relative <= self._relative[-1] or position <= self._positions[-1]):
            raise ValueError(f"index entry ({offset}, {position}) not after the last one")
        self._relative.append(relative)
        self._positions.append(position)

    def lookup(self, offset: int) -> int:
        """Position of the last indexed batch whose last offset is <= ``offset`` (0 when none is)."""
        i = bisect.bisect_right(self._relative, offset - self.base_offset) - 1
        return self._positions[i] if i >= 0 else 0

    def floor_position(self, position: int) -> int:
        """Largest indexed batch position <= ``position``: a known batch boundary to scan forward from."""
        i = bisect.bisect_right(self._positions, position) - 1
        return self._positions[i] if i >= 0 else 0

    def truncate_to_position(self, position: int) -> None:
        """Drop entries for batches at or after ``position`` (the log is being cut there)."""
        keep = bisect.bisect_left(self._positions, position)
        del self._relative[keep:]
        del self._positions[keep:]

    @classmethod
    def load(cls, path: Path, base_offset: int, max_entries: int, log_size: int) -> OffsetIndex | None:
        """Read an index file; None when it is missing or fails the checks (then the caller rebuilds it)."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        if len(data) % cls.ENTRY_SIZE:
            return None
        flat = array("i")
        flat.frombytes(data)
        if _LITTLE_ENDIAN:
            flat.byteswap()
        index = cls(path, base_offset, max_entries)
        index._relative = flat[0::2]
        index._positions = flat[1::2]
        if not _strictly_increasing(index._relative) or not _strictly_increasing(index._positions):
            return None
        if index._relative and (index._relative[0] < 0 or index._positions[0] < 0 or index._positions[-1] >= log_size):
            return None
        index._file = _IndexFile(path, len(index._relative))
        return index


class TimeIndex(_PairIndex):
    """Maps timestamps to offsets: entry ``(T, O)`` says the largest timestamp up to offset ``O`` is ``T``.

    Entries are added only when the segment's max timestamp grows, so timestamps are strictly increasing and a
    floor search finds where to start scanning for the first record with timestamp >= a target (ListOffsets).
    The last entry also gives a closed segment's max timestamp, which time-based retention needs.
    """

    ENTRY = _TIME_ENTRY
    ENTRY_SIZE = _TIME_ENTRY.size

    __slots__ = ("_relative", "_timestamps")

    def __init__(self, path: Path, base_offset: int, max_entries: int) -> None:
        super().__init__(path, base_offset, max_entries)
        self._timestamps = array("q")
        self._relative = array("i")

    def _columns(self) -> tuple[array[int], array[int]]:
        return self._timestamps, self._relative

    def entries(self) -> list[tuple[int, int]]:
        base = self.base_offset
        return [(t, base + r) for t, r in zip(self._timestamps, self._relative, strict=True)]

    def last_entry(self) -> tuple[int, int] | None:
        if not self._timestamps:
            return None
        return self._timestamps[-1], self.base_offset + self._relative[-1]

    def maybe_append(self, timestamp: int, offset: int) -> None:
        """Append only when ``timestamp`` exceeds the last entry's, keeping the index monotonic as Kafka does."""
        if timestamp < 0 or (self._timestamps and timestamp <= self._timestamps[-1]):
            return
        relative = offset - self.base_offset
        if self._relative and relative < self._relative[-1]:
            raise ValueError(f"time index offset {offset} before the last entry")
        self._timestamps.append(timestamp)
        self._relative.append(relative)

    def lookup(self, timestamp: int) -> int:
        """Offset of the last entry with timestamp <= ``timestamp`` (the base offset when none is)."""
        i = bisect.bisect_right(self._timestamps, timestamp) - 1
        return self.base_offset + self._relative[i] if i >= 0 else self.base_offset

    def truncate_to_offset(self, offset: int) -> None:
        """Drop entries pointing at ``offset`` or later."""
        relative = offset - self.base_offset
        keep = bisect.bisect_left(self._relative, relative)
        del self._timestamps[keep:]
        del self._relative[keep:]

    @classmethod
    def load(cls, path: Path, base_offset: int, max_entries: int) -> TimeIndex | None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        if len(data) % cls.ENTRY_SIZE:
            return None
        index = cls(path, base_offset, max_entries)
        for timestamp, relative in _TIME_ENTRY.iter_unpack(data):
            index._timestamps.append(timestamp)
            index._relative.append(relative)
        if not _strictly_increasing(index._timestamps) or not _non_decreasing(index._relative):
            return None
        if index._relative and (index._relative[0] < 0 or index._timestamps[0] < 0):
            return None
        index._file = _IndexFile(path, len(index._timestamps))
        return index


def _strictly_increasing(values: array[int]) -> bool:
    return all(a < b for a, b in itertools.pairwise(values))


def _non_decreasing(values: array[int]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(values))
