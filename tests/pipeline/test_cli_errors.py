"""The pipeline command line: mistakes are one sentence and a non-zero exit, found before Spark starts.

Each pre-Spark check runs ``pipeline.cli.main`` in a fresh interpreter that reports afterwards whether pyspark was
ever imported: timing-free evidence that Spark was not started. Nothing here needs the pipeline extra.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pipeline.layout import latest_ends
from pipeline.synth import SyntheticLog
from tests.pipeline.cli_run import ROOT, run_cli


def assert_refused(result: subprocess.CompletedProcess[str], sentence: str, code: int = 2) -> None:
    assert result.returncode == code, result.stderr
    assert result.stderr.strip().splitlines() == [result.stderr.strip()], result.stderr  # one line
    assert sentence in result.stderr
    assert "Traceback" not in result.stderr
    assert "pyspark imported: False" in result.stdout


@pytest.fixture
def small_log(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    with SyntheticLog(data, offsets_partitions=1) as log:
        log.create_topic("t", 1)
        log.produce("t", 0, 2, 1000)
        log.commit("g", "t", 0, 2, 1000)
    return data


def test_describe_refuses_a_bad_as_of_before_spark(small_log: Path) -> None:
    result = run_cli("describe", "--data-dir", str(small_log), "--as-of", "yesterday")
    assert_refused(result, "--as-of 'yesterday' is not a time")


def test_report_refuses_an_out_dir_without_inputs_json(tmp_path: Path) -> None:
    result = run_cli("report", "--out", str(tmp_path))
    assert_refused(result, "no inputs.json")


def test_report_refuses_an_out_dir_written_before_the_summary_tables(tmp_path: Path) -> None:
    (tmp_path / "inputs.json").write_text("{}", encoding="utf-8")
    (tmp_path / "tables" / "group_status").mkdir(parents=True)
    result = run_cli("report", "--out", str(tmp_path))
    assert_refused(result, "written by an older version of the pipeline (no tables/report_status)")


def test_a_missing_data_dir_is_refused_before_spark(tmp_path: Path) -> None:
    result = run_cli("analyze", "--data-dir", str(tmp_path / "nope"), "--out", str(tmp_path / "out"))
    assert_refused(result, "does not exist")
    assert not (tmp_path / "out").exists()


def test_an_empty_data_dir_is_refused_before_spark(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = run_cli("describe", "--data-dir", str(tmp_path / "empty"))
    assert_refused(result, "holds no broker log segments")


def test_a_data_dir_of_empty_segments_is_refused_before_spark(tmp_path: Path) -> None:
    with SyntheticLog(tmp_path / "fresh", offsets_partitions=1) as log:
        log.create_topic("t", 1)  # a broker that never got a record: every segment is empty
    result = run_cli("analyze", "--data-dir", str(tmp_path / "fresh"), "--out", str(tmp_path / "out"))
    assert_refused(result, "holds 2 log segments, all empty")
    assert not (tmp_path / "out").exists()


def test_a_data_dir_that_is_not_a_kafka_log_is_refused_before_spark(tmp_path: Path) -> None:
    partition = tmp_path / "notes" / "drafts-0"
    partition.mkdir(parents=True)
    (partition / "00000000000000000000.log").write_text("2026-11-25 INFO started\n" * 10, encoding="utf-8")
    result = run_cli("describe", "--data-dir", str(tmp_path / "notes"))
    assert_refused(result, "is not a Kafka log directory: none of its 1 non-empty segments")


def test_a_broken_java_home_is_named_before_spark(small_log: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyspark", reason="the Java check follows the check that the pipeline extra is installed")
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text("#!/bin/sh\necho 'Error: could not find libjava.so' >&2\nexit 1\n", encoding="utf-8")
    java.chmod(0o755)
    result = run_cli("describe", "--engine", "spark", "--data-dir", str(small_log), env={"JAVA_HOME": str(home)})
    assert_refused(result, f"JAVA_HOME={home}")
    assert "could not find libjava.so" in result.stderr


def test_stream_once_with_nothing_new_exits_before_spark(small_log: Path, tmp_path: Path) -> None:
    """A checkpoint whose last committed offsets are the segments' ends: nothing to ingest, no Spark."""
    checkpoints = tmp_path / "out" / "_checkpoints"
    for kind in ("offsets", "topics"):
        ends = latest_ends(small_log, kind, {})
        for sub, text in (("offsets", f"v1\n{{}}\n{json.dumps({'files': ends})}\n"), ("commits", "v1\n{}\n")):
            (checkpoints / kind / sub).mkdir(parents=True, exist_ok=True)
            (checkpoints / kind / sub / "0").write_text(text, encoding="utf-8")
    result = run_cli("stream", "--once", "--data-dir", str(small_log), "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert f"nothing new since {checkpoints}" in result.stderr
    assert "pyspark imported: False" in result.stdout


def test_make_report_installs_only_the_pipeline_extra() -> None:
    dry_run = subprocess.run(
        ["make", "-n", "-B", "report"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert "'.[pipeline]'" in dry_run
    assert "npm" not in dry_run
    assert "apt-get" not in dry_run
    assert "[test" not in dry_run


def test_progress_names_each_stage_and_its_time_and_ends_with_a_summary() -> None:
    import io
    import re

    from pipeline.progress import Progress

    stream = io.StringIO()
    progress = Progress(stream)
    with progress.stage("decoding 3 segments"):
        pass
    with pytest.raises(KeyboardInterrupt), progress.stage("evaluating status"):
        raise KeyboardInterrupt
    progress.summary(2, 40)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "decoding 3 segments ..."
    assert re.fullmatch(r"decoding 3 segments: \d+\.\d s", lines[1])
    assert lines[2] == "evaluating status ..."
    assert re.fullmatch(r"evaluating status: stopped after \d+\.\d s", lines[3])
    assert re.fullmatch(r"done: 2 tables written, 40 rows in \d+\.\d s", lines[4])
