"""A clean log and the byte edits that damage it, one per kind of damage the pipeline must survive.

The clean log: one ``__consumer_offsets`` partition shared by three groups that commit in turn (``a`` on t-0,
``victim`` and ``b`` on t-1), five rounds 1 s apart, then a last commit of group ``late``. Every edit hits the
batch of ``victim``'s third commit (or a topic batch), in the middle of the segment, so a reader that stopped at the
damage would lose everything after it: the last commits of every group. Positions are worked out from the clean
bytes here, never by the code under test.
"""

from __future__ import annotations

import shutil
import struct
from dataclasses import dataclass
from pathlib import Path

from pipeline.synth import Member, SyntheticLog
from protocol import checksum as crc32c
from protocol.records import BatchHeader, iter_batch_headers

OFFSETS_SEGMENT = "__consumer_offsets-0/00000000000000000000.log"
TOPIC_SEGMENT = "t-1/00000000000000000000.log"
#: Far in the future (2200-01-01): what a damaged timestamp must never turn into the run's latest time.
YEAR_2200_MS = 7_258_118_400_000
_MAX_TIMESTAMP_AT = (
    35  # baseOffset 8, batchLength 4, epoch 4, magic 1, crc 4, attributes 2, lastOffsetDelta 4, baseTs 8
)
_LENGTH_AT = 8
_CRC_AT = 17
_ATTRIBUTES_AT = 21


@dataclass(frozen=True)
class CleanLog:
    data_dir: Path
    #: Offset in ``__consumer_offsets`` of victim's third commit (the batch every edit damages).
    victim_offset: int
    #: Offset of ``late``'s commit, the last batch of the segment (the one truncation tears).
    late_offset: int


def build_clean(data_dir: Path) -> CleanLog:
    victim = 0
    with SyntheticLog(data_dir, offsets_partitions=1) as log:
        log.create_topic("t", 2)
        log.generation("a", 1, [Member("ma", assignment={"t": [0]})], 500)
        for i in range(1, 6):
            ts = i * 1000
            log.produce("t", 0, 10, ts)
            log.produce("t", 1, 10, ts)
            log.commit("a", "t", 0, i * 10, ts + 1)
            offset = log.commit("victim", "t", 1, i * 10, ts + 2)
            victim = offset if i == 3 else victim
            log.commit("b", "t", 1, i * 10 - 5, ts + 3)
        late = log.commit("late", "t", 0, 7, 6000)
    return CleanLog(data_dir, victim, late)


def copy_log(clean: CleanLog, to: Path) -> Path:
    shutil.copytree(clean.data_dir, to)
    return to


def batches(segment: Path) -> list[tuple[int, BatchHeader]]:
    """``(position, header)`` of every batch of a clean segment."""
    return list(iter_batch_headers(segment.read_bytes()))


def batch_at_offset(segment: Path, offset: int) -> tuple[int, BatchHeader]:
    return next((pos, h) for pos, h in batches(segment) if h.base_offset <= offset <= h.last_offset)


def edit(segment: Path, position: int, new: bytes, *, insert: bool = False) -> None:
    """Overwrite (or insert) ``new`` at ``position`` of the file."""
    data = bytearray(segment.read_bytes())
    data[position : position + (0 if insert else len(new))] = new
    segment.write_bytes(bytes(data))


def flip_byte(segment: Path, position: int) -> None:
    edit(segment, position, bytes([segment.read_bytes()[position] ^ 0xFF]))


def set_length(segment: Path, position: int, length: int) -> None:
    edit(segment, position + _LENGTH_AT, struct.pack(">i", length))


def set_max_timestamp(segment: Path, position: int, ts_ms: int) -> None:
    """Stamp a batch in the future without recomputing its CRC (what a bit rot in the header does)."""
    edit(segment, position + _MAX_TIMESTAMP_AT, struct.pack(">q", ts_ms))


def set_attributes_keeping_crc(segment: Path, position: int, header: BatchHeader, attributes: int) -> None:
    """Change a batch's attributes and recompute its CRC32C: the batch validates, its records no longer decode."""
    data = bytearray(segment.read_bytes())
    data[position + _ATTRIBUTES_AT : position + _ATTRIBUTES_AT + 2] = struct.pack(">h", attributes)
    crc = crc32c.crc32c(bytes(data[position + _ATTRIBUTES_AT : position + header.size]))
    data[position + _CRC_AT : position + _CRC_AT + 4] = struct.pack(">I", crc)
    segment.write_bytes(bytes(data))


def truncate(segment: Path, size: int) -> None:
    with open(segment, "r+b") as f:
        f.truncate(size)
