"""The modules compiled to C with mypyc where a C compiler is present, and the checks that keep them honest.

A few hot loops cost more in CPython than everything around them: the produce path's record walk
(`protocol.record_scan`) checks every record of every produced batch, as Kafka's LogValidator does, and in
bytecode it was half of Produce's time. mypyc compiles those modules, unchanged and fully typed, into extension
modules that sit beside their source (``record_scan.cpython-311-x86_64-linux-gnu.so``); Python imports the
extension in preference to the source. The source stays the reference: where no compiler is present (a laptop
without gcc and the Python headers) nothing is built and the same code runs interpreted, only slower.

A compiled module must never be older than its source, or the broker would run code that is no longer in the
tree: `make` rebuilds whenever a source changes (``python -m protocol.compiled build``), and the test suite
refuses to start while `stale()` names any module.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

__all__ = ["SOURCES", "build", "extension_of", "is_compiled", "load_pure", "main", "stale", "up_to_date"]

ROOT = Path(__file__).resolve().parent.parent
#: The modules mypyc compiles, as paths from the repository root.
SOURCES = ("protocol/record_scan.py",)


def extension_of(source: str) -> Path | None:
    """The compiled extension beside ``source``, if one was built for this interpreter."""
    path = ROOT / source
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = path.with_name(path.stem + suffix)
        if candidate.exists():
            return candidate
    return None


def is_compiled(module: ModuleType) -> bool:
    """Whether ``module`` was imported from a compiled extension rather than its source."""
    return any(str(module.__file__).endswith(suffix) for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def stale() -> list[str]:
    """The sources whose compiled extension is older than the source itself (edited since the last build)."""
    found = []
    for source in SOURCES:
        extension = extension_of(source)
        if extension is not None and extension.stat().st_mtime < (ROOT / source).stat().st_mtime:
            found.append(source)
    return found


def load_pure(source: str) -> ModuleType:
    """``source`` run interpreted, under a name of its own: what the compiled module is compared with."""
    name = "_pure_" + source.removesuffix(".py").replace("/", "_")
    spec = importlib.util.spec_from_file_location(name, ROOT / source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and NamedTuples look their module up while being built
    spec.loader.exec_module(module)
    return module


def _remove_extensions() -> None:
    """Every extension built from `SOURCES`: the module and the shared library mypyc puts its code in."""
    for source in SOURCES:
        path = ROOT / source
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            for stem in (path.stem, path.stem + "__mypyc"):
                path.with_name(stem + suffix).unlink(missing_ok=True)


def up_to_date() -> bool:
    """Every module of `SOURCES` has a compiled extension at least as new as its source."""
    return all(extension_of(source) is not None for source in SOURCES) and not stale()


def build() -> bool:
    """Compile every module of `SOURCES` in place unless that is done already; without a compiler, remove any
    old extension and go on interpreted (the broker is correct either way). Returns whether the compiled modules
    are in place."""
    if up_to_date():
        return True
    command = [sys.executable, "-m", "mypyc", *SOURCES]
    # mypyc runs setuptools in its working directory, which would read our pyproject.toml as a package's
    # metadata: it works in a scratch directory whose packages are links to ours, and writes the extensions
    # through them beside their sources.
    with tempfile.TemporaryDirectory(prefix="mypyc-") as scratch:
        for package in {source.split("/")[0] for source in SOURCES}:
            (Path(scratch) / package).symlink_to(ROOT / package)
        try:
            done = subprocess.run(command, cwd=scratch, capture_output=True, text=True, check=False)  # noqa: S603 (our mypyc)
        except OSError as exc:
            done = subprocess.CompletedProcess(command, 1, "", str(exc))
    if done.returncode == 0 and all(extension_of(source) is not None for source in SOURCES):
        for source in SOURCES:  # the extension is newer than its source even on a coarse-grained clock
            extension = extension_of(source)
            assert extension is not None
            extension.touch()
        return True
    _remove_extensions()
    reason = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["mypyc failed"]
    print(f"not compiled ({reason[0]}): {', '.join(SOURCES)} run interpreted, slower", file=sys.stderr)
    return False


def main(argv: list[str] | None = None) -> int:
    """``python -m protocol.compiled build``: compile (or fall back to interpreted); ``require``: compile or
    fail; ``check``: fail while any build is stale."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["build"]:
        build()
        return 0
    if args == ["require"]:  # `make test`: the compiled modules are what is tested and benchmarked
        return 0 if build() else 1
    if args == ["check"]:
        old = stale()
        for source in old:
            print(f"{source} changed since it was compiled: run `make accel`", file=sys.stderr)
        return 1 if old else 0
    print("usage: python -m protocol.compiled build|require|check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
