"""Checks that run before Spark starts, so a mistake costs a sentence and an exit status, not Spark's start-up.

Nothing here imports pyspark: each check looks only at the arguments, the files and the Java runtime Spark would
launch. :class:`PipelineError` carries the one sentence the command line prints and its exit status.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from pipeline.config import parse_as_of
from pipeline.layout import SegmentFile, latest_ends, list_segments
from protocol.errors import DecodeError
from protocol.records import BATCH_HEADER_SIZE, peek_batch_header

__all__ = [
    "JavaMissingError",
    "PipelineError",
    "check_as_of",
    "check_data_dir",
    "check_java",
    "check_report_inputs",
    "pending_stream_kinds",
]


class PipelineError(Exception):
    """A user-facing failure: ``str(exc)`` is the sentence printed, ``exit_code`` the status."""

    exit_code = 2


class JavaMissingError(PipelineError):
    """Spark needs a working Java 17+ runtime and the one it would use is missing or broken."""


def check_as_of(text: str) -> None:
    """``max``, ``now`` or an ISO-8601 time, refused before any work if it is none of them."""
    try:
        parse_as_of(text, 0)
    except ValueError:
        raise PipelineError(
            f"--as-of {text!r} is not a time: use max, now or an ISO-8601 time such as 2026-01-31T12:00:00Z"
        ) from None


def check_data_dir(data_dir: str | Path) -> list[SegmentFile]:
    """The directory's segments; refuses a directory that is missing, holds no broker segment, holds only empty
    ones, or whose segments are not Kafka logs (none starts with a record batch header of format v2).

    Only the first 61 bytes of each non-empty segment are read: damage further in is the readers' to report.
    """
    try:
        segments = list_segments(data_dir)
    except FileNotFoundError:
        raise PipelineError(f"--data-dir {data_dir} does not exist or is not a directory") from None
    if not segments:
        raise PipelineError(
            f"--data-dir {data_dir} holds no broker log segments (<topic>-<partition>/*.log): "
            "point it at the broker's log.dirs"
        )
    written = [s for s in segments if s.size > 0]
    if not written:
        raise PipelineError(
            f"--data-dir {data_dir} holds {len(segments)} log segments, all empty: nothing was ever written to it"
        )
    if not any(_starts_with_a_batch(s) for s in written):
        raise PipelineError(
            f"--data-dir {data_dir} is not a Kafka log directory: none of its {len(written)} non-empty segments "
            "starts with a record batch (message format v2)"
        )
    return segments


def _starts_with_a_batch(segment: SegmentFile) -> bool:
    with open(segment.path, "rb") as f:
        head = f.read(BATCH_HEADER_SIZE)
    try:
        peek_batch_header(head)
    except DecodeError:
        return False
    return True


#: A summary table `report` renders from (pipeline/report_data.py); an output written before they existed lacks it.
SUMMARY_TABLE = "report_status"


def check_report_inputs(out_dir: Path) -> None:
    """``report`` re-renders an earlier ``analyze``/``stream`` output: its ``inputs.json`` must be there, and the
    summary tables the report and the pictures are drawn from (an older output would render as empty)."""
    if not (out_dir / "inputs.json").is_file():
        raise PipelineError(
            f"{out_dir} holds no analysis (no inputs.json): run `python -m pipeline analyze --out {out_dir}` first"
        )
    if not (out_dir / "tables" / SUMMARY_TABLE).is_dir():
        raise PipelineError(
            f"{out_dir} was written by an older version of the pipeline (no tables/{SUMMARY_TABLE}): run"
            f" `python -m pipeline analyze --out {out_dir}` again"
        )


def check_java() -> str:
    """Path of the ``java`` Spark will launch, after proving it runs (``java -version``).

    Spark's launcher uses ``$JAVA_HOME/bin/java`` when ``JAVA_HOME`` is set and ``java`` from PATH otherwise, so
    the same one is checked here: a broken JAVA_HOME is named instead of ending in ``[JAVA_GATEWAY_EXITED]``.
    """
    home = os.environ.get("JAVA_HOME")
    if home:
        java = os.path.join(home, "bin", "java")
        where = f"JAVA_HOME={home}"
    else:
        found = shutil.which("java")
        if found is None:
            raise JavaMissingError(
                "The pipeline runs on Apache Spark, which needs Java 17 or newer, and no `java` was found "
                "(JAVA_HOME unset and nothing on PATH). On Debian: apt-get install openjdk-17-jre-headless"
            )
        java, where = found, f"java on PATH ({found})"
    try:
        result = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60, check=False)  # noqa: S603 (the java Spark would run)
    except OSError as exc:
        raise JavaMissingError(
            f"Spark would run {java} from {where}, which cannot be started: {exc.strerror}"
        ) from None
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise JavaMissingError(
            f"`{java} -version` from {where} failed (exit {result.returncode}"
            f"{': ' + detail[0] if detail else ''}); fix JAVA_HOME or install Java 17+"
        )
    return java


def pending_stream_kinds(data_dir: str | Path, checkpoints: Path, kinds: dict[str, str]) -> list[str]:
    """The stream kinds whose segments hold complete batches past the checkpoint's last committed offsets.

    Spark's checkpoint keeps ``offsets/<batch>`` (last line: the source offset ``{"files": {...}}``) and
    ``commits/<batch>``; a batch planned but not committed counts as pending. A kind without a checkpoint is
    pending.
    """
    pending: list[str] = []
    for kind in kinds:
        committed = _committed_files(checkpoints / kind)
        if committed is None or latest_ends(data_dir, kind, committed) != committed:
            pending.append(kind)
    return pending


def _committed_files(checkpoint: Path) -> dict[str, int] | None:
    def last(directory: Path) -> int | None:
        ids = [int(p.name) for p in directory.glob("[0-9]*") if p.name.isdigit()] if directory.is_dir() else []
        return max(ids, default=None)

    batch = last(checkpoint / "offsets")
    if batch is None or last(checkpoint / "commits") != batch:
        return None
    lines = (checkpoint / "offsets" / str(batch)).read_text(encoding="utf-8").splitlines()
    files: dict[str, int] = json.loads(lines[-1]).get("files", {})
    return files
