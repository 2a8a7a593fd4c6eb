"""One byte range of a segment file, decoded into columns with bounded memory.

Shared by the Spark data source (:mod:`pipeline.source`, which turns the columns into Arrow batches) and the
pure-Python ``describe`` engine (:mod:`pipeline.describe_python`), so both read exactly the same rows, skipped
ranges included, from the same bytes. No pyspark here.

A range is either *exact* (``limit`` None: ``start`` and ``end`` are batch boundaries already, as the streaming
offsets and whole files are) or *cut* (``limit`` is the file's size: ``start`` and ``end`` are byte positions the
planner chose from file sizes alone, resolved here to the batches the range owns with
:func:`pipeline.framing.first_batch_at`). Either way a range is read a bounded chunk at a time: at most
:data:`READ_CHUNK` bytes (plus one batch) of ``__consumer_offsets`` and :data:`TOPIC_ROWS` topic batch headers.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice, pairwise
from typing import Any

from pipeline.decode import decode_offsets_range, topic_batch_columns
from pipeline.framing import Cut, SkipKind, first_batch_at, walk
from pipeline.layout import file_reader, fixed_cuts
from storage.resync import Read

__all__ = ["READ_CHUNK", "TOPIC_ROWS", "batch_spans", "offsets_columns", "topic_columns"]

#: ``__consumer_offsets`` ranges are decoded this many bytes (cut at batch boundaries) at a time.
READ_CHUNK = 4 * 1024 * 1024
#: Topic ranges leave this many batch headers (rows) at a time.
TOPIC_ROWS = 65_536


def batch_spans(read: Read, start: int, end: int, *, limit: int | None, step: int) -> list[tuple[int, Cut]]:
    """The range ``[start, end)`` as consecutive non-empty spans of about ``step`` bytes, each from a batch start
    (or the file's start) to the next span's start (with that batch's base offset when a cut found it); ``limit``
    as in the module docstring."""
    cuts = fixed_cuts(start, end, step)
    if limit is None:
        points = [Cut(start), *(first_batch_at(read, cut, end) for cut in cuts[1:-1]), Cut(end)]
    else:
        points = [first_batch_at(read, cut, limit) for cut in cuts]
    return [(lo.position, hi) for lo, hi in pairwise(points) if hi.position > lo.position]


def offsets_columns(
    path: str, log_partition: int, segment_base: int, start: int, end: int, tail: SkipKind, limit: int | None = None
) -> Iterator[dict[str, Any]]:
    """The raw ``__consumer_offsets`` rows of ``[start, end)``, one non-empty column dict per chunk read.

    ``tail`` is what an incomplete batch at the end of the file (or of an exact range) counts as
    (:func:`pipeline.framing.tail_kind`).
    """
    stop = end if limit is None else limit
    with open(path, "rb") as f:
        read = file_reader(f)
        for lo, hi in batch_spans(read, start, end, limit=limit, step=READ_CHUNK):
            cols = decode_offsets_range(
                read(lo, hi.position - lo),
                log_partition,
                segment_base,
                position=lo,
                tail=tail if hi.position == stop else SkipKind.FRAMING,
                expected=segment_base if lo == 0 else None,
                then=hi.base_offset,
            )
            if cols["record_type"]:
                yield cols


def topic_columns(
    topic: str,
    partition: int,
    segment_base: int,
    path: str,
    start: int,
    end: int,
    tail: SkipKind,
    limit: int | None = None,
) -> Iterator[dict[str, Any]]:
    """The batch headers of ``[start, end)`` of a topic segment as columns of at most :data:`TOPIC_ROWS` rows,
    with a row per skipped range.

    Lag needs offsets and timestamps only, so records are never decompressed or parsed; the CRC32C is checked over
    the stored bytes, so no field of a damaged batch (its timestamps least of all) reaches the tables.
    """
    stop = end if limit is None else limit
    with open(path, "rb") as f:
        read = file_reader(f)
        for lo, hi in batch_spans(read, start, end, limit=limit, step=max(1, end - start)):
            items = walk(
                read, lo, hi.position, tail=tail if hi.position == stop else SkipKind.FRAMING, then=hi.base_offset
            )
            while chunk := list(islice(items, TOPIC_ROWS)):
                yield topic_batch_columns(topic, partition, segment_base, iter(chunk))
