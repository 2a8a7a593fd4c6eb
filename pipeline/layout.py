"""Which segment files a broker log directory holds, and where their complete batches end.

Listing is done here rather than through Spark's file index because Spark hides every path starting with ``_``
(so all of ``__consumer_offsets-N``) and because a segment is cut into byte ranges whose owned batches only a
reader that understands the batch framing can find. Directory and file names follow the broker's storage
layer (``<topic>-<partition>/<20-digit base offset>.log``) and are parsed with its own helpers.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pipeline.framing import Batch, SkipKind, walk
from storage.files import pread_fully
from storage.log_manager import TOPICS_FILE, parse_partition_dir
from storage.resync import Read
from storage.segment import LOG_SUFFIX, parse_segment_name
from storage.topics import TopicCatalogue

__all__ = [
    "OFFSETS_TOPIC",
    "SegmentFile",
    "active_paths",
    "complete_end",
    "file_reader",
    "fixed_cuts",
    "latest_ends",
    "list_segments",
    "topic_partition_counts",
]

OFFSETS_TOPIC = "__consumer_offsets"


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


def active_paths(segments: list[SegmentFile]) -> set[str]:
    """Paths of the active segment (the newest, the one the broker appends to) of each partition."""
    newest: dict[tuple[str, int], SegmentFile] = {}
    for s in segments:
        key = (s.topic, s.partition)
        if key not in newest or s.base_offset > newest[key].base_offset:
            newest[key] = s
    return {s.path for s in newest.values()}


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


def file_reader(f: BinaryIO) -> Read:
    """``read(position, length)`` over an open segment file, as :mod:`pipeline.framing` walks it."""
    fd = f.fileno()
    return lambda position, length: pread_fully(fd, length, position)


def _batch_positions(path: str, start: int, limit: int) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each batch in ``[start, limit)`` whose framing holds, hopping over the bodies and
    resyncing across damage (:func:`pipeline.framing.walk` without CRC checks)."""
    with open(path, "rb") as f:
        for item in walk(file_reader(f), start, limit, tail=SkipKind.FRAMING, verify=False):
            if isinstance(item, Batch):
                yield item.position, item.position + item.header.size


def complete_end(path: str, start: int = 0, limit: int | None = None) -> int:
    """Position just after the last complete batch in ``[start, limit)``, hopping over batch bodies.

    The broker may be in the middle of appending: a batch is only taken once all ``batchLength`` bytes are there,
    so readers cut at the value returned here. Damage in the middle does not stop it (the walk resumes at the
    next valid batch); only an incomplete or damaged end does.
    """
    size = os.path.getsize(path) if limit is None else limit
    return max((hi for _, hi in _batch_positions(path, start, size)), default=start)


def fixed_cuts(start: int, end: int, step: int) -> list[int]:
    """``[start, start + step, ..., end]``: byte cuts planned from sizes alone (``[start, end]`` for ``step <= 0``,
    ``[start]`` for an empty range). Readers resolve them to batch starts themselves
    (:func:`pipeline.framing.first_batch_at`), so planning reads no header."""
    if end <= start:
        return [start]
    return [*range(start, end, step), end] if step > 0 else [start, end]


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
