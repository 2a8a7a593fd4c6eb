"""What a person reads: report.txt, the two pictures, the CLI's describe output and its Java check."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="the pipeline extra is not installed")

import json
import os
from pathlib import Path

import matplotlib.image

from pipeline.cli import main
from pipeline.describe import format_describe
from pipeline.preflight import JavaMissingError, check_java
from pipeline.report import render_outputs
from tests.pipeline.conftest import Known


def test_report_states_inputs_caveats_statuses_and_rebalances(known: Known) -> None:
    paths = render_outputs(known.out_dir)
    report = (known.out_dir / "report.txt").read_text()
    hole = known.expected.compacted_partition
    assert f"__consumer_offsets-{hole}: 5 of the offsets below" in report  # the compacted history is a caveat
    assert "vt9-0: log starts at offset 792748079" in report  # and so is a topic whose old segments are gone
    for heading in (
        "Inputs scanned",
        "Burrow status per group",
        "kafka-consumer-groups --describe",
        "Rebalances",
        "Rates",
    ):
        assert heading in report
    # s-stall stopped committing at 500 s: at the as-of time (1900 s) rule 3 (STOP) is what fired
    stall = next(line for line in report.splitlines() if line.strip().startswith("s-stall "))
    assert "ERR" in stall and "t-s-stall-0 STOP" in stall and "(rule 3)" in stall
    summary = json.loads((known.out_dir / "inputs.json").read_text())
    assert summary["as_of_ms"] == 1_900_000 and summary["errors"] == []
    for path in paths[1:]:
        pixels = matplotlib.image.imread(str(path))
        assert pixels.shape[0] > 100 and pixels.shape[1] > 100


def test_cli_report_re_renders_an_analysis_without_spark(known: Known, capsys: pytest.CaptureFixture[str]) -> None:
    report = known.out_dir / "report.txt"
    report.unlink(missing_ok=True)
    assert main(["report", "--out", str(known.out_dir)]) == 0
    rendered = report.read_text()
    assert "Burrow status per group" in rendered and "s-stall " in rendered
    assert (known.out_dir / "lag.png").is_file() and (known.out_dir / "rebalances.png").is_file()


def test_cli_describe_prints_the_kafka_table_as_of_a_time(known: Known, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["describe", "--data-dir", str(known.data_dir), "--group", "s-rebalance", "--as-of", "1970-01-01T00:04:10Z"]
    )
    assert code == 0
    assert capsys.readouterr().out == format_describe(known.expected.describe_at_250s)


def test_missing_java_is_one_clear_sentence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(JavaMissingError, match="needs Java 17 or newer"):
        check_java()
    assert os.environ["PATH"] == str(tmp_path)


def test_the_status_grid_is_bounded() -> None:
    from pipeline.analyze import MAX_TICKS, bounded_tick

    assert bounded_tick(60_000, 0, 3_600_000) == 60_000
    day = 86_400_000
    widened = bounded_tick(60_000, 0, 365 * day)  # --as-of now on a year-old log
    assert widened % 1000 == 0 and 365 * day / widened <= MAX_TICKS
