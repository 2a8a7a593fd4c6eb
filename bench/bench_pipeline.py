"""The analytics pipeline on 1,000,000 offset commits over 100 groups, on ``local[2]``.

Prints wall time and records/s for: a pure-Python single-core decode of the ``__consumer_offsets`` segments (the
baseline: the project's codecs in a plain loop, no Spark), the same decode through Spark's ``kafkalog`` source,
and the whole analysis (every table, Parquet written). The log is generated once by ``pipeline.synth`` and kept
under the system temp directory. Targets (not asserted): Spark decode at least as fast as the baseline, whole
analysis under 2 minutes. Skipped with a note when pyspark or Java is missing.

Shape: 100 groups, each consuming its own topic slice (10 topics x 4 partitions, 10 groups per topic), committing
all 4 partitions every second for 2,500 s, one batch per commit request as the coordinator writes it; producers
append one batch per partition per second; every group rebalances 4 times.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.generated import generated_once

GROUPS = 100
TOPICS = 10
PARTITIONS = 4
ROUNDS = 2_500  # commits per partition: 100 groups x 4 partitions x 2500 = 1,000,000
RECORDS_PER_BATCH = 20
START_MS = 1_700_000_000_000
VERSION = "v1"


def build_log() -> Path:
    """The benchmark log, written once (:func:`bench.generated.generated_once`)."""
    return generated_once(f"group-broker-bench-pipeline-{GROUPS}x{ROUNDS}-{VERSION}", _write_log)


def _write_log(root: Path) -> None:
    from pipeline.synth import Member, SyntheticLog

    with SyntheticLog(root, offsets_partitions=50, segment_bytes=16 * 1024 * 1024) as log:
        for t in range(TOPICS):
            log.create_topic(f"topic-{t}", PARTITIONS)
        for r in range(ROUNDS):
            ts = START_MS + r * 1000
            for t in range(TOPICS):
                for p in range(PARTITIONS):
                    log.produce(f"topic-{t}", p, RECORDS_PER_BATCH, ts)
            for g in range(GROUPS):
                group, topic = f"group-{g:03d}", f"topic-{g % TOPICS}"
                if r % (ROUNDS // 4) == 0:  # a rebalance: members come and go
                    n = 1 + (r // (ROUNDS // 4)) % 3
                    members = [
                        Member(
                            f"{group}-m{r}-{i}", client_id=f"c{i}", assignment={topic: list(range(i, PARTITIONS, n))}
                        )
                        for i in range(n)
                    ]
                    log.generation(group, 1 + r // (ROUNDS // 4), members, ts)
                # consumers keep up, except every tenth group, which falls further behind
                lag = (r // 10) if g % 10 == 0 else 3
                leo = (r + 1) * RECORDS_PER_BATCH
                log.commit_many(group, [(topic, p, max(0, leo - lag)) for p in range(PARTITIONS)], ts + 500)


def _baseline(root: Path) -> tuple[float, int]:
    """The project's decoder in a plain single-core loop over every __consumer_offsets segment."""
    from pipeline.decode import decode_offsets_range
    from pipeline.layout import list_segments

    started = time.perf_counter()
    records = 0
    for s in list_segments(root, "offsets"):
        data = Path(s.path).read_bytes()
        records += len(decode_offsets_range(data, s.partition, s.base_offset)["log_offset"])
    return time.perf_counter() - started, records


def run() -> list[tuple[str, str]]:
    try:
        from pyspark.sql import functions as F

        from pipeline.analyze import analyze
        from pipeline.config import AnalysisConfig
        from pipeline.extract import read_raw
        from pipeline.preflight import JavaMissingError
        from pipeline.session import build_session
    except ModuleNotFoundError as exc:
        return [("skipped", f"pipeline extra not installed ({exc})")]
    root = build_log()
    base_s, base_n = _baseline(root)
    try:
        spark = build_session("local[2]")
    except JavaMissingError as exc:
        return [("skipped", str(exc))]
    # warm-up: start the Python workers once, as any long-lived session would have
    read_raw(spark, str(root), "topics").count()
    started = time.perf_counter()
    raw = read_raw(spark, str(root), "offsets")
    row = raw.agg(F.count(F.lit(1)).alias("n"), F.sum("committed_offset"), F.countDistinct("group")).collect()[0]
    spark_s, spark_n = time.perf_counter() - started, int(row["n"])
    out = Path(tempfile.mkdtemp(prefix="bench-pipeline-out-"))
    started = time.perf_counter()
    analysis = analyze(spark, str(root), out, AnalysisConfig())
    whole_s = time.perf_counter() - started
    shutil.rmtree(out, ignore_errors=True)
    rows = [
        ("records", f"{base_n:,} offset commits and metadata, {GROUPS} groups ({_size(root)})"),
        ("baseline: pure-Python decode, 1 core", f"{base_s:8.1f} s  {base_n / base_s:>12,.0f} records/s"),
        ("Spark kafkalog decode, local[2]", f"{spark_s:8.1f} s  {spark_n / spark_s:>12,.0f} records/s"),
        ("Spark whole analysis, local[2]", f"{whole_s:8.1f} s  {spark_n / whole_s:>12,.0f} records/s"),
        ("  of which", ", ".join(f"{k} {v:.1f}s" for k, v in analysis.timings.items())),
        ("machine load (1 min)", f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"  {k:<{width}}  {v}")
    return []


def _size(root: Path) -> str:
    total = sum(f.stat().st_size for f in root.rglob("*.log"))
    return f"{total / 1e6:.0f} MB of segments"


if __name__ == "__main__":
    sys.exit(0 if run() is not None else 1)
