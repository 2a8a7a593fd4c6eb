"""Small durable-file helpers: atomic replace, directory fsync, Kafka's properties and checkpoint formats.

Metadata files (``meta.properties``, ``topics.json``, ``recovery-point-offset-checkpoint``) must never be seen
half written after a crash, so they are written to a temporary file, fsynced, renamed over the old one, and the
directory is fsynced so the rename itself survives a power loss.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "atomic_write",
    "fsync_dir",
    "is_empty_file",
    "pread_fully",
    "read_offset_checkpoint",
    "read_properties",
    "write_offset_checkpoint",
    "write_properties",
]

_TMP_SUFFIX = ".tmp"


def pread_fully(fd: int, length: int, position: int) -> bytes:
    """``length`` bytes from ``position`` (fewer only at the end of the file): one pread may return less."""
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


def is_empty_file(path: Path) -> bool:
    """``path`` exists and holds nothing."""
    try:
        return path.stat().st_size == 0
    except FileNotFoundError:
        return False


def fsync_dir(path: Path) -> None:
    """Make entries created, renamed or removed in ``path`` durable (file fsync does not cover its name)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` so that readers after any crash see either the old or the new content.

    ``durable=False`` skips both fsyncs, for a file whose content can be derived again from what is on disk: after a
    power loss it may then be missing or empty (the rename survived, the data did not), which its reader must take
    as "not written" (never half of the old and the new, as the rename stays atomic)."""
    tmp = path.with_name(path.name + _TMP_SUFFIX)
    with open(tmp, "wb") as f:
        f.write(data)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)
    if durable:
        fsync_dir(path.parent)


def read_properties(path: Path) -> dict[str, str]:
    """Parse the ``key=value`` subset of Java properties that Kafka writes (comments start with ``#`` or ``!``)."""
    out: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def write_properties(path: Path, values: Mapping[str, str], comment: str) -> None:
    body = "".join(f"{key}={value}\n" for key, value in values.items())
    atomic_write(path, f"#{comment}\n{body}".encode())


def read_offset_checkpoint(path: Path) -> dict[tuple[str, int], int]:
    """Kafka's ``OffsetCheckpointFile``: a version line (0), a count line, then ``topic partition offset`` lines.

    A file that does not parse is treated as absent: the checkpoint only lets recovery skip work, so losing it
    costs a longer scan, never data.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return {}
    try:
        if lines[0].strip() != "0":
            return {}
        count = int(lines[1])
        out: dict[tuple[str, int], int] = {}
        for line in lines[2 : 2 + count]:
            topic, partition, offset = line.split()
            out[(topic, int(partition))] = int(offset)
        if len(out) != count:
            return {}
        return out
    except (IndexError, ValueError):
        return {}


def write_offset_checkpoint(path: Path, offsets: Mapping[tuple[str, int], int]) -> None:
    lines = ["0", str(len(offsets))]
    lines += [f"{topic} {partition} {offset}" for (topic, partition), offset in sorted(offsets.items())]
    atomic_write(path, ("\n".join(lines) + "\n").encode())
