"""``kafkalog``: a PySpark Python Data Source over a broker log directory (batch and streaming).

Options: ``path`` (the log directory), ``kind`` (``offsets`` for ``__consumer_offsets`` records, ``topics`` for
the batch headers of every other partition), ``splitBytes`` (cut big segments into byte ranges of about this
size, default 16 MiB) and ``minPartitions`` (cut further so every core gets work).

Batch reads plan byte ranges from file sizes alone (the driver reads no header, however big the log) and pack
them into input partitions. Each task resolves its own cut points to batch starts, resyncing across damage
(:func:`pipeline.framing.first_batch_at`), and reads the batches that begin in its share, so every batch and every
skipped range is read by exactly one task, the torn tail of an active segment included; it yields Arrow batches
of bounded size (:mod:`pipeline.scan`). The streaming
reader's offset is ``{segment: bytes}``, the
end of the last complete batch read from each file, so a run picks up exactly what was appended since the last
checkpoint and never half a batch the broker is still writing. Decoding is :mod:`pipeline.decode` (the project's
codecs); rows leave as Arrow batches.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit
from pyspark.sql.types import StructType

from pipeline.framing import SkipKind, tail_kind
from pipeline.layout import SegmentFile, active_paths, fixed_cuts, latest_ends, list_segments
from pipeline.scan import offsets_columns, topic_columns
from pipeline.schemas import OFFSETS_ARROW, OFFSETS_SPARK, TOPIC_BATCHES_ARROW, TOPIC_BATCHES_SPARK

__all__ = ["KafkaLogDataSource", "SegmentRange"]

DEFAULT_SPLIT_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class SegmentRange:
    """``[start, end)`` of one segment file: batch boundaries, or byte cuts when ``limit`` is set."""

    topic: str
    partition: int
    segment_base: int
    path: str
    start: int
    end: int
    #: What an incomplete batch at the end of the file (or of an exact range) counts as
    #: (:func:`pipeline.framing.tail_kind`).
    tail: SkipKind = SkipKind.FRAMING
    #: The file's size when planned, if ``start`` and ``end`` are cuts the task resolves (:mod:`pipeline.scan`).
    limit: int | None = None


class RangesPartition(InputPartition):
    """Several small ranges read by one task (many tiny segments would otherwise cost one task each)."""

    def __init__(self, ranges: Sequence[SegmentRange]) -> None:
        super().__init__(list(ranges))
        self.ranges = list(ranges)


def _pack(ranges: Sequence[SegmentRange], target: int) -> list[RangesPartition]:
    parts: list[RangesPartition] = []
    current: list[SegmentRange] = []
    size = 0
    for r in ranges:
        if current and size + (r.end - r.start) > target:
            parts.append(RangesPartition(current))
            current, size = [], 0
        current.append(r)
        size += r.end - r.start
    if current:
        parts.append(RangesPartition(current))
    return parts


def _read_range(r: SegmentRange, kind: str) -> Iterator[pa.RecordBatch]:
    if kind == "topics":
        for cols in topic_columns(r.topic, r.partition, r.segment_base, r.path, r.start, r.end, r.tail, r.limit):
            yield pa.RecordBatch.from_pydict(cols, schema=TOPIC_BATCHES_ARROW)
        return
    for cols in offsets_columns(r.path, r.partition, r.segment_base, r.start, r.end, r.tail, r.limit):
        yield pa.RecordBatch.from_pydict(cols, schema=OFFSETS_ARROW)


class KafkaLogReader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        self.root = options["path"]
        self.kind = options.get("kind", "offsets")
        self.split_bytes = int(options.get("splitbytes", DEFAULT_SPLIT_BYTES))
        self.min_partitions = int(options.get("minpartitions", 1))

    def partitions(self) -> Sequence[InputPartition]:
        segments = list_segments(self.root, self.kind)
        total = sum(s.size for s in segments)
        target = max(64 * 1024, min(self.split_bytes, total // max(1, self.min_partitions) + 1))
        active = active_paths(segments)
        ranges: list[SegmentRange] = []
        for s in segments:
            last = tail_kind(at_file_end=True, active=s.path in active)
            ranges.extend(_range(s, lo, hi, last) for lo, hi in pairwise(fixed_cuts(0, s.size, target)))
        parts = _pack(ranges, target)
        return parts or [RangesPartition([])]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, RangesPartition)
        for r in partition.ranges:
            yield from _read_range(r, self.kind)


def _range(s: SegmentFile, lo: int, hi: int, tail: SkipKind) -> SegmentRange:
    return SegmentRange(s.topic, s.partition, s.base_offset, s.path, lo, hi, tail, limit=s.size)


class KafkaLogStreamReader(DataSourceStreamReader):
    """Offsets are ``{"files": {relative path: end of last complete batch}}``; a file never seen starts at 0."""

    def __init__(self, options: dict[str, str]) -> None:
        self.root = options["path"]
        self.kind = options.get("kind", "offsets")

    def initialOffset(self) -> dict[str, Any]:
        return {"files": {}}

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        """Every segment's end of complete batches, found by hopping batch headers from where ``start`` stood.

        Only the default ``ReadAllAvailable`` limit is offered (no ``getDefaultReadLimit``), so ``limit`` never
        asks for less than everything.
        """
        return {"files": latest_ends(self.root, self.kind, start.get("files", {}))}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        before: dict[str, int] = start.get("files", {})
        ranges: list[SegmentRange] = []
        for rel, stop in sorted(end.get("files", {}).items()):
            lo = before.get(rel, 0)
            if stop <= lo:
                continue
            directory, name = os.path.split(rel)
            topic, _, partition = directory.rpartition("-")
            path = os.path.join(self.root, rel)
            ranges.append(SegmentRange(topic, int(partition), int(name[:20]), path, lo, stop))
        return _pack(ranges, DEFAULT_SPLIT_BYTES)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, RangesPartition)
        for r in partition.ranges:
            yield from _read_range(r, self.kind)

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to release: the files are the broker's and are only read."""


class KafkaLogDataSource(DataSource):
    """``spark.read.format("kafkalog").option("kind", "offsets").load(data_dir)``."""

    @classmethod
    def name(cls) -> str:
        return "kafkalog"

    def _options(self) -> dict[str, str]:
        options = {key.lower(): value for key, value in self.options.items()}
        if "path" not in options:
            raise ValueError("kafkalog needs a path: the broker's log directory")
        return options

    def schema(self) -> StructType:
        return TOPIC_BATCHES_SPARK if self.options.get("kind") == "topics" else OFFSETS_SPARK

    def reader(self, schema: StructType) -> DataSourceReader:
        return KafkaLogReader(self._options())

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return KafkaLogStreamReader(self._options())
