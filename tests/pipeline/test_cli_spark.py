"""The pipeline command line where Spark has to run: a missing group, and progress on stderr."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="the pipeline extra is not installed")

from pathlib import Path

from pyspark.sql import SparkSession

from pipeline.cli import main
from pipeline.synth import SyntheticLog


def test_describe_of_a_missing_group_says_it_does_not_exist(
    spark: SparkSession, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = workdir / "describe-nosuch-log"
    with SyntheticLog(data, offsets_partitions=1) as log:
        log.create_topic("t", 1)
        log.produce("t", 0, 2, 1000)
        log.commit("g", "t", 0, 2, 1000)
    assert main(["describe", "--data-dir", str(data), "--group", "nosuch"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "Error: Consumer group 'nosuch' does not exist." in err
    assert "starting Spark ... " in err  # progress goes to stderr, one line per stage
    assert "decoding 2 segments and describing ... " in err

    assert main(["describe", "--data-dir", str(data), "--group", "g"]) == 0
    out, _ = capsys.readouterr()
    assert "GROUP" in out and "g " in out
