"""The whole broker over TCP, side by side with librdkafka's mock cluster started in the same run.

Four tables, each with our figure, the mock's, their ratio and the issue's target (figures only; nothing fails on
time). Both brokers are child processes on 127.0.0.1, driven by one raw-protocol client process
(`bench/wire_load.py`, on uvloop); they are measured one at a time, alternating, so a burst of load from other
work on the machine hits both alike. The machine has 2 cores, so the client and the broker each get about one.

* startup: `Popen` of the process to the first ApiVersions v0 answer (our broker: `python server.py` with
  `listeners=PLAINTEXT://127.0.0.1:0` and a fresh `log.dirs`; the mock: `python mock_cluster.py`); both print
  `BOOTSTRAP=` first, the client then connects and asks. Best and median of STARTUP_RUNS, alternating, after one
  untimed start of each that fills a bytecode cache (an installed program starts from .pyc files; without the
  cache, e.g. under PYTHONDONTWRITEBYTECODE=1, every start also compiles our ~100 modules from source).
* group formation: N members (own connection each, opened beforehand, gradually) join a fresh group with
  JoinGroup v5 and get their SyncGroup v3 answers, as a consumer does: an empty member id first (our broker
  answers MEMBER_ID_REQUIRED with an id, the mock admits at once), rejoin on REBALANCE_IN_PROGRESS, the leader
  sends the assignments. Timed from the first JoinGroup written to the last SyncGroup answer of the generation
  that holds all N members. Members that already synced probe with a Heartbeat every 100 ms until then, to learn of
  a rebalance started by a later joiner. Our broker runs with group.initial.rebalance.delay.ms=0, the mock with
  --rebalance-delay-ms 0; session and rebalance timeouts 6 s (our group.min.session.timeout.ms).
* heartbeats: a Stable group of HB_MEMBERS members, one connection each, every connection sending its next
  Heartbeat v3 the moment the previous answer arrives, for HB_WINDOW_S; best of HB_WINDOWS windows. CPU columns say
  who was the bottleneck (1.0 = one core). Session timeout 10 s rather than 30 s: the mock waits session.timeout
  minus 1 s for a late joiner while the group forms, and the heartbeat cost does not depend on it.
* produce/fetch: one producer connection sends one pre-encoded ~1 MiB record batch (uncompressed, 1 KB values)
  with Produce v8, acks=1, round-robin over the partitions, up to PRODUCE_IN_FLIGHT requests in flight (as
  librdkafka's max.in.flight); then one consumer connection reads it back with Fetch v11 (max_bytes 64 MiB,
  16 MiB per partition, one request in flight). In rounds of 4 batches per partition (produce, then fetch them),
  because the mock keeps only ~5 MiB per partition. MB/s of record-batch bytes (1 MB = 10^6 bytes), each direction
  timed on its own. Our topic has 6 partitions (CreateTopics); the mock has no CreateTopics and auto-creates 4.
"""

from __future__ import annotations

import asyncio
import statistics
import struct
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.wire_load import (
    HEARTBEAT_VERSION,
    Connection,
    GroupRun,
    ServerProcess,
    api_versions_roundtrip,
    checked_error,
    cpu_seconds,
    create_topic,
    fmt,
    open_connections,
    print_table,
    raise_fd_limit,
    ratio,
    request_frame,
    run_async,
    topic_partitions,
)
from protocol import api
from protocol.errors import ErrorCode
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.records import Record, RecordBatch, encode_batch
from protocol.registry import ApiKey

STARTUP_RUNS = 5
STARTUP_TARGET_MS = 300.0

FORMATION_SIZES = (1, 10, 100, 1000)
FORMATION_RUNS = {1: 5, 10: 5, 100: 3, 1000: 2}
FORMATION_TIMEOUT_MS = 6000

HB_MEMBERS = 100
HB_WINDOW_S = 3.0
HB_WINDOWS = 3
HB_SESSION_TIMEOUT_MS = 10_000
HB_TARGET = 20_000.0

BATCH_BYTES = 1024 * 1024
VALUE_BYTES = 1000
PRODUCE_BYTES = 192 * 1024 * 1024
PRODUCE_IN_FLIGHT = 5
CHUNK_BATCHES = 4  # per partition and round: the mock keeps only ~5 MiB per partition
PRODUCE_RUNS = 2
FETCH_MAX_BYTES = 64 * 1024 * 1024
FETCH_PARTITION_MAX_BYTES = 16 * 1024 * 1024
OUR_PARTITIONS = 6
THROUGHPUT_TARGET_MBS = 100.0
PRODUCE_VERSION = 8
FETCH_VERSION = 11

OURS_GROUP_SETTINGS = {"group.initial.rebalance.delay.ms": "0"}
_BATCH_HEAD = struct.Struct(">qi")  # base offset, batch length (the 12 bytes of LOG_OVERHEAD)
_LAST_OFFSET_DELTA = struct.Struct(">i")
_LAST_OFFSET_DELTA_AT = 23
_RECORD_COUNT_AT = 57


def _median(values: Sequence[float]) -> float:
    return statistics.median(values)


# -- startup -------------------------------------------------------------------------------------------------------


def _startup_once(server: ServerProcess, cache: Path) -> tuple[float, float]:
    """(ms to the BOOTSTRAP line, ms to the first ApiVersions answer), both from Popen."""
    server.bytecode_cache = cache
    try:
        host, port = server.start()
        api_versions_roundtrip(host, port)
        answered = time.perf_counter()
        return (server.bootstrap_at - server.spawned_at) * 1e3, (answered - server.spawned_at) * 1e3
    finally:
        server.stop()


def startup(mock: bool) -> None:
    ours: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-broker-startup-") as tmp:
        cache = Path(tmp) / "pycache"
        _startup_once(ServerProcess.ours(Path(tmp) / "warm-up"), cache)  # fills the bytecode cache; not timed
        if mock:
            _startup_once(ServerProcess.mock(0), cache)
        for run in range(STARTUP_RUNS):
            ours.append(_startup_once(ServerProcess.ours(Path(tmp) / f"run-{run}"), cache))
            if mock:
                theirs.append(_startup_once(ServerProcess.mock(0), cache))
    rows = []
    for label, index in (("spawn -> BOOTSTRAP line", 0), ("spawn -> first ApiVersions answer", 1)):
        o = [r[index] for r in ours]
        m = [r[index] for r in theirs]
        target = f"<= {STARTUP_TARGET_MS:g} ms and < mock" if index == 1 else "-"
        for stat, fn in (("best", min), ("median", _median)):
            ours_ms = fn(o)
            mock_ms = fn(m) if m else None
            verdict = target
            if index == 1:
                met = ours_ms <= STARTUP_TARGET_MS and (mock_ms is None or ours_ms < mock_ms)
                verdict += " (met)" if met else " (missed)"
            rows.append(
                (f"{label}, {stat}", fmt(ours_ms, ".0f"), fmt(mock_ms, ".0f"), ratio(ours_ms, mock_ms), verdict)
            )
    print_table(
        f"startup: Popen to the first ApiVersions v0 answer, {STARTUP_RUNS} runs each (ms)",
        ("measure", "ours ms", "mock ms", "ratio", "issue target"),
        rows,
        notes=[
            "bytecode cached (PYTHONPYCACHEPREFIX, filled by one untimed start of each), as an installed program"
            " starts, even where PYTHONDONTWRITEBYTECODE is set",
            *([] if mock else ["mock column unavailable: /work/shared/tools/mock_cluster.py is not present"]),
        ],
    )


# -- group formation -----------------------------------------------------------------------------------------------


@dataclass
class FormationResult:
    seconds: list[float]
    joins_per_member: list[float]


async def _formation_runs(host: str, port: int, size: int, runs: int, tag: str) -> FormationResult:
    connections = await open_connections(host, port, size)
    result = FormationResult([], [])
    try:
        for run in range(runs):
            group = GroupRun(
                f"bench-form-{tag}-{size}-{run}-{time.time_ns()}",
                connections,
                session_timeout_ms=FORMATION_TIMEOUT_MS,
                rebalance_timeout_ms=FORMATION_TIMEOUT_MS,
            )
            result.seconds.append(await asyncio.wait_for(group.form(), 120))
            result.joins_per_member.append(group.joins_sent / size)
            await group.leave()
    finally:
        for connection in connections:
            connection.close()
    return result


def formation(mock: bool) -> None:
    results: dict[tuple[str, int], FormationResult] = {}
    with tempfile.TemporaryDirectory(prefix="bench-broker-groups-") as tmp:
        servers = {"ours": ServerProcess.ours(Path(tmp), OURS_GROUP_SETTINGS)}
        if mock:
            servers["mock"] = ServerProcess.mock(0)
        try:
            endpoints = {name: server.start() for name, server in servers.items()}
            for size in FORMATION_SIZES:
                runs = FORMATION_RUNS[size]
                for name, (host, port) in endpoints.items():
                    results[(name, size)] = run_async(_formation_runs(host, port, size, runs, name))
        finally:
            for server in servers.values():
                server.stop()
    rows = []
    for size in FORMATION_SIZES:
        ours = results[("ours", size)]
        theirs = results.get(("mock", size))
        ours_median = _median(ours.seconds) * 1e3
        mock_median = _median(theirs.seconds) * 1e3 if theirs else None
        met = mock_median is not None and ours_median < mock_median
        rows.append(
            (
                f"N={size:,} ({len(ours.seconds)} runs)",
                fmt(min(ours.seconds) * 1e3, ",.1f"),
                fmt(ours_median, ",.1f"),
                fmt(min(theirs.seconds) * 1e3 if theirs else None, ",.1f"),
                fmt(mock_median, ",.1f"),
                ratio(ours_median, mock_median),
                f"{_median(ours.joins_per_member):.2f} / "
                + (f"{_median(theirs.joins_per_member):.2f}" if theirs else "n/a"),
                "< mock " + ("(met)" if met else "(missed)" if mock_median is not None else "(no mock)"),
            )
        )
    print_table(
        "group formation: first JoinGroup written -> last SyncGroup answer (ms), fresh group per run",
        (
            "members",
            "ours best",
            "ours median",
            "mock best",
            "mock median",
            "ratio (median)",
            "joins/member o/m",
            "target",
        ),
        rows,
        notes=[
            "joins/member: JoinGroup requests per member (ours: 2 = the MEMBER_ID_REQUIRED round trip; more ="
            " extra rebalance rounds)",
            f"the mock elects at once with whoever joined, then waits session.timeout-1s ({FORMATION_TIMEOUT_MS - 1000}"
            " ms here) for any later joiner: that timer, not its speed, sets its figure for N > 1",
            *([] if mock else ["mock column unavailable: /work/shared/tools/mock_cluster.py is not present"]),
        ],
    )


# -- heartbeats ----------------------------------------------------------------------------------------------------


@dataclass
class HeartbeatResult:
    rate: float
    failures: int
    server_cpu: float
    client_cpu: float


async def _heartbeat_windows(server: ServerProcess) -> list[HeartbeatResult]:
    connections = await open_connections(server.host, server.port, HB_MEMBERS)
    group = GroupRun(
        f"bench-hb-{time.time_ns()}",
        connections,
        session_timeout_ms=HB_SESSION_TIMEOUT_MS,
        rebalance_timeout_ms=HB_SESSION_TIMEOUT_MS,
    )
    results = []
    try:
        await asyncio.wait_for(group.form(), 120)
        frames = []
        for i, member_id in enumerate(group.member_ids):
            body = HeartbeatRequest(group_id=group.group_id, generation_id=group.generation, member_id=member_id)
            frames.append(request_frame(ApiKey.HEARTBEAT, HEARTBEAT_VERSION, body, correlation_id=1000 + i))
        assert server.process is not None
        for _ in range(HB_WINDOWS):
            server_cpu, client_cpu = cpu_seconds(server.process.pid), cpu_seconds()
            started = time.perf_counter()
            stop_at = started + HB_WINDOW_S
            pumps = [
                conn.pump([frame], _heartbeat_ok(1000 + i), stop_at)
                for i, (conn, frame) in enumerate(zip(connections, frames, strict=True))
            ]
            await asyncio.gather(*(pump.done for pump in pumps))
            elapsed = time.perf_counter() - started
            results.append(
                HeartbeatResult(
                    rate=sum(p.count for p in pumps) / elapsed,
                    failures=sum(p.failures for p in pumps),
                    server_cpu=(cpu_seconds(server.process.pid) - server_cpu) / elapsed,
                    client_cpu=(cpu_seconds() - client_cpu) / elapsed,
                )
            )
        await group.leave()
    finally:
        for connection in connections:
            connection.close()
    return results


def _heartbeat_ok(correlation_id: int) -> Callable[[bytes], bool]:
    def check(payload: bytes) -> bool:  # Heartbeat v3: header v0, throttle_time_ms, error_code
        return checked_error(payload, correlation_id, skip=4) == ErrorCode.NONE

    return check


def heartbeats(mock: bool) -> None:
    results: dict[str, HeartbeatResult] = {}
    with tempfile.TemporaryDirectory(prefix="bench-broker-hb-") as tmp:
        makers: dict[str, Callable[[], ServerProcess]] = {
            "ours": lambda: ServerProcess.ours(Path(tmp), OURS_GROUP_SETTINGS)
        }
        if mock:
            makers["mock"] = lambda: ServerProcess.mock(0)
        for name, make in makers.items():
            with make() as server:
                server.start()
                windows = run_async(_heartbeat_windows(server))
                results[name] = max(windows, key=lambda r: r.rate)
                results[name].failures = sum(w.failures for w in windows)
    ours, theirs = results["ours"], results.get("mock")
    met = ours.rate >= HB_TARGET and (theirs is None or ours.rate > theirs.rate)
    rows = [
        (
            "heartbeats/s",
            fmt(ours.rate),
            fmt(theirs.rate if theirs else None),
            ratio(ours.rate, theirs.rate if theirs else None),
            f">= {HB_TARGET:,.0f}/s and > mock " + ("(met)" if met else "(missed)"),
        ),
        (
            "broker CPU (1.0 = one core)",
            f"{ours.server_cpu:.2f}",
            fmt(theirs.server_cpu if theirs else None, ".2f"),
            "",
            "",
        ),
        (
            "client CPU (1.0 = one core)",
            f"{ours.client_cpu:.2f}",
            fmt(theirs.client_cpu if theirs else None, ".2f"),
            "",
            "",
        ),
        ("failed answers (all windows)", str(ours.failures), fmt(theirs.failures if theirs else None, "d"), "", "0"),
    ]
    print_table(
        f"heartbeats: {HB_MEMBERS} members of a Stable group, one connection each, back-to-back Heartbeat v3, "
        f"best of {HB_WINDOWS} x {HB_WINDOW_S:g} s",
        ("measure", "ours", "mock", "ratio", "issue target"),
        rows,
        notes=[] if mock else ["mock column unavailable: /work/shared/tools/mock_cluster.py is not present"],
    )


# -- produce / fetch -----------------------------------------------------------------------------------------------


def _one_mib_batch() -> bytes:
    """The largest batch of VALUE_BYTES-byte records that stays within 1 MiB (and so within message.max.bytes)."""
    count = BATCH_BYTES // (VALUE_BYTES + 8)
    while True:
        records = [
            Record(offset_delta=i, timestamp_delta=0, key=None, value=bytes([i % 251]) * VALUE_BYTES)
            for i in range(count)
        ]
        batch = encode_batch(RecordBatch.from_records(records, base_timestamp=int(time.time() * 1000)))
        if len(batch) <= BATCH_BYTES:
            return batch
        count -= 1


@dataclass
class ThroughputResult:
    produce_mbs: list[float]
    fetch_mbs: list[float]
    partitions: int
    batch_bytes: int


def _produce_frames(topic: str, partitions: int, batch: bytes) -> list[bytes]:
    return [
        request_frame(
            ApiKey.PRODUCE,
            PRODUCE_VERSION,
            ProduceRequest(
                acks=1,
                timeout_ms=30_000,
                topic_data=[
                    TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=p, records=batch)])
                ],
            ),
            correlation_id=p,
        )
        for p in range(partitions)
    ]


async def _produce(conn: Connection, frames: list[bytes], batches: int) -> tuple[float, dict[int, int]]:
    """Seconds to have `batches` batches acknowledged; the base offset of each partition's first batch."""
    in_flight: asyncio.Queue[tuple[int, asyncio.Future[bytes]]] = asyncio.Queue(PRODUCE_IN_FLIGHT)
    first_offsets: dict[int, int] = {}

    async def acknowledge() -> None:
        for _ in range(batches):
            partition, answer = await in_flight.get()
            header, response = api.decode_response(ApiKey.PRODUCE, PRODUCE_VERSION, await answer)
            result = response.responses[0].partition_responses[0]
            if header.correlation_id != partition or result.error_code != ErrorCode.NONE:
                raise RuntimeError(f"Produce to partition {partition}: error {result.error_code}")
            first_offsets.setdefault(partition, result.base_offset)

    started = time.perf_counter()
    acks = asyncio.ensure_future(acknowledge())
    for i in range(batches):
        partition = i % len(frames)
        await in_flight.put((partition, conn.send(frames[partition])))
    await acks
    return time.perf_counter() - started, first_offsets


def _complete_batches(records: bytes) -> tuple[int, int | None]:
    """(bytes of whole batches at the front of `records`, the offset after the last one, or None if none)."""
    pos = 0
    next_offset = None
    size = len(records)
    while pos + 12 <= size:
        base_offset, length = _BATCH_HEAD.unpack_from(records, pos)
        end = pos + 12 + length
        if end > size:
            break
        next_offset = base_offset + _LAST_OFFSET_DELTA.unpack_from(records, pos + _LAST_OFFSET_DELTA_AT)[0] + 1
        pos = end
    return pos, next_offset


async def _fetch(conn: Connection, topic: str, start: dict[int, int], end: dict[int, int]) -> tuple[float, int]:
    """Seconds and record bytes to read every partition from `start` up to `end` (exclusive)."""
    offsets = dict(start)
    total = 0
    started = time.perf_counter()
    while any(offsets[p] < end[p] for p in offsets):
        wanted = [p for p in sorted(offsets) if offsets[p] < end[p]]
        response = await conn.call(
            ApiKey.FETCH,
            FETCH_VERSION,
            FetchRequest(
                replica_id=-1,
                max_wait_ms=500,
                min_bytes=1,
                max_bytes=FETCH_MAX_BYTES,
                isolation_level=0,
                session_id=0,
                session_epoch=-1,
                topics=[
                    FetchTopic(
                        topic=topic,
                        partitions=[
                            FetchPartition(
                                partition=p, fetch_offset=offsets[p], partition_max_bytes=FETCH_PARTITION_MAX_BYTES
                            )
                            for p in wanted
                        ],
                    )
                ],
            ),
        )
        if response.error_code != ErrorCode.NONE:
            raise RuntimeError(f"Fetch: error {response.error_code}")
        for data in response.responses[0].partitions:
            if data.error_code != ErrorCode.NONE:
                raise RuntimeError(f"Fetch partition {data.partition_index}: error {data.error_code}")
            used, next_offset = _complete_batches(data.records or b"")
            if next_offset is not None:
                offsets[data.partition_index] = max(offsets[data.partition_index], next_offset)
                total += used
    return time.perf_counter() - started, total


async def _throughput(server: ServerProcess, create: bool) -> ThroughputResult:
    """Produce then fetch back, in rounds of CHUNK_BATCHES batches per partition; rates over all the rounds.

    Rounds because the mock keeps only about 5 MiB per partition (older batches are dropped and fetching them is
    OFFSET_OUT_OF_RANGE); both brokers are driven the same way.
    """
    topic = f"bench-pf-{time.time_ns()}"
    producer = await Connection.open(server.host, server.port)
    consumer = await Connection.open(server.host, server.port)
    try:
        if create:
            await create_topic(producer, topic, OUR_PARTITIONS)
        partitions = await topic_partitions(producer, topic)
        batch = _one_mib_batch()
        frames = _produce_frames(topic, partitions, batch)
        records_per_batch = struct.unpack_from(">i", batch, _RECORD_COUNT_AT)[0]
        per_round = CHUNK_BATCHES * partitions
        rounds = max(1, PRODUCE_BYTES // BATCH_BYTES // per_round)
        result = ThroughputResult([], [], partitions, len(batch))
        for _ in range(PRODUCE_RUNS):
            produce_s = fetch_s = 0.0
            for _ in range(rounds):
                seconds, first = await _produce(producer, frames, per_round)
                produce_s += seconds
                end = {p: first[p] + records_per_batch * CHUNK_BATCHES for p in range(partitions)}
                seconds, fetched = await _fetch(consumer, topic, first, end)
                fetch_s += seconds
                if fetched != per_round * len(batch):
                    raise RuntimeError(f"fetched {fetched} bytes, produced {per_round * len(batch)}")
            total = rounds * per_round * len(batch)
            result.produce_mbs.append(total / produce_s / 1e6)
            result.fetch_mbs.append(total / fetch_s / 1e6)
        return result
    finally:
        producer.close()
        consumer.close()


def produce_fetch(mock: bool) -> None:
    results: dict[str, ThroughputResult] = {}
    with tempfile.TemporaryDirectory(prefix="bench-broker-pf-") as tmp:
        makers: dict[str, tuple[Callable[[], ServerProcess], bool]] = {
            "ours": (lambda: ServerProcess.ours(Path(tmp)), True)
        }
        if mock:
            makers["mock"] = (lambda: ServerProcess.mock(0), False)
        for name, (make, create) in makers.items():
            with make() as server:
                server.start()
                results[name] = run_async(_throughput(server, create))
    ours, theirs = results["ours"], results.get("mock")
    rows = []
    for label, attr in (("produce MB/s (acks=1)", "produce_mbs"), ("fetch MB/s", "fetch_mbs")):
        ours_best = max(getattr(ours, attr))
        mock_best = max(getattr(theirs, attr)) if theirs else None
        met = ours_best >= THROUGHPUT_TARGET_MBS
        rows.append(
            (
                label,
                fmt(ours_best, ",.1f"),
                fmt(mock_best, ",.1f"),
                ratio(ours_best, mock_best),
                f">= {THROUGHPUT_TARGET_MBS:g} MB/s " + ("(met)" if met else "(missed)"),
            )
        )
    print_table(
        f"produce/fetch: one producer ({ours.batch_bytes:,}-byte batches, {PRODUCE_IN_FLIGHT} in flight), "
        f"one consumer; best of {PRODUCE_RUNS} x {PRODUCE_BYTES // 2**20} MiB",
        ("direction", "ours", "mock", "ratio", "issue target"),
        rows,
        notes=[
            f"partitions: ours {ours.partitions} (CreateTopics), mock "
            + (f"{theirs.partitions} (auto-created; it has no CreateTopics)" if theirs else "unavailable")
        ],
    )


def run() -> None:
    mock = ServerProcess.mock_available()
    raise_fd_limit(4 * max(FORMATION_SIZES) + 256)
    startup(mock)
    formation(mock)
    heartbeats(mock)
    produce_fetch(mock)


if __name__ == "__main__":
    run()
