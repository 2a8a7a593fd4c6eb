"""One SparkSession for the whole pipeline suite, and the known-answer log analysed once and shared.

Spark costs seconds to start and each job has a fixed overhead, so the expensive work happens once per session:
build the scenario log, decode it, run the full analysis (tables on disk), and let each test read what it
checks. Nothing here asserts on time. Spark is imported inside the fixtures only, so the rule tests
(``test_rules.py``) run where the pipeline extra is not installed.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.pipeline.scenarios import TEST_CONFIG, Expected, build

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from pipeline.analyze import Analysis, DecodedTables


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    pytest.importorskip("pyspark", reason="the pipeline extra is not installed")
    from pipeline.session import build_session

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = build_session("local[2]", {"spark.sql.shuffle.partitions": "4", "spark.ui.showConsoleProgress": "false"})
    yield session
    session.stop()


@pytest.fixture(scope="session")
def workdir() -> Iterator[Path]:
    """A private temporary directory for the session's logs and outputs.

    Not pytest's ``tmp_path_factory``: concurrent pytest runs on one machine prune each other's old base temp
    directories, and Spark reads lazily, so a pruned input would fail a test long after it was written.
    """
    with tempfile.TemporaryDirectory(prefix="pipeline-tests-") as name:
        yield Path(name)


@dataclass
class Known:
    data_dir: Path
    out_dir: Path
    expected: Expected
    tables: DecodedTables
    analysis: Analysis


@pytest.fixture(scope="session")
def known(spark: SparkSession, workdir: Path) -> Known:
    from pipeline.analyze import analyze, decode_tables

    data_dir = workdir / "known-log"
    out_dir = workdir / "known-out"
    expected = build(data_dir)
    tables = decode_tables(spark, str(data_dir), TEST_CONFIG)
    analysis = analyze(spark, str(data_dir), out_dir, TEST_CONFIG, tables)
    return Known(data_dir, out_dir, expected, tables, analysis)
