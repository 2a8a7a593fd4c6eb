"""`python -m bench.profiles DIR [N]`: the top N functions of each cProfile file in DIR, by cumulative and self time.

`BENCH_PROFILE_DIR=DIR python -m bench targets` leaves one `<row>.prof` per row of the targets table (our broker
run under cProfile); this prints them compactly, with paths shortened to the repository or the standard library,
for bench/PROFILES.md. Not a benchmark module (no `bench_` prefix): `python -m bench` does not run it.
"""

from __future__ import annotations

import pstats
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.wire_load import ROOT

_STDLIB = sysconfig.get_paths()["stdlib"]
_SITE = sysconfig.get_paths()["purelib"]


@dataclass(frozen=True)
class Entry:
    """One function of a profile: calls (primitive/total), self seconds, cumulative seconds, where it is."""

    calls: str
    self_s: float
    cumulative_s: float
    where: str


def short(filename: str, line: int, function: str) -> str:
    """`broker/connection.py:120(handle)`, `asyncio/streams.py:...`, `<site>/uvloop/...`, or a builtin's name."""
    if filename == "~":
        return function  # a builtin: "<method 'write' of ...>"
    for prefix, shown in ((str(ROOT) + "/", ""), (_SITE + "/", "<site>/"), (_STDLIB + "/", "")):
        if filename.startswith(prefix):
            filename = shown + filename[len(prefix) :]
            break
    return f"{filename}:{line}({function})"


def entries(path: Path) -> tuple[float, list[Entry]]:
    """(total seconds the profile covers, one Entry per function)."""
    stats = pstats.Stats(str(path))
    rows = []
    for (filename, line, function), (primitive, total, self_s, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        calls = str(total) if primitive == total else f"{total}/{primitive}"
        rows.append(Entry(calls, self_s, cumulative, short(filename, line, function)))
    return stats.total_tt, rows  # type: ignore[attr-defined]


def top(rows: Sequence[Entry], key: str, count: int) -> list[Entry]:
    return sorted(rows, key=lambda e: getattr(e, key), reverse=True)[:count]


def render(path: Path, count: int) -> str:
    total, rows = entries(path)
    lines = [f"### {path.stem} ({total:.2f} s profiled)", ""]
    for title, key in (("cumulative", "cumulative_s"), ("self", "self_s")):
        lines += [f"by {title} time:", "", "| calls | self s | cum s | function |", "|---:|---:|---:|---|"]
        lines += [f"| {e.calls} | {e.self_s:.3f} | {e.cumulative_s:.3f} | `{e.where}` |" for e in top(rows, key, count)]
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    directory = Path(argv[0])
    count = int(argv[1]) if len(argv) > 1 else 15
    for path in sorted(directory.glob("*.prof")):
        print(render(path, count))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
