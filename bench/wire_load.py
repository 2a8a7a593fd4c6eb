"""Raw Kafka-protocol load helpers shared by the broker benchmarks (`bench_broker`, `bench_offsets`).

Nothing here is a client library: it is the least machinery that lets one Python process drive a broker hard enough
to measure it, on top of our own codec (`protocol.api`) and framing (`protocol.frame`).

* `ServerProcess`: our broker (`python server.py`) or librdkafka's mock cluster
  (`/work/shared/tools/mock_cluster.py`) as a child process; `start()` returns once it printed `BOOTSTRAP=`.
  Its output is drained by a thread (our broker logs JSON lines to stdout; a full pipe would stall it).
* `Connection`: one TCP connection as an `asyncio.Protocol`. `call()` encodes, sends and decodes one request;
  `send()` writes a pre-encoded frame and returns a future of the raw response payload (FIFO, as Kafka answers in
  order, so requests may be pipelined); `pump()` keeps one (or `depth`) pre-encoded request(s) in flight back-to-back
  from inside `data_received`, without a coroutine switch per request, so the load generator costs as little CPU as
  possible (the machine has 2 cores: every microsecond the client spends is taken from the broker).
* `GroupRun`: N members forming one classic consumer group, each on its own connection, following the protocol as
  a real consumer does (MEMBER_ID_REQUIRED round trip, rejoin on REBALANCE_IN_PROGRESS/ILLEGAL_GENERATION, the
  leader assigns), until every member holds a SyncGroup answer of the same generation.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import os
import resource
import signal
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protocol import api
from protocol.consumer_protocol import encode_assignment, encode_subscription
from protocol.errors import ErrorCode
from protocol.frame import FrameBuffer
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.consumer_protocol_assignment import ConsumerProtocolAssignment, TopicPartition
from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.leave_group import LeaveGroupRequest
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.messages.request_header import RequestHeader
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from protocol.registry import ApiKey

ROOT = Path(__file__).resolve().parents[1]
MOCK_CLUSTER = Path("/work/shared/tools/mock_cluster.py")
CLIENT_ID = "bench"
MAX_RESPONSE_BYTES = 1 << 30
_SIZE = _CORRELATION_ID = struct.Struct(">i")
_ERROR_CODE = struct.Struct(">h")

# The versions every benchmark speaks: within what both our broker and the mock serve (the mock: JoinGroup <= v6,
# SyncGroup <= v4, ApiVersions <= v2), and not flexible where a fixed-offset error check is wanted (Heartbeat v3).
JOIN_VERSION = 5
SYNC_VERSION = 3
HEARTBEAT_VERSION = 3
LEAVE_VERSION = 1


# -- frames --------------------------------------------------------------------------------------------------------


def request_frame(api_key: int, version: int, body: Any, correlation_id: int = 1, client_id: str = CLIENT_ID) -> bytes:
    """A whole request frame, size prefix included."""
    header = RequestHeader(
        request_api_key=api_key, request_api_version=version, correlation_id=correlation_id, client_id=client_id
    )
    return api.encode_request(header, body)


def checked_error(payload: bytes, correlation_id: int, skip: int) -> int:
    """The int16 error code after `skip` body bytes of a v0-header response, once its correlation id is checked."""
    got = _CORRELATION_ID.unpack_from(payload)[0]
    if got != correlation_id:
        raise RuntimeError(f"response correlation id {got}, expected {correlation_id}")
    return int(_ERROR_CODE.unpack_from(payload, 4 + skip)[0])


# -- processes -----------------------------------------------------------------------------------------------------


_LIVE: set[ServerProcess] = set()


@atexit.register
def _kill_leftovers() -> None:
    """Safety net: no broker outlives the benchmark, even after an exception or Ctrl-C skipped a `stop()`."""
    for server in list(_LIVE):
        server.kill()


class ServerProcess:
    """A broker child process that announces itself with a `BOOTSTRAP=host:port` line on stdout."""

    def __init__(self, argv: Sequence[str], name: str) -> None:
        self.argv = list(argv)
        self.name = name
        #: When set, the child caches bytecode there (PYTHONPYCACHEPREFIX) even if PYTHONDONTWRITEBYTECODE is set
        #: in this environment, so that a start is timed as an installed program starts: from .pyc files.
        self.bytecode_cache: Path | None = None
        self.process: subprocess.Popen[str] | None = None
        self.lines: list[str] = []
        self.host = ""
        self.port = 0
        self.spawned_at = 0.0
        self.bootstrap_at = 0.0
        self._pump: threading.Thread | None = None

    @classmethod
    def ours(cls, data_dir: Path, overrides: dict[str, str] | None = None) -> ServerProcess:
        settings = {"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(data_dir), **(overrides or {})}
        argv = [sys.executable, str(ROOT / "server.py")]
        for key, value in settings.items():
            argv += ["--override", f"{key}={value}"]
        return cls(argv, "ours")

    @classmethod
    def mock(cls, rebalance_delay_ms: int | None = 0, topics: Mapping[str, int] | None = None) -> ServerProcess:
        """The mock; `topics` (name -> partitions) are created at start, as it has no CreateTopics."""
        argv = [sys.executable, str(MOCK_CLUSTER)]
        if rebalance_delay_ms is not None:
            argv += ["--rebalance-delay-ms", str(rebalance_delay_ms)]
        for name, partitions in (topics or {}).items():
            argv += ["--topic", f"{name}:{partitions}"]
        return cls(argv, "mock")

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    @staticmethod
    def mock_available() -> bool:
        return MOCK_CLUSTER.is_file()

    def start(self, timeout_s: float = 30.0) -> tuple[str, int]:
        """Spawn, read stdout up to the BOOTSTRAP line (timed), then leave the rest to a draining thread."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_")}
        if self.bytecode_cache is not None:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(self.bytecode_cache)
        self.lines = []
        self.spawned_at = time.perf_counter()
        self.process = subprocess.Popen(
            self.argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if self.name == "ours" else subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=ROOT,
        )
        _LIVE.add(self)
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout_s
        bootstrap = ""
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            if line.startswith("BOOTSTRAP="):
                self.bootstrap_at = time.perf_counter()
                bootstrap = line.strip().split("=", 1)[1].split(",")[0]
                break
        if not bootstrap:
            self.kill()
            raise RuntimeError(f"{self.name} did not start:\n" + "".join(self.lines[-30:]))
        host, port = bootstrap.rsplit(":", 1)
        self.host, self.port = host, int(port)
        self._pump = threading.Thread(target=self._drain, daemon=True)
        self._pump.start()
        return self.host, self.port

    def _drain(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)

    def wait_for_line(self, needle: str, timeout_s: float = 60.0) -> str:
        """The first output line containing `needle` (polling the drained output)."""
        deadline = time.monotonic() + timeout_s
        seen = 0
        while time.monotonic() < deadline:
            lines = self.lines
            for line in lines[seen:]:
                if needle in line:
                    return line
            seen = len(lines)
            time.sleep(0.005)
        raise TimeoutError(f"{self.name}: no line with {needle!r} within {timeout_s}s")

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGTERM and wait (our broker flushes and exits 0); SIGKILL if it does not go."""
        if self.process is None or self.process.poll() is not None:
            self._release()
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        self._release()

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self._release()

    def _release(self) -> None:
        _LIVE.discard(self)
        if self._pump is not None:
            self._pump.join(5)
            self._pump = None
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def api_versions_roundtrip(host: str, port: int, timeout_s: float = 10.0) -> bytes:
    """Blocking: connect (retrying while refused), send ApiVersions v0, return the response payload."""
    frame = request_frame(ApiKey.API_VERSIONS, 0, ApiVersionsRequest(), 1)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            sock = socket.create_connection((host, port), timeout=timeout_s)
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.001)
    with sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(frame)
        size = _SIZE.unpack(_recv_exactly(sock, 4))[0]
        return _recv_exactly(sock, size)


def served_version(host: str, port: int, api_key: int, highest: int) -> int | None:
    """The highest version of `api_key` up to `highest` that the peer advertises in ApiVersions, or None."""
    _, response = api.decode_response(ApiKey.API_VERSIONS, 0, api_versions_roundtrip(host, port))
    for entry in response.api_keys:
        if entry.api_key == api_key and entry.min_version <= highest:
            return int(min(entry.max_version, highest))
    return None


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError("peer closed mid-response")
        chunks += chunk
    return bytes(chunks)


def raise_fd_limit(wanted: int) -> int:
    """Raise RLIMIT_NOFILE's soft limit towards `wanted` (capped by the hard limit); the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft


def run_async(coroutine: Any) -> Any:
    """Run a coroutine on uvloop (as the broker does), so the load generator's own overhead stays small."""
    import uvloop

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coroutine)


# -- connections ---------------------------------------------------------------------------------------------------


class Pump:
    """Keep one pre-encoded request in flight on a connection until `stop_at` (perf_counter seconds).

    `frames` are sent in turn (one is enough when the requests may be identical); `check(payload)` says whether an
    answer is a success, failures are counted rather than raised (raising inside `data_received` would only kill
    the transport).
    """

    def __init__(self, frames: Sequence[bytes], check: Callable[[bytes], bool], stop_at: float, depth: int = 1) -> None:
        self.frames = list(frames)
        self.check = check
        self.stop_at = stop_at
        #: Requests kept in flight (pipelined): 1 is strictly back-to-back; more measures a client that pipelines.
        self.depth = depth
        self.count = 0
        self.sent = 0
        self.failures = 0
        self.done: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def next_frame(self) -> bytes:
        frame = self.frames[self.sent % len(self.frames)]
        self.sent += 1
        return frame


def no_delay(transport: asyncio.BaseTransport) -> None:
    """TCP_NODELAY on the transport's socket (as the brokers set it): a small answer is not held back."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self._frames = FrameBuffer(MAX_RESPONSE_BYTES)
        self._waiters: deque[asyncio.Future[bytes]] = deque()
        self._correlation = itertools.count(1)
        self._pump: Pump | None = None
        self.transport: asyncio.Transport | None = None

    @classmethod
    async def open(cls, host: str, port: int, tls: ssl.SSLContext | None = None) -> Connection:
        """A connection to `host:port`, over TLS with `tls` (the handshake done when this returns)."""
        loop = asyncio.get_running_loop()
        _, connection = await loop.create_connection(cls, host, port, ssl=tls)
        return connection

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's transports are not asyncio.Transport
        no_delay(transport)

    def data_received(self, data: bytes) -> None:
        frames = self._frames
        frames.feed(data)
        while (payload := frames.next_frame()) is not None:
            pump = self._pump
            if pump is not None:
                if not pump.check(payload):
                    pump.failures += 1
                pump.count += 1
                if time.perf_counter() < pump.stop_at:
                    assert self.transport is not None
                    self.transport.write(pump.next_frame())
                elif pump.count == pump.sent:  # past stop_at and every pipelined request answered
                    self._pump = None
                    pump.done.set_result(pump.count)
                continue
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(payload)

    def connection_lost(self, exc: Exception | None) -> None:
        error = ConnectionError(f"connection lost: {exc!r}")
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_exception(error)
        if self._pump is not None and not self._pump.done.done():
            self._pump.done.set_exception(error)

    def send(self, frame: bytes) -> asyncio.Future[bytes]:
        """Write a whole frame; the future gets the response payload (no size prefix)."""
        assert self.transport is not None
        waiter: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        self.transport.write(frame)
        return waiter

    def next_correlation_id(self) -> int:
        return next(self._correlation)

    def request(self, api_key: int, version: int, body: Any) -> Callable[[], Any]:
        """Encode and write now; returns an awaitable-making function that decodes the answer (for pipelining)."""
        correlation_id = next(self._correlation)
        waiter = self.send(request_frame(api_key, version, body, correlation_id))

        async def answer() -> Any:
            header, response = api.decode_response(api_key, version, await waiter)
            if header.correlation_id != correlation_id:
                raise RuntimeError(f"correlation id {header.correlation_id} != {correlation_id}")
            return response

        return answer

    async def call(self, api_key: int, version: int, body: Any) -> Any:
        return await self.request(api_key, version, body)()

    def pump(self, frames: Sequence[bytes], check: Callable[[bytes], bool], stop_at: float, depth: int = 1) -> Pump:
        """Back-to-back requests, `depth` of them in flight: the next write happens inside data_received, as soon
        as an answer arrives (the first `depth` go out in one write)."""
        assert self.transport is not None and self._pump is None and not self._waiters
        pump = self._pump = Pump(frames, check, stop_at, depth)
        self.transport.write(b"".join(pump.next_frame() for _ in range(depth)))
        return pump

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


@dataclass
class PumpWindow:
    """One timed window of `pump_window`: answers per second, failed answers, CPU shares (1.0 = one core)."""

    rate: float
    failures: int
    client_cpu: float
    #: None when no broker pid was given.
    server_cpu: float | None = None


async def pump_window(
    connections: Sequence[Connection],
    frames: Sequence[Sequence[bytes]],
    checks: Sequence[Callable[[bytes], bool]],
    window_s: float,
    server_pid: int | None = None,
    depth: int = 1,
) -> PumpWindow:
    """Pump `frames[i]` on `connections[i]` (answers checked by `checks[i]`, `depth` in flight) for `window_s`."""
    server_cpu = cpu_seconds(server_pid) if server_pid else 0.0
    client_cpu = cpu_seconds()
    started = time.perf_counter()
    stop_at = started + window_s
    pumps = [
        conn.pump(conn_frames, check, stop_at, depth)
        for conn, conn_frames, check in zip(connections, frames, checks, strict=True)
    ]
    await asyncio.gather(*(pump.done for pump in pumps))
    elapsed = time.perf_counter() - started
    return PumpWindow(
        rate=sum(p.count for p in pumps) / elapsed,
        failures=sum(p.failures for p in pumps),
        client_cpu=(cpu_seconds() - client_cpu) / elapsed,
        server_cpu=(cpu_seconds(server_pid) - server_cpu) / elapsed if server_pid else None,
    )


async def open_connections(host: str, port: int, count: int, batch: int = 4) -> list[Connection]:
    """`count` connections, opened gradually: `batch` at a time, each confirmed by an ApiVersions round trip.

    The mock listens with a backlog of 5 and accepts one connection per poll turn; connections that overflow an
    accept queue look open to the client but are reset later, so each one is checked before the next batch.
    """
    frame = request_frame(ApiKey.API_VERSIONS, 0, ApiVersionsRequest(), 0)

    async def one() -> Connection:
        connection = await Connection.open(host, port)
        await connection.send(frame)
        return connection

    connections: list[Connection] = []
    while len(connections) < count:
        size = min(batch, count - len(connections))
        connections += await asyncio.gather(*(one() for _ in range(size)))
    return connections


async def create_topic(conn: Connection, name: str, partitions: int) -> None:
    """CreateTopics v4 (our broker; the mock has no CreateTopics and auto-creates instead)."""
    response = await conn.call(
        ApiKey.CREATE_TOPICS,
        4,
        CreateTopicsRequest(
            topics=[CreatableTopic(name=name, num_partitions=partitions, replication_factor=1)], timeout_ms=30_000
        ),
    )
    error = response.topics[0].error_code
    if error not in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS):
        raise RuntimeError(f"CreateTopics {name}: error {error}")


async def topic_partitions(conn: Connection, name: str, timeout_s: float = 10.0) -> int:
    """Partition count of `name` from Metadata v4, which auto-creates it where the broker allows that."""
    deadline = time.monotonic() + timeout_s
    while True:
        response = await conn.call(
            ApiKey.METADATA,
            4,
            MetadataRequest(topics=[MetadataRequestTopic(name=name)], allow_auto_topic_creation=True),
        )
        topic = response.topics[0]
        if topic.error_code == ErrorCode.NONE and topic.partitions:
            return len(topic.partitions)
        if time.monotonic() > deadline:
            raise RuntimeError(f"Metadata {name}: error {topic.error_code}")
        await asyncio.sleep(0.05)


def cpu_seconds(pid: int | None = None) -> float:
    """User+system CPU seconds of a process (all its threads) so far; this process when `pid` is None."""
    if pid is None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- consumer groups -----------------------------------------------------------------------------------------------


async def run_members(members: Sequence[Coroutine[Any, Any, None]], complete: asyncio.Future[float]) -> float:
    """Run one task per group member until `complete` has its result (a perf_counter time), which is returned.

    A member that fails ends the whole formation at once with its error (instead of a silent hang); the others are
    cancelled on the way out, whatever happened.
    """

    def ended(task: asyncio.Task[None]) -> None:
        if not complete.done() and not task.cancelled() and task.exception() is not None:
            complete.set_exception(task.exception())  # type: ignore[arg-type]

    tasks = [asyncio.ensure_future(member) for member in members]
    for task in tasks:
        task.add_done_callback(ended)
    try:
        finished = await complete
    finally:
        for task in tasks:
            if not task.done():
                task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
    errors = [r for r in results if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError)]
    if errors:
        raise errors[0]
    return finished


async def every_member(
    connections: Sequence[Connection], member_ids: Sequence[str], api_key: int, version: int, body: Callable[[str], Any]
) -> None:
    """`body(member_id)` sent on each member's connection, all in flight at once; answers and errors are ignored
    (used to leave a group, so that nothing lingers into the next run)."""
    answers = [
        conn.request(api_key, version, body(member_id))
        for conn, member_id in zip(connections, member_ids, strict=True)
        if member_id
    ]
    await asyncio.gather(*(answer() for answer in answers), return_exceptions=True)


RETRY_JOIN = {ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.ILLEGAL_GENERATION}


@dataclass
class GroupRun:
    """One group formation: every member joins, the leader assigns, all end on the same generation."""

    group_id: str
    connections: Sequence[Connection]
    session_timeout_ms: int
    rebalance_timeout_ms: int
    topic: str = "bench-topic"
    probe_interval_s: float = 0.1
    leader_pause_s: float = 0.002
    joins_sent: int = 0
    syncs_sent: int = 0
    heartbeats_sent: int = 0
    late_syncs: int = 0
    member_ids: list[str] = field(default_factory=list)
    generation: int = -1
    _done: dict[int, int] = field(default_factory=dict)
    _synced: dict[int, set[str]] = field(default_factory=dict)
    _follower_events: dict[int, tuple[asyncio.Event, set[str]]] = field(default_factory=dict)
    _complete: asyncio.Future[float] | None = None

    @property
    def formation_requests(self) -> int:
        return self.joins_sent

    @property
    def heartbeat_error_at(self) -> int:
        """Body bytes before error_code in a Heartbeat v3 answer (header v0): throttle_time_ms."""
        return 4

    async def steady(self) -> None:
        """Nothing to do: a formed classic group stays at its generation until a member joins or leaves."""

    def heartbeat_frames(self, first_correlation_id: int) -> list[bytes]:
        """One Heartbeat v3 frame per member of the formed group (correlation ids from `first_correlation_id`)."""
        return [
            request_frame(
                ApiKey.HEARTBEAT,
                HEARTBEAT_VERSION,
                HeartbeatRequest(group_id=self.group_id, generation_id=self.generation, member_id=member_id),
                correlation_id=first_correlation_id + i,
            )
            for i, member_id in enumerate(self.member_ids)
        ]

    async def form(self) -> float:
        """Seconds from the first JoinGroup written to the last SyncGroup answer of the final generation."""
        loop = asyncio.get_running_loop()
        self._complete = loop.create_future()
        self.member_ids = [""] * len(self.connections)
        self._metadata = encode_subscription(ConsumerProtocolSubscription(topics=[self.topic]), 0)
        started = time.perf_counter()
        members = [self._member(i, conn) for i, conn in enumerate(self.connections)]
        return await run_members(members, self._complete) - started

    def _join_request(self, member_id: str) -> JoinGroupRequest:
        return JoinGroupRequest(
            group_id=self.group_id,
            session_timeout_ms=self.session_timeout_ms,
            rebalance_timeout_ms=self.rebalance_timeout_ms,
            member_id=member_id,
            group_instance_id=None,
            protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol(name="range", metadata=self._metadata)],
        )

    async def _member(self, index: int, conn: Connection) -> None:
        member_id = ""
        complete = self._complete
        assert complete is not None
        while not complete.done():
            self.joins_sent += 1
            joined = await conn.call(ApiKey.JOIN_GROUP, JOIN_VERSION, self._join_request(member_id))
            if joined.error_code == ErrorCode.MEMBER_ID_REQUIRED:
                member_id = joined.member_id
                continue
            if joined.error_code in RETRY_JOIN:
                continue
            if joined.error_code == ErrorCode.UNKNOWN_MEMBER_ID:
                member_id = ""
                continue
            if joined.error_code != ErrorCode.NONE:
                raise RuntimeError(f"{self.group_id}: JoinGroup failed with error {joined.error_code}")
            member_id = joined.member_id
            generation = joined.generation_id
            if joined.leader == member_id:
                # The mock answers a SyncGroup only while Syncing and ends Syncing at the leader's assignment, so
                # the leader writes its SyncGroup after every follower of this generation wrote theirs (Kafka is
                # indifferent to the order: followers' SyncGroups wait for the leader's).
                followers = {m.member_id for m in joined.members} - {member_id}
                await self._followers_synced(generation, followers)
                assignments = self._assign([m.member_id for m in joined.members])
            else:
                assignments = []
            self.syncs_sent += 1
            sync = SyncGroupRequest(
                group_id=self.group_id, generation_id=generation, member_id=member_id, assignments=assignments
            )
            correlation_id = conn.next_correlation_id()
            answer = conn.send(request_frame(ApiKey.SYNC_GROUP, SYNC_VERSION, sync, correlation_id))
            if not assignments:
                self._follower_wrote_sync(generation, member_id)
            # Only the error code is read: the mock sends a null assignment with an error, which our (strict)
            # codec rightly refuses for a non-nullable field. v3: header, throttle_time_ms, then error_code.
            error = checked_error(await answer, correlation_id, skip=4)
            if error in RETRY_JOIN or error == ErrorCode.INVALID_REQUEST:
                # INVALID_REQUEST: the mock's answer to a SyncGroup that arrives once the group is up again (it
                # finishes syncing at the leader's assignment); a real client rejoins, so does this one.
                self.late_syncs += error == ErrorCode.INVALID_REQUEST
                continue
            if error == ErrorCode.UNKNOWN_MEMBER_ID:
                member_id = ""
                continue
            if error != ErrorCode.NONE:
                raise RuntimeError(f"{self.group_id}: SyncGroup failed with error {error}")
            self.member_ids[index] = member_id
            self._mark_done(index, generation)
            # Until every member holds this generation, probe with heartbeats: a later joiner may have started a
            # rebalance that this member must take part in (real consumers learn it the same way).
            while not complete.done():
                await asyncio.wait([complete], timeout=self.probe_interval_s)
                if complete.done():
                    return
                self.heartbeats_sent += 1
                beat = await conn.call(
                    ApiKey.HEARTBEAT,
                    HEARTBEAT_VERSION,
                    HeartbeatRequest(group_id=self.group_id, generation_id=generation, member_id=member_id),
                )
                if beat.error_code != ErrorCode.NONE:
                    self._done.pop(index, None)
                    if beat.error_code == ErrorCode.UNKNOWN_MEMBER_ID:
                        member_id = ""
                    break

    def _assign(self, members: list[str]) -> list[SyncGroupRequestAssignment]:
        return [
            SyncGroupRequestAssignment(
                member_id=m,
                assignment=encode_assignment(
                    ConsumerProtocolAssignment(assigned_partitions=[TopicPartition(topic=self.topic, partitions=[i])]),
                    0,
                ),
            )
            for i, m in enumerate(members)
        ]

    async def _followers_synced(self, generation: int, followers: set[str], timeout_s: float = 2.0) -> None:
        event, wanted = self._follower_events.setdefault(generation, (asyncio.Event(), set()))
        wanted |= followers
        if wanted <= self._synced.get(generation, set()):
            event.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), timeout_s)
        if followers:
            # Written is not yet read: a broker serving many sockets per poll may read the leader's before a
            # follower's that was sent earlier. A short pause makes that unlikely (the same pause for both brokers).
            await asyncio.sleep(self.leader_pause_s)

    def _follower_wrote_sync(self, generation: int, member_id: str) -> None:
        synced = self._synced.setdefault(generation, set())
        synced.add(member_id)
        entry = self._follower_events.get(generation)
        if entry is not None and entry[1] <= synced:
            entry[0].set()

    def _mark_done(self, index: int, generation: int) -> None:
        self._done[index] = generation
        if len(self._done) == len(self.connections) and len(set(self._done.values())) == 1:
            self.generation = generation
            assert self._complete is not None
            if not self._complete.done():
                self._complete.set_result(time.perf_counter())

    async def leave(self) -> None:
        """Every member leaves (LeaveGroup v1, one per connection), so nothing lingers into the next run."""
        await every_member(
            self.connections,
            self.member_ids,
            ApiKey.LEAVE_GROUP,
            LEAVE_VERSION,
            lambda member_id: LeaveGroupRequest(group_id=self.group_id, member_id=member_id),
        )


# -- tables --------------------------------------------------------------------------------------------------------


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]], notes: Sequence[str] = ()) -> None:
    """A left-aligned first column, right-aligned figures, a rule under the header."""
    table = [tuple(header), *(tuple(row) for row in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    print(title)
    for note in notes:
        print(f"  {note}")
    for i, row in enumerate(table):
        cells = [row[0].ljust(widths[0]), *(cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True))]
        print("  " + "  ".join(cells).rstrip())
        if i == 0:
            print("  " + "  ".join("-" * width for width in widths))
    sys.stdout.flush()


def fmt(value: float | None, spec: str = ",.0f", unit: str = "") -> str:
    return "n/a" if value is None else f"{value:{spec}}{unit}"


def ratio(ours: float | None, theirs: float | None) -> str:
    if ours is None or theirs is None or theirs == 0:
        return "n/a"
    return f"{ours / theirs:.2f}"
