"""The floor of a heartbeat (and of Produce and Fetch) on this stack: a uvloop `asyncio.Protocol` server that does
only the irreducible work.

`python -m bench.floors` listens on 127.0.0.1 (an ephemeral port, announced as `BOOTSTRAP=host:port` on stdout like
the other peers), splits each read into Kafka frames, and answers every Heartbeat with a canned, correct v0-v3 answer
(its correlation id, throttle 0, error NONE), all the answers of one read in one `writelines`, as our broker does.
It also answers ApiVersions v0 (canned: Heartbeat and ApiVersions) so that the load generator's connections open as
they do against a broker. It decodes nothing else, keeps no group, logs nothing: whatever our broker spends above
this, driven by the same load generator in the same run, is the broker's own work (`ours/floor` in
`python -m bench targets`; bench/PROFILES.md). Any other request, or a Heartbeat version this answer does not fit,
closes the connection. Figures only: it never fails a run.

`FLOOR` is its column in the targets table; it takes part in the heartbeat rows, whose members it does not form
(`floor_members` makes up ids the size of real ones: it answers every Heartbeat as if the member were known), and
in the throughput rows, whose Metadata, CreateTopics, Produce and Fetch requests `bench/data_floor.py` answers
(`python -m bench.floors DATA_DIR`: its partition files go there).
"""

from __future__ import annotations

import asyncio
import signal
import struct
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from bench.data_floor import DataFloor
from bench.heartbeat_load import Member
from bench.peers import Broker, Peer
from bench.wire_load import CLIENT_ID, ServerProcess, no_delay
from protocol.registry import ApiKey

NAME = "floor"
#: The rows of `bench_targets` the floor takes part in: the heartbeat and the throughput rows.
ROWS = frozenset({"heartbeats-pipelined", "heartbeats-many", "produce-fetch", "produce-fetch-wide"})
_HEADER = struct.Struct(">ihhi")  # size, api key, api version, correlation id
#: Heartbeat v0-v3 answer (response header v0): size 10, correlation id, throttle_time_ms 0, error_code 0.
_HEARTBEAT_ANSWER = struct.Struct(">iiih")
_HEARTBEAT_MAX_VERSION = 3  # v4 is flexible: another answer shape
#: ApiVersions v0 answer body: error 0, [ApiVersions 0..0, Heartbeat 0..3].
_API_VERSIONS_BODY = struct.pack(">hi3h3h", 0, 2, ApiKey.API_VERSIONS, 0, 0, ApiKey.HEARTBEAT, 0, 3)
_SIZE_AND_CORRELATION = struct.Struct(">ii")


class FloorConnection(asyncio.Protocol):
    """Frame split and canned answers: the least a Python broker on uvloop does per Heartbeat; the data plane's
    requests go to the server's `DataFloor`."""

    __slots__ = ("_buffer", "_data", "_transport")

    def __init__(self, data: DataFloor | None = None) -> None:
        self._buffer = (
            bytearray()
        )  # the start of a frame not yet whole, grown in place (a 1 MiB Produce comes in pieces)
        self._data = data
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]  # uvloop's transports are not asyncio.Transport
        no_delay(transport)

    def data_received(self, data: bytes) -> None:
        buffer: bytes | bytearray = data
        if self._buffer:
            self._buffer += data
            buffer = self._buffer
        answers: list[bytes] = []
        offset = 0
        end = len(buffer)
        unpack, answer = _HEADER.unpack_from, _HEARTBEAT_ANSWER.pack
        while end - offset >= _HEADER.size:
            size, api_key, api_version, correlation_id = unpack(buffer, offset)
            if end - offset - 4 < size:
                break
            offset += 4 + size
            if api_key == ApiKey.HEARTBEAT and api_version <= _HEARTBEAT_MAX_VERSION:
                answers.append(answer(10, correlation_id, 0, 0))
            elif api_key == ApiKey.API_VERSIONS and api_version == 0:
                answers.append(_SIZE_AND_CORRELATION.pack(4 + len(_API_VERSIONS_BODY), correlation_id))
                answers.append(_API_VERSIONS_BODY)
            elif (parts := self._data_answer(buffer, offset - size, offset)) is not None:
                answers.extend(parts)
            else:
                self._close()
                return
        if offset == end:
            self._buffer = bytearray()
        elif offset > 0 or buffer is not self._buffer:
            self._buffer = bytearray(buffer[offset:])  # else the partial frame stays where it is, growing
        transport = self._transport
        if answers and transport is not None:
            transport.writelines(answers)

    def _data_answer(self, buffer: bytes | bytearray, start: int, end: int) -> list[Any] | None:
        if self._data is None:
            return None
        with memoryview(buffer) as view:
            frame = bytes(view[start:end])  # the one copy of the frame: the decoder takes bytes
        return self._data.answer(frame)

    def _close(self) -> None:
        if self._transport is not None:
            self._transport.close()


async def serve(data_dir: Path, host: str = "127.0.0.1", port: int = 0) -> None:
    """Listen, announce, serve until SIGTERM or SIGINT."""
    loop = asyncio.get_running_loop()
    data: list[DataFloor] = []
    server = await loop.create_server(lambda: FloorConnection(data[0]), host, port, backlog=4096)
    bound = server.sockets[0].getsockname()
    data.append(DataFloor(data_dir, bound[0], bound[1]))
    print(f"BOOTSTRAP={bound[0]}:{bound[1]}", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        async with server:
            await stop.wait()
    finally:
        data[0].close()


def _floor(data_dir: Path) -> Broker:
    data_dir.mkdir(parents=True, exist_ok=True)
    return ServerProcess([sys.executable, "-m", "bench.floors", str(data_dir)], NAME)


FLOOR = Peer(
    NAME,
    "a uvloop asyncio.Protocol: frame split + canned Heartbeat answer, one writelines per read (bench/floors.py);"
    " Produce/Fetch decoded and encoded with our codecs, one writev per batch and one pread per fetched partition"
    " into a file per partition, no validation (bench/data_floor.py); heartbeat and throughput rows only",
    _floor,
    rows=ROWS,
)


def floor_members(groups: int, per_group: int) -> list[Member]:
    """Members for the floor, which forms no group: ids as long as the ones a broker hands out (client id, '-', a
    UUID), so that the load generator's frames are the same size as against a broker."""
    return [
        Member(f"bench-target-hb-{0:019d}-{g}", 1, f"{CLIENT_ID}-{uuid.uuid4()}")
        for g in range(groups)
        for _ in range(per_group)
    ]


def main(argv: list[str] | None = None) -> int:
    import uvloop

    args = sys.argv[1:] if argv is None else argv
    data_dir = Path(args[0]) if args else Path(tempfile.mkdtemp(prefix="bench-floor-"))
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(serve(data_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
