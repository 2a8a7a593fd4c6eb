"""Durable OffsetCommit, ours beside its floor: `python -m bench commit_floor` (part of `make bench`).

The same commit windows as `bench_offsets` (50 simple-consumer groups x 10 partitions, one connection each,
back-to-back OffsetCommit v7, the same load generator process), run in one go against our broker and against
`bench/commit_floor.py`, a server on the same stack that does only the irreducible work (frames in, one write per
`__consumer_offsets` partition per event-loop turn of the same record bytes our broker writes, canned answers out).
The floor runs four ways: `write` (what our broker does with the default flush policy: write() into the page
cache, no fsync per append), `none` (no file write: the socket and the event loop alone), `fsync` (an fsync
after every write, for reference: what a per-append flush policy would cost on this disk) and `write + codec`
(as `write`, but every request decoded and its records, batch and answer encoded, with the same code our broker
uses: the least per-request work of a Python broker that reads what it is sent).

It prints, per server, the best window's offsets/s, the server's CPU (1.0 = one core) and its CPU time per commit,
and ours / floor. CPU per commit is the steadier figure on a shared machine: the offsets/s of a server that could
not get a whole core say more about the machine than about the server. Figures only; nothing fails on time.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.bench_offsets import COMMIT_GROUPS, COMMIT_PARTITIONS, COMMIT_VERSION, CommitWindow, _commit_windows
from bench.commit_floor import APPEND_MODES
from bench.wire_load import ServerProcess, print_table, run_async


@dataclass(frozen=True)
class Measured:
    """One server's best commit window, and the load average when its run started."""

    name: str
    best: CommitWindow
    load: str

    @property
    def cpu_us_per_commit(self) -> float:
        return self.best.server_cpu / self.best.commits_per_s * 1e6


def _load() -> str:
    """The 1-minute load average now: the machine is shared, so every figure carries it."""
    return f"{os.getloadavg()[0]:.2f}"


def floor_process(log_dir: Path, append: str, *, codec: bool = False) -> ServerProcess:
    """`bench/commit_floor.py` as a child process that announces itself as our broker does (BOOTSTRAP=)."""
    argv = [sys.executable, "-m", "bench.commit_floor", "--log-dir", str(log_dir), "--append", append]
    return ServerProcess([*argv, "--codec"] if codec else argv, f"floor ({append})")


def _measure(name: str, server: ServerProcess) -> Measured:
    load = _load()
    with server:
        server.start()
        windows: list[CommitWindow] = run_async(_commit_windows(server))
    return Measured(name, max(windows, key=lambda w: w.offsets_per_s), load)


def run() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-commit-floor-") as tmp:
        results = [_measure("ours", ServerProcess.ours(Path(tmp) / "ours"))]
        results += [
            _measure(f"floor: {append}", floor_process(Path(tmp) / f"floor-{append}", append))
            for append in APPEND_MODES
        ]
        results.append(_measure("floor: write + codec", floor_process(Path(tmp) / "floor-codec", "write", codec=True)))
    ours = results[0]
    rows = [
        (
            m.name,
            f"{m.best.offsets_per_s:,.0f}",
            f"{m.best.server_cpu:.2f}",
            f"{m.cpu_us_per_commit:,.1f}",
            "-" if m is ours else f"{ours.cpu_us_per_commit / m.cpu_us_per_commit:.2f}",
            m.load,
        )
        for m in results
    ]
    print_table(
        f"durable OffsetCommit beside its floor: {COMMIT_GROUPS} groups x {COMMIT_PARTITIONS} partitions, "
        f"OffsetCommit v{COMMIT_VERSION}, best window of each server",
        ("server", "offsets/s", "server CPU", "CPU us/commit", "ours/this (CPU)", "load avg"),
        rows,
        notes=[
            "floor = bench/commit_floor.py: frames, one write per __consumer_offsets partition per loop turn, "
            "canned answers; no coordinator, decode, validation, log line or metrics",
            "write: as our default flush policy (page cache); none: no file write; fsync: an fsync per write",
            "write + codec: every request decoded, its records, batch and answer encoded (nothing remembered)",
        ],
    )


if __name__ == "__main__":
    run()
