"""cli.startup_imports' cache of the code `dataclasses` compiles: the classes it makes are the classes `dataclasses`
makes, a second start compiles nothing, and a file that does not load is only a cache miss."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import pytest

from cli.startup_imports import DataclassCodeCache


@pytest.fixture(autouse=True)
def _bytecode_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """As a start without PYTHONDONTWRITEBYTECODE (the suite may run with it)."""
    monkeypatch.setattr("sys.dont_write_bytecode", False)


def _make_classes() -> tuple[type, type]:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Point:
        x: int
        y: int = 2
        tags: list[str] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(order=True)
    class Version:
        major: int
        minor: int = 0

    return Point, Version


def _exercise(point: type, version: type) -> list[object]:
    p = point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3  # type: ignore[attr-defined]
    return [
        repr(p),
        p == point(1, 2, []),
        p != point(1, 3),
        hash(point(1, 2, ())) == hash(point(1, 2, ())),  # type: ignore[arg-type]
        repr(version(1, 2)),
        version(1, 2) < version(1, 3),
        sorted([version(2), version(1, 5)]),
    ]


def _with_cache(cache: DataclassCodeCache) -> list[object]:
    cache.install()
    try:
        classes = _make_classes()
    finally:
        cache.uninstall()
    return _exercise(*classes)


def test_the_classes_are_the_ones_dataclasses_makes_and_a_second_start_compiles_nothing(tmp_path: Path) -> None:
    expected = _exercise(*_make_classes())
    path = tmp_path / "cache" / "dataclass-methods.marshal"
    first = DataclassCodeCache(path)
    assert [str(x) for x in _with_cache(first)] == [str(x) for x in expected]
    assert first.compiled > 0
    first.save()
    assert not hasattr(dataclasses, "exec")  # uninstalled: the builtin again

    second = DataclassCodeCache(path)
    assert [str(x) for x in _with_cache(second)] == [str(x) for x in expected]
    assert second.compiled == 0
    mtime = path.stat().st_mtime_ns
    second.save()  # nothing new, nothing stale: not rewritten
    assert path.stat().st_mtime_ns == mtime


def test_only_what_a_start_used_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "dataclass-methods.marshal"
    first = DataclassCodeCache(path)
    first.codes["def gone(): pass"] = compile("def gone(): pass", "<string>", "exec")
    _with_cache(first)
    first.save()
    assert "def gone(): pass" not in DataclassCodeCache(path).codes


@pytest.mark.parametrize(
    "content", [b"", b"garbage", importlib.util.MAGIC_NUMBER + b"\xff\x00", importlib.util.MAGIC_NUMBER + b"N"]
)
def test_a_file_that_does_not_load_is_a_miss_and_is_rewritten(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "dataclass-methods.marshal"
    path.write_bytes(content)
    cache = DataclassCodeCache(path)
    assert cache.codes == {}
    assert _with_cache(cache)
    cache.save()
    assert DataclassCodeCache(path).codes.keys() == cache.used.keys()


def test_no_cache_file_where_bytecode_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.dont_write_bytecode", True)
    cache = DataclassCodeCache(tmp_path / "dataclass-methods.marshal")
    _with_cache(cache)
    cache.save()
    assert not (tmp_path / "dataclass-methods.marshal").exists()
