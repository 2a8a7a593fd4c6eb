"""Event-loop stall while one CreateTopics makes 20,000 partitions (issue #10's target: max ApiVersions round trip
<= 100 ms). Figures only; nothing fails on time.

Our broker runs as a child process (`python server.py`, fresh `log.dirs`) with this process's `ulimit -n`, which is
printed: the broker must live within it, so a creation that runs out of descriptors is a figure here, not a crash
of the benchmark. A bystander connection sends ApiVersions v0 back to back (one in flight) and records every round
trip, while a second connection sends one CreateTopics v4 of PARTITIONS partitions. Reported: the creation's time
and error code, the max and p99 of the bystander's round trips that overlapped it, and whether a new connection is
accepted afterwards (the issue saw a failed creation leak ~20,000 descriptors, after which connections are refused).
No mock column: the issue gives an absolute target, and librdkafka's mock has no CreateTopics.
"""

from __future__ import annotations

import asyncio
import json
import math
import resource
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.wire_load import Connection, ServerProcess, fmt, print_table, request_frame, run_async
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.registry import ApiKey

PARTITIONS = 20_000
TARGET_MAX_MS = 100.0
CREATE_TIMEOUT_S = 600.0


@dataclass
class StallResult:
    create_s: float = 0.0
    create_outcome: str = ""
    round_trips_ms: list[float] = field(default_factory=list)
    bystander_outcome: str = "ok"
    reconnect: str = ""
    broker_alive: bool = True


async def _bystander(conn: Connection, stop: asyncio.Event, result: StallResult) -> None:
    """ApiVersions v0, one in flight, until `stop`; each round trip in ms."""
    frame = request_frame(ApiKey.API_VERSIONS, 0, ApiVersionsRequest(), 0)
    try:
        while not stop.is_set():
            sent = time.perf_counter()
            await conn.send(frame)
            result.round_trips_ms.append((time.perf_counter() - sent) * 1e3)
    except (ConnectionError, OSError) as exc:
        result.bystander_outcome = f"connection lost: {exc!r}"


async def _create(conn: Connection, result: StallResult) -> None:
    request = CreateTopicsRequest(
        topics=[CreatableTopic(name="bench-stall", num_partitions=PARTITIONS, replication_factor=1)],
        timeout_ms=int(CREATE_TIMEOUT_S * 1000),
    )
    started = time.perf_counter()
    try:
        response = await asyncio.wait_for(conn.call(ApiKey.CREATE_TOPICS, 4, request), CREATE_TIMEOUT_S)
        topic = response.topics[0]
        result.create_outcome = f"error_code {topic.error_code}" + (
            f" ({topic.error_message})" if topic.error_message else ""
        )
    except (ConnectionError, OSError) as exc:
        result.create_outcome = f"connection lost: {exc!r}"
    except TimeoutError:
        result.create_outcome = f"no answer within {CREATE_TIMEOUT_S:g} s"
    result.create_s = time.perf_counter() - started


async def _measure(server: ServerProcess) -> StallResult:
    result = StallResult()
    bystander = await Connection.open(server.host, server.port)
    creator = await Connection.open(server.host, server.port)
    stop = asyncio.Event()
    watching = asyncio.ensure_future(_bystander(bystander, stop, result))
    await asyncio.sleep(0.2)  # the bystander is in its stride before the creation starts
    result.round_trips_ms.clear()
    await _create(creator, result)
    stop.set()
    await watching
    bystander.close()
    creator.close()
    try:
        probe = await asyncio.wait_for(Connection.open(server.host, server.port), 5)
        await asyncio.wait_for(probe.send(request_frame(ApiKey.API_VERSIONS, 0, ApiVersionsRequest(), 0)), 5)
        probe.close()
        result.reconnect = "accepted, ApiVersions answered"
    except (OSError, TimeoutError) as exc:
        result.reconnect = f"failed: {exc!r}"
    assert server.process is not None
    result.broker_alive = server.process.poll() is None
    return result


def _p99(values: list[float]) -> float | None:
    """Nearest-rank 99th percentile (never above the max, even for a handful of samples)."""
    if not values:
        return None
    ranked = sorted(values)
    return ranked[math.ceil(0.99 * len(ranked)) - 1]


def _last_error_event(lines: list[str]) -> str:
    """The event name of the broker's last error-level log line, for a creation that failed."""
    for line in reversed(lines):
        if '"level": "error"' in line or '"level":"error"' in line:
            try:
                return str(json.loads(line).get("event", line.strip()))[:80]
            except ValueError:
                return line.strip()[:80]
    return "none"


def run() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with tempfile.TemporaryDirectory(prefix="bench-create-stall-") as tmp, ServerProcess.ours(Path(tmp)) as server:
        server.start()
        result = run_async(_measure(server))
        error_event = _last_error_event(server.lines)
    worst = max(result.round_trips_ms, default=None)
    verdict = "n/a" if worst is None else "(met)" if worst <= TARGET_MAX_MS else "(missed)"
    rows = [
        ("CreateTopics time (s)", fmt(result.create_s, ",.2f"), ""),
        ("CreateTopics answer", result.create_outcome, ""),
        ("bystander ApiVersions round trips", f"{len(result.round_trips_ms):,}", ""),
        ("bystander max round trip (ms)", fmt(worst, ",.1f"), f"<= {TARGET_MAX_MS:g} ms {verdict}"),
        ("bystander p99 round trip (ms)", fmt(_p99(result.round_trips_ms), ",.1f"), ""),
        ("bystander connection", result.bystander_outcome, ""),
        ("new connection afterwards", result.reconnect, ""),
        ("broker process afterwards", "running" if result.broker_alive else "exited", ""),
        ("broker's last error log event", error_event, ""),
    ]
    print_table(
        f"create stall: one CreateTopics of {PARTITIONS:,} partitions while a bystander sends ApiVersions v0",
        ("measure", "ours", "issue target"),
        rows,
        notes=[f"ulimit -n of the broker: soft {soft:,}, hard {hard:,} (inherited, not raised)"],
    )
