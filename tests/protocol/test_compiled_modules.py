"""The mypyc-compiled modules (`protocol.compiled`): each answers exactly as its interpreted source does, the
compiled one is what is imported where it was built, and a build older than its source is caught.

The record walk is compared on what the produce path sees: encoded batches' records, the same with bytes flipped,
cut short, or with a count that lies, and bytes that are no batch at all.
"""

from __future__ import annotations

import importlib.machinery
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import compiled, record_scan
from protocol.records import BATCH_HEADER_SIZE, Record, RecordBatch, encode_batch

SCAN_SOURCE = "protocol/record_scan.py"
PURE_SCAN = compiled.load_pure(SCAN_SOURCE)

_records = st.lists(
    st.builds(
        Record,
        offset_delta=st.just(0),
        timestamp_delta=st.integers(-(1 << 40), 1 << 40),
        key=st.none() | st.binary(max_size=200),
        value=st.none() | st.binary(max_size=3_000) | st.binary(min_size=16_400, max_size=17_000),
        headers=st.lists(st.tuples(st.text(max_size=5), st.none() | st.binary(max_size=100)), max_size=3),
    ),
    min_size=1,
    max_size=40,
)


def _encoded(records: list[Record]) -> bytes:
    for index, record in enumerate(records):
        record.offset_delta = index
    return encode_batch(RecordBatch.from_records(records, base_timestamp=1_795_526_181_961))


def _outcome(module: Any, data: bytes | bytearray | memoryview, pos: int, end: int, count: int) -> object:
    try:
        return module.scan_records(data, pos, end, count)
    except Exception as exc:  # neither may raise; if one does, both must raise the same
        return type(exc)


def _same_walk(data: bytes | bytearray, pos: int, end: int, count: int) -> None:
    for view in (bytes(data), bytearray(data), memoryview(bytes(data))):
        assert _outcome(record_scan, view, pos, end, count) == _outcome(PURE_SCAN, view, pos, end, count)


@settings(max_examples=200, deadline=None)
@given(_records, st.integers(-2, 2))
def test_the_walk_answers_as_its_source_does_on_encoded_batches(records: list[Record], count_error: int) -> None:
    data = _encoded(records)
    _same_walk(data, BATCH_HEADER_SIZE, len(data), len(records) + count_error)


@settings(max_examples=300, deadline=None)
@given(
    _records,
    st.lists(st.tuples(st.integers(0, 1 << 30), st.integers(0, 255)), max_size=4),
    st.integers(0, 64),
)
def test_the_walk_answers_as_its_source_does_on_damaged_batches(
    records: list[Record], flips: list[tuple[int, int]], cut: int
) -> None:
    data = bytearray(_encoded(records))
    for where, byte in flips:
        data[BATCH_HEADER_SIZE + where % (len(data) - BATCH_HEADER_SIZE)] = byte
    _same_walk(data, BATCH_HEADER_SIZE, max(BATCH_HEADER_SIZE, len(data) - cut), len(records))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400), st.integers(-5, 500), st.integers(-5, 500), st.integers(-3, 100))
def test_the_walk_answers_as_its_source_does_on_any_bytes(data: bytes, pos: int, end: int, count: int) -> None:
    _same_walk(data, pos, end, count)


def test_the_compiled_walk_is_the_one_imported_where_it_was_built() -> None:
    built = compiled.extension_of(SCAN_SOURCE) is not None
    assert compiled.is_compiled(record_scan) == built
    assert not compiled.is_compiled(PURE_SCAN)


def _tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A source and its extension in a scratch tree that `protocol.compiled` looks at instead of the repository."""
    monkeypatch.setattr(compiled, "ROOT", tmp_path)
    monkeypatch.setattr(compiled, "SOURCES", ("pkg/walk.py",))
    (tmp_path / "pkg").mkdir()
    source = tmp_path / "pkg" / "walk.py"
    source.write_text("X = 1\n")
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    extension = tmp_path / "pkg" / f"walk{suffix}"
    extension.write_bytes(b"")
    return source, extension


def test_an_extension_older_than_its_source_is_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source, extension = _tree(tmp_path, monkeypatch)
    os.utime(extension, (1_000, 1_000))
    assert compiled.stale() == ["pkg/walk.py"]
    assert compiled.main(["check"]) == 1
    os.utime(source, (500, 500))
    assert compiled.stale() == []
    assert compiled.up_to_date()


def test_without_a_compiler_old_extensions_are_removed_and_the_source_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source, extension = _tree(tmp_path, monkeypatch)
    os.utime(extension, (1_000, 1_000))  # stale: a build is attempted
    mypyc_lib = extension.with_name("walk__mypyc" + extension.name.removeprefix("walk"))
    mypyc_lib.write_bytes(b"")

    def no_compiler(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(command, 1, "", "error: command 'gcc' failed: No such file or directory")

    monkeypatch.setattr(subprocess, "run", no_compiler)
    assert compiled.build() is False
    assert not extension.exists() and not mypyc_lib.exists() and source.exists()
    assert "gcc" in capsys.readouterr().err
    assert compiled.main(["require"]) == 1
