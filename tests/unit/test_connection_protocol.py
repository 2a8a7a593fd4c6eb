"""The connection as an `asyncio.Protocol`, driven through a fake transport: the answers of one read go out in one
write, handlers that do not wait run without a Task (a `SyncHandler` without a coroutine either), a parked handler
holds the requests behind it, a flood is paused, and closing cancels a parked handler (its observers told once)."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import Iterator
from typing import Any

import structlog

from broker.connection import MAX_PENDING_BYTES, Connection
from broker.context import RequestContext
from broker.dispatch import Dispatcher, Later, SyncHandler
from broker.idle_connections import IdleConnections
from broker.listeners import current_listener
from protocol import api
from protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from protocol.messages.request_header import RequestHeader
from protocol.registry import ApiKey

HEARTBEAT_VERSION = 3


class FakeTransport:
    """Records every write call (one entry per `write`/`writelines`), the reading state and the close."""

    def __init__(self, protocol: Connection) -> None:
        self.protocol = protocol
        self.writes: list[list[bytes]] = []
        self.reading = True
        self.closing = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("10.0.0.7", 5555)}.get(name, default)

    def write(self, data: Any) -> None:
        self.writes.append([bytes(data)])

    def writelines(self, parts: list[Any]) -> None:
        self.writes.append([bytes(p) for p in parts])

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return 0

    def close(self) -> None:
        if not self.closing:
            self.closing = True
            asyncio.get_running_loop().call_soon(self.protocol.connection_lost, None)

    def answered(self) -> list[list[int]]:
        """The correlation ids answered, per write call."""
        return [_correlations(b"".join(parts)) for parts in self.writes]


def _correlations(data: bytes) -> list[int]:
    ids = []
    while data:
        size, correlation_id = struct.unpack_from(">ii", data)
        ids.append(correlation_id)
        data = data[4 + size :]
    return ids


def heartbeat(correlation_id: int, group: str = "g") -> bytes:
    header = RequestHeader(
        request_api_key=ApiKey.HEARTBEAT,
        request_api_version=HEARTBEAT_VERSION,
        correlation_id=correlation_id,
        client_id="unit",
    )
    return api.encode_request(header, HeartbeatRequest(group_id=group, member_id="m"))


class Handlers:
    """Heartbeat answers at once, except for group "park", which waits until the test releases it."""

    def __init__(self) -> None:
        self.release: asyncio.Future[None] | None = None
        self.cancelled = 0
        self.seen: list[tuple[str | None, Any]] = []

    async def heartbeat(self, ctx: RequestContext, request: HeartbeatRequest) -> HeartbeatResponse:
        self.seen.append((current_listener.get(), structlog.contextvars.get_contextvars().get("conn_id")))
        if request.group_id == "park":
            self.release = asyncio.get_running_loop().create_future()
            try:
                await self.release
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        return HeartbeatResponse()


class Observer:
    def __init__(self) -> None:
        self.started = 0
        self.finished: list[Any] = []

    def request_started(self, ctx: RequestContext, api_key: int, request: Any) -> None:
        self.started += 1

    def request_finished(self, ctx: RequestContext, api_key: int, request: Any, response: Any, elapsed: float) -> None:
        self.finished.append(response)


def serving(idle: IdleConnections | None = None) -> tuple[Connection, FakeTransport, Handlers, Observer]:
    handlers = Handlers()
    observer = Observer()
    dispatcher = Dispatcher()
    dispatcher.register(ApiKey.HEARTBEAT, handlers.heartbeat)
    dispatcher.observe(observer)
    connection = Connection(dispatcher, 1 << 20, listener="internal", idle=idle)
    transport = FakeTransport(connection)
    connection.connection_made(transport)  # type: ignore[arg-type]
    return connection, transport, handlers, observer


async def test_the_answers_of_one_read_go_out_in_one_write() -> None:
    connection, transport, _, _ = serving()
    connection.data_received(b"".join(heartbeat(c) for c in range(1, 6)))
    assert transport.answered() == [[1, 2, 3, 4, 5]]
    connection.data_received(heartbeat(6) + heartbeat(7)[:10])  # a frame and a half: one answer, the rest waits
    assert transport.answered() == [[1, 2, 3, 4, 5], [6]]
    connection.data_received(heartbeat(7)[10:])
    assert transport.answered() == [[1, 2, 3, 4, 5], [6], [7]]


@contextlib.contextmanager
def counting_tasks() -> Iterator[list[Any]]:
    """The coroutines the running loop makes Tasks of, while inside."""
    loop = asyncio.get_running_loop()
    created: list[Any] = []
    original = loop.create_task

    def counting(coro: Any, **kwargs: Any) -> Any:
        created.append(coro)
        return original(coro, **kwargs)

    loop.create_task = counting  # type: ignore[method-assign]
    try:
        yield created
    finally:
        loop.create_task = original  # type: ignore[method-assign]


async def test_a_handler_that_does_not_wait_runs_without_a_task_in_the_connections_context() -> None:
    with counting_tasks() as created:
        connection, transport, handlers, _ = serving()
        connection.data_received(heartbeat(1) + heartbeat(2))
        assert created == []
        assert transport.answered() == [[1, 2]]
        connection.data_received(heartbeat(3, group="park"))
        assert len(created) == 1  # only the request that waits becomes a task
    connection.close()
    assert handlers.seen[0] == ("INTERNAL", connection.session.conn_id)
    assert current_listener.get() is None  # bound in the connection's context, not the caller's


async def test_a_parked_request_holds_the_ones_behind_it_and_they_are_answered_in_order() -> None:
    connection, transport, handlers, observer = serving()
    connection.data_received(heartbeat(1) + heartbeat(2, group="park") + heartbeat(3) + heartbeat(4))
    assert transport.answered() == [[1]]  # the answer before the parked one is not held back
    connection.data_received(heartbeat(5))
    assert transport.answered() == [[1]]
    assert handlers.release is not None
    handlers.release.set_result(None)
    for _ in range(3):
        await asyncio.sleep(0)
    assert transport.answered() == [[1], [2, 3, 4, 5]]
    assert observer.started == len(observer.finished) == 5


async def test_reading_pauses_under_a_flood_behind_a_parked_request_and_resumes_once_it_is_handled() -> None:
    connection, transport, handlers, _ = serving()
    connection.data_received(heartbeat(1, group="park"))
    flood = heartbeat(2)
    count = MAX_PENDING_BYTES // len(flood) + 1
    connection.data_received(flood * (count // 2))
    assert transport.reading
    connection.data_received(flood * (count - count // 2))
    assert not transport.reading
    assert handlers.release is not None
    handlers.release.set_result(None)
    for _ in range(3):
        await asyncio.sleep(0)
    assert transport.reading
    assert sum(len(ids) for ids in transport.answered()) == count + 1


async def test_a_client_that_does_not_read_is_not_answered_further_until_the_transport_drains() -> None:
    connection, transport, _, _ = serving()
    connection.pause_writing()
    connection.data_received(heartbeat(1))
    assert transport.answered() == []
    connection.resume_writing()
    assert transport.answered() == [[1]]


async def test_closing_cancels_a_parked_handler_and_its_observers_hear_of_it_once() -> None:
    connection, transport, handlers, observer = serving()
    connection.data_received(heartbeat(1, group="park") + heartbeat(2))
    await asyncio.sleep(0)
    connection.close()
    for _ in range(3):
        await asyncio.sleep(0)
    assert handlers.cancelled == 1
    assert (observer.started, observer.finished) == (1, [None])
    assert transport.closing and transport.answered() == []
    assert connection.closed.is_set()


async def test_a_graceful_stop_answers_the_request_in_flight_then_closes() -> None:
    connection, transport, handlers, _ = serving()
    connection.data_received(heartbeat(1, group="park") + heartbeat(2))
    connection.stop_reading()
    assert not transport.closing
    assert handlers.release is not None
    handlers.release.set_result(None)
    for _ in range(3):
        await asyncio.sleep(0)
    assert transport.answered() == [[1]]  # the request behind it is not handled: the broker is stopping
    assert transport.closing


async def test_an_end_of_input_behind_a_parked_request_still_gets_its_answers() -> None:
    connection, transport, handlers, _ = serving()
    connection.data_received(heartbeat(1, group="park") + heartbeat(2))
    assert connection.eof_received() is True  # kept open for the answers
    assert handlers.release is not None
    handlers.release.set_result(None)
    for _ in range(3):
        await asyncio.sleep(0)
    assert transport.answered() == [[1, 2]]
    assert transport.closing


async def test_a_client_pipelining_without_reading_its_answers_is_paused() -> None:
    connection, transport, _, _ = serving()
    connection.pause_writing()  # the transport's buffer is full: the client is not reading
    flood = heartbeat(1)
    count = MAX_PENDING_BYTES // len(flood) + 1
    connection.data_received(flood * count)
    assert not transport.reading and transport.answered() == []
    connection.resume_writing()
    assert transport.reading
    assert sum(len(ids) for ids in transport.answered()) == count


async def test_a_connection_whose_request_is_parked_is_not_idle_even_if_more_arrives() -> None:
    idle = IdleConnections(1000, lambda: 0)
    connection, _, handlers, _ = serving(idle)
    assert len(idle) == 1
    connection.data_received(heartbeat(1, group="park"))
    assert len(idle) == 0
    connection.data_received(heartbeat(2))  # pipelined behind it: still the broker's turn, not the client's
    assert len(idle) == 0
    assert handlers.release is not None
    handlers.release.set_result(None)
    for _ in range(3):
        await asyncio.sleep(0)
    assert len(idle) == 1


class SyncHeartbeat(SyncHandler):
    """Answers at once (no coroutine), except for group "park": `Later`, until the test releases it."""

    def __init__(self) -> None:
        self.release: asyncio.Future[HeartbeatResponse] | None = None

    def now(self, ctx: RequestContext, request: HeartbeatRequest) -> Any:
        if request.group_id == "park":
            self.release = asyncio.get_running_loop().create_future()
            return Later(self.release)
        return HeartbeatResponse()

    async def __call__(self, ctx: RequestContext, request: HeartbeatRequest) -> Any:
        raise AssertionError("awaited as a coroutine: not the synchronous path")


async def test_a_sync_route_answers_without_a_task_and_in_order_with_a_parked_one() -> None:
    handler, observer = SyncHeartbeat(), Observer()
    dispatcher = Dispatcher()
    dispatcher.register(ApiKey.HEARTBEAT, handler)
    dispatcher.observe(observer)
    connection = Connection(dispatcher, 1 << 20)
    transport = FakeTransport(connection)
    with counting_tasks() as created:
        connection.connection_made(transport)  # type: ignore[arg-type]
        connection.data_received(heartbeat(1) + heartbeat(2))
        assert created == [] and transport.answered() == [[1, 2]]
        connection.data_received(heartbeat(3) + heartbeat(4, group="park") + heartbeat(5))
        assert len(created) == 1  # only the request that waits becomes a task
        assert transport.answered() == [[1, 2], [3]]
        assert handler.release is not None
        handler.release.set_result(HeartbeatResponse(error_code=27))
        for _ in range(3):
            await asyncio.sleep(0)
    connection.close()
    assert transport.answered() == [[1, 2], [3], [4, 5]]
    assert observer.started == len(observer.finished) == 5
    assert observer.finished[3].error_code == 27
    parked = transport.writes[2][0]
    assert parked == api.encode_response(ApiKey.HEARTBEAT, HEARTBEAT_VERSION, 4, HeartbeatResponse(error_code=27))
