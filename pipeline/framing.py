"""Where the batches of a segment are, across damage: the one walk every pipeline reader and planner uses.

A segment is a run of record batches, each framed by its 12-byte ``baseOffset, batchLength`` prefix. Damage breaks
that chain in ways that must not be confused with each other or with the end of the data:

* a batch whose framing is intact but whose CRC32C fails (a flipped bit): skipped, and nothing inside it (offsets,
  timestamps, record count) is believed;
* bytes where a batch should start that are not one: a batch header (magic 2) with an impossible length or one
  that does not lead to the next valid batch (``framing``), or no batch header at all (``garbage``). The walk goes
  on at the next position where a whole batch validates (:func:`storage.resync.next_valid_batch`, shared with the
  broker's recovery), never by dropping the rest of the file;
* an incomplete batch at the very end of the range with nothing valid after it: at the end of a partition's newest
  (active) segment a torn tail, which a broker caught mid-append leaves; at the end of an older segment a
  truncation, which is corruption.

Every skipped range is yielded as :class:`Skipped` with its kind, so the readers can report it instead of hiding
it. ``verify=False`` checks framing only (length and magic, no CRC, the bodies unread) for planning cut points;
readers verify every batch.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from enum import StrEnum

from protocol.errors import DecodeError
from protocol.records import BATCH_HEADER_SIZE, LOG_OVERHEAD, MAGIC, BatchHeader, peek_batch_header, verify_batch_crc
from storage.resync import Read, next_valid_batch

__all__ = ["CORRUPTION", "Batch", "Cut", "SkipKind", "Skipped", "first_batch_at", "tail_kind", "walk"]

_MAGIC_AT = 16


class SkipKind(StrEnum):
    """Why a byte range was skipped."""

    CRC = "crc"  #: a whole batch whose CRC32C does not match
    FRAMING = "framing"  #: a batch header whose length is impossible or does not lead to the next valid batch
    GARBAGE = "garbage"  #: bytes where a batch should start that are not a batch header (magic is not 2)
    RECORDS = "records"  #: a batch whose CRC matches but whose records cannot be decoded
    TRUNCATED = "truncated"  #: an incomplete last batch of a segment that is not its partition's newest
    TORN_TAIL = "torn-tail"  #: an incomplete last batch of the active segment (a broker caught mid-append)


#: The kinds that are damage to the bytes; a torn tail may be a write still in progress.
CORRUPTION = frozenset(SkipKind) - {SkipKind.TORN_TAIL}


@dataclass(frozen=True, slots=True)
class Batch:
    """A batch that validated (framing, and the CRC when verifying) at ``position``."""

    position: int
    header: BatchHeader


@dataclass(frozen=True, slots=True)
class Skipped:
    """Bytes ``[start, end)`` that hold no usable batch.

    ``offsets_from``/``offsets_to`` bound the offsets the range may have held, from the valid batches around it
    (None where the walk did not see one); ``batches``/``records`` are known only where trustworthy (a batch
    whose CRC matched but whose records did not decode).
    """

    start: int
    end: int
    kind: SkipKind
    detail: str
    batches: int | None = None
    records: int | None = None
    offsets_from: int | None = None
    offsets_to: int | None = None


def tail_kind(*, at_file_end: bool, active: bool) -> SkipKind:
    """What an incomplete batch at the end of a walked range is: a torn tail or truncation at the end of the file
    (of the newest segment, or of an older one), else (a cut point) broken framing."""
    if not at_file_end:
        return SkipKind.FRAMING
    return SkipKind.TORN_TAIL if active else SkipKind.TRUNCATED


@dataclass(frozen=True, slots=True)
class _Problem:
    kind: SkipKind
    detail: str
    incomplete: bool = False
    header: BatchHeader | None = None


def walk(
    read: Read,
    start: int,
    end: int,
    *,
    tail: SkipKind,
    verify: bool = True,
    expected: int | None = None,
    then: int | None = None,
) -> Iterator[Batch | Skipped]:
    """Each batch starting in ``[start, end)`` and each skipped range, in file order; together they cover it.

    No batch may run past ``end``; ``tail`` is what an incomplete batch there with nothing valid after it counts
    as (:func:`tail_kind`). ``expected`` is the first offset the next batch may hold, if known (a resync only
    accepts batches from there on, as storage recovery does); ``then`` is the base offset of the valid batch known
    to start at ``end`` (a cut resolved by :func:`first_batch_at`), which bounds a skipped range ending there.
    """
    pos = start
    pending: Skipped | None = None  # held until the batch after it tells where its offsets end
    while pos < end:
        checked = _check(read, pos, end, verify)
        if isinstance(checked, BatchHeader):
            if pending is not None:
                yield pending if pending.offsets_to is not None else replace(pending, offsets_to=checked.base_offset)
                pending = None
            yield Batch(pos, checked)
            expected = checked.next_offset
            pos += checked.size
            continue
        if pending is not None:
            yield pending
        pending = _skip(read, pos, end, checked, tail, expected)
        pos = pending.end
    if pending is not None:
        yield pending if pending.offsets_to is not None else replace(pending, offsets_to=then)


@dataclass(frozen=True, slots=True)
class Cut:
    """A cut point resolved to a batch start: its position, and the base offset of the batch there if known."""

    position: int
    base_offset: int | None = None


def first_batch_at(read: Read, position: int, limit: int) -> Cut:
    """Where the batches owned by a byte range cut at ``position`` begin: ``position`` itself at 0 or ``limit``,
    else the first position at or after it where a whole batch validates (``limit`` if none does).

    Readers plan ranges from file sizes alone and each task resolves its own cut points here, so the driver never
    reads a header. A range ``[lo, hi)`` owns what :func:`walk` finds between ``first_batch_at(lo)`` and
    ``first_batch_at(hi)``; the task before computes the same point from the same bytes, so ranges cut anywhere
    tile the file and every batch and every skipped range belongs to exactly one of them.
    """
    if position <= 0 or position >= limit:
        return Cut(max(0, min(position, limit)))
    found = next_valid_batch(read, position, limit)
    return Cut(limit) if found is None else Cut(found[0], found[1].base_offset)


def _check(read: Read, pos: int, end: int, verify: bool) -> BatchHeader | _Problem:
    head = read(pos, min(BATCH_HEADER_SIZE, end - pos))
    if len(head) > _MAGIC_AT and head[_MAGIC_AT] != MAGIC:
        return _Problem(SkipKind.GARBAGE, f"no batch header at byte {pos} (magic {head[_MAGIC_AT]})")
    if len(head) < BATCH_HEADER_SIZE:
        return _Problem(SkipKind.FRAMING, f"incomplete batch header at byte {pos}", incomplete=True)
    try:
        header = peek_batch_header(head)
    except DecodeError as exc:
        return _Problem(SkipKind.FRAMING, f"bad batch header at byte {pos}: {exc}")
    if pos + header.size > end:
        detail = f"batch at byte {pos} declares {header.size} bytes, {end - pos} present"
        return _Problem(SkipKind.FRAMING, detail, incomplete=True)
    if verify:
        try:
            verify_batch_crc(read(pos, header.size), 0, header)
        except DecodeError as exc:
            return _Problem(SkipKind.CRC, f"batch at byte {pos}: {exc}", header=header)
    return header


def _skip(read: Read, pos: int, end: int, problem: _Problem, tail: SkipKind, expected: int | None) -> Skipped:
    if problem.header is not None and _framed_next(read, pos + problem.header.size, end):
        # The CRC failed but the length leads to the next batch header: one damaged batch, nothing else.
        return Skipped(pos, pos + problem.header.size, SkipKind.CRC, problem.detail, 1, None, expected, None)
    found = next_valid_batch(read, pos + 1, end, lambda _, header: expected is None or header.base_offset >= expected)
    if found is None:
        kind = tail if problem.incomplete else problem.kind
        if kind is SkipKind.CRC:
            kind = SkipKind.FRAMING  # its length led to neither the end nor a batch
        return Skipped(pos, end, kind, problem.detail, None, None, expected, None)
    kind = SkipKind.FRAMING if problem.kind is SkipKind.CRC or problem.incomplete else problem.kind
    return Skipped(pos, found[0], kind, problem.detail, None, None, expected, found[1].base_offset)


def _framed_next(read: Read, pos: int, end: int) -> bool:
    """Whether ``pos`` is the end of the range, too close to it to tell, or plausibly a batch start (magic 2)."""
    head = read(pos, min(LOG_OVERHEAD + 5, end - pos)) if pos < end else b""
    return len(head) <= _MAGIC_AT or head[_MAGIC_AT] == MAGIC
