"""The whole broker over TCP, side by side with librdkafka's mock cluster, Apache Kafka and franz-go's kfake.

Six tables, one column per peer (`bench.peers`: ours, mock, kafka, kfake), the ratios ours/mock and ours/kafka,
and the issue's target for our broker (figures only; nothing fails on time, and a peer that cannot run here or
fails shows "n/a (why)" in its column; a peer that stops answering fails after PEER_BUDGET_S). Every broker is a
child process on 127.0.0.1, driven by one raw-protocol client process (`bench/wire_load.py`, on uvloop), one peer
at a time. The machine has 2 cores, so the client and the broker each get about one. Each table lists the settings
every peer ran with.

* startup: spawn (`Popen`) to the first ApiVersions v0 answer (our broker: `python server.py` with
  `listeners=PLAINTEXT://127.0.0.1:0` and a fresh `log.dirs`; the mock: `python mock_cluster.py`; kfake: the Go
  binary; these print `BOOTSTRAP=` first, the client then connects and asks). Kafka: tests/reference's
  `ReferenceKafka` formats fresh KRaft storage (its own JVM, shown as its own row), then spawns the broker; also
  shown is spawn -> group coordinator ready (every `__consumer_offsets` partition loaded), which is when a consumer
  can join. Best and median of STARTUP_RUNS (Kafka: KAFKA_STARTUP_RUNS) after one untimed start of each that fills
  the caches (a bytecode cache for the Python peers: an installed program starts from .pyc files).
* group formation: N members (own connection each, opened beforehand, gradually) join a fresh group with
  JoinGroup v5 and get their SyncGroup v3 answers, as a consumer does: an empty member id first (MEMBER_ID_REQUIRED
  answers with an id where the broker does that, the mock admits at once), rejoin on REBALANCE_IN_PROGRESS, the
  leader sends the assignments. Timed from the first JoinGroup written to the last SyncGroup answer of the
  generation that holds all N members. Members that already synced probe with a Heartbeat every 100 ms until then,
  to learn of a rebalance started by a later joiner. Session and rebalance timeouts 6 s. Each peer has
  FORMATION_BUDGET_S per size for its runs; a size where none finished prints "n/a (did not form in ...)".
* consumer-protocol group formation (KIP-848, `bench.consumer_group_load`): N = 10, 100, 1000 members join a fresh
  group with ConsumerGroupHeartbeat (epoch 0) subscribed to a topic of N partitions; timed from the first heartbeat
  written until every member sits at one epoch with its assignment acknowledged and all N partitions owned. Members
  acknowledge a new assignment at once and otherwise heartbeat every 100 ms. A peer that does not serve
  ConsumerGroupHeartbeat shows "not served". The classic and the consumer tables share this module's code: only
  the group (`bench.group_protocols.GroupProtocol`) differs.
* heartbeats: a Stable group of HB_MEMBERS members, one connection each, every connection sending its next
  Heartbeat v3 the moment the previous answer arrives, for HB_WINDOW_S; best of HB_WINDOWS windows. CPU rows say
  who was the bottleneck (1.0 = one core). Session timeout 10 s rather than 30 s: the mock waits session.timeout
  minus 1 s for a late joiner while the group forms, and the heartbeat cost does not depend on it.
  The same for a consumer-protocol group: back-to-back ConsumerGroupHeartbeat keep-alives (member id and epoch).
* produce/fetch: one producer connection sends one pre-encoded ~1 MiB record batch (uncompressed, 1 KB values)
  with Produce v8, acks=1, round-robin over the partitions, up to PRODUCE_IN_FLIGHT requests in flight (as
  librdkafka's max.in.flight); then one consumer connection reads it back with Fetch v11 (max_bytes 64 MiB,
  16 MiB per partition, one request in flight). In rounds of 4 batches per partition (produce, then fetch them),
  because the mock keeps only ~5 MiB per partition. MB/s of record-batch bytes (1 MB = 10^6 bytes), each direction
  timed on its own. The topic has 6 partitions (CreateTopics), except on the mock, which has no CreateTopics and
  auto-creates 4.
"""

from __future__ import annotations

import asyncio
import ssl
import statistics
import struct
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from bench.group_protocols import CLASSIC, CONSUMER, GroupFactory, GroupProtocol
from bench.peers import (
    PEER_BUDGET_S,
    Broker,
    Cell,
    Measure,
    NotServed,
    Peer,
    comparison_table,
    each_peer,
    peer_notes,
    peers,
    started,
    with_failures,
    within,
)
from bench.wire_load import (
    Connection,
    ServerProcess,
    api_versions_roundtrip,
    checked_error,
    create_topic,
    open_connections,
    print_table,
    pump_window,
    raise_fd_limit,
    request_frame,
    run_async,
    topic_partitions,
)
from protocol import api
from protocol.errors import ErrorCode
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.records import Record, RecordBatch, encode_batch
from protocol.registry import ApiKey

STARTUP_RUNS = 5
KAFKA_STARTUP_RUNS = 3  # a JVM start, plus the storage format's
STARTUP_TARGET_MS = 300.0

FORMATION_RUNS = {1: 5, 10: 5, 100: 3, 1000: 2}
FORMATION_TIMEOUT_MS = 6000
FORMATION_BUDGET_S = 120.0  # per peer and size, for all its runs

HB_MEMBERS = 100
HB_WINDOW_S = 3.0
HB_WINDOWS = 3
HB_SESSION_TIMEOUT_MS = 10_000
HB_TARGET = 20_000.0
HB_FIRST_CORRELATION_ID = 1000

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

T = TypeVar("T")
_BATCH_HEAD = struct.Struct(">qi")  # base offset, batch length (the 12 bytes of LOG_OVERHEAD)
_LAST_OFFSET_DELTA = struct.Struct(">i")
_LAST_OFFSET_DELTA_AT = 23
_RECORD_COUNT_AT = 57


def _median(values: Sequence[float]) -> float:
    return statistics.median(values)


# -- startup -------------------------------------------------------------------------------------------------------


def _startup_once(peer: Peer, server: Broker, cache: Path) -> dict[str, float]:
    """Phase -> ms from spawn: BOOTSTRAP line, first ApiVersions answer, groups served where that comes later.

    Kafka times its own phases (`bench.kafka_peer`), its storage format included.
    """
    if not isinstance(server, ServerProcess):
        server.start()
        try:
            phases: dict[str, float] = server.startup_ms()  # type: ignore[attr-defined]  # bench.kafka_peer
            return phases
        finally:
            server.stop()
    server.bytecode_cache = cache
    try:
        host, port = server.start()
        api_versions_roundtrip(host, port)
        answered = time.perf_counter()
        phases = {
            "bootstrap": (server.bootstrap_at - server.spawned_at) * 1e3,
            "api_versions": (answered - server.spawned_at) * 1e3,
        }
        if peer.wait_ready is not None:
            peer.wait_ready(server)
            phases["ready"] = (time.perf_counter() - server.spawned_at) * 1e3
        return phases
    finally:
        server.stop()


STARTUP_PHASES = (
    ("spawn -> BOOTSTRAP line", "bootstrap"),
    ("spawn -> first ApiVersions answer", "api_versions"),
    ("spawn -> group coordinator ready", "ready"),
    ("storage format (before spawn)", "format"),
)


def startup(columns: Sequence[Peer]) -> None:
    failures: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="bench-broker-startup-") as tmp:
        cache = Path(tmp) / "pycache"

        def measure(peer: Peer) -> list[dict[str, float]]:
            _startup_once(peer, peer.make(Path(tmp) / f"{peer.name}-warm-up"), cache)  # fills caches; not timed
            runs = KAFKA_STARTUP_RUNS if peer.name == "kafka" else STARTUP_RUNS
            return [_startup_once(peer, peer.make(Path(tmp) / f"{peer.name}-{run}"), cache) for run in range(runs)]

        results = each_peer(columns, measure, failures)
    measures = []
    for label, phase in STARTUP_PHASES:
        for stat, fn in (("best", min), ("median", _median)):
            values: dict[str, Cell] = {}
            for name, runs in results.items():
                figures = [run[phase] for run in runs if phase in run]
                values[name] = fn(figures) if figures else "-"
            target = ""
            if phase == "api_versions":
                ours, mock = values.get("ours"), values.get("mock")
                target = f"<= {STARTUP_TARGET_MS:g} ms and < mock"
                if isinstance(ours, float):
                    met = ours <= STARTUP_TARGET_MS and (not isinstance(mock, float) or ours < mock)
                    target += " (met)" if met else " (missed)"
            measures.append(Measure(f"{label}, {stat}", with_failures(values, failures), target))
    header, rows = comparison_table(measures, columns, ",.0f", with_target=True)
    runs_note = f"{STARTUP_RUNS} runs each (kafka {KAFKA_STARTUP_RUNS}), after one untimed start of each"
    print_table(
        f"startup: from spawn (Popen), {runs_note} (ms)",
        header,
        rows,
        notes=peer_notes(
            columns,
            failures,
            "bytecode cached (PYTHONPYCACHEPREFIX, filled by the untimed start), as an installed program starts",
            "kafka: ReferenceKafka formats fresh KRaft storage first (kafka-storage format, its own JVM): shown"
            " apart, not in the spawn figures",
            "group coordinator ready: kafka = every __consumer_offsets partition answers FindCoordinator and"
            " DescribeGroups without error; ours = its offsets.loaded log line (polled every 5 ms); mock and kfake"
            " serve groups as soon as they answer ('-')",
        ),
    )


# -- group formation -----------------------------------------------------------------------------------------------


@dataclass
class FormationResult:
    seconds: list[float]
    requests_per_member: list[float]
    gave_up: str | None = None
    #: Why a run failed (an error answer, a lost connection); the runs before it keep their figures.
    error: str | None = None


async def _formation_runs(server: Broker, size: int, runs: int, make_group: GroupFactory, tag: str) -> FormationResult:
    """Up to `runs` formations of a fresh group within FORMATION_BUDGET_S; `gave_up` says why when none finished."""
    connections = await open_connections(server.host, server.port, size)
    result = FormationResult([], [])
    deadline = time.monotonic() + FORMATION_BUDGET_S
    try:
        for run in range(runs):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            group = make_group(f"bench-form-{tag}-{size}-{run}-{time.time_ns()}", connections)
            try:
                result.seconds.append(await asyncio.wait_for(group.form(), left))
            except TimeoutError:
                break
            except NotServed:
                raise
            except Exception as exc:  # this size fails; the peer's other sizes keep their figures
                result.error = f"{type(exc).__name__}: {exc}"
                break
            result.requests_per_member.append(group.formation_requests / size)
            await group.leave()
    finally:
        for connection in connections:
            connection.close()
    if not result.seconds:
        result.gave_up = "failed" if result.error else f"did not form in {FORMATION_BUDGET_S:g} s"
    return result


def formation(columns: Sequence[Peer], protocol: GroupProtocol = CLASSIC) -> None:
    failures: dict[str, str] = {}
    spoken: dict[str, str] = {}
    run_errors: list[str] = []
    sizes = protocol.formation_sizes
    with tempfile.TemporaryDirectory(prefix="bench-broker-groups-") as tmp:

        def measure(peer: Peer) -> dict[int, FormationResult]:
            results: dict[int, FormationResult] = {}
            with started(peer, Path(tmp) / peer.name, protocol.topics) as server:
                connected = protocol.connect(peer, server, FORMATION_TIMEOUT_MS)
                spoken[peer.name] = connected.speaks
                for size in sizes:
                    tag = f"{protocol.name}-{peer.name}"
                    formed = _formation_runs(server, size, FORMATION_RUNS[size], connected.make_group, tag)
                    results[size] = run_async(formed)
                    shown = results[size].gave_up or f"{_median(results[size].seconds) * 1e3:,.1f} ms"
                    print(f"  {peer.name} N={size:,}: {shown}", flush=True)
                    if results[size].error:
                        run_errors.append(f"{peer.name} N={size:,}: {results[size].error}")
            return results

        results = each_peer(columns, measure, failures)
    measures = []
    for size in sizes:
        best: dict[str, Cell] = {}
        median: dict[str, Cell] = {}
        requests: dict[str, Cell] = {}
        for name, by_size in results.items():
            result = by_size[size]
            if result.gave_up:
                best[name] = median[name] = requests[name] = f"n/a ({result.gave_up})"
                continue
            best[name] = min(result.seconds) * 1e3
            median[name] = _median(result.seconds) * 1e3
            requests[name] = _median(result.requests_per_member)
        target = ""
        if protocol.with_targets:
            ours, mock = median.get("ours"), median.get("mock")
            met = isinstance(ours, float) and isinstance(mock, float) and ours < mock
            target = "< mock " + ("(met)" if met else "(missed)")
        runs = FORMATION_RUNS[size]
        measures += [
            Measure(f"N={size:,}: best of {runs} (ms)", with_failures(best, failures)),
            Measure(f"N={size:,}: median (ms)", with_failures(median, failures), target),
            Measure(
                f"N={size:,}: {protocol.requests_label}", with_failures(requests, failures), spec=".2f", compare=False
            ),
        ]
    header, rows = comparison_table(measures, columns, ",.1f", with_target=protocol.with_targets)
    print_table(
        protocol.formation_title,
        header,
        rows,
        notes=peer_notes(
            columns,
            failures,
            f"each peer gets {FORMATION_BUDGET_S:g} s per size for its runs; 'n/a (did not form ...)' = none finished",
            "spoken: " + "; ".join(f"{name} {speaks}" for name, speaks in spoken.items()),
            *(f"failed run: {error}" for error in run_errors),
            *(note.format(late_joiner_ms=FORMATION_TIMEOUT_MS - 1000) for note in protocol.formation_notes),
        ),
    )


# -- heartbeats ----------------------------------------------------------------------------------------------------


@dataclass
class HeartbeatResult:
    rate: float
    failures: int
    server_cpu: float
    client_cpu: float


async def _heartbeat_windows(server: Broker, make_group: GroupFactory) -> list[HeartbeatResult]:
    connections = await open_connections(server.host, server.port, HB_MEMBERS)
    group = make_group(f"bench-hb-{time.time_ns()}", connections)
    results = []
    try:
        await asyncio.wait_for(group.form(), 120)
        await group.steady()
        frames = group.heartbeat_frames(HB_FIRST_CORRELATION_ID)
        checks = [_heartbeat_ok(HB_FIRST_CORRELATION_ID + i, group.heartbeat_error_at) for i in range(len(connections))]
        for _ in range(HB_WINDOWS):
            window = await pump_window(connections, [[frame] for frame in frames], checks, HB_WINDOW_S, server.pid)
            results.append(HeartbeatResult(window.rate, window.failures, window.server_cpu or 0.0, window.client_cpu))
        await group.leave()
    finally:
        for connection in connections:
            connection.close()
    return results


def _heartbeat_ok(correlation_id: int, error_at: int) -> Callable[[bytes], bool]:
    def check(payload: bytes) -> bool:
        return checked_error(payload, correlation_id, skip=error_at) == ErrorCode.NONE

    return check


def heartbeats(columns: Sequence[Peer], protocol: GroupProtocol = CLASSIC) -> None:
    failures: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="bench-broker-hb-") as tmp:

        def measure(peer: Peer) -> HeartbeatResult:
            with started(peer, Path(tmp) / peer.name, protocol.topics) as server:
                make_group = protocol.connect(peer, server, HB_SESSION_TIMEOUT_MS).make_group
                windows: list[HeartbeatResult] = run_async(
                    within(_heartbeat_windows(server, make_group), PEER_BUDGET_S)
                )
            best = max(windows, key=lambda r: r.rate)
            best.failures = sum(w.failures for w in windows)
            return best

        results = each_peer(columns, measure, failures)
    ours, mock = results.get("ours"), results.get("mock")

    def per_peer(figure: Callable[[HeartbeatResult], float]) -> dict[str, Cell]:
        return with_failures({name: figure(r) for name, r in results.items()}, failures)

    target = ""
    if protocol.with_targets:
        met = ours is not None and ours.rate >= HB_TARGET and (mock is None or ours.rate > mock.rate)
        target = f">= {HB_TARGET:,.0f}/s and > mock " + ("(met)" if met else "(missed)")
    measures = [
        Measure("heartbeats/s", per_peer(lambda r: r.rate), target),
        Measure("broker CPU (1.0 = one core)", per_peer(lambda r: r.server_cpu), spec=".2f", compare=False),
        Measure("client CPU (1.0 = one core)", per_peer(lambda r: r.client_cpu), spec=".2f", compare=False),
        Measure("failed answers (all windows)", per_peer(lambda r: float(r.failures)), "0", compare=False),
    ]
    header, rows = comparison_table(measures, columns, ",.0f", with_target=protocol.with_targets)
    print_table(
        protocol.heartbeat_title.format(members=HB_MEMBERS) + f", best of {HB_WINDOWS} x {HB_WINDOW_S:g} s",
        header,
        rows,
        notes=peer_notes(
            columns, failures, "CPU rows say who was the bottleneck (1.0 = one core)", *protocol.heartbeat_notes
        ),
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


def _produce_frames(topic: str, partitions: int, batch: bytes) -> list[tuple[int, bytes]]:
    """(partition, Produce frame of `batch` to it) for every partition; the correlation id is the partition."""
    return [
        (
            p,
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
            ),
        )
        for p in range(partitions)
    ]


async def _produce(conn: Connection, frames: Sequence[tuple[int, bytes]], batches: int) -> tuple[float, dict[int, int]]:
    """Seconds to have `batches` batches acknowledged, round-robin over `frames` ((partition, frame) pairs); the
    base offset of each partition's first batch."""
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
        partition, frame = frames[i % len(frames)]
        put = asyncio.ensure_future(in_flight.put((partition, conn.send(frame))))
        await asyncio.wait({put, acks}, return_when=asyncio.FIRST_COMPLETED)
        if not put.done():  # an answer was an error: acknowledge() ended, nothing empties the queue any more
            put.cancel()
            break
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


def split_partitions(partitions: int, connections: int) -> list[list[int]]:
    """Partitions dealt round-robin to `connections` connections (each gets at least one when there are enough)."""
    return [list(range(c, partitions, connections)) for c in range(min(connections, partitions))]


async def _throughput(
    server: Broker,
    create: bool,
    tls: ssl.SSLContext | None = None,
    connections: int = 1,
    partitions: int = OUR_PARTITIONS,
    topic: str | None = None,
    volume: int = PRODUCE_BYTES,
    runs: int = PRODUCE_RUNS,
) -> ThroughputResult:
    """Produce then fetch back, in rounds of CHUNK_BATCHES batches per partition; rates over all the rounds.

    Rounds because the mock keeps only about 5 MiB per partition (older batches are dropped and fetching them is
    OFFSET_OUT_OF_RANGE); both brokers are driven the same way. `tls`: every connection speaks TLS with it
    (`bench_security`). `connections` producer connections and as many consumer connections each own their share
    of the partitions (`split_partitions`) and run at once; a direction is timed from the first request of a round
    to the last answer of every connection. `partitions` are created where `create` (else the topic, `topic` or
    auto-created, has what the peer gives it). `runs` times about `volume` bytes each way.
    """
    topic = topic or f"bench-pf-{time.time_ns()}"
    producers = [await Connection.open(server.host, server.port, tls) for _ in range(connections)]
    consumers = [await Connection.open(server.host, server.port, tls) for _ in range(connections)]
    try:
        if create:
            await create_topic(producers[0], topic, partitions)
        partitions = await topic_partitions(producers[0], topic)
        batch = _one_mib_batch()
        frames = _produce_frames(topic, partitions, batch)
        owned = split_partitions(partitions, connections)
        records_per_batch = struct.unpack_from(">i", batch, _RECORD_COUNT_AT)[0]
        per_round = CHUNK_BATCHES * partitions
        rounds = max(1, volume // BATCH_BYTES // per_round)
        result = ThroughputResult([], [], partitions, len(batch))
        for _ in range(runs):
            produce_s = fetch_s = 0.0
            for _ in range(rounds):
                started = time.perf_counter()
                produced = await asyncio.gather(
                    *(
                        _produce(conn, [frames[p] for p in mine], CHUNK_BATCHES * len(mine))
                        for conn, mine in zip(producers, owned, strict=False)
                    )
                )
                produce_s += time.perf_counter() - started
                first = {p: offset for _, offsets in produced for p, offset in offsets.items()}
                end = {p: first[p] + records_per_batch * CHUNK_BATCHES for p in range(partitions)}
                started = time.perf_counter()
                fetched = await asyncio.gather(
                    *(
                        _fetch(conn, topic, {p: first[p] for p in mine}, {p: end[p] for p in mine})
                        for conn, mine in zip(consumers, owned, strict=False)
                    )
                )
                fetch_s += time.perf_counter() - started
                got = sum(size for _, size in fetched)
                if got != per_round * len(batch):
                    raise RuntimeError(f"fetched {got} bytes, produced {per_round * len(batch)}")
            total = rounds * per_round * len(batch)
            result.produce_mbs.append(total / produce_s / 1e6)
            result.fetch_mbs.append(total / fetch_s / 1e6)
        return result
    finally:
        for conn in producers + consumers:
            conn.close()


def produce_fetch(columns: Sequence[Peer]) -> None:
    failures: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="bench-broker-pf-") as tmp:

        def measure(peer: Peer) -> ThroughputResult:
            with started(peer, Path(tmp) / peer.name) as server:
                result: ThroughputResult = run_async(within(_throughput(server, peer.creates_topics), PEER_BUDGET_S))
                return result

        results = each_peer(columns, measure, failures)
    ours = results.get("ours")
    measures = []
    for label, attr in (("produce MB/s (acks=1)", "produce_mbs"), ("fetch MB/s", "fetch_mbs")):
        best: dict[str, Cell] = {name: max(getattr(r, attr)) for name, r in results.items()}
        ours_best = best.get("ours")
        met = isinstance(ours_best, float) and ours_best >= THROUGHPUT_TARGET_MBS
        measures.append(
            Measure(
                label,
                with_failures(best, failures),
                f">= {THROUGHPUT_TARGET_MBS:g} MB/s " + ("(met)" if met else "(missed)"),
            )
        )
    header, rows = comparison_table(measures, columns, ",.1f", with_target=True)
    batch_bytes = ours.batch_bytes if ours else BATCH_BYTES
    print_table(
        f"produce/fetch: one producer ({batch_bytes:,}-byte batches, {PRODUCE_IN_FLIGHT} in flight), "
        f"one consumer; best of {PRODUCE_RUNS} x {PRODUCE_BYTES // 2**20} MiB",
        header,
        rows,
        notes=peer_notes(
            columns,
            failures,
            "partitions: "
            + ", ".join(
                f"{name} {r.partitions}" + (" (CreateTopics)" if _creates(columns, name) else " (auto-created)")
                for name, r in results.items()
            ),
        ),
    )


def _creates(columns: Sequence[Peer], name: str) -> bool:
    return any(p.name == name and p.creates_topics for p in columns)


def run() -> None:
    columns = peers()
    raise_fd_limit(4 * max(CLASSIC.formation_sizes + CONSUMER.formation_sizes) + 256)
    print("peers: " + "; ".join(f"{p.name} {'ok' if p.available else p.na}" for p in columns), flush=True)
    startup(columns)
    for protocol in (CLASSIC, CONSUMER):
        formation(columns, protocol)
    for protocol in (CLASSIC, CONSUMER):
        heartbeats(columns, protocol)
    produce_fetch(columns)


if __name__ == "__main__":
    run()
