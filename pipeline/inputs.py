"""What was scanned, and what the log cannot tell: the facts the report opens with.

Damage comes first: every skipped byte range (:mod:`pipeline.damage`), corruption or torn tail, by segment file and
position. History can also be missing for reasons that are not damage, and the reader must know those apart.
``__consumer_offsets`` is a compacted topic: once the cleaner runs, older commits of a key are gone, which shows as
offsets missing between a partition's first and last record (or a first record far above 0); offsets that lay in
a damaged range are counted there, never blamed on compaction. Topic partitions lose old segments to retention,
which shows as a log-start offset above 0: LEO history before it is unknown.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipeline.damage import SkippedRange, skipped_from_rows
from pipeline.decode import SKIPPED
from pipeline.layout import OFFSETS_TOPIC, list_segments

__all__ = ["InputSummary", "offsets_gap_caveats", "summarize"]


@dataclass
class InputSummary:
    data_dir: str
    as_of_ms: int = 0
    latest_ms: int = 0
    earliest_ms: int | None = None
    tick_ms: int = 0
    offsets_segments: int = 0
    offsets_bytes: int = 0
    topic_segments: int = 0
    topic_bytes: int = 0
    records: dict[str, int] = field(default_factory=dict)
    groups: int = 0
    topic_partitions: int = 0
    topic_batches: int = 0
    errors: list[str] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)
    #: Every skipped byte range (:meth:`pipeline.damage.SkippedRange.to_json`), in segment and byte order.
    skipped: list[dict[str, Any]] = field(default_factory=list)
    #: Partitions whose log end is below a committed offset (:meth:`pipeline.damage.TruncatedPartition.to_json`).
    truncated: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def summarize(data_dir: str, raw_offsets: DataFrame, batches: DataFrame, skipped: DataFrame) -> InputSummary:
    """Counts, skipped ranges, decode errors and history caveats, in four small Spark jobs over the cached rows."""
    summary = InputSummary(data_dir=data_dir)
    ranges = skipped_from_rows(r.asDict() for r in skipped.collect())
    summary.skipped = [r.to_json() for r in ranges]
    starts: dict[tuple[str, int], int] = {}
    for s in list_segments(data_dir):
        if s.is_offsets:
            summary.offsets_segments += 1
            summary.offsets_bytes += s.size
        else:
            summary.topic_segments += 1
            summary.topic_bytes += s.size
            key = (s.topic, s.partition)
            starts[key] = min(starts.get(key, s.base_offset), s.base_offset)
    per_partition = (
        raw_offsets.where(F.col("record_type") != SKIPPED)
        .groupBy("log_partition", "record_type")
        .agg(
            F.count(F.lit(1)).alias("n"),
            F.min("log_offset").alias("lo"),
            F.max("log_offset").alias("hi"),
            F.max(F.greatest("log_ts_ms", F.coalesce("commit_ts_ms", F.lit(0)))).alias("latest"),
            F.min(F.coalesce("commit_ts_ms", "log_ts_ms")).alias("earliest"),
            F.collect_set("group").alias("groups"),
            F.slice(F.collect_list("error"), 1, 5).alias("errors"),
        )
        .collect()
    )
    groups: set[str] = set()
    spans: dict[int, tuple[int, int, int]] = {}
    for r in per_partition:
        summary.records[r["record_type"]] = summary.records.get(r["record_type"], 0) + int(r["n"])
        summary.latest_ms = max(summary.latest_ms, int(r["latest"] or 0))
        if r["earliest"] is not None and r["earliest"] >= 0:
            summary.earliest_ms = min(summary.earliest_ms or r["earliest"], int(r["earliest"]))
        groups.update(r["groups"])
        summary.errors += [f"__consumer_offsets-{r['log_partition']}: {e}" for e in r["errors"]]
        if r["lo"] is not None and r["lo"] >= 0:
            lo, hi, n = spans.get(r["log_partition"], (r["lo"], r["hi"], 0))
            spans[r["log_partition"]] = (min(lo, r["lo"]), max(hi, r["hi"]), n + int(r["n"]))
    summary.groups = len(groups)
    for partition, (lo, hi, n) in sorted(spans.items()):
        summary.caveats += offsets_gap_caveats(partition, lo, hi, n, ranges)
    stats = batches.agg(F.count(F.lit(1)).alias("n"), F.max("max_ts_ms").alias("latest")).collect()[0]
    summary.topic_batches = int(stats["n"])
    summary.latest_ms = max(summary.latest_ms, int(stats["latest"] or 0))
    summary.topic_partitions = len(starts)
    for (topic, partition), start in sorted(starts.items()):
        if start > 0:
            summary.caveats.append(
                f"{topic}-{partition}: log starts at offset {start} (older segments deleted), so its log-end "
                "offset before the first remaining batch is taken as that start"
            )
    return summary


def offsets_gap_caveats(partition: int, lo: int, hi: int, n: int, ranges: list[SkippedRange]) -> list[str]:
    """The history caveats of one ``__consumer_offsets`` partition, net of its damaged ranges.

    Offsets below ``hi + 1`` with no record are absent: those a skipped range is known to have held are damage
    (reported on their own); a first offset above 0 is a log that starts there (older records deleted), and only
    the holes between the first and the last offset are blamed on compaction.
    """
    mine = [r for r in ranges if r.segment.startswith(f"{OFFSETS_TOPIC}-{partition}/")]
    known = [(r.offsets_from, r.offsets_to) for r in mine if r.offsets_from is not None and r.offsets_to is not None]
    start = min([lo, *(first for first, _ in known)])
    damaged = sum(min(end, hi + 1) - first for first, end in known if first <= hi)
    holes = hi + 1 - start - n - damaged
    caveats = []
    if start > 0:
        caveats.append(
            f"__consumer_offsets-{partition}: the log starts at offset {start} (older records deleted by retention "
            "or compaction), so older commits and generations are not in these tables"
        )
    if holes > 0:
        besides = f" besides the {damaged} in damaged ranges" if damaged else ""
        unknown = len(mine) - len(known)
        maybe = f" (or in the {unknown} damaged ranges whose offsets are unknown)" if unknown else ""
        caveats.append(
            f"__consumer_offsets-{partition}: {holes} of the offsets below {hi + 1} are absent{besides} "
            f"(first record at {lo}): compaction removed history{maybe}, so older commits and generations are "
            "not in these tables"
        )
    return caveats
