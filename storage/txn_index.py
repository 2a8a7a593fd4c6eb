"""The aborted-transaction index of a segment: ``<base>.txnindex`` in Kafka's file format (``TransactionIndex``).

Each entry records one aborted transaction whose ABORT marker sits in this segment: the producer id, the
transaction's first and last offset (the marker's), and the log's last stable offset when it was aborted. Every
entry is Kafka's ``AbortedTxn`` message v0 with its version prefix, 34 bytes::

    int16 version (0) | int64 producerId | int64 firstOffset | int64 lastOffset | int64 lastStableOffset

A read_committed Fetch lists the aborted transactions overlapping the records it returns, so the consumer can drop
their records: :meth:`TransactionIndex.collect` is Kafka's ``collectAbortedTxns``, searched from the segment that
holds the fetch offset onward until an entry's last stable offset reaches the end of the fetched range (every
transaction that could still overlap it ended before that abort).

The entries live in memory (aborts are rare: a few per segment) and every append goes to the file at once; the
file is fsynced with its segment. The index is derived data: the log's producer-state replay rebuilds it whenever
it cannot be trusted (:mod:`storage.partition_log`). :meth:`load` applies Kafka's sanity check (no entry before the
segment's base offset, known version) plus the checks a sane file passes by construction (whole entries, first <=
last offset, last offsets increasing); a file that fails them is reported with its reason, never half-read.
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass
from pathlib import Path

from storage.index import IndexFile

__all__ = ["TXN_INDEX_SUFFIX", "AbortedTxn", "TransactionIndex"]

TXN_INDEX_SUFFIX = ".txnindex"
_ENTRY = struct.Struct(">hqqqq")
_VERSION = 0


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """One aborted transaction of a partition (Kafka's ``AbortedTxn``)."""

    producer_id: int
    first_offset: int
    #: The offset of the ABORT marker.
    last_offset: int
    last_stable_offset: int

    SIZE = _ENTRY.size

    def encode(self) -> bytes:
        return _ENTRY.pack(_VERSION, self.producer_id, self.first_offset, self.last_offset, self.last_stable_offset)

    @classmethod
    def decode(cls, data: bytes, pos: int = 0) -> AbortedTxn:
        version, producer_id, first, last, lso = _ENTRY.unpack_from(data, pos)
        if version != _VERSION:
            raise ValueError(f"aborted transaction version {version} at {pos}, only version {_VERSION} is known")
        return cls(producer_id, first, last, lso)


class TransactionIndex:
    """A segment's aborted transactions, oldest first, mirrored to ``path`` (see the module docstring)."""

    __slots__ = ("_entries", "_file", "_last_offsets", "base_offset")

    def __init__(self, path: Path, base_offset: int, entries: list[AbortedTxn] | None = None) -> None:
        self.base_offset = base_offset
        self._entries: list[AbortedTxn] = list(entries or ())
        self._last_offsets = [entry.last_offset for entry in self._entries]
        #: The file holds the first ``written`` entries; a write that failed leaves the rest for the next one.
        self._file = IndexFile(path, len(self._entries))

    @classmethod
    def load(cls, path: Path, base_offset: int) -> tuple[TransactionIndex, str | None]:
        """The index stored at ``path`` (empty when there is no file) and, when the file is damaged, why: then the
        returned index is empty and the caller decides what happens to the file."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return cls(path, base_offset), None
        try:
            entries = _checked_entries(data, base_offset)
        except ValueError as exc:
            return cls(path, base_offset), str(exc)
        return cls(path, base_offset, entries), None

    def __repr__(self) -> str:
        return f"TransactionIndex({self.path.name}, entries={len(self._entries)})"

    @property
    def path(self) -> Path:
        return self._file.path

    @property
    def entries(self) -> list[AbortedTxn]:
        return list(self._entries)

    @property
    def exists(self) -> bool:
        return self.path.exists()

    def append(self, txn: AbortedTxn) -> None:
        """Add the next aborted transaction (its marker follows every earlier one) and write it to the file.

        The entry is in memory (what reads use) before the write; a write that fails raises, and the next write
        or flush brings the file up to date.
        """
        if self._last_offsets and txn.last_offset <= self._last_offsets[-1]:
            raise ValueError(
                f"the last offset of appended transactions must increase sequentially, but {txn.last_offset} is "
                f"not greater than current last offset {self._last_offsets[-1]} of index {self.path.name}"
            )
        self._entries.append(txn)
        self._last_offsets.append(txn.last_offset)
        self._sync(fsync=False)

    def collect(self, fetch_offset: int, upper_bound: int) -> tuple[list[AbortedTxn], bool]:
        """Entries overlapping ``[fetch_offset, upper_bound)`` and whether the search is complete (Kafka's rule)."""
        found: list[AbortedTxn] = []
        for entry in self._entries[bisect.bisect_left(self._last_offsets, fetch_offset) :]:
            if entry.first_offset < upper_bound:
                found.append(entry)
            if entry.last_stable_offset >= upper_bound:
                return found, True
        return found, False

    def truncate_to(self, offset: int) -> None:
        """Drop the entries whose marker is at ``offset`` or later (the log is cut there)."""
        keep = bisect.bisect_left(self._last_offsets, offset)
        if keep < len(self._entries):
            self.replace(self._entries[:keep])

    def replace(self, entries: list[AbortedTxn]) -> None:
        """Make ``entries`` the whole index (a rebuild), rewriting the file; an empty index keeps no file (callers
        with a closed segment then call :meth:`ensure_file`)."""
        self._entries = list(entries)
        self._last_offsets = [entry.last_offset for entry in self._entries]
        if not self._entries:
            self.delete()
            self._file = IndexFile(self.path, 0)
            return
        self._file.rewrite(b"".join(entry.encode() for entry in self._entries), len(self._entries))

    def ensure_file(self) -> None:
        """Create the file, empty, when there is none: every closed segment keeps one, so that a missing file is
        noticed (a replay from a producer state snapshot skips the segments whose files are all present)."""
        if not self.exists:
            self.path.touch()

    def flush(self) -> None:
        """Write what a failed write left out and fsync (with the segment); a segment without aborts has no file."""
        if self._entries or self.exists:
            self._sync(fsync=True)

    def _sync(self, *, fsync: bool) -> None:
        written = self._file.written
        pending = [entry.encode() for entry in self._entries[written:]] if len(self._entries) > written else None
        self._file.sync(pending, len(self._entries), AbortedTxn.SIZE, fsync=fsync)

    def rename(self, path: Path) -> None:
        self._file.rename(path)

    def delete(self) -> None:
        self._file.delete()


def _checked_entries(data: bytes, base_offset: int) -> list[AbortedTxn]:
    if len(data) % AbortedTxn.SIZE:
        raise ValueError(f"{len(data)} bytes is not a multiple of the {AbortedTxn.SIZE}-byte entry size")
    entries: list[AbortedTxn] = []
    for pos in range(0, len(data), AbortedTxn.SIZE):
        entry = AbortedTxn.decode(data, pos)
        if entry.producer_id < 0:
            raise ValueError(f"entry at {pos} has producer id {entry.producer_id}")
        if entry.last_offset < base_offset:
            raise ValueError(f"entry at {pos} ends at {entry.last_offset}, before the segment's base {base_offset}")
        if entry.first_offset > entry.last_offset:
            raise ValueError(f"entry at {pos} has first offset {entry.first_offset} > last {entry.last_offset}")
        if entries and entry.last_offset <= entries[-1].last_offset:
            raise ValueError(f"entry at {pos}: last offsets must increase ({entry.last_offset})")
        entries.append(entry)
    return entries
