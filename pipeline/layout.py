"""Which segment files a broker log directory holds, and where their complete batches end.

Listing is done here rather than through Spark's file index because Spark hides every path starting with ``_``
(so all of ``__consumer_offsets-N``) and because a segment may be cut into byte ranges at batch boundaries, which
only a reader that understands the batch framing can do. Directory and file names follow the broker's storage
layer (``<topic>-<partition>/<20-digit base offset>.log``) and are parsed with its own helpers.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

from protocol.records import BATCH_HEADER_SIZE, LOG_OVERHEAD
from storage.log_manager import TOPICS_FILE, parse_partition_dir
from storage.segment import LOG_SUFFIX, parse_segment_name
from storage.topics import TopicCatalogue

__all__ = [
    "OFFSETS_TOPIC",
    "SegmentFile",
    "complete_end",
    "latest_ends",
    "list_segments",
    "split_points",
    "topic_partition_counts",
]

OFFSETS_TOPIC = "__consumer_offsets"
_LENGTH = struct.Struct(">qi")


@dataclass(frozen=True, slots=True)
class SegmentFile:
    """One ``.log`` file: the partition it belongs to and its size when listed."""

    topic: str
    partition: int
    base_offset: int
    path: str
    size: int

    @property
    def is_offsets(self) -> bool:
        return self.topic == OFFSETS_TOPIC


def list_segments(data_dir: str | Path, kind: str = "all") -> list[SegmentFile]:
    """Every segment of the directory, sorted by (topic, partition, base offset).

    ``kind`` is ``offsets`` (only ``__consumer_offsets``), ``topics`` (everything else) or ``all``. Cleaner and
    swap leftovers (``.cleaned``, ``.swap``, ``.deleted``) and ``*-delete``/``*-stray`` directories are skipped:
    the broker does not serve them either.
    """
    root = Path(data_dir)
    found: list[SegmentFile] = []
    if not root.is_dir():
        raise FileNotFoundError(f"not a broker log directory: {root}")
    for entry in os.scandir(root):
        if not entry.is_dir():
            continue
        parsed = parse_partition_dir(entry.name)
        if parsed is None:
            continue
        topic, partition = parsed
        if kind == "offsets" and topic != OFFSETS_TOPIC:
            continue
        if kind == "topics" and topic == OFFSETS_TOPIC:
            continue
        for file in os.scandir(entry.path):
            base = parse_segment_name(file.name, LOG_SUFFIX)
            if base is None or not file.is_file():
                continue
            found.append(SegmentFile(topic, partition, base, file.path, file.stat().st_size))
    found.sort(key=lambda s: (s.topic, s.partition, s.base_offset))
    return found


def latest_ends(data_dir: str | Path, kind: str, before: dict[str, int]) -> dict[str, int]:
    """``{path relative to data_dir: end of its complete batches}`` for every segment of ``kind``.

    The streaming source's offset; hopping starts where ``before`` stood (a file that shrank starts over).
    """
    ends: dict[str, int] = {}
    for s in list_segments(data_dir, kind):
        rel = os.path.relpath(s.path, data_dir)
        begin = before.get(rel, 0)
        ends[rel] = complete_end(s.path, begin if begin <= s.size else 0)
    return ends


def complete_end(path: str, start: int = 0, limit: int | None = None) -> int:
    """Position just after the last complete batch in ``[start, limit)``, hopping over batch bodies.

    The broker may be in the middle of appending: a batch is only taken once all ``batchLength`` bytes are there,
    so readers cut at the value returned here. Only the 12-byte ``baseOffset, batchLength`` prefix of each batch
    is read.
    """
    size = os.path.getsize(path) if limit is None else limit
    pos = start
    with open(path, "rb") as f:
        while pos + BATCH_HEADER_SIZE <= size:
            f.seek(pos)
            prefix = f.read(LOG_OVERHEAD)
            if len(prefix) < LOG_OVERHEAD:
                break
            _, length = _LENGTH.unpack(prefix)
            if length < BATCH_HEADER_SIZE - LOG_OVERHEAD:
                break  # corrupt framing: stop where the valid data stops, as storage recovery does
            end = pos + LOG_OVERHEAD + length
            if end > size:
                break
            pos = end
    return pos


def split_points(path: str, target_bytes: int, start: int = 0, end: int | None = None) -> list[int]:
    """Batch-aligned cut points splitting ``[start, end)`` into ranges of about ``target_bytes``.

    Returns ``[start, ..., stop]`` where ``stop`` is the complete-batch end; consecutive pairs are the ranges.
    """
    stop = complete_end(path, start, end)
    points = [start]
    if target_bytes <= 0 or stop - start <= target_bytes:
        return [start, stop] if stop > start else [start]
    pos = start
    next_cut = start + target_bytes
    with open(path, "rb") as f:
        while pos < stop:
            f.seek(pos)
            _, length = _LENGTH.unpack(f.read(LOG_OVERHEAD))
            pos += LOG_OVERHEAD + length
            if pos >= next_cut and pos < stop:
                points.append(pos)
                next_cut = pos + target_bytes
    points.append(stop)
    return points


def topic_partition_counts(data_dir: str | Path) -> dict[str, int]:
    """Partition count of each topic: from ``topics.json`` when present, else from the directories found."""
    root = Path(data_dir)
    counts = {name: info.partitions for name, info in TopicCatalogue(root / TOPICS_FILE).load().items()}
    for entry in os.scandir(root):
        parsed = parse_partition_dir(entry.name) if entry.is_dir() else None
        if parsed is not None:
            topic, partition = parsed
            counts[topic] = max(counts.get(topic, 0), partition + 1)
    return counts
