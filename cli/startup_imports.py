"""What the broker's entry points do around the imports of a start: `begin()` before them, `settle()` after.

The imports of a start (~650 modules) are about four fifths of the time to the first answer, and two costs in them
are work thrown away at every start:

* The cyclic garbage collector runs ~130 times while they load, walking objects (modules, classes, functions) that
  live as long as the process. `begin()` turns it off; `settle()` moves what the imports made out of its way for
  good (`gc.freeze`) and turns it back on.
* `dataclasses` writes the source of each class's `__init__`, `__repr__`, `__eq__`, ... and compiles it with `exec`:
  ~830 compilations, about a quarter of the imports' CPU time, for source text that is the same at every start.
  Between `begin()` and `settle()` those compilations go through a cache of code objects keyed by the exact source
  text, kept in the bytecode cache directory beside this module's own `.pyc` (so `PYTHONPYCACHEPREFIX` and
  `PYTHONDONTWRITEBYTECODE` apply as to any bytecode), with the interpreter's magic number: what runs is what
  `exec` of that text compiles to, with the globals `dataclasses` passes, so the classes are the same. The cache
  is only `dataclasses`' own name `exec` (its module global, which shadows the builtin), set in `begin()` and
  removed in `settle()`; nothing else in the process sees it. A file that does not load is ignored and rewritten.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import importlib.util
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

__all__ = ["DataclassCodeCache", "begin", "default_cache_path", "settle"]


class DataclassCodeCache:
    """Code objects of the source texts `dataclasses` compiles, loaded from and saved to ``path``."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.codes: dict[str, CodeType] = _load(path) if path is not None else {}
        #: What this start asked for: all that is saved, so texts no class makes any more drop out.
        self.used: dict[str, CodeType] = {}
        self.compiled = 0

    def exec(self, source: Any, globals: Any = None, locals: Any = None) -> None:
        """`exec` as `dataclasses._create_fn` calls it, with the compilation of a known text skipped."""
        if not isinstance(source, str):
            exec(source, globals, locals)  # noqa: S102 (what dataclasses does)
            return
        code = self.codes.get(source)
        if code is None:
            code = self.codes[source] = compile(source, "<string>", "exec")
            self.compiled += 1
        self.used[source] = code
        exec(code, globals, locals)  # noqa: S102 (the code of dataclasses' own text)

    def install(self) -> None:
        dataclasses.exec = self.exec  # type: ignore[attr-defined]  # a module global shadowing the builtin

    def uninstall(self) -> None:
        if getattr(dataclasses, "exec", None) == self.exec:
            del dataclasses.exec  # type: ignore[attr-defined]

    def save(self) -> None:
        """Write what this start used, when that is not what was loaded (atomic: a concurrent start reads the old
        file or the new one)."""
        stale = self.compiled or len(self.used) != len(self.codes)
        if self.path is None or not stale or sys.dont_write_bytecode:
            return
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError):  # a read-only install: every start compiles, as without the cache
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(importlib.util.MAGIC_NUMBER + marshal.dumps(self.used))
            tmp.replace(self.path)
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def _load(path: Path) -> dict[str, CodeType]:
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    magic = importlib.util.MAGIC_NUMBER
    if not data.startswith(magic):
        return {}
    try:
        codes = marshal.loads(data[len(magic) :])  # noqa: S302 (our own file, trusted as the .pyc beside it)
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(codes, dict):
        return {}
    return {k: v for k, v in codes.items() if isinstance(k, str) and isinstance(v, CodeType)}


def default_cache_path() -> Path | None:
    """Beside this module's `.pyc` (None where the interpreter keeps no bytecode cache)."""
    try:
        own = Path(importlib.util.cache_from_source(__file__))
    except NotImplementedError:
        return None
    return own.with_name(f"dataclass-methods.{sys.implementation.cache_tag}.marshal")


_active: DataclassCodeCache | None = None


def begin(cache_path: Path | None = None) -> None:
    """Before the imports: the collector off, dataclass compilations through the cache."""
    global _active
    gc.disable()
    if _active is None:
        _active = DataclassCodeCache(cache_path if cache_path is not None else default_cache_path())
        _active.install()


def settle() -> None:
    """After the imports (idempotent; nothing when `begin` was not called, as in a test calling `serve.main`)."""
    global _active
    if _active is not None:
        _active.uninstall()
        _active.save()
        _active = None
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
