"""The floor of durable OffsetCommit on this stack: a server that does only the irreducible work, no coordinator.

`python -m bench.commit_floor --log-dir DIR [--append write|none|fsync]` listens on 127.0.0.1 (ephemeral port),
prints `BOOTSTRAP=host:port` as our broker does, and serves what `bench_offsets`' commit windows send, on the same
stack as our broker (uvloop, one `asyncio.Protocol` per connection, the same load generator):

* every frame of a read is split off the stream; ApiVersions v0 and CreateTopics v4 get a canned answer;
* an OffsetCommit is looked up by its body bytes (the load generator repeats eight variants per group): the first
  time a body is seen it is decoded once and turned into what our broker would write for it (one
  `__consumer_offsets` record per partition, the same key and value bytes, in a v2 batch, to the group's partition
  of 50) and the answer it would send; every later time nothing is decoded or encoded;
* with `--codec` nothing is remembered: every OffsetCommit is decoded (our generated fast decoder) and its records,
  batch and answer encoded (our straight-line encoders), the least a Python broker that reads its requests does;
* the batches queued in one event-loop turn go out as one `pwrite` per `__consumer_offsets` partition (our
  broker's group commit: one write per partition per turn), with `--append fsync` an `fsync` after each, with
  `--append none` no write at all (the wire floor); only then are the answers written, one `write` per answer.

What it leaves out is everything our broker does per commit besides that: decoding the request, the coordinator
(validation, the group's offsets, the records as objects), encoding records and batch each time, the partition
log's validation and indexes, the `offsets.committed` log line, metrics and encoding the answer. So
ours / floor is how far our broker is from the cost of the socket, the event loop and the write themselves.
A benchmark program: it trusts its input (the load generator's frames) and is not a broker.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import struct
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import uvloop

from coordinator.hashing import partition_for
from protocol import api
from protocol.frame import FrameBuffer
from protocol.messages.api_versions import ApiVersionsResponse
from protocol.messages.create_topics import CreatableTopicResult, CreateTopicsResponse
from protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from protocol.messages.offset_commit_value import OffsetCommitValue
from protocol.offset_commit_codec import encode_offset_commit_key, encode_offset_commit_value
from protocol.records import encode_key_value_batch
from protocol.registry import ApiKey

OFFSETS_PARTITIONS = 50  # offsets.topic.num.partitions, as our broker runs in the bench
APPEND_MODES = ("write", "none", "fsync")
MAX_FRAME = 100 * 1024 * 1024
_PEEK = struct.Struct(">hhi")  # api key, api version, correlation id
_CLIENT_ID_LENGTH = struct.Struct(">h")
_SIZE_AND_CORRELATION = struct.Struct(">ii")


@dataclass(frozen=True, slots=True)
class CommitPlan:
    """What one distinct OffsetCommit body costs the floor from then on: its batch, where it goes, its answer."""

    partition: int
    batch: bytes
    answer_tail: bytes
    """The answer frame after its size and correlation id."""


def _tail(frame: bytes) -> bytes:
    return frame[_SIZE_AND_CORRELATION.size :]


def _answer(correlation_id: int, tail: bytes) -> bytes:
    return _SIZE_AND_CORRELATION.pack(4 + len(tail), correlation_id) + tail


def plan_commit(frame: bytes, now_ms: int) -> CommitPlan:
    """Decode an OffsetCommit once and make what our broker writes and answers for it (key v1, value v3)."""
    request = api.decode_request(frame)
    body: OffsetCommitRequest = request.body
    records = []
    topics = []
    for topic in body.topics:
        for p in topic.partitions:
            value = OffsetCommitValue(
                offset=p.committed_offset,
                leader_epoch=p.committed_leader_epoch,
                metadata=p.committed_metadata or "",
                commit_timestamp=now_ms,
            )
            records.append(
                (
                    encode_offset_commit_key(1, body.group_id, topic.name, p.partition_index),
                    encode_offset_commit_value(value, 3),
                )
            )
        topics.append(
            OffsetCommitResponseTopic(
                name=topic.name,
                partitions=[OffsetCommitResponsePartition(partition_index=p.partition_index) for p in topic.partitions],
            )
        )
    answer = api.encode_response(ApiKey.OFFSET_COMMIT, request.api_version, 0, OffsetCommitResponse(topics=topics))
    return CommitPlan(
        partition_for(body.group_id, OFFSETS_PARTITIONS),
        encode_key_value_batch(records, now_ms),
        _tail(answer),
    )


class FloorServer:
    """The shared state: the plans by body, the files, and what the current event-loop turn queued."""

    def __init__(self, log_dir: Path, append: str, *, codec: bool = False) -> None:
        self._append = append
        self._codec = codec
        self._plans: dict[bytes, CommitPlan] = {}
        self._files: dict[int, tuple[int, int]] = {}  # partition -> (fd, size)
        self._log_dir = log_dir
        self._batches: dict[int, list[bytes]] = {}
        self._answers: list[tuple[asyncio.Transport, bytes]] = []
        self._flush_scheduled = False
        self._loop = asyncio.get_running_loop()

    def commit(self, frame: bytes, transport: asyncio.Transport) -> None:
        correlation_id = _PEEK.unpack_from(frame)[2]
        client_id_length = _CLIENT_ID_LENGTH.unpack_from(frame, _PEEK.size)[0]
        body = frame[_PEEK.size + 2 + max(client_id_length, 0) :]
        if self._codec:
            plan = plan_commit(frame, int(time.time() * 1000))
        else:
            plan = self._plans.get(body)
            if plan is None:
                plan = self._plans[body] = plan_commit(frame, int(time.time() * 1000))
        self._batches.setdefault(plan.partition, []).append(plan.batch)
        self._answers.append((transport, _answer(correlation_id, plan.answer_tail)))
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        """One write per partition for everything this turn queued (an fsync each with `fsync`), then answer."""
        self._flush_scheduled = False
        batches, self._batches = self._batches, {}
        answers, self._answers = self._answers, []
        if self._append != "none":
            for partition, queued in batches.items():
                fd, size = self._file(partition)
                data = b"".join(queued)
                os.pwrite(fd, data, size)
                if self._append == "fsync":
                    os.fsync(fd)
                self._files[partition] = (fd, size + len(data))
        for transport, answer in answers:
            if not transport.is_closing():
                transport.write(answer)

    def _file(self, partition: int) -> tuple[int, int]:
        entry = self._files.get(partition)
        if entry is None:
            path = self._log_dir / f"__consumer_offsets-{partition}.log"
            entry = self._files[partition] = (os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 0)
        return entry


def _canned(api_key: int, api_version: int, correlation_id: int) -> bytes:
    """ApiVersions (the load generator's connection check) and CreateTopics (its topic): answered as successes."""
    if api_key == ApiKey.API_VERSIONS:
        return api.encode_response(api_key, api_version, correlation_id, ApiVersionsResponse())
    if api_key == ApiKey.CREATE_TOPICS:
        return api.encode_response(
            api_key, api_version, correlation_id, CreateTopicsResponse(topics=[CreatableTopicResult(name="")])
        )
    raise ValueError(f"the floor serves OffsetCommit, ApiVersions and CreateTopics only, not API {api_key}")


class FloorConnection(asyncio.Protocol):
    def __init__(self, server: FloorServer) -> None:
        self._server = server
        self._frames = FrameBuffer(MAX_FRAME)
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]  # uvloop's transports are not asyncio.Transport

    def data_received(self, data: bytes) -> None:
        frames = self._frames
        transport = self._transport
        assert transport is not None
        frames.feed(data)
        while (frame := frames.next_frame()) is not None:
            api_key, api_version, correlation_id = _PEEK.unpack_from(frame)
            if api_key == ApiKey.OFFSET_COMMIT:
                self._server.commit(bytes(frame), transport)
            else:
                transport.write(_canned(api_key, api_version, correlation_id))


async def serve(log_dir: Path, append: str, *, codec: bool = False) -> None:
    server = FloorServer(log_dir, append, codec=codec)
    loop = asyncio.get_running_loop()
    listener = await loop.create_server(lambda: FloorConnection(server), "127.0.0.1", 0)
    host, port = listener.sockets[0].getsockname()[:2]
    print(f"BOOTSTRAP={host}:{port}", flush=True)
    stopped = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, stopped.set_result, None)
    await stopped
    listener.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.commit_floor", description=__doc__.split("\n")[0])
    parser.add_argument("--log-dir", type=Path, required=True)
    parser.add_argument("--append", choices=APPEND_MODES, default="write")
    parser.add_argument(
        "--codec", action="store_true", help="decode every request and encode its records, batch and answer"
    )
    args = parser.parse_args(argv)
    args.log_dir.mkdir(parents=True, exist_ok=True)
    uvloop.run(serve(args.log_dir, args.append, codec=args.codec))


if __name__ == "__main__":
    main(sys.argv[1:])
