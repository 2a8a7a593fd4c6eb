"""Producer state snapshot files, byte for byte Kafka's (``ProducerStateManager`` snapshot version 1).

A snapshot ``<offset as 20 digits>.snapshot`` in the partition directory holds the producer state as it was with
every batch below ``offset`` applied, so a restart loads it and replays only the batches from ``offset`` on
instead of the whole log. Layout (big-endian)::

    version  int16   = 1
    crc      uint32  CRC-32C of every byte after this field
    entries  int32 count, then per producer:
        producer id int64, epoch int16, last sequence int32, last offset int64, offset delta int32,
        timestamp int64, coordinator epoch int32, current txn first offset int64 (-1: none)

As in Kafka only each producer's last batch is kept (offset delta = its last minus first sequence), so after a
restart a retry of one of the four batches before it is no longer recognised as a duplicate; a producer whose only
entry is a marker has last sequence and last offset -1. Files are written atomically (temporary file, fsync,
rename, directory fsync). A file that does not decode raises :class:`SnapshotError`: the log quarantines it.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from protocol import checksum as crc32c
from protocol.records import NO_SEQUENCE
from storage.files import atomic_write
from storage.producer_state import BatchMetadata, ProducerEntry, ProducerStateManager

__all__ = [
    "SNAPSHOT_SUFFIX",
    "SnapshotError",
    "decode_snapshot",
    "encode_snapshot",
    "list_snapshots",
    "snapshot_path",
    "write_snapshot",
]

SNAPSHOT_SUFFIX = ".snapshot"
SNAPSHOT_VERSION = 1
_HEADER = struct.Struct(">hI")
_COUNT = struct.Struct(">i")
_ENTRY = struct.Struct(">qhiqiqiq")
_ENTRIES_AT = _HEADER.size
_SEQUENCE_WRAP = 2**31


class SnapshotError(ValueError):
    """A snapshot file that cannot be trusted: truncated, wrong CRC, unknown version."""


def snapshot_path(directory: Path, offset: int) -> Path:
    return directory / f"{offset:020d}{SNAPSHOT_SUFFIX}"


def list_snapshots(directory: Path) -> list[int]:
    """Offsets of the snapshot files in ``directory``, oldest first (other names ending in .snapshot ignored)."""
    offsets = []
    for name in os.listdir(directory):
        stem = name[: -len(SNAPSHOT_SUFFIX)]
        if name.endswith(SNAPSHOT_SUFFIX) and len(stem) == 20 and stem.isdigit():
            offsets.append(int(stem))
    return sorted(offsets)


def encode_snapshot(state: ProducerStateManager) -> bytes:
    entries = state.entries()
    body = bytearray(_COUNT.pack(len(entries)))
    for entry in entries:
        last = entry.batches[-1] if entry.batches else None
        body += _ENTRY.pack(
            entry.producer_id,
            entry.epoch,
            entry.last_seq,
            -1 if last is None else last.last_offset,
            0 if last is None else last.last_offset - last.first_offset,
            entry.last_timestamp,
            entry.coordinator_epoch,
            -1 if entry.current_txn_first_offset is None else entry.current_txn_first_offset,
        )
    return _HEADER.pack(SNAPSHOT_VERSION, crc32c.crc32c(body)) + bytes(body)


def decode_snapshot(data: bytes, partition: str) -> ProducerStateManager:
    """The state a snapshot holds; SnapshotError when it cannot be trusted."""
    if len(data) < _ENTRIES_AT + _COUNT.size:
        raise SnapshotError(f"truncated: {len(data)} bytes")
    version, crc = _HEADER.unpack_from(data)
    if version != SNAPSHOT_VERSION:
        raise SnapshotError(f"unknown version {version}")
    (count,) = _COUNT.unpack_from(data, _ENTRIES_AT)
    expected = _ENTRIES_AT + _COUNT.size + count * _ENTRY.size
    if count < 0 or len(data) != expected:
        raise SnapshotError(f"truncated: {len(data)} bytes for {count} entries")
    actual = crc32c.crc32c(data[_ENTRIES_AT:])
    if actual != crc:
        raise SnapshotError(f"CRC mismatch: stored {crc:#010x}, computed {actual:#010x}")
    entries = []
    for i in range(count):
        pid, epoch, last_seq, last_offset, delta, timestamp, coordinator_epoch, txn_first = _ENTRY.unpack_from(
            data, _ENTRIES_AT + _COUNT.size + i * _ENTRY.size
        )
        entry = ProducerEntry(pid, epoch, coordinator_epoch, timestamp, None if txn_first < 0 else txn_first)
        if last_offset >= 0 and last_seq != NO_SEQUENCE:
            first_seq = (last_seq - delta) % _SEQUENCE_WRAP  # Kafka's decrementSequence: sequences wrap at 2^31
            entry.batches.append(BatchMetadata(first_seq, last_seq, last_offset - delta, last_offset, timestamp))
        entries.append(entry)
    return ProducerStateManager.from_entries(partition, entries)


def write_snapshot(directory: Path, offset: int, state: ProducerStateManager) -> Path:
    """Write ``state`` (every batch below ``offset`` applied) durably as ``<offset>.snapshot``."""
    path = snapshot_path(directory, offset)
    atomic_write(path, encode_snapshot(state))
    return path
