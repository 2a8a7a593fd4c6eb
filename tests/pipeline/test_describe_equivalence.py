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
from pipeline.describe_rules import group_pattern
from tests.pipeline.conftest import Known
from tests.pipeline.describe_logs import AS_OF_TIMES, build_edges, ordered


def test_engines_agree_on_the_damaged_edge_log(spark: SparkSession, workdir: Path) -> None:
    data = workdir / "describe-edges"
    build_edges(data)
    tables = decode_tables(spark, str(data), AnalysisConfig())
    for as_of in AS_OF_TIMES:
        assert ordered(describe_tables(tables, as_of)) == ordered(describe_python(data, as_of)), as_of
    only_g = decode_tables(spark, str(data), AnalysisConfig(groups=group_pattern("g")))
    spark_rows = describe_tables(only_g, "max", group="g")
    assert spark_rows  # not vacuous
    assert ordered(spark_rows) == ordered(describe_python(data, "max", group="g"))


def test_engines_agree_on_the_known_answer_log(known: Known) -> None:
    for as_of in ("1970-01-01T00:00:00Z", "1970-01-01T00:04:10Z", "max"):
        spark_rows = describe_tables(known.tables, as_of)
        assert ordered(spark_rows) == ordered(describe_python(known.data_dir, as_of)), as_of
    assert describe_tables(known.tables, "max")  # the comparison above is not between two empty lists
