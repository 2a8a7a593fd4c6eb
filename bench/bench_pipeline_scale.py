"""The analytics pipeline at scale: a 1 GiB topic segment and 10,000,000 offset commits, with bounded task memory.

Opt-in (``BENCH_PIPELINE_SCALE=1``, or ``make bench-pipeline-scale``): generating the log and analysing it takes
many minutes on two cores, too long for ``make bench``'s default. The log is generated once under the system temp
directory and kept. Prints wall time of the ``kafkalog`` reads and of the whole analysis, and peak memory: the
largest Python worker (each runs one task at a time, so this bounds a task's decoding), the JVM (driver and the
local executor, every concurrent task together) and the largest task's Spark execution memory. Target (issue
#20, not asserted): finishes with peak task memory <= 1 GiB.

Shape: topic ``big`` has one partition whose one segment grows to 1 GiB over the run (about 16,000 batches of 64
records of 1 KiB); topic ``spread`` has 49 partitions with a small batch each second. 100 groups consume all 50
partitions and commit them every second for 2,000 s: 100 x 50 x 2,000 = 10,000,000 commits, 50 per batch as the
coordinator writes a commit request.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.generated import generated_once
from bench.proc_memory import PeakMemory

GROUPS = 100
SPREAD_PARTITIONS = 49
ROUNDS = 2_000
BIG_SEGMENT = 1 << 30
BIG_BATCH_RECORDS = 64
BIG_RECORD_BYTES = 1024
START_MS = 1_700_000_000_000
#: Encoded bytes around a 1 KiB record's value and around a batch's records (the v2 format).
_RECORD_OVERHEAD = 9
_BATCH_OVERHEAD = 61
ENV = "BENCH_PIPELINE_SCALE"
#: The local JVM's heap: two concurrent tasks of at most 1 GiB each plus the driver (Spark's default, 1g, runs out
#: caching the decoded 10 M rows while writing the first table).
DRIVER_MEMORY = "3g"
VERSION = "v1"


def build_log() -> Path:
    """The benchmark log, written once (:func:`bench.generated.generated_once`)."""
    return generated_once(f"group-broker-bench-pipeline-scale-{VERSION}", _write_log)


def _write_log(root: Path) -> None:
    from pipeline.synth import Member, SyntheticLog

    big_batches = BIG_SEGMENT // (BIG_BATCH_RECORDS * (BIG_RECORD_BYTES + _RECORD_OVERHEAD) + _BATCH_OVERHEAD)
    with SyntheticLog(root, offsets_partitions=50, segment_bytes=2 * BIG_SEGMENT) as log:
        log.create_topic("big", 1)
        log.create_topic("spread", SPREAD_PARTITIONS)
        for r in range(ROUNDS):
            ts = START_MS + r * 1000
            for _ in range(big_batches * (r + 1) // ROUNDS - big_batches * r // ROUNDS):
                log.produce("big", 0, BIG_BATCH_RECORDS, ts, value_bytes=BIG_RECORD_BYTES)
            for p in range(SPREAD_PARTITIONS):
                log.produce("spread", p, 10, ts)
            for g in range(GROUPS):
                if r == 0:
                    everything = {"big": [0], "spread": list(range(SPREAD_PARTITIONS))}
                    log.generation(f"group-{g:03d}", 1, [Member(f"group-{g:03d}-m", assignment=everything)], ts)
                behind = 3 if g % 10 else r // 10  # every tenth group falls further behind
                entries = [("big", 0, max(0, log.leo("big", 0) - behind))]
                entries += [("spread", p, max(0, log.leo("spread", p) - behind)) for p in range(SPREAD_PARTITIONS)]
                log.commit_many(f"group-{g:03d}", entries, ts + 500)
            if r % 100 == 99:
                log.flush()  # keep the generator's own memory small


def _task_peaks(ui: str | None, app_id: str) -> tuple[int, int]:
    """(tasks, largest peakExecutionMemory in bytes) over every completed stage, from Spark's REST API."""
    if ui is None:
        return 0, 0
    with urllib.request.urlopen(f"{ui}/api/v1/applications/{app_id}/stages?details=true") as response:
        stages: list[dict[str, Any]] = json.load(response)
    peaks = [
        int(task.get("taskMetrics", {}).get("peakExecutionMemory", 0))
        for stage in stages
        for task in (stage.get("tasks") or {}).values()
    ]
    return len(peaks), max(peaks, default=0)


def run() -> list[tuple[str, str]]:
    if os.environ.get(ENV) != "1":
        return [("skipped", f"opt-in: set {ENV}=1 or run `make bench-pipeline-scale` (many minutes)")]
    try:
        from pyspark.sql import functions as F

        from pipeline.analyze import analyze
        from pipeline.config import AnalysisConfig
        from pipeline.extract import read_raw
        from pipeline.preflight import JavaMissingError
        from pipeline.session import build_session
    except ModuleNotFoundError as exc:
        return [("skipped", f"pipeline extra not installed ({exc})")]
    started = time.perf_counter()
    root = build_log()
    _row(
        "log",
        f"{_segments_gb(root, 'big-0'):.2f} GB topic segment, {_segments_gb(root, '__consumer_offsets'):.2f} GB "
        f"of __consumer_offsets (generated in {time.perf_counter() - started:.0f} s, or reused)",
    )
    with PeakMemory() as memory:
        try:
            spark = build_session("local[2]", conf={"spark.ui.enabled": "true", "spark.driver.memory": DRIVER_MEMORY})
        except JavaMissingError as exc:
            return [("skipped", str(exc))]
        for kind, unit in (("topics", "topic batches"), ("offsets", "offsets records")):
            started = time.perf_counter()
            n = read_raw(spark, str(root), kind).agg(F.count(F.lit(1))).collect()[0][0]
            took = time.perf_counter() - started
            _row(f"Spark kafkalog {kind} read, local[2]", f"{took:8.1f} s  {n:,} {unit}, {n / took:,.0f}/s")
        out = Path(tempfile.mkdtemp(prefix="bench-pipeline-scale-out-"))
        started = time.perf_counter()
        try:
            analysis = analyze(spark, str(root), out, AnalysisConfig())
            _row("Spark whole analysis, local[2]", f"{time.perf_counter() - started:8.1f} s")
            _row("  of which", ", ".join(f"{k} {v:.1f}s" for k, v in analysis.timings.items()))
            tasks, task_peak = _task_peaks(spark.sparkContext.uiWebUrl, spark.sparkContext.applicationId)
            _row("peak execution memory, largest task", f"{task_peak / (1 << 20):8.0f} MiB over {tasks:,} tasks")
        except Exception as exc:  # a benchmark reports a failure with the figures it has
            _row(
                "Spark whole analysis, local[2]",
                f"FAILED after {time.perf_counter() - started:.0f} s: {_first_line(exc)}",
            )
        finally:
            shutil.rmtree(out, ignore_errors=True)
    workers = memory.count("python-worker")
    _row(
        "peak RSS, largest Python worker",
        f"{memory.max_kib('python-worker') / 1024:8.0f} MiB ({workers} workers, "
        f"one task at a time; target <= 1024 MiB per task)",
    )
    _row("peak RSS, JVM (driver + executor)", f"{memory.max_kib('jvm') / 1024:8.0f} MiB")
    _row("machine load (1 min)", f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return []


def _row(label: str, value: str) -> None:
    """One line of the table, printed at once: a run that fails later still shows what it measured."""
    print(f"  {label:<38}  {value}", flush=True)


def _first_line(exc: BaseException) -> str:
    """The JVM's error if there is one (py4j's own message is often unprintable after an OutOfMemoryError)."""
    java = getattr(exc, "java_exception", None)
    try:
        text = str(java) if java is not None else str(exc)
    except Exception:  # the JVM may be gone
        text = ""
    return (text.splitlines() or [type(exc).__name__])[0][:200]


def _segments_gb(root: Path, prefix: str) -> float:
    return sum(f.stat().st_size for d in root.glob(f"{prefix}*") for f in d.glob("*.log")) / 1e9
