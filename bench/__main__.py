"""`python -m bench [name ...]`: run the `run()` of every `bench/bench_*.py` module, or only the named ones.

Modules are discovered rather than listed so that adding `bench/bench_foo.py` with a `run()` is all a new
benchmark needs (`python -m bench foo` then runs it alone). Each module prints its own table; a module whose `run()`
returns rows instead (an iterable of `(name, value)` pairs) gets them printed here, so none is silently dropped.
One failing benchmark (import error, exception) prints its traceback and the others still run; the exit status is 1
if any failed. Nothing here compares timings against thresholds.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

PREFIX = "bench_"


def discover() -> list[str]:
    """Short names (`codec` for `bench_codec.py`) of the bench modules in this package, sorted."""
    package_dir = Path(__file__).resolve().parent
    return sorted(
        info.name.removeprefix(PREFIX)
        for info in pkgutil.iter_modules([str(package_dir)])
        if info.name.startswith(PREFIX) and not info.ispkg
    )


def _print_rows(name: str, rows: object) -> None:
    """Fallback for a `run()` that returns its results, as `(label, value)` pairs, instead of printing them."""
    items = list(rows) if isinstance(rows, Iterable) and not isinstance(rows, str | bytes) else None
    if items is None or not all(isinstance(item, tuple) and len(item) == 2 for item in items):
        print(f"{name}: run() returned {rows!r}")
        return
    width = max((len(str(label)) for label, _ in items), default=0)
    for label, value in items:
        shown = f"{value:>14,.2f}" if isinstance(value, int | float) else str(value)
        print(f"  {label!s:<{width}}  {shown}")


def run_one(name: str) -> bool:
    """Import `bench.bench_<name>` and call its `run()`; True on success, traceback printed on failure."""
    module_name = f"{__package__ or 'bench'}.{PREFIX}{name}"
    print(f"== {name} ==", flush=True)
    try:
        module = importlib.import_module(module_name)
        run: Callable[[], object] | None = getattr(module, "run", None)
        if not callable(run):
            print(f"{module_name} has no run(); skipped")
            return True
        rows = run()
        if rows is not None:
            _print_rows(name, rows)
    except Exception:
        traceback.print_exc()
        print(f"{name}: FAILED (continuing with the next benchmark)", flush=True)
        return False
    finally:
        print(flush=True)
    return True


def main(argv: Sequence[str]) -> int:
    available = discover()
    wanted = [arg.removeprefix(PREFIX).removesuffix(".py") for arg in argv] or available
    unknown = [name for name in wanted if name not in available]
    if unknown:
        print(f"unknown benchmark(s) {', '.join(unknown)}; available: {', '.join(available)}", file=sys.stderr)
        return 2
    results = [run_one(name) for name in wanted]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
