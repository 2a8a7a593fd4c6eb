"""The two per-partition checkpoint files that hold state no segment can give back: the log start offset a
DeleteRecords moved (``log-start-offset``) and the leader epoch cache (``leader-epoch-checkpoint``).

Both use Kafka's checkpoint text format (``CheckpointFile``): a version line (``0``), a count line, then one line
per entry of space-separated fields. Unlike the recovery-point checkpoint (which only lets recovery skip work, so a
bad one is read as absent), these hold facts: a file that does not parse is damage, which the partition log moves
to the quarantine folder and reports (Decision 9, :mod:`storage.damage`) before it falls back on what the
segments say. Writes are atomic (:func:`storage.files.atomic_write`: temporary file, fsync, rename, directory
fsync), so a crash leaves the old or the new content, never a mix.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from storage.files import atomic_write

__all__ = [
    "LEADER_EPOCH_CHECKPOINT",
    "LOG_START_OFFSET_CHECKPOINT",
    "CheckpointError",
    "parse_int",
    "read_checkpoint",
    "read_log_start",
    "write_checkpoint",
    "write_log_start",
]

#: Kafka's name, in the partition directory as Kafka keeps it.
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
#: Kafka keeps one ``log-start-offset-checkpoint`` per log directory and writes it every minute; ours is one file
#: per partition directory, written before a DeleteRecords is answered, so it goes wherever the partition goes.
LOG_START_OFFSET_CHECKPOINT = "log-start-offset"
_VERSION = "0"


class CheckpointError(ValueError):
    """A checkpoint file whose content does not parse (the message says where)."""


def read_checkpoint(path: Path, fields: int) -> list[tuple[str, ...]] | None:
    """The entries of a checkpoint file, each ``fields`` strings; None when there is no file. Raises
    CheckpointError for a wrong version, a count that does not match the lines, or a line of another shape."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        lines = data.decode("ascii").split("\n")
    except UnicodeDecodeError:
        raise CheckpointError("not ASCII text") from None
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) < 2 or lines[0] != _VERSION:
        raise CheckpointError(f"expected version line {_VERSION!r}, got {lines[0] if lines else ''!r}")
    if not lines[1].isdigit():
        raise CheckpointError(f"bad entry count {lines[1]!r}")
    count = int(lines[1])
    if count != len(lines) - 2:
        raise CheckpointError(f"entry count {count} but {len(lines) - 2} entry lines")
    entries = [tuple(line.split(" ")) for line in lines[2:]]
    for number, entry in enumerate(entries, start=3):
        if len(entry) != fields or not all(entry):
            raise CheckpointError(f"line {number}: expected {fields} fields, got {' '.join(entry)!r}")
    return entries


def write_checkpoint(path: Path, entries: Sequence[Sequence[object]], *, durable: bool = True) -> None:
    """Replace ``path`` atomically with ``entries`` in the checkpoint format (``durable``: see ``atomic_write``)."""
    lines = [_VERSION, str(len(entries)), *(" ".join(str(field) for field in entry) for entry in entries)]
    atomic_write(path, ("\n".join(lines) + "\n").encode("ascii"), durable=durable)


def parse_int(value: str, what: str) -> int:
    """An integer field of an entry; CheckpointError naming ``what`` otherwise."""
    try:
        return int(value)
    except ValueError:
        raise CheckpointError(f"bad {what} {value!r}") from None


def read_log_start(path: Path, topic: str, partition: int) -> int | None:
    """The log start offset ``path`` holds for ``topic``-``partition``; None without a file. CheckpointError when
    it does not parse or names another partition (a file copied or moved from elsewhere)."""
    lines = read_checkpoint(path, 3)
    if lines is None:
        return None
    if len(lines) != 1 or lines[0][:2] != (topic, str(partition)):
        raise CheckpointError(f"expected one entry for {topic}-{partition}, got {lines}")
    return parse_int(lines[0][2], "log start offset")


def write_log_start(path: Path, topic: str, partition: int, offset: int) -> None:
    """Replace ``path`` atomically with ``topic``-``partition``'s log start offset (the one-entry form of Kafka's
    offset checkpoint: ``topic partition offset``)."""
    write_checkpoint(path, [(topic, partition, offset)])
