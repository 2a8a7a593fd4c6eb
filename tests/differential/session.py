"""What a scenario talks to: connections to one broker that record every answer as a labelled step.

A scenario is written once and run against each broker with a fresh `Session`; the same names (groups, topics)
on both, made unique per run by a shared token. Requests go out as exact frames through the codec, so what is
compared is the protocol, not a client library's reading of it. A request the broker parks (a JoinGroup waiting
for the rest of the group) is sent with `send` and collected with `reply`; `parked` records whether an answer came
within a window. Connection loss is an outcome too (``{"closed": True}``): that is how Kafka answers some bad input.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import struct
from dataclasses import dataclass, field
from typing import Any

from protocol import api
from protocol.messages.request_header import RequestHeader
from tests.differential.normalize import Normalizer, plain

CLOSED: dict[str, Any] = {"closed": True}
REPLY_TIMEOUT_S = 20.0


@dataclass(frozen=True, slots=True)
class Step:
    """One recorded answer: the scenario's label for it and the plain (later normalised) outcome."""

    label: str
    outcome: Any


@dataclass(slots=True)
class Pending:
    """A request on the wire whose answer has not been collected yet."""

    api_key: int
    version: int
    future: asyncio.Future[bytes | None] = field(repr=False)


class Conn:
    """One TCP connection; a reader task matches answers to requests by correlation id."""

    def __init__(self, session: Session, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client_id: str):
        self.session = session
        self._reader = reader
        self._writer = writer
        self.client_id = client_id
        self._correlation = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[bytes | None]] = {}
        self._closed = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            while True:
                size = struct.unpack(">i", await self._reader.readexactly(4))[0]
                frame = await self._reader.readexactly(size)
                correlation_id = struct.unpack(">i", frame[:4])[0]
                waiter = self._waiting.pop(correlation_id, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(frame)
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            for waiter in self._waiting.values():
                if not waiter.done():
                    waiter.set_result(None)
            self._waiting.clear()
            if not self._closed.done():
                self._closed.set_result(None)

    def send_frame(self, frame: bytes, correlation_id: int) -> asyncio.Future[bytes | None]:
        """Write an exact frame (size prefix included) and return the future of the answer with that id."""
        waiter: asyncio.Future[bytes | None] = asyncio.get_running_loop().create_future()
        if self._closed.done():
            waiter.set_result(None)
            return waiter
        self._waiting[correlation_id] = waiter
        self._writer.write(frame)
        return waiter

    def next_correlation_id(self) -> int:
        return next(self._correlation)

    def send(self, api_key: int, version: int, body: Any) -> Pending:
        correlation_id = self.next_correlation_id()
        header = RequestHeader(
            request_api_key=api_key,
            request_api_version=version,
            correlation_id=correlation_id,
            client_id=self.client_id,
        )
        return Pending(api_key, version, self.send_frame(api.encode_request(header, body), correlation_id))

    async def reply(self, pending: Pending, step: str, timeout_s: float = REPLY_TIMEOUT_S) -> Any:
        """Wait for a parked answer and record it; the decoded response (None if the connection closed)."""
        frame = await asyncio.wait_for(asyncio.shield(pending.future), timeout_s)
        if frame is None:
            self.session.record(step, CLOSED)
            return None
        _, response = api.decode_response(pending.api_key, pending.version, frame)
        self.session.record(step, plain(response))
        return response

    async def call(self, api_key: int, version: int, body: Any, step: str) -> Any:
        return await self.reply(self.send(api_key, version, body), step)

    async def parked(self, pending: Pending, step: str, window_ms: int) -> bool:
        """Record whether the answer is still outstanding after ``window_ms``: True (parked) or the answer."""
        done, _ = await asyncio.wait({pending.future}, timeout=window_ms / 1000)
        if done:
            await self.reply(pending, step)
            return False
        self.session.record(step, {"parked_ms": window_ms})
        return True

    async def closed_within(self, step: str, window_s: float = 5.0) -> bool:
        """Record whether the broker closed this connection within the window (bad input's other answer)."""
        try:
            await asyncio.wait_for(asyncio.shield(self._closed), window_s)
        except TimeoutError:
            self.session.record(step, {"closed": False})
            return False
        self.session.record(step, CLOSED)
        return True

    async def close(self) -> None:
        self._task.cancel()
        self._writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.wait_closed()


class Session:
    """One run of one scenario against one broker."""

    def __init__(self, host: str, port: int, token: str, settings: dict[str, str]) -> None:
        self.host = host
        self.port = port
        self.token = token
        self.settings = settings
        self.steps: list[Step] = []
        self.aliases: dict[str, str] = {}
        self._conns: list[Conn] = []

    def name(self, base: str) -> str:
        """A group or topic name, the same on both brokers and unique to this run."""
        return f"{base}-{self.token}"

    def setting(self, key: str) -> int:
        return int(self.settings[key])

    def alias(self, name: str, member_id: str) -> str:
        """Call the member id ``<name>`` in the transcript; returns the id for chaining."""
        if member_id:
            self.aliases[member_id] = name
        return member_id

    def record(self, step: str, outcome: Any) -> None:
        self.steps.append(Step(step, outcome))

    def note(self, step: str, value: Any) -> None:
        """Record a value the scenario derived (an elapsed-time bucket, a count) as a step of its own."""
        self.record(step, plain(value))

    async def connect(self, client_id: str = "differential") -> Conn:
        reader, writer = await asyncio.open_connection(self.host, self.port)
        conn = Conn(self, reader, writer, client_id)
        self._conns.append(conn)
        return conn

    async def sleep_ms(self, ms: int) -> None:
        await asyncio.sleep(ms / 1000)

    def transcript(self) -> list[Step]:
        normalise = Normalizer(self.token, self.aliases)
        return [Step(step.label, normalise(step.outcome)) for step in self.steps]

    async def close(self) -> None:
        for conn in self._conns:
            await conn.close()
