"""One client connection: read frames, answer them strictly in order, close only this connection on bad input.

Kafka mutes a socket while a request is in flight, and clients match responses to requests FIFO by correlation id,
so requests are handled one at a time: a parked JoinGroup holds the requests behind it on the same connection,
exactly as in Kafka. Pipelined requests that are already buffered are answered in order as each completes.
Anything malformed ends this connection with one structured warning; the broker and every other client go on.

The connection is an `asyncio.Protocol`: no stream reader and writer, and no task parked per connection (an idle
connection is this object and its transport). `data_received` decodes every complete frame of the read and runs
each handler synchronously (`broker.eager`); the answers of one read go out in one `writelines`. A handler that
parks becomes a Task, and the frames behind it wait in the frame buffer until it is answered. Everything runs in the
connection's own `contextvars.Context`, where its log fields (`conn_id`, `peer`, `listener`, `principal`) and
`current_listener` are bound, as a task per connection had them.

Flow control: while the frames cannot be handled (a parked request, a response being streamed, a client that does
not read its answers so the transport paused writing) reading pauses once `MAX_PENDING_BYTES` are buffered, so a
client pipelining without reading cannot grow the broker's memory; it resumes once the backlog is handled.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import struct
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog

from broker import eager
from broker.auth_gate import AuthGate
from broker.context import ConnectionSession, RequestContext
from broker.dispatch import Later
from broker.listeners import current_listener, current_node
from broker.record_slices import INLINE_READ_BYTES, RecordSlices, RecordsShrankError
from broker.responses import as_written
from broker.security.authenticator import SaslAuthenticator, SaslSettings, Step
from broker.security.principal import NoMatchingRule, SslPrincipalMapper
from broker.tls import peer_principal
from broker.tls_server import TLS_RECORD_START
from protocol import api
from protocol.errors import DecodeError, EncodeError, UnsupportedVersionError
from protocol.frame import FrameBuffer, FrameError
from protocol.registry import APIS, ApiKey

if TYPE_CHECKING:
    from broker.dispatch import Dispatcher
    from broker.idle_connections import IdleConnections

log = structlog.get_logger("broker.connection")
_conn_ids = itertools.count(1)
#: Received bytes not yet handled above which reading pauses while the connection cannot handle them.
MAX_PENDING_BYTES = 1 << 20
#: Answers batched past this size are written before more frames are handled (a pipelined flood of Fetches).
FLUSH_BYTES = 256 * 1024
_SIZE_AND_CORRELATION = struct.Struct(">ii")
_NO_CONTEXT = contextvars.Context()
#: The APIs whose answers `_encoded` treats apart, as plain ints (an enum member's lookup costs a request ~80 ns).
_FETCH = int(ApiKey.FETCH)
_API_VERSIONS = int(ApiKey.API_VERSIONS)


@dataclass(frozen=True, slots=True)
class ListenerSecurity:
    """What a listener's connections authenticate with: SASL settings on SASL listeners, the
    `ssl.principal.mapping.rules` for TLS client certificates, and the clock that SASL sessions expire by."""

    sasl: SaslSettings | None = None
    principal_mapper: SslPrincipalMapper | None = None
    now_ms: Callable[[], int] = field(default=lambda: int(time.monotonic() * 1000))


class CloseConnection(Exception):
    """Raised inside request handling when the only correct answer is to drop the connection."""


class Connection(asyncio.Protocol):
    """`opened` is called once the transport exists (the broker admits the connection under `max.connections`,
    calling `start`, or holds it paused until a slot frees); `lost` once it is gone. Without `opened` the
    connection starts at once. Slotted: an idle connection costs this object, its transport and its context."""

    __slots__ = (
        "_auth",
        "_busy",
        "_close_after_send",
        "_closed_as_idle",
        "_context",
        "_dispatcher",
        "_eof",
        "_first_read",
        "_frames",
        "_gate",
        "_idle",
        "_listener",
        "_lost",
        "_max_frame_bytes",
        "_node_id",
        "_opened",
        "_read_paused",
        "_security",
        "_stopping",
        "_task",
        "_transport",
        "_unmapped",
        "_writable",
        "_write_paused",
        "closed",
        "session",
    )

    def __init__(
        self,
        dispatcher: Dispatcher,
        max_frame_bytes: int,
        listener: str = "PLAINTEXT",
        idle: IdleConnections | None = None,
        security: ListenerSecurity | None = None,
        gate: AuthGate | None = None,
        opened: Callable[[Connection], None] | None = None,
        lost: Callable[[Connection], None] | None = None,
        node_id: int | None = None,
    ) -> None:
        self._dispatcher = dispatcher
        self._node_id = node_id  # which node of a several-node cluster accepted it (None: the only one)
        self._max_frame_bytes = max_frame_bytes
        self._listener = listener
        self._idle = idle
        self._security = security or ListenerSecurity()
        self._gate = gate
        self._opened = opened
        self._lost = lost
        self._frames = FrameBuffer(max_frame_bytes)
        self.closed = Closed()
        self._transport: asyncio.Transport | None = None
        self._context: contextvars.Context = _NO_CONTEXT  # the connection's own, from `connection_made`
        self._task: asyncio.Task[Any] | None = None  # a parked handler, or a response being streamed
        self._busy = False
        self._stopping = False
        self._eof = False
        self._closed_as_idle = False
        self._read_paused = False
        self._write_paused = False
        self._writable: asyncio.Future[None] | None = None

    # -- the transport's callbacks -------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]  # uvloop's transports are not asyncio.Transport
        peer = transport.get_extra_info("peername") or ("?", 0)
        self.session = ConnectionSession(next(_conn_ids), str(peer[0]), int(peer[1]), self._listener, self._node_id)
        ssl_object = transport.get_extra_info("ssl_object")
        self._first_read = ssl_object is None  # only a plaintext connection's first bytes can be a TLS ClientHello
        self._secure(self._security, ssl_object, f"{peer[0]}:{peer[1]}", self._gate)
        self._context = contextvars.copy_context()  # as a task per connection inherited its creator's
        self._context.run(self._bind)
        if self._opened is not None:
            self._opened(self)
        else:
            self.start()

    def data_received(self, data: bytes) -> None:
        if self.closed.is_set():
            return
        if not self._busy:  # while the broker holds a request, the connection stays out of the idle order
            self._active()
        if self._first_read:
            self._first_read = False
            if data.startswith(TLS_RECORD_START):
                self._context.run(self._refuse_tls)
                return
        try:
            self._frames.feed(data)
        except FrameError as exc:
            self._context.run(self._close_on, CloseConnection(str(exc)))
            return
        if self._busy or self._write_paused:
            self._limit_input()
        else:
            self._context.run(self._serve)

    def eof_received(self) -> bool:
        """The client will send nothing more: answer what it sent (as a stream read would have), then close."""
        self._eof = True
        if self._busy or self._write_paused:
            return True  # keep the transport open for the answers still to come
        self._context.run(self._end_of_input)
        return False

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        self._wake_writer()
        if not self._busy and not self.closed.is_set():
            self._context.run(self._serve)

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None and not self.closed.is_set():
            self._context.run(log.debug, "connection.reset")
        self.close()
        lost, self._lost = self._lost, None
        if lost is not None:
            lost(self)

    # -- admission, shutdown, expiry ----------------------------------------------------------------------------

    def wait_for_slot(self) -> None:
        """`max.connections` are open: read nothing until `start` (a slot freed)."""
        self._pause_reading()

    def start(self) -> None:
        """Serve: accepting is activity (a client that never sends a byte is idle from here)."""
        if self._unmapped is not None:
            self._context.run(
                log.warning,
                "connection.principal_mapping_failed",
                listener=self.session.listener,
                reason=self._unmapped,
            )
            self.close()
            return
        if self._idle is not None:
            self._idle.touch(self)
        self._resume_reading()

    @property
    def pending_bytes(self) -> int:
        """Bytes received but not yet handled (a stalled client's half frame shows here)."""
        return self._frames.pending_bytes

    def stop_reading(self) -> None:
        """Graceful shutdown: finish the request in flight (if any), answer it, then close."""
        self._stopping = True
        if not self._busy:
            self.close()

    def close_idle(self, idle_ms: int) -> None:
        """`connections.max.idle.ms` passed with no byte read or written: close, with one line saying so."""
        self._closed_as_idle = True
        log.info(
            "connection.idle_closed",
            conn_id=self.session.conn_id,
            peer=f"{self.session.peer_host}:{self.session.peer_port}",
            idle_ms=idle_ms,
            pending_bytes=self._frames.pending_bytes,
        )
        self.close()

    def close(self) -> None:
        """Close now: what was written still goes out; a parked handler is cancelled where it waits."""
        if self._transport is not None and not self._transport.is_closing():
            self._transport.close()
        if self._idle is not None:
            self._idle.forget(self)
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        self._wake_writer()
        self.closed.set()

    # -- setup ---------------------------------------------------------------------------------------------------

    def _secure(self, security: ListenerSecurity, ssl_object: Any, peer: str, gate: AuthGate | None) -> None:
        """The principal from a client certificate (through the listener's mapping rules), and on a SASL listener
        the authenticator that gates requests until the exchange is done (asking `gate` once a client is
        verified)."""
        self._unmapped: str | None = None
        try:
            self.session.principal, self.session.peer_dn = peer_principal(ssl_object, security.principal_mapper)
        except NoMatchingRule as exc:  # Kafka fails the connection: its principal cannot be built
            self._unmapped = str(exc)
        self._auth = None
        if security.sasl is not None:
            refuse = gate.authentication if gate is not None else None
            self._auth = SaslAuthenticator(security.sasl, peer, security.now_ms, refuse)
        self._close_after_send: str | None = None
        if security.sasl is not None:  # Kafka reads at most sasl.server.max.receive.size before authentication
            self._frames.max_frame_bytes = min(self._max_frame_bytes, security.sasl.max_receive_bytes)
            self._frames.limit_key = "sasl.server.max.receive.size"

    def _bind(self) -> None:
        """Every log line of this connection says who it is (SASL rebinds `principal`); answers use the address of
        the listener it came in on."""
        session = self.session
        structlog.contextvars.bind_contextvars(
            conn_id=session.conn_id, peer=session.peer_host, listener=session.listener, principal=session.principal
        )
        current_listener.set(session.listener.upper())
        if session.node_id is not None:
            structlog.contextvars.bind_contextvars(node=session.node_id)
            current_node.set(session.node_id)

    def _refuse_tls(self) -> None:
        log.warning(
            "connection.tls_on_plaintext_listener",
            listener=self.session.listener,
            reason="the client started a TLS handshake on a listener without TLS: "
            "set its security.protocol to PLAINTEXT or connect to an SSL listener",
        )
        self.close()

    # -- serving (always inside the connection's context) -------------------------------------------------------

    def _serve(self, batch: list[Any] | None = None) -> None:
        """Answer every complete frame buffered, in order, until one parks; write the answers (after `batch`, those
        already waiting) in one go."""
        if batch is None:
            batch = []
        try:
            self._answer_buffered(batch)
        except CloseConnection as exc:
            self._write(batch)
            self._close_on(exc)
            return
        except ConnectionError:
            log.debug("connection.reset")
            self.close()
            return
        self._write(batch)
        if self._close_after_send is not None or (self._stopping and not self._busy):
            self.close()  # the authenticator's answer is final (logged there); a stopping broker's answer is out
        elif self._eof and not self._busy:
            self._end_of_input()
        else:
            self._limit_input()

    def _answer_buffered(self, batch: list[Any]) -> None:
        frames = self._frames
        size = 0
        while not (self._busy or self._stopping or self._write_paused or self._close_after_send is not None):
            try:
                frame = frames.next_frame()
            except FrameError as exc:
                raise CloseConnection(str(exc)) from None
            if frame is None:
                return
            if self._transport is None or self._transport.is_closing():
                return
            answer = self._answer(frame)
            if answer is None:
                continue
            if isinstance(answer, bytes):  # a whole response frame (nearly every answer)
                batch.append(answer)
                size += len(answer)
            elif isinstance(answer, list):
                size += self._add(answer, batch)
            else:
                self._write(batch)  # the answers before a parked request do not wait for it
                size = 0
                self._park(answer)
            if size >= FLUSH_BYTES:
                self._write(batch)
                size = 0

    def _add(self, parts: list[Any] | None, batch: list[Any]) -> int:
        """Queue one answer's parts behind the batch; a large record set is streamed (the connection is busy
        until it is written). Returns the bytes queued."""
        if parts is None:
            return 0
        size = 0
        for index, part in enumerate(parts):
            if not isinstance(part, RecordSlices):
                batch.append(part)
                size += len(part)
            elif len(part) <= INLINE_READ_BYTES:
                try:
                    batch.append(part.read())
                except RecordsShrankError as exc:  # the frame's size is promised: only closing is honest
                    _close_slices(parts)
                    raise CloseConnection(f"fetch response cut short: {exc}") from None
                finally:
                    part.close()
                size += len(batch[-1])
            else:
                self._write(batch)
                self._park(asyncio.get_running_loop().create_task(self._stream(parts[index:]), context=self._context))
                return 0
        return size

    def _park(self, task: asyncio.Task[Any]) -> None:
        """The request in flight waits (a parked handler) or its answer is being streamed: nothing else is handled
        until it is done (`_answered`, called from inside `task`), and meanwhile the connection is not idle (the
        broker is the one holding it)."""
        self._busy = True
        self._task = task
        if self._idle is not None:
            self._idle.hold(self)

    def _answered(self, answer: bytes | list[Any] | None, failure: Exception | None) -> None:
        """A parked request is answered (or its streamed answer written; inside its task, so in the connection's
        context): send it and go on with the frames buffered behind it."""
        parts = [answer] if isinstance(answer, bytes) else answer
        self._task = None
        self._busy = False
        if self.closed.is_set():  # a handler that finished all the same: its record sets are released
            _close_slices(parts or [])
            return
        self._active()
        if failure is not None:
            if isinstance(failure, ConnectionError):
                log.debug("connection.reset")
                self.close()
            elif isinstance(failure, CloseConnection):
                self._close_on(failure)
            else:  # handlers' failures are CloseConnection (`_answer`): this is a fault of the streaming itself
                self._close_on(CloseConnection(f"internal error writing the answer: {failure!r}"))
            return
        batch: list[Any] = []
        try:
            self._add(parts, batch)
        except CloseConnection as exc:
            self._close_on(exc)
            return
        if self._busy:  # its record sets are being streamed
            self._write(batch)
        else:
            self._serve(batch)

    async def _stream(self, parts: list[Any]) -> None:
        """Write the rest of an answer from its first large record set on, waiting while the transport is paused;
        every record set is released however it ends, then the connection goes on (`_answered`)."""
        transport = self._transport
        assert transport is not None
        failure: Exception | None = None
        try:
            for part in parts:
                if transport.is_closing():
                    break
                if isinstance(part, RecordSlices):
                    await part.write_to(transport, self._wait_writable, self._active)
                else:
                    transport.write(part)
        except RecordsShrankError as exc:  # the frame's size is promised: only closing is honest
            failure = CloseConnection(f"fetch response cut short: {exc}")
        except Exception as exc:
            failure = exc
        finally:
            _close_slices(parts)
        self._answered(None, failure)

    def _write(self, batch: list[Any]) -> None:
        """Everything batched in one call (one system call on uvloop)."""
        if not batch:
            return
        transport = self._transport
        if transport is not None and not transport.is_closing():
            if len(batch) == 1:
                transport.write(batch[0])
            else:
                transport.writelines(batch)
            self._active()
        batch.clear()

    async def _wait_writable(self) -> None:
        while self._write_paused and not self.closed.is_set():
            if self._writable is None:
                self._writable = asyncio.get_running_loop().create_future()
            await self._writable

    def _wake_writer(self) -> None:
        writable, self._writable = self._writable, None
        if writable is not None and not writable.done():
            writable.set_result(None)

    def _limit_input(self) -> None:
        """Pause reading while a backlog that cannot be handled now is large; resume once it is handled."""
        if self.closed.is_set():
            return
        if self._frames.pending_bytes >= MAX_PENDING_BYTES and (self._busy or self._write_paused):
            self._pause_reading()
        elif self._read_paused and self._frames.pending_bytes < MAX_PENDING_BYTES:
            self._resume_reading()

    def _pause_reading(self) -> None:
        if not self._read_paused and self._transport is not None:
            self._read_paused = True
            self._transport.pause_reading()

    def _resume_reading(self) -> None:
        if self._read_paused and self._transport is not None and not self._transport.is_closing():
            self._read_paused = False
            self._transport.resume_reading()

    def _end_of_input(self) -> None:
        if self._frames.pending_bytes and not self._closed_as_idle:
            log.warning("connection.eof_mid_frame", pending_bytes=self._frames.pending_bytes)
        self.close()

    def _close_on(self, exc: CloseConnection) -> None:
        log.warning("connection.closed_on_bad_request", reason=str(exc))
        self.close()

    def _active(self) -> None:
        if self._idle is not None and not self.closed.is_set():
            self._idle.touch(self)

    # -- one request ---------------------------------------------------------------------------------------------

    def _answer(self, frame: bytes) -> bytes | list[Any] | asyncio.Task[Any] | None:
        """One request, as far as it goes without waiting: its answer (a whole frame, or its parts when a Fetch's
        record sets are still in files; None: no answer), or the Task that carries on a handler that parked (it
        calls `_answered`). A route the dispatcher serves synchronously
        (`Dispatcher.call_now`) costs no coroutine; any other is driven by `eager.start`, a Task only if it parks."""
        auth = self._auth
        if auth is not None and auth.expects_raw_token:
            return self._authenticator_step(auth.on_raw_token(frame), None)
        try:
            request = api.decode_request(frame)
        except UnsupportedVersionError as exc:
            return self._not_served(exc.api_key, exc.api_version, exc.correlation_id)
        except DecodeError as exc:
            raise self._malformed(frame, exc) from None
        header = request.header
        api_key = header.request_api_key
        api_version = header.request_api_version
        if auth is not None:
            step = auth.on_request(api_key, api_version, request.body, header.client_id)
            if step is not None:
                return self._authenticator_step(step, request)
        dispatcher = self._dispatcher
        route = dispatcher.route(api_key, api_version)
        if route is None:
            return self._not_served(api_key, api_version, header.correlation_id)
        session = self.session
        session.client_id = header.client_id
        ctx = RequestContext(session, api_key, api_version, header.correlation_id, header.client_id)
        try:
            body = dispatcher.call_now(ctx, route, request.body)
        except CloseConnection:
            raise
        except Exception as exc:
            raise self._failed(api_key, api_version, exc) from exc
        if body.__class__ is not Later:
            return self._encoded(request, body)
        loop = asyncio.get_running_loop()
        started = eager.start(self._answer_later(request, body.awaitable), self._context, loop, self._answered)
        return started.value if isinstance(started, eager.Done) else started

    async def _answer_later(self, request: api.Request, answer: Awaitable[Any]) -> bytes | list[Any] | None:
        """The encoded answer once the handler gives it."""
        try:
            body = await answer
        except CloseConnection:
            raise
        except Exception as exc:
            raise self._failed(request.header.request_api_key, request.header.request_api_version, exc) from exc
        return self._encoded(request, body)

    @staticmethod
    def _failed(api_key: int, api_version: int, exc: Exception) -> CloseConnection:
        """A handler's own failure (logged with its traceback, inside the `except`): the connection closes."""
        log.exception("request.handler_failed", api_key=api_key, api_version=api_version)
        return CloseConnection(f"internal error handling api key {api_key}: {exc!r}")

    def _encoded(self, request: api.Request, body: Any) -> bytes | list[Any] | None:
        """The response frame, or its parts (a Fetch's record sets may still be in segment files)."""
        if body is None:
            return None
        header = request.header
        api_key = header.request_api_key
        api_version = header.request_api_version
        body = as_written(api_key, api_version, body)
        try:
            if api_key == _FETCH:  # the only response whose records may still be in segment files
                return api.encode_response_parts(api_key, api_version, header.correlation_id, body)
            if api_key == _API_VERSIONS:  # the same answer every time: encoded once per version
                encoded = self._dispatcher.encoded_api_versions(api_version, body)
                if encoded is not None:
                    return [_SIZE_AND_CORRELATION.pack(len(encoded) + 4, header.correlation_id), encoded]
            return api.encode_response(api_key, api_version, header.correlation_id, body)
        except EncodeError as exc:
            log.exception("response.encode_failed", api_key=api_key, api_version=api_version)
            raise CloseConnection(f"cannot encode response: {exc}") from exc

    def _authenticator_step(self, step: Step, request: api.Request | None) -> list[Any] | None:
        """Carry out what the SASL authenticator decided: the principal it established, its answer, its close."""
        assert self._auth is not None
        if self._auth.principal is not None:
            if self.session.principal != self._auth.principal:  # this connection's log lines name who it is now
                structlog.contextvars.bind_contextvars(principal=self._auth.principal)
            self.session.principal = self._auth.principal
            self._frames.max_frame_bytes, self._frames.limit_key = self._max_frame_bytes, "socket.request.max.bytes"
        self._close_after_send = step.close
        if step.raw is not None:
            return [struct.pack(">i", len(step.raw)) + step.raw]
        if step.response is None or request is None:
            return None
        return [api.encode_response(request.api_key, request.api_version, request.correlation_id, step.response)]

    def _not_served(self, api_key: int, api_version: int, correlation_id: int) -> list[Any]:
        """A version the codec does not know, or knows but the broker does not advertise: KIP-511 answers an
        ApiVersions in v0 with our range for it; any other API closes the connection, as Kafka does."""
        if api_key == ApiKey.API_VERSIONS:
            body = self._dispatcher.unsupported_api_versions()
            return [api.encode_response(ApiKey.API_VERSIONS, 0, correlation_id, body)]
        raise CloseConnection(f"api key {api_key} version {api_version} is not served")

    @staticmethod
    def _malformed(frame: bytes, exc: DecodeError) -> CloseConnection:
        """A request that cannot be read closes the connection, whatever the API: Kafka's
        RequestContext.parseRequest raises InvalidRequestException and the socket is closed. One warning, the
        connection's `connection.closed_on_bad_request`, names the API (if the header could be read), field, offset."""
        try:
            api_key, api_version, _ = api.peek_header(frame)
        except DecodeError:
            return CloseConnection(f"malformed request header: {exc}")
        return CloseConnection(f"malformed {APIS[api_key].key.name} v{api_version}: {exc}")


class Closed:
    """Whether the connection is closed, and a wait for it (what `asyncio.Event` offers, without the deque of
    waiters every Event carries: there are thousands of connections and at most one waiter, at shutdown)."""

    __slots__ = ("_set", "_waiter")

    def __init__(self) -> None:
        self._set = False
        self._waiter: asyncio.Future[None] | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self) -> None:
        if self._set:
            return
        if self._waiter is None:
            self._waiter = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._waiter)


def _close_slices(parts: list[Any]) -> None:
    for part in parts:
        if isinstance(part, RecordSlices):
            part.close()
