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
from typing import ClassVar, Self

from storage.files import is_empty_file

__all__ = ["IndexFile", "OffsetIndex", "TimeIndex"]

_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")
_LITTLE_ENDIAN = sys.byteorder == "little"


class IndexFile:
    """Append-only persistence shared by the indexes: remembers how many entries the file already holds."""

    __slots__ = ("_written", "path")

    def __init__(self, path: Path, written: int) -> None:
        self.path = path
        self._written = written

    @property
    def written(self) -> int:
        """How many entries the file holds."""
        return self._written

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
        if not data and is_empty_file(self.path):
            # An empty segment's index, rebuilt at every load: the file already holds exactly that (no write).
            self._written = 0
            return
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
    """What both index files share: two parallel columns of fixed-size entries, flushed incrementally.

    One of the columns holds offsets relative to the base offset (``RELATIVE``); ``entries`` and ``last_entry``
    give them absolute. Subclasses add how entries are appended and looked up, and what a sane file holds.
    """

    ENTRY: ClassVar[struct.Struct]
    ENTRY_SIZE: ClassVar[int]
    #: array typecodes of the two columns.
    TYPECODES: ClassVar[tuple[str, str]]
    #: Which column (0 or 1) holds relative offsets.
    RELATIVE: ClassVar[int]

    __slots__ = ("_file", "_first", "_second", "base_offset", "max_entries")

    def __init__(self, path: Path, base_offset: int, max_entries: int) -> None:
        self.base_offset = base_offset
        self.max_entries = max(1, max_entries)
        self._file = IndexFile(path, 0)
        self._first: array[int] = array(self.TYPECODES[0])
        self._second: array[int] = array(self.TYPECODES[1])

    @property
    def path(self) -> Path:
        return self._file.path

    def __len__(self) -> int:
        return len(self._first)

    @property
    def is_full(self) -> bool:
        return len(self) >= self.max_entries

    def _absolute(self, first: int, second: int) -> tuple[int, int]:
        if self.RELATIVE == 0:
            return self.base_offset + first, second
        return first, self.base_offset + second

    def entries(self) -> list[tuple[int, int]]:
        """Every entry with its offset absolute, for tests and tools."""
        return [self._absolute(a, b) for a, b in zip(self._first, self._second, strict=True)]

    def last_entry(self) -> tuple[int, int] | None:
        if not self._first:
            return None
        return self._absolute(self._first[-1], self._second[-1])

    def clear(self) -> None:
        del self._first[:]
        del self._second[:]

    def _keep(self, count: int) -> None:
        """Drop every entry from the ``count``-th on."""
        del self._first[count:]
        del self._second[count:]

    def flush(self, *, fsync: bool = False) -> None:
        first, second = self._first, self._second
        written = self._file._written
        total = len(first)
        pack = self.ENTRY.pack
        pending = [pack(first[i], second[i]) for i in range(written, total)] if total > written else None
        self._file.sync(pending, total, self.ENTRY_SIZE, fsync=fsync)

    def rewrite(self) -> None:
        """Replace the file with the in-memory entries (after a rebuild)."""
        pack = self.ENTRY.pack
        data = b"".join(pack(a, b) for a, b in zip(self._first, self._second, strict=True))
        self._file.rewrite(data, len(self._first))

    def rename(self, path: Path) -> None:
        self._file.rename(path)

    def delete(self) -> None:
        self._file.delete()

    def _decode(self, data: bytes) -> None:
        for first, second in self.ENTRY.iter_unpack(data):
            self._first.append(first)
            self._second.append(second)

    def _sane(self, log_size: int | None) -> bool:
        raise NotImplementedError

    @classmethod
    def load(cls, path: Path, base_offset: int, max_entries: int, log_size: int | None = None) -> Self | None:
        """Read an index file; None when it is missing or fails the checks (then the caller rebuilds it).

        ``log_size`` is the size of the segment's log file, which no indexed position may reach.
        """
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        if len(data) % cls.ENTRY_SIZE:
            return None
        index = cls(path, base_offset, max_entries)
        index._decode(data)
        if not index._sane(log_size):
            return None
        index._file = IndexFile(path, len(index))
        return index


class OffsetIndex(_PairIndex):
    """Maps offsets to the file position of a batch at or before them; a lookup is a floor search plus a scan.

    Each entry is ``(last offset of a batch, position of that batch)``, as Kafka writes them since 3.x; entries
    are strictly increasing in both fields, which is what the sanity check on load verifies. The columns are
    ``_first`` (relative offsets) and ``_second`` (positions).
    """

    ENTRY = _OFFSET_ENTRY
    ENTRY_SIZE = _OFFSET_ENTRY.size
    TYPECODES = ("i", "i")
    RELATIVE = 0

    __slots__ = ()

    def append(self, offset: int, position: int) -> None:
        relative = offset - self.base_offset
        if self._first and (relative <= self._first[-1] or position <= self._second[-1]):
            raise ValueError(f"index entry ({offset}, {position}) not after the last one")
        self._first.append(relative)
        self._second.append(position)

    def lookup(self, offset: int) -> int:
        """Position of the last indexed batch whose last offset is <= ``offset`` (0 when none is)."""
        i = bisect.bisect_right(self._first, offset - self.base_offset) - 1
        return self._second[i] if i >= 0 else 0

    def floor_position(self, position: int) -> int:
        """Largest indexed batch position <= ``position``: a known batch boundary to scan forward from."""
        i = bisect.bisect_right(self._second, position) - 1
        return self._second[i] if i >= 0 else 0

    def truncate_to_position(self, position: int) -> None:
        """Drop entries for batches at or after ``position`` (the log is being cut there)."""
        self._keep(bisect.bisect_left(self._second, position))

    def _decode(self, data: bytes) -> None:
        # Both columns are int32: one array read and a byteswap beat unpacking entry by entry.
        flat = array("i")
        flat.frombytes(data)
        if _LITTLE_ENDIAN:
            flat.byteswap()
        self._first = flat[0::2]
        self._second = flat[1::2]

    def _sane(self, log_size: int | None) -> bool:
        relative, positions = self._first, self._second
        if not _strictly_increasing(relative) or not _strictly_increasing(positions):
            return False
        if not relative:
            return True
        return relative[0] >= 0 and positions[0] >= 0 and (log_size is None or positions[-1] < log_size)


class TimeIndex(_PairIndex):
    """Maps timestamps to offsets: entry ``(T, O)`` says the largest timestamp up to offset ``O`` is ``T``.

    Entries are added only when the segment's max timestamp grows, so timestamps are strictly increasing and a
    floor search finds where to start scanning for the first record with timestamp >= a target (ListOffsets).
    The last entry also gives a closed segment's max timestamp, which time-based retention needs. The columns
    are ``_first`` (timestamps) and ``_second`` (relative offsets).
    """

    ENTRY = _TIME_ENTRY
    ENTRY_SIZE = _TIME_ENTRY.size
    TYPECODES = ("q", "i")
    RELATIVE = 1

    __slots__ = ()

    def maybe_append(self, timestamp: int, offset: int) -> None:
        """Append only when ``timestamp`` exceeds the last entry's, keeping the index monotonic as Kafka does."""
        if timestamp < 0 or (self._first and timestamp <= self._first[-1]):
            return
        relative = offset - self.base_offset
        if self._second and relative < self._second[-1]:
            raise ValueError(f"time index offset {offset} before the last entry")
        self._first.append(timestamp)
        self._second.append(relative)

    def lookup(self, timestamp: int) -> int:
        """Offset of the last entry with timestamp <= ``timestamp`` (the base offset when none is)."""
        i = bisect.bisect_right(self._first, timestamp) - 1
        return self.base_offset + self._second[i] if i >= 0 else self.base_offset

    def truncate_to_offset(self, offset: int) -> None:
        """Drop entries pointing at ``offset`` or later."""
        self._keep(bisect.bisect_left(self._second, offset - self.base_offset))

    def _sane(self, log_size: int | None) -> bool:
        timestamps, relative = self._first, self._second
        if not _strictly_increasing(timestamps) or not _non_decreasing(relative):
            return False
        return not relative or (relative[0] >= 0 and timestamps[0] >= 0)


def _strictly_increasing(values: array[int]) -> bool:
    return all(a < b for a, b in itertools.pairwise(values))


def _non_decreasing(values: array[int]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(values))
