"""What the log's damage was, in words a person can act on, and ``--strict``'s verdict on it.

Two things make an analysis rest on less than the log should hold, and both are reported, never hidden:

* **skipped ranges** (:mod:`pipeline.framing`): bytes of a segment that held no usable batch, either corruption
  (a CRC failure, broken framing, garbage, records that do not decode, a truncated older segment) or a torn tail
  (an incomplete last batch of the active segment, which a broker caught mid-append also leaves);
* **truncated topic partitions**: a committed offset above the partition's log end. ``kafka-consumer-groups``
  prints the negative lag as it is (``LAG = LOG-END-OFFSET - CURRENT-OFFSET``, not clamped, checked in Kafka's
  ``ConsumerGroupCommand.getLag``), and so does ``describe``, so that it stays the broker's answer; every
  aggregate (Burrow's status, total lag, the plots) uses Burrow's ``max(0, lag)``, and the partition is named.

Gaps that are not damage (offsets removed by compaction or retention, a log that starts above 0) are caveats of
:mod:`pipeline.inputs`, told apart from these. Nothing here imports pyspark.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from pipeline.framing import CORRUPTION, SkipKind
from pipeline.preflight import PipelineError
from storage.segment import LOG_SUFFIX, segment_name

__all__ = [
    "DamageFoundError",
    "SkippedRange",
    "TruncatedPartition",
    "check_strict",
    "merge_adjacent",
    "skipped_from_rows",
    "skipped_range",
    "truncated_from_rows",
]

CORRUPTION_LABEL = "corruption"
TORN_TAIL_LABEL = "torn tail"


@dataclass(frozen=True)
class SkippedRange:
    """A skipped byte range of one segment file (``segment``: its path inside the log directory)."""

    segment: str
    start: int
    end: int
    kind: str
    category: str
    batches: int | None
    records: int | None
    offsets_from: int | None
    offsets_to: int | None
    detail: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        """One line: where, how much, what kind, what it held if known, and why."""
        held = [f"{self.batches} batch{'es' if self.batches != 1 else ''}"] if self.batches is not None else []
        if self.records is not None:
            held.append(f"{self.records} records")
        if self.offsets_from is not None and self.offsets_to is not None:
            held.append(f"offsets {self.offsets_from}-{self.offsets_to - 1}")
        what = ", ".join(held) if held else "batches and records unknown"
        return (
            f"{self.segment} bytes {self.start}-{self.end} ({self.end - self.start:,} bytes): "
            f"{self.category} ({self.kind}); {what}; {self.detail}"
        )


def skipped_range(topic: str, partition: int, segment_base: int, row: Mapping[str, Any]) -> SkippedRange:
    """A skipped range from a row of the raw tables (its ``skip_*`` columns, :data:`pipeline.decode.SKIP_COLUMNS`)."""
    kind = SkipKind(row["skip_kind"])
    return SkippedRange(
        segment=f"{topic}-{partition}/{segment_name(segment_base)}{LOG_SUFFIX}",
        start=int(row["skip_start"]),
        end=int(row["skip_end"]),
        kind=kind.value,
        category=CORRUPTION_LABEL if kind in CORRUPTION else TORN_TAIL_LABEL,
        batches=row["skip_batches"],
        records=row["skip_records"],
        offsets_from=row["skip_offsets_from"],
        offsets_to=row["skip_offsets_to"],
        detail=row["skip_detail"] or "",
    )


def skipped_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[SkippedRange]:
    """Skipped ranges from rows with ``topic, partition, segment_base`` and the ``skip_*`` columns, merged."""
    return merge_adjacent(skipped_range(r["topic"], r["partition"], r["segment_base"], r) for r in rows)


def merge_adjacent(ranges: Iterable[SkippedRange]) -> list[SkippedRange]:
    """Sorted by segment and position; ranges of one kind that touch (a damaged range cut by a read boundary,
    resumed by the next reader) become one."""
    merged: list[SkippedRange] = []
    for r in sorted(ranges, key=lambda r: (r.segment, r.start)):
        last = merged[-1] if merged else None
        if last is not None and last.segment == r.segment and last.end == r.start and last.kind == r.kind:
            merged[-1] = replace(
                last,
                end=r.end,
                batches=None if last.batches is None or r.batches is None else last.batches + r.batches,
                records=None if last.records is None or r.records is None else last.records + r.records,
                offsets_to=r.offsets_to,
            )
        else:
            merged.append(r)
    return merged


@dataclass(frozen=True)
class TruncatedPartition:
    """A committed offset above its topic partition's log end at the as-of time."""

    group: str
    topic: str
    partition: int
    committed_offset: int
    log_end_offset: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        lag = self.log_end_offset - self.committed_offset
        return (
            f"{self.topic}-{self.partition}: log end {self.log_end_offset} is below group {self.group}'s committed "
            f"offset {self.committed_offset}: the partition was truncated (or its newest segments are missing). "
            f"describe prints LAG {lag} as kafka-consumer-groups would; status, total lag and the plots count it "
            "as 0 (Burrow's max(0, lag)); the consumer will be reset by its auto.offset.reset when it fetches"
        )


def truncated_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[TruncatedPartition]:
    """The truncated partitions among ``describe`` rows: a committed offset above the log end (negative lag)."""
    found = {
        TruncatedPartition(r["group"], r["topic"], r["partition"], r["current_offset"], r["log_end_offset"])
        for r in rows
        if r["lag"] is not None and r["lag"] < 0
    }
    return sorted(found, key=lambda p: (p.topic, p.partition, p.group))


class DamageFoundError(PipelineError):
    """``--strict``: the log was damaged (exit status 3, after every output was written)."""

    exit_code = 3


def check_strict(skipped: list[SkippedRange], truncated: list[TruncatedPartition]) -> None:
    """Raise :class:`DamageFoundError` (one sentence) if anything was skipped or a partition is truncated."""
    if not skipped and not truncated:
        return
    corrupt = sum(1 for r in skipped if r.category == CORRUPTION_LABEL)
    parts = [
        f"{corrupt} corrupt range{'s' if corrupt != 1 else ''}",
        f"{len(skipped) - corrupt} torn tail{'s' if len(skipped) - corrupt != 1 else ''}",
        f"{len(truncated)} truncated partition{'s' if len(truncated) != 1 else ''}",
    ]
    first = skipped[0].text() if skipped else truncated[0].text()
    raise DamageFoundError(f"--strict: the log is damaged ({', '.join(parts)}); first: {first}")
