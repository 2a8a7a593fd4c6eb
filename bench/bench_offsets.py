"""Durable `__consumer_offsets`: OffsetCommit throughput and the time a restart takes to load the offsets back.

Our broker only (the mock keeps offsets in memory, so there is nothing to compare with). It runs as a child process
with its defaults (50 `__consumer_offsets` partitions, the default flush policy: no fsync per append) and is driven
by one raw-protocol client process (`bench/wire_load.py`, on uvloop). Figures only; nothing fails on time.

* commit throughput: COMMIT_GROUPS connections, each committing COMMIT_PARTITIONS partitions of one topic for its
  own group as a simple consumer (OffsetCommit v7, generation -1, empty member id), back-to-back: the next commit
  goes out the moment the previous answer arrives, and only answers with every partition at NONE count. The
  committed offsets change from one commit to the next (COMMIT_VARIANTS pre-encoded requests per group, in turn).
  Offsets acknowledged per second, best of COMMIT_WINDOWS windows of COMMIT_WINDOW_S.
* startup load: LOAD_GROUPS groups x LOAD_PARTITIONS partitions committed through the broker (so the log holds
  exactly what the broker writes), then the broker is stopped (SIGTERM) and restarted on the same directory,
  LOAD_RESTARTS times. For each restart: the broker's own `offsets.loaded` log line (records, duration_ms), Popen to
  the BOOTSTRAP line, and Popen to the first successful OffsetFetch of a group stored in the last
  `__consumer_offsets` partition to load (asked for in a loop while the answer is COORDINATOR_LOAD_IN_PROGRESS),
  whose offsets are checked. The first start, on an empty directory, is the baseline. Every start uses a bytecode
  cache filled by an untimed start first (as bench_broker's startup rows do).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import struct
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.peers import Broker
from bench.wire_load import (
    Connection,
    ServerProcess,
    cpu_seconds,
    create_topic,
    open_connections,
    print_table,
    request_frame,
    run_async,
)
from coordinator.hashing import partition_for
from protocol.errors import ErrorCode
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestTopic
from protocol.registry import ApiKey

COMMIT_GROUPS = 50
COMMIT_PARTITIONS = 10
COMMIT_VARIANTS = 8
COMMIT_WINDOW_S = 3.0
COMMIT_WINDOWS = 3
COMMIT_TARGET = 20_000.0
COMMIT_VERSION = 7  # not flexible: the answer is checked at fixed offsets without decoding it

LOAD_GROUPS = 1000
LOAD_PARTITIONS = 100
LOAD_CONNECTIONS = 50
LOAD_RESTARTS = 3
LOAD_TARGET_MS = 2000.0
FETCH_VERSION = 5
OFFSETS_PARTITIONS = 50  # offsets.topic.num.partitions, Kafka's default and ours

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


# -- commit throughput ---------------------------------------------------------------------------------------------


def _commit_frames(group_id: str, topic: str, correlation_id: int) -> list[bytes]:
    return [
        request_frame(
            ApiKey.OFFSET_COMMIT,
            COMMIT_VERSION,
            OffsetCommitRequest(
                group_id=group_id,
                generation_id_or_member_epoch=-1,
                member_id="",
                topics=[
                    OffsetCommitRequestTopic(
                        name=topic,
                        partitions=[
                            OffsetCommitRequestPartition(partition_index=p, committed_offset=1_000 * variant + p)
                            for p in range(COMMIT_PARTITIONS)
                        ],
                    )
                ],
            ),
            correlation_id=correlation_id,
        )
        for variant in range(COMMIT_VARIANTS)
    ]


def _commit_ok(correlation_id: int) -> Callable[[bytes], bool]:
    """OffsetCommit v3-v7 answer: header v0, throttle, [topic name, [partition index, error code]]: all NONE?"""

    def check(payload: bytes) -> bool:
        if _I32.unpack_from(payload)[0] != correlation_id:
            return False
        pos = 8  # correlation id, throttle_time_ms
        topics = _I32.unpack_from(payload, pos)[0]
        pos += 4
        partitions_seen = 0
        for _ in range(topics):
            pos += 2 + _I16.unpack_from(payload, pos)[0]
            partitions = _I32.unpack_from(payload, pos)[0]
            pos += 4
            for _ in range(partitions):
                if _I16.unpack_from(payload, pos + 4)[0] != ErrorCode.NONE:
                    return False
                pos += 6
            partitions_seen += partitions
        return partitions_seen == COMMIT_PARTITIONS

    return check


@dataclass
class CommitWindow:
    offsets_per_s: float
    commits_per_s: float
    failures: int
    server_cpu: float
    client_cpu: float


async def _commit_windows(server: Broker) -> list[CommitWindow]:
    topic = f"bench-commit-{time.time_ns()}"
    connections = await open_connections(server.host, server.port, COMMIT_GROUPS)
    pid = server.pid
    try:
        await create_topic(connections[0], topic, COMMIT_PARTITIONS)
        frames = [_commit_frames(f"bench-commit-{i}", topic, 100 + i) for i in range(COMMIT_GROUPS)]
        windows = []
        for _ in range(COMMIT_WINDOWS):
            server_cpu, client_cpu = cpu_seconds(pid), cpu_seconds()
            started = time.perf_counter()
            stop_at = started + COMMIT_WINDOW_S
            pumps = [
                conn.pump(group_frames, _commit_ok(100 + i), stop_at)
                for i, (conn, group_frames) in enumerate(zip(connections, frames, strict=True))
            ]
            await asyncio.gather(*(pump.done for pump in pumps))
            elapsed = time.perf_counter() - started
            good = sum(p.count - p.failures for p in pumps)
            windows.append(
                CommitWindow(
                    offsets_per_s=good * COMMIT_PARTITIONS / elapsed,
                    commits_per_s=good / elapsed,
                    failures=sum(p.failures for p in pumps),
                    server_cpu=(cpu_seconds(pid) - server_cpu) / elapsed,
                    client_cpu=(cpu_seconds() - client_cpu) / elapsed,
                )
            )
        return windows
    finally:
        for connection in connections:
            connection.close()


def commit_throughput() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-offsets-commit-") as tmp, ServerProcess.ours(Path(tmp)) as server:
        server.start()
        windows = run_async(_commit_windows(server))
    best = max(windows, key=lambda w: w.offsets_per_s)
    met = best.offsets_per_s >= COMMIT_TARGET
    rows = [
        (
            "offsets acknowledged/s",
            f"{best.offsets_per_s:,.0f}",
            f">= {COMMIT_TARGET:,.0f}/s " + ("(met)" if met else "(missed)"),
        ),
        ("OffsetCommit requests/s", f"{best.commits_per_s:,.0f}", "-"),
        ("broker CPU (1.0 = one core)", f"{best.server_cpu:.2f}", "-"),
        ("client CPU (1.0 = one core)", f"{best.client_cpu:.2f}", "-"),
        ("failed answers (all windows)", str(sum(w.failures for w in windows)), "0"),
        ("offsets/s of every window", ", ".join(f"{w.offsets_per_s:,.0f}" for w in windows), "-"),
    ]
    print_table(
        f"durable OffsetCommit: {COMMIT_GROUPS} simple-consumer groups x {COMMIT_PARTITIONS} partitions, one "
        f"connection each, back-to-back OffsetCommit v{COMMIT_VERSION}; best of {COMMIT_WINDOWS} x "
        f"{COMMIT_WINDOW_S:g} s (default flush policy)",
        ("measure", "ours", "issue target"),
        rows,
    )


# -- startup load --------------------------------------------------------------------------------------------------


def _offset(group: int, partition: int) -> int:
    return group * 1_000 + partition


async def _populate(server: ServerProcess, topic: str) -> None:
    """LOAD_GROUPS x LOAD_PARTITIONS offsets, committed through the broker over LOAD_CONNECTIONS connections."""
    connections = await open_connections(server.host, server.port, LOAD_CONNECTIONS)
    try:
        await create_topic(connections[0], topic, LOAD_PARTITIONS)

        async def commit_groups(conn: Connection, groups: range) -> None:
            for group in groups:
                response = await conn.call(
                    ApiKey.OFFSET_COMMIT,
                    COMMIT_VERSION,
                    OffsetCommitRequest(
                        group_id=_group_id(group),
                        generation_id_or_member_epoch=-1,
                        member_id="",
                        topics=[
                            OffsetCommitRequestTopic(
                                name=topic,
                                partitions=[
                                    OffsetCommitRequestPartition(partition_index=p, committed_offset=_offset(group, p))
                                    for p in range(LOAD_PARTITIONS)
                                ],
                            )
                        ],
                    ),
                )
                errors = {p.error_code for t in response.topics for p in t.partitions}
                if errors != {ErrorCode.NONE}:
                    raise RuntimeError(f"commit for {_group_id(group)} failed: {errors}")

        per_connection = LOAD_GROUPS // LOAD_CONNECTIONS
        await asyncio.gather(
            *(
                commit_groups(conn, range(i * per_connection, (i + 1) * per_connection))
                for i, conn in enumerate(connections)
            )
        )
    finally:
        for connection in connections:
            connection.close()


def _group_id(group: int) -> str:
    return f"bench-load-{group:04d}"


def _last_loaded_group() -> int:
    """A group stored in the highest-numbered `__consumer_offsets` partition (loading goes in partition order)."""
    return max(range(LOAD_GROUPS), key=lambda g: (partition_for(_group_id(g), OFFSETS_PARTITIONS), g))


async def _first_fetch(server: ServerProcess, topic: str, group: int, expect: bool) -> tuple[float, int]:
    """Seconds from Popen to the first OffsetFetch answered without COORDINATOR_LOAD_IN_PROGRESS; tries made."""
    conn = await Connection.open(server.host, server.port)
    tries = 0
    try:
        while True:
            tries += 1
            response = await conn.call(
                ApiKey.OFFSET_FETCH,
                FETCH_VERSION,
                OffsetFetchRequest(
                    group_id=_group_id(group),
                    topics=[OffsetFetchRequestTopic(name=topic, partition_indexes=list(range(LOAD_PARTITIONS)))],
                ),
            )
            codes = {response.error_code} | {p.error_code for t in response.topics for p in t.partitions}
            if ErrorCode.COORDINATOR_LOAD_IN_PROGRESS in codes:
                await asyncio.sleep(0.002)
                continue
            answered = time.perf_counter()
            if codes != {ErrorCode.NONE}:
                raise RuntimeError(f"OffsetFetch: errors {codes}")
            got = {p.partition_index: p.committed_offset for t in response.topics for p in t.partitions}
            want = {p: _offset(group, p) if expect else -1 for p in range(LOAD_PARTITIONS)}
            if got != want:
                raise RuntimeError(f"OffsetFetch of {_group_id(group)} after restart: wrong offsets")
            return answered - server.spawned_at, tries
    finally:
        conn.close()


@dataclass
class Restart:
    bootstrap_ms: float
    first_fetch_ms: float
    loaded_ms: float
    records: int
    tries: int


def _start_and_fetch(
    data_dir: Path, topic: str, group: int, expect: bool, cache: Path
) -> tuple[ServerProcess, Restart]:
    server = ServerProcess.ours(data_dir)
    server.bytecode_cache = cache
    server.start()
    try:
        first_fetch_s, tries = run_async(_first_fetch(server, topic, group, expect))
        loaded = json.loads(server.wait_for_line('"offsets.loaded"'))
    except BaseException:
        server.stop()
        raise
    return server, Restart(
        bootstrap_ms=(server.bootstrap_at - server.spawned_at) * 1e3,
        first_fetch_ms=first_fetch_s * 1e3,
        loaded_ms=float(loaded["duration_ms"]),
        records=int(loaded["records"]),
        tries=tries,
    )


def startup_load() -> None:
    topic = "bench-load"
    group = _last_loaded_group()
    with tempfile.TemporaryDirectory(prefix="bench-offsets-load-") as tmp:
        data_dir = Path(tmp) / "data"
        cache = Path(tmp) / "pycache"
        with ServerProcess.ours(Path(tmp) / "warm-up") as warm_up:  # fills the bytecode cache; not timed
            warm_up.bytecode_cache = cache
            warm_up.start()
        server, fresh = _start_and_fetch(data_dir, topic, group, expect=False, cache=cache)
        try:
            started = time.perf_counter()
            run_async(_populate(server, topic))
            populate_s = time.perf_counter() - started
        finally:
            server.stop()
        restarts = []
        for _ in range(LOAD_RESTARTS):
            server, restart = _start_and_fetch(data_dir, topic, group, expect=True, cache=cache)
            server.stop()  # SIGTERM: the graceful path, as an operator restarts a broker
            restarts.append(restart)
        disk = sum(f.stat().st_size for f in data_dir.glob("__consumer_offsets-*/*.log"))
    offsets = LOAD_GROUPS * LOAD_PARTITIONS
    best = min(restarts, key=lambda r: r.first_fetch_ms)
    median_fetch = statistics.median(r.first_fetch_ms for r in restarts)
    median_loaded = statistics.median(r.loaded_ms for r in restarts)
    met = best.first_fetch_ms <= LOAD_TARGET_MS
    rows = [
        (
            "records replayed (offsets.loaded)",
            "0" if fresh.records == 0 else f"{fresh.records:,}",
            f"{best.records:,}",
            "-",
            "-",
        ),
        (
            "offsets.loaded duration_ms",
            f"{fresh.loaded_ms:,.0f}",
            f"{min(r.loaded_ms for r in restarts):,.0f}",
            f"{median_loaded:,.0f}",
            "-",
        ),
        (
            "Popen -> BOOTSTRAP line ms",
            f"{fresh.bootstrap_ms:,.0f}",
            f"{min(r.bootstrap_ms for r in restarts):,.0f}",
            f"{statistics.median(r.bootstrap_ms for r in restarts):,.0f}",
            "-",
        ),
        (
            "Popen -> first good OffsetFetch ms",
            f"{fresh.first_fetch_ms:,.0f}",
            f"{best.first_fetch_ms:,.0f}",
            f"{median_fetch:,.0f}",
            f"<= {LOAD_TARGET_MS:,.0f} ms " + ("(met)" if met else "(missed)"),
        ),
        ("OffsetFetch tries (LOAD_IN_PROGRESS)", str(fresh.tries), str(best.tries), "-", "-"),
    ]
    print_table(
        f"startup load: {offsets:,} committed offsets ({LOAD_GROUPS} groups x {LOAD_PARTITIONS} partitions), "
        f"restarted {LOAD_RESTARTS} times",
        ("measure", "empty dir", "restart best", "restart median", "issue target"),
        rows,
        notes=[
            f"populated through the broker in {populate_s:.1f} s; __consumer_offsets on disk: {disk / 1e6:.1f} MB",
            f"OffsetFetch asks for {_group_id(group)}, stored in __consumer_offsets-"
            f"{partition_for(_group_id(group), OFFSETS_PARTITIONS)}, the last partition to load",
        ],
    )


def run() -> None:
    commit_throughput()
    startup_load()


if __name__ == "__main__":
    run()
