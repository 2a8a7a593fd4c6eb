"""What recovery and readers report about damaged data, and the quarantine folder (Decision 9).

Damaged data is never deleted and never silently skipped:

* a byte range of a segment that does not hold valid batches (bad CRC, broken header, offsets out of order, a
  torn tail of a closed segment) stays on disk, is reported once as a :class:`DamagedRange` and is skipped by
  readers;
* a file in a partition directory that is not a valid segment (an unparsable name, a base offset inside another
  segment's offsets, a file without a single valid batch) is moved to
  ``<log.dir>/quarantine/<topic>-<partition>/<wall ms>-<file name>`` and reported as a :class:`QuarantinedFile`.

Kafka has no quarantine folder; it sets whole directories aside as ``*-stray`` (which the log manager keeps
doing). A sibling folder of the partition directories keeps moved files out of every listing recovery reads,
and its name is not a valid ``<topic>-<partition>``, so it is never loaded as a log.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from storage.files import fsync_dir

__all__ = [
    "QUARANTINE_DIR",
    "DamagedRange",
    "QuarantinedFile",
    "move_to_quarantine",
    "quarantine_broker_file",
    "topic_partition_of",
]

QUARANTINE_DIR = "quarantine"


@dataclass(frozen=True, slots=True)
class DamagedRange:
    """Bytes ``[start, end)`` of one segment file that hold no valid batch; kept on disk, skipped by readers."""

    topic: str
    partition: int
    segment: str
    start: int
    end: int
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class QuarantinedFile:
    """A file that was not a valid segment, moved from the partition directory to the quarantine folder."""

    topic: str
    partition: int
    original: str
    moved_to: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def topic_partition_of(directory: Path) -> tuple[str, int]:
    """``<topic>-<partition>`` of a partition directory; ``(name, -1)`` for a name of another shape."""
    topic, sep, partition = directory.name.rpartition("-")
    if not sep or not partition.isdigit():
        return directory.name, -1
    return topic, int(partition)


def quarantine_folder(partition_dir: Path) -> Path:
    """Where files of ``partition_dir`` go: a folder beside the partition directories, one per partition."""
    return partition_dir.parent / QUARANTINE_DIR / partition_dir.name


def _move_into(path: Path, folder: Path, now_ms: int) -> Path:
    """Move ``path`` into ``folder`` as ``<now_ms>-<name>`` (never over an earlier one); durable once this returns."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{now_ms}-{path.name}"
    attempt = 1
    while target.exists():
        target = folder / f"{now_ms}.{attempt}-{path.name}"
        attempt += 1
    os.rename(path, target)
    fsync_dir(folder)
    fsync_dir(path.parent)
    return target


def move_to_quarantine(path: Path, reason: str, now_ms: int) -> QuarantinedFile:
    """Move ``path`` (a file of a partition directory) to the quarantine folder; durable once this returns."""
    target = _move_into(path, quarantine_folder(path.parent), now_ms)
    topic, partition = topic_partition_of(path.parent)
    return QuarantinedFile(topic, partition, path.name, str(target), reason)


#: Where broker-wide files of ``log.dir`` (not of a partition) go; not a ``<topic>-<partition>`` name.
BROKER_FILES = "broker"


def quarantine_broker_file(path: Path, reason: str, now_ms: int) -> QuarantinedFile:
    """Move a broker-wide file of ``log.dir`` (``path.parent``) to ``<log.dir>/quarantine/broker/``.

    Reported with topic ``""`` and partition -1, since it belongs to no partition.
    """
    target = _move_into(path, path.parent / QUARANTINE_DIR / BROKER_FILES, now_ms)
    return QuarantinedFile("", -1, path.name, str(target), reason)
