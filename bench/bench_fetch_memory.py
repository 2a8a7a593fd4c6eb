"""Peak RSS and event-loop stall while 8 clients each Fetch a 150 MB partition with max_bytes = 2 GB.

The issue's target: peak RSS at most 200 MB above idle. The broker is a child process (`server.py`); RSS is
sampled from /proc every 5 ms while the fetches run; the stall is the slowest ApiVersions round trip of a bystander
connection asking in a loop meanwhile. Two runs: Kafka's default `fetch.max.bytes` (55 MB per response) and
`fetch.max.bytes` = 2 GB (every response is the whole partition). Figures only; nothing fails on them.
"""

from __future__ import annotations

import asyncio
import struct
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.wire_load import ServerProcess, request_frame, run_async
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.records import Record, RecordBatch, encode_batch
from protocol.registry import ApiKey

PARTITION_MB = 150
CLIENTS = 8
MB = 1 << 20


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


async def call(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, frame: bytes) -> int:
    """Send a frame and read the whole response, in pieces; returns its size."""
    writer.write(frame)
    await writer.drain()
    size = struct.unpack(">i", await reader.readexactly(4))[0]
    left = size
    while left:
        left -= len(await reader.read(min(left, MB)))
    return size


async def fill(host: str, port: int) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    topic = CreatableTopic(name="big", num_partitions=1, replication_factor=1)
    await call(
        reader, writer, request_frame(ApiKey.CREATE_TOPICS, 4, CreateTopicsRequest(topics=[topic], timeout_ms=5000))
    )
    value = b"x" * (MB - 512)
    data = encode_batch(RecordBatch.from_records([Record(0, 0, None, value)], base_timestamp=0))
    for _ in range(PARTITION_MB):
        partition = PartitionProduceData(index=0, records=data)
        body = ProduceRequest(
            acks=1, timeout_ms=5000, topic_data=[TopicProduceData(name="big", partition_data=[partition])]
        )
        await call(reader, writer, request_frame(ApiKey.PRODUCE, 8, body))
    writer.close()


async def fetch_storm(host: str, port: int) -> tuple[list[int], float]:
    wanted = FetchTopic(
        topic="big", partitions=[FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=2**31 - 1)]
    )
    frame = request_frame(
        ApiKey.FETCH, 11, FetchRequest(max_wait_ms=0, min_bytes=1, max_bytes=2**31 - 1, topics=[wanted])
    )
    connections = [await asyncio.open_connection(host, port) for _ in range(CLIENTS)]
    by_reader, by_writer = await asyncio.open_connection(host, port)
    versions = request_frame(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())
    done = asyncio.Event()
    worst = 0.0

    async def bystander() -> None:
        nonlocal worst
        while not done.is_set():
            started = time.perf_counter()
            await call(by_reader, by_writer, versions)
            worst = max(worst, time.perf_counter() - started)
            await asyncio.sleep(0.005)

    watcher = asyncio.create_task(bystander())
    sizes = await asyncio.gather(*(call(r, w, frame) for r, w in connections))
    done.set()
    await watcher
    for _, w in [*connections, (by_reader, by_writer)]:
        w.close()
    return list(sizes), worst


def measure(fetch_max_bytes: int | None) -> list[tuple[str, Any]]:
    overrides = {"offsets.topic.num.partitions": "1", "log.segment.bytes": str(64 * MB)}
    if fetch_max_bytes is not None:
        overrides["fetch.max.bytes"] = str(fetch_max_bytes)
    with tempfile.TemporaryDirectory() as data, ServerProcess.ours(Path(data), overrides) as server:
        host, port = server.start()
        assert server.process is not None
        pid = server.process.pid
        run_async(fill(host, port))
        time.sleep(0.5)
        idle = rss_bytes(pid)
        peak = idle
        stop = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not stop.is_set():
                peak = max(peak, rss_bytes(pid))
                time.sleep(0.005)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.perf_counter()
        sizes, worst = run_async(fetch_storm(host, port))
        elapsed = time.perf_counter() - started
        stop.set()
        sampler.join()
        label = "default (55 MB)" if fetch_max_bytes is None else f"{fetch_max_bytes / MB:.0f} MB"
        return [
            (f"fetch.max.bytes {label}: response MB each", sizes[0] / MB),
            (f"fetch.max.bytes {label}: idle RSS MB", idle / MB),
            (f"fetch.max.bytes {label}: peak RSS above idle MB (target <= 200)", (peak - idle) / MB),
            (f"fetch.max.bytes {label}: slowest bystander ApiVersions ms", worst * 1000),
            (f"fetch.max.bytes {label}: all {CLIENTS} fetches s", elapsed),
        ]


def run() -> list[tuple[str, Any]]:
    return measure(None) + measure(2 * 1024 * MB)
