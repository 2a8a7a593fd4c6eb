"""The ``kafkalog`` source cuts one damaged segment into several tasks and reads every batch exactly once.

The pure-Python proof over every cut position is ``test_cuts.py``; this checks the Spark plan: byte ranges from
file sizes alone, several input partitions for one segment, each task resolving its own range.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.framing import SkipKind
from pipeline.scan import offsets_columns, topic_columns
from pipeline.synth import SyntheticLog
from tests.pipeline.damaged_logs import batches, edit

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPLIT = 64 * 1024  # the smallest range the source plans
TOPIC_SEGMENT = "big-0/00000000000000000000.log"
OFFSETS_SEGMENT = "__consumer_offsets-0/00000000000000000000.log"


def _log(root: Path) -> Path:
    """A 575 kB topic segment and a 265 kB ``__consumer_offsets`` segment, each with garbage inserted mid-file."""
    with SyntheticLog(root, offsets_partitions=1) as log:
        log.create_topic("big", 1)
        for i in range(2500):
            if i % 5 == 0:
                log.produce("big", 0, 10, 1000 * i, value_bytes=100)
            log.commit("g", "big", 0, log.leo("big", 0), 1000 * i + 1)
    for segment in (root / TOPIC_SEGMENT, root / OFFSETS_SEGMENT):
        edit(segment, batches(segment)[150][0], b"\x00" * 100, insert=True)
    return root


def test_one_segment_is_read_by_several_tasks_each_batch_once(spark: SparkSession, workdir: Path) -> None:
    root = _log(workdir / "cuts")
    for kind, segment, key in (("topics", TOPIC_SEGMENT, "base_offset"), ("offsets", OFFSETS_SEGMENT, "log_offset")):
        path = str(root / segment)
        size = (root / segment).stat().st_size
        if kind == "topics":
            expected_cols = list(topic_columns("big", 0, 0, path, 0, size, SkipKind.TORN_TAIL))
        else:
            expected_cols = list(offsets_columns(path, 0, 0, 0, size, SkipKind.TORN_TAIL))
        expected = Counter(
            (o, k, s) for c in expected_cols for o, k, s in zip(c[key], c["skip_kind"], c["skip_start"], strict=True)
        )
        df = spark.read.format("kafkalog").option("kind", kind).option("splitBytes", str(SPLIT)).load(str(root))
        assert df.rdd.getNumPartitions() >= size // SPLIT >= 3
        rows = df.select(key, "skip_kind", "skip_start").collect()
        assert Counter((r[0], r[1], r[2]) for r in rows) == expected  # each batch (and the garbage) once
        assert [k for _, k, _ in expected].count("garbage") == 1 and expected.total() > 300
