"""Where the broker's logs go: stderr for the process (stdout carries only the lines scripts read), and warnings
only in test runs unless `GROUP_BROKER_LOG_LEVEL` asks for more."""

from __future__ import annotations

import datetime
import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from hypothesis import given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from broker.logging import configure_logging, configure_test_logging, format_utc
from tests.support.broker_process import ROOT, BrokerProcess, run_server


def _restore(saved: dict[str, Any], was_configured: bool) -> None:
    """Put structlog back as it was, unconfigured included: `configure(**saved)` alone would mark an unconfigured
    structlog configured, with its default logger printing to stdout, and a broker embedded by a later test
    (`configure_test_logging` keeps an existing configuration) would then log into that test's stdout."""
    if was_configured:
        structlog.configure(**saved)
    else:
        structlog.reset_defaults()


@pytest.fixture
def fresh_structlog() -> Iterator[None]:
    """Each test starts from an unconfigured structlog and leaves the session's configuration as it found it."""
    saved, was_configured = structlog.get_config(), structlog.is_configured()
    structlog.reset_defaults()
    try:
        yield
    finally:
        _restore(saved, was_configured)


def _emit(stream: io.StringIO) -> list[str]:
    log = structlog.get_logger("test.logging")
    log.debug("partition.loaded", partition=0)
    log.info("offsets.loaded", records=0)
    log.warning("listener.no_authentication", listener="PLAINTEXT://:0")
    return stream.getvalue().splitlines()


@pytest.mark.usefixtures("fresh_structlog")
def test_test_runs_show_warnings_and_above_only() -> None:
    stream = io.StringIO()
    configure_test_logging(environ={}, stream=stream)
    [line] = _emit(stream)
    assert "listener.no_authentication" in line


@pytest.mark.usefixtures("fresh_structlog")
def test_an_environment_variable_asks_for_more() -> None:
    stream = io.StringIO()
    configure_test_logging(environ={"GROUP_BROKER_LOG_LEVEL": "debug"}, stream=stream)
    lines = _emit(stream)
    assert [e for e in ("partition.loaded", "offsets.loaded", "listener") if any(e in line for line in lines)] == [
        "partition.loaded",
        "offsets.loaded",
        "listener",
    ]


@pytest.mark.usefixtures("fresh_structlog")
def test_capture_logs_still_sees_every_event_under_the_test_level() -> None:
    configure_test_logging(environ={}, stream=io.StringIO())
    with capture_logs() as logs:
        structlog.get_logger("test.logging").info("offsets.loaded", records=0)
    assert [entry["event"] for entry in logs] == ["offsets.loaded"]


@pytest.mark.usefixtures("fresh_structlog")
def test_a_users_own_structlog_configuration_is_kept() -> None:
    stream = io.StringIO()
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(stream))
    configure_test_logging(environ={}, stream=io.StringIO())
    structlog.get_logger("mine").info("user.event")
    assert "user.event" in stream.getvalue()


def test_stdout_carries_only_the_bootstrap_and_control_lines(tmp_path: Path) -> None:
    """Scripts read `BOOTSTRAP=` / `CONTROL=` from stdout; the JSON logs go to stderr."""
    args = [sys.executable, str(ROOT / "server.py")]
    for item in (
        "listeners=PLAINTEXT://127.0.0.1:0",
        "control.listener=http://127.0.0.1:0",
        f"log.dirs={tmp_path / 'data'}",
        "offsets.topic.num.partitions=2",
    ):
        args += ["--override", item]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_")}
    with (tmp_path / "stderr").open("w") as stderr:
        process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT, env=env)
        assert process.stdout is not None
        announced = [process.stdout.readline(), process.stdout.readline()]  # blocks until printed
        process.send_signal(signal.SIGTERM)
        rest, _ = process.communicate(timeout=30)
    assert process.returncode == 0
    assert [line.split("=", 1)[0] for line in announced] == ["BOOTSTRAP", "CONTROL"]
    assert rest == ""
    logged = (tmp_path / "stderr").read_text()
    assert '"event": "broker.started"' in logged and '"event": "broker.stopped"' in logged


def test_log_file_takes_the_logs_off_stderr(tmp_path: Path) -> None:
    log_file = tmp_path / "broker.log"
    broker = BrokerProcess(tmp_path / "data", {"log.file": str(log_file)})
    broker.start(wait_loaded=False)
    assert broker.stop() == 0
    assert [line.split("=", 1)[0] for line in broker.log_lines()] == ["BOOTSTRAP"]  # stdout and stderr: no logs
    logged = log_file.read_text()
    assert '"event": "broker.started"' in logged and '"event": "broker.stopped"' in logged


def test_an_unwritable_log_file_is_one_sentence(tmp_path: Path) -> None:
    log_file = tmp_path / "no-such-dir" / "broker.log"
    done = run_server("listeners=PLAINTEXT://127.0.0.1:0", f"log.dirs={tmp_path / 'data'}", f"log.file={log_file}")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"group-broker: cannot write the log file {log_file} ('log.file'): No such file or directory: '{log_file}'"
    ]


@settings(max_examples=500, deadline=None)
@given(st.floats(min_value=1.0, max_value=4_102_444_800.0) | st.integers(1, 4_102_444_800).map(float))
def test_the_timestamp_is_what_structlogs_iso_utc_stamper_writes(now: float) -> None:
    """`TimeStamper(fmt="iso", utc=True)` writes `datetime.now(UTC).isoformat()` with "Z": the same text for the same
    instant, a whole second without a fraction included."""
    expected = datetime.datetime.fromtimestamp(now, datetime.UTC).isoformat().replace("+00:00", "Z")
    assert format_utc(now) == expected


def test_json_lines_render_as_json_dumps_does() -> None:
    stream = io.StringIO()
    saved, was_configured = structlog.get_config(), structlog.is_configured()
    try:
        configure_logging("info", json=True, stream=stream)
        structlog.get_logger("test.logging").info("group.state", group="g", members=["a"], odd=object)
    finally:
        _restore(saved, was_configured)
    [line] = stream.getvalue().splitlines()
    event = json.loads(line)
    assert list(event) == ["group", "members", "odd", "event", "level", "timestamp"]
    expected = {"group": "g", "members": ["a"], "odd": repr(object), "event": "group.state", "level": "info"}
    assert line == json.dumps({**expected, "timestamp": event["timestamp"]})
