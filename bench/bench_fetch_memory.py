"""Broker memory under 8 concurrent Fetches with max_bytes = 2 GB of a 150 MB partition (issue #10's target: peak
RSS <= 200 MB above idle). Figures only; nothing fails on time or size.

Our broker runs as a child process with a fresh `log.dirs`. One topic of one partition is filled with PRODUCE_MB
MiB first (1 MiB record batches, Produce v8 acks=1, several in flight, as bench_broker's produce phase). Then the
broker's peak RSS is reset (`/proc/<pid>/clear_refs` = 5, so VmHWM forgets the produce phase), its idle VmRSS is
read, and FETCHES connections each send one Fetch v11 from offset 0 with max_bytes and partition_max_bytes of
2 GB (Int32 max) at the same moment. During the fetches a thread samples the broker's VmRSS every few ms and a
bystander connection sends ApiVersions v0 back to back. Reported: idle RSS, peak RSS (VmHWM, and the sampled max
where the reset is not allowed) and its excess over idle, the record bytes each Fetch returned (Kafka caps a
response at the broker's fetch.max.bytes, 57671680 by default, with at least one batch), and the bystander's max
round trip. No mock column: the issue gives an absolute target.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from tempfile import TemporaryDirectory

from bench.bench_broker import _one_mib_batch, _produce, _produce_frames
from bench.bench_create_stall import StallResult, _bystander, _p99
from bench.wire_load import Connection, ServerProcess, create_topic, fmt, print_table, run_async
from protocol.errors import ErrorCode
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.registry import ApiKey

PRODUCE_MB = 150
FETCHES = 8
MAX_BYTES = 2**31 - 1  # "2 GB": the largest Int32
TARGET_MB = 200.0
FETCH_VERSION = 11
TOPIC = "bench-fetch-memory"
MB = 1024 * 1024


def _status_kb(pid: int, key: str) -> int:
    """A `VmRSS`/`VmHWM` line of /proc/<pid>/status, in kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def _reset_peak(pid: int) -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0); False where that is not allowed."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


@dataclass
class MemoryResult:
    idle_kb: int = 0
    peak_hwm_kb: int | None = None
    sampled_max_kb: int = 0
    fetched: list[str] = field(default_factory=list)
    fetch_s: float = 0.0
    bystander: StallResult = field(default_factory=StallResult)


def _sample_rss(pid: int, stop: threading.Event, result: MemoryResult) -> None:
    while not stop.is_set():
        try:
            result.sampled_max_kb = max(result.sampled_max_kb, _status_kb(pid, "VmRSS"))
        except (OSError, KeyError):
            return  # the broker exited
        stop.wait(0.002)


async def _fetch_all(conn: Connection) -> str:
    """One Fetch from offset 0 with 2 GB limits; the record bytes it returned (or what went wrong)."""
    request = FetchRequest(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=MAX_BYTES,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[
            FetchTopic(
                topic=TOPIC, partitions=[FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=MAX_BYTES)]
            )
        ],
    )
    try:
        response = await conn.call(ApiKey.FETCH, FETCH_VERSION, request)
    except (ConnectionError, OSError) as exc:
        return f"connection lost: {exc!r}"
    partition = response.responses[0].partitions[0]
    if response.error_code != ErrorCode.NONE or partition.error_code != ErrorCode.NONE:
        return f"error {response.error_code}/{partition.error_code}"
    return f"{len(partition.records or b''):,}"


def _watch(host: str, port: int, stop: threading.Event, result: StallResult) -> None:
    """The bystander on a thread and event loop of its own: the fetch clients decode 57 MB answers on theirs, which
    would otherwise count as the broker's stall."""

    async def watch() -> None:
        conn = await Connection.open(host, port)
        stop_async = asyncio.Event()
        task = asyncio.ensure_future(_bystander(conn, stop_async, result))
        await asyncio.to_thread(stop.wait)
        stop_async.set()
        await task
        conn.close()

    asyncio.run(watch())


async def _measure(server: ServerProcess) -> MemoryResult:
    assert server.process is not None
    pid = server.process.pid
    result = MemoryResult()
    producer = await Connection.open(server.host, server.port)
    await create_topic(producer, TOPIC, 1)
    await _produce(producer, _produce_frames(TOPIC, 1, _one_mib_batch()), PRODUCE_MB)
    producer.close()
    fetchers = [await Connection.open(server.host, server.port) for _ in range(FETCHES)]
    await asyncio.sleep(1.0)  # let the produce phase's garbage settle before "idle"
    reset = _reset_peak(pid)
    result.idle_kb = _status_kb(pid, "VmRSS")
    stop_sampling, stop_bystander = threading.Event(), threading.Event()
    sampler = threading.Thread(target=_sample_rss, args=(pid, stop_sampling, result), daemon=True)
    sampler.start()
    watching = threading.Thread(
        target=_watch, args=(server.host, server.port, stop_bystander, result.bystander), daemon=True
    )
    watching.start()
    started = time.perf_counter()
    result.fetched = list(await asyncio.gather(*(_fetch_all(conn) for conn in fetchers)))
    result.fetch_s = time.perf_counter() - started
    stop_bystander.set()
    watching.join()
    stop_sampling.set()
    sampler.join()
    if reset and server.process.poll() is None:
        result.peak_hwm_kb = _status_kb(pid, "VmHWM")
    for conn in fetchers:
        conn.close()
    return result


def run() -> None:
    with TemporaryDirectory(prefix="bench-fetch-memory-") as tmp, ServerProcess.ours(Path(tmp)) as server:
        server.start()
        result = run_async(_measure(server))
        alive = server.process is not None and server.process.poll() is None
    peak_kb = max(result.peak_hwm_kb or 0, result.sampled_max_kb)
    excess_mb = (peak_kb - result.idle_kb) / 1024
    verdict = "(met)" if excess_mb <= TARGET_MB else "(missed)"
    round_trips = result.bystander.round_trips_ms
    rows = [
        ("broker idle RSS (MB)", fmt(result.idle_kb / 1024, ",.1f"), ""),
        (
            "broker peak RSS, VmHWM (MB)",
            fmt(None if result.peak_hwm_kb is None else result.peak_hwm_kb / 1024, ",.1f"),
            "",
        ),
        ("broker peak RSS, sampled (MB)", fmt(result.sampled_max_kb / 1024, ",.1f"), ""),
        ("peak above idle (MB)", fmt(excess_mb, ",.1f"), f"<= {TARGET_MB:g} MB {verdict}"),
        ("all fetches answered in (s)", fmt(result.fetch_s, ",.2f"), ""),
        *((f"fetch {i + 1} record bytes", fetched, "") for i, fetched in enumerate(result.fetched)),
        ("bystander max round trip (ms)", fmt(max(round_trips, default=None), ",.1f"), ""),
        ("bystander p99 round trip (ms)", fmt(_p99(round_trips), ",.1f"), ""),
        ("bystander connection", result.bystander.bystander_outcome, ""),
        ("broker process afterwards", "running" if alive else "exited", ""),
    ]
    print_table(
        f"fetch memory: {FETCHES} concurrent Fetch v{FETCH_VERSION} of a {PRODUCE_MB} MiB partition, max_bytes and"
        " partition_max_bytes 2 GB",
        ("measure", "ours", "issue target"),
        rows,
        notes=["MB = MiB here; peak = the larger of VmHWM (after resetting it) and VmRSS sampled every 2 ms"],
    )
