"""Both ``describe`` engines give the same rows on the same logs, at times before, between and after the records.

Spark runs in the suite's shared session and decodes each log once; the pure-Python engine reads the files
itself. The logs cover damaged batches, a torn tail, tombstones, a dead group, several generations, a truncated
topic partition and the Burrow known-answer scenarios.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="the pipeline extra is not installed")

from pathlib import Path

from pyspark.sql import SparkSession

from pipeline.analyze import decode_tables
from pipeline.config import AnalysisConfig
from pipeline.describe import describe_tables
from pipeline.describe_python import describe_python
from tests.pipeline.conftest import Known
from tests.pipeline.describe_logs import AS_OF_TIMES, build_edges, ordered


def test_engines_agree_on_the_damaged_edge_log(spark: SparkSession, workdir: Path) -> None:
    data = workdir / "describe-edges"
    build_edges(data)
    tables = decode_tables(spark, str(data), AnalysisConfig())
    found = {as_of: describe_tables(tables, as_of) for as_of in AS_OF_TIMES}
    for as_of, spark_rows in found.items():
        assert ordered(spark_rows) == ordered(describe_python(data, as_of)), as_of
    assert [len(rows) for rows in found.values()] == [0, 4, 4]  # the comparisons are not between empty lists


def test_engines_agree_on_the_known_answer_log(known: Known) -> None:
    """At its as-of time (1900 s): Burrow's vectors with big offsets, transaction markers, a compacted partition.

    (At 250 s both engines are checked against the same hand-worked rows: ``test_known_answers.py`` for Spark,
    ``test_outputs.py``'s CLI test for the default engine, which is python on a log this small.)
    """
    spark_rows = describe_tables(known.tables, "max")
    assert len(spark_rows) > 20
    assert ordered(spark_rows) == ordered(describe_python(known.data_dir, "max"))
