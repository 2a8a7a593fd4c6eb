"""One byte range of a segment file, decoded into columns with bounded memory.

Shared by the Spark data source (:mod:`pipeline.source`, which turns the columns into Arrow batches) and the
pure-Python ``describe`` engine (:mod:`pipeline.describe_python`), so both read exactly the same rows, skipped
ranges included, from the same bytes. No pyspark here.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from typing import Any

from pipeline.decode import decode_offsets_range, iter_topic_batches, topic_batch_columns
from pipeline.framing import SkipKind
from pipeline.layout import split_points

__all__ = ["READ_CHUNK", "offsets_columns", "topic_columns"]

#: ``__consumer_offsets`` ranges are decoded this many bytes (cut at batch boundaries) at a time.
READ_CHUNK = 4 * 1024 * 1024


def offsets_columns(
    path: str, log_partition: int, segment_base: int, start: int, end: int, tail: SkipKind
) -> Iterator[dict[str, Any]]:
    """The raw ``__consumer_offsets`` rows of ``[start, end)``, one non-empty column dict per chunk read.

    ``tail`` is what an incomplete batch at ``end`` counts as (:func:`pipeline.framing.tail_kind`).
    """
    points = split_points(path, READ_CHUNK, start, end) if end - start > READ_CHUNK else [start, end]
    with open(path, "rb") as f:
        for lo, hi in pairwise(points):
            f.seek(lo)
            cols = decode_offsets_range(
                f.read(hi - lo),
                log_partition,
                segment_base,
                position=lo,
                tail=tail if hi == end else SkipKind.FRAMING,
                expected=segment_base if lo == 0 else None,
            )
            if cols["record_type"]:
                yield cols


def topic_columns(
    topic: str, partition: int, segment_base: int, path: str, start: int, end: int, tail: SkipKind
) -> dict[str, Any]:
    """The batch headers of ``[start, end)`` of a topic segment as columns (bodies are CRC-checked, never
    decoded), with a row per skipped range."""
    return topic_batch_columns(topic, partition, segment_base, iter_topic_batches(path, start, end, tail))
