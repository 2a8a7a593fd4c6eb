"""What was scanned, and what the log cannot tell: the facts the report opens with.

History can be missing for two reasons the reader must know about. ``__consumer_offsets`` is a compacted topic:
once the cleaner runs, older commits of a key are gone, which shows as offsets missing between a partition's first
and last record (or a first record far above 0). Topic partitions lose old segments to retention, which shows as a
log-start offset above 0: LEO history before it is unknown.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipeline.layout import list_segments

__all__ = ["InputSummary", "summarize"]


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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def summarize(data_dir: str, raw_offsets: DataFrame, batches: DataFrame) -> InputSummary:
    """Counts, decode errors and history caveats, in three small Spark jobs over the cached decoded rows."""
    summary = InputSummary(data_dir=data_dir)
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
        raw_offsets.groupBy("log_partition", "record_type")
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
        if lo > 0 or hi - lo + 1 > n:
            summary.caveats.append(
                f"__consumer_offsets-{partition}: {hi + 1 - n} of the offsets below {hi + 1} are absent "
                f"(first record at {lo}): compaction or retention removed history, so older commits and "
                "generations are not in these tables"
            )
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
