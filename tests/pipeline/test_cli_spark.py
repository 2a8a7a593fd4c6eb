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
    assert main(["describe", "--engine", "spark", "--data-dir", str(data), "--group", "nosuch"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "Error: Consumer group 'nosuch' does not exist." in err
    lines = err.splitlines()  # progress goes to stderr: each stage when it starts and its time when it ends
    assert "starting Spark ..." in lines and any(line.startswith("starting Spark: ") for line in lines)
    assert "decoding 2 segments and describing ..." in lines

    assert main(["describe", "--engine", "spark", "--data-dir", str(data), "--group", "g"]) == 0
    out, _ = capsys.readouterr()
    assert "GROUP" in out and "g " in out


def test_ctrl_c_on_stream_interval_is_one_line_and_exit_130(workdir: Path) -> None:
    """Ctrl-C reaches the whole process group (Python and Spark's JVM): Spark is stopped quietly, no py4j noise."""
    import os
    import signal
    import subprocess
    import sys

    data, out = workdir / "ctrl-c-log", workdir / "ctrl-c-out"
    with SyntheticLog(data, offsets_partitions=1) as log:
        log.create_topic("t", 1)
        log.produce("t", 0, 2, 1000)
        log.commit("g", "t", 0, 2, 1000)
    command = [sys.executable, "-m", "pipeline", "stream", "--interval", "1s", "--no-analyze", "--master", "local[1]"]
    command += ["--data-dir", str(data), "--out", str(out)]
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "PYSPARK_PYTHON": sys.executable}
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    ) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # blocks until the first run has ingested: Spark is up and busy
        assert first.startswith("ingested "), first
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.rstrip().endswith("interrupted")
    assert "Traceback" not in err and "py4j" not in err
