"""One client connection: read frames, answer them strictly in order, close only this connection on bad input.

Kafka mutes a socket while a request is in flight, and clients match responses to requests FIFO by correlation id,
so requests are handled one at a time: a parked JoinGroup holds the requests behind it on the same connection,
exactly as in Kafka. Pipelined requests that are already buffered are answered in order as each completes.
Anything malformed ends this connection with one structured warning; the broker and every other client go on.
"""

from __future__ import annotations

import asyncio
import itertools
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog

from broker.auth_gate import AuthGate
from broker.context import ConnectionSession, RequestContext
from broker.listeners import current_listener
from broker.record_slices import RecordSlices, RecordsShrankError
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
READ_SIZE = 256 * 1024


@dataclass(frozen=True, slots=True)
class ListenerSecurity:
    """What a listener's connections authenticate with: SASL settings on SASL listeners, the
    `ssl.principal.mapping.rules` for TLS client certificates, and the clock that SASL sessions expire by."""

    sasl: SaslSettings | None = None
    principal_mapper: SslPrincipalMapper | None = None
    now_ms: Callable[[], int] = field(default=lambda: int(time.monotonic() * 1000))


class CloseConnection(Exception):
    """Raised inside request handling when the only correct answer is to drop the connection."""


class Connection:
    def __init__(
        self,
        dispatcher: Dispatcher,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        max_frame_bytes: int,
        listener: str = "PLAINTEXT",
        idle: IdleConnections | None = None,
        security: ListenerSecurity | None = None,
        gate: AuthGate | None = None,
    ) -> None:
        peer = writer.get_extra_info("peername") or ("?", 0)
        self.session = ConnectionSession(next(_conn_ids), str(peer[0]), int(peer[1]), listener)
        ssl_object = writer.get_extra_info("ssl_object")
        self._first_read = ssl_object is None  # only a plaintext connection's first bytes can be a TLS ClientHello
        self._dispatcher = dispatcher
        self._reader = reader
        self._writer = writer
        self._frames = FrameBuffer(max_frame_bytes)
        self._max_frame_bytes = max_frame_bytes
        self._secure(security or ListenerSecurity(), ssl_object, f"{peer[0]}:{peer[1]}", gate)
        self.closed = asyncio.Event()
        self._busy = False
        self._stopping = False
        self._idle = idle
        self._closed_as_idle = False
        if idle is not None:
            idle.touch(self)  # accepting is activity: a client that never sends a byte is idle from here

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

    @property
    def pending_bytes(self) -> int:
        """Bytes of a frame received but not yet complete (a stalled client shows here)."""
        return self._frames.pending_bytes

    async def run(self) -> None:
        session = self.session  # every log line of this connection says who it is (SASL rebinds `principal`)
        structlog.contextvars.bind_contextvars(
            conn_id=session.conn_id, peer=session.peer_host, listener=session.listener, principal=session.principal
        )
        current_listener.set(self.session.listener.upper())  # this task's context only: answers use its address
        try:
            await self._serve()
        except (ConnectionError, asyncio.IncompleteReadError):
            log.debug("connection.reset")
        except CloseConnection as exc:
            log.warning("connection.closed_on_bad_request", reason=str(exc))
        finally:
            self.close()

    def stop_reading(self) -> None:
        """Graceful shutdown: finish the request in flight (if any), answer it, then close."""
        self._stopping = True
        if not self._busy:
            self.close()

    async def _serve(self) -> None:
        if self._unmapped is not None:
            log.warning("connection.principal_mapping_failed", listener=self.session.listener, reason=self._unmapped)
            return
        while not self._stopping:
            data = await self._reader.read(READ_SIZE)
            if not data:
                if self._frames.pending_bytes and not self._closed_as_idle:
                    log.warning("connection.eof_mid_frame", pending_bytes=self._frames.pending_bytes)
                return
            self._active()
            if self._first_read:
                self._first_read = False
                if data.startswith(TLS_RECORD_START):
                    log.warning(
                        "connection.tls_on_plaintext_listener",
                        listener=self.session.listener,
                        reason="the client started a TLS handshake on a listener without TLS: "
                        "set its security.protocol to PLAINTEXT or connect to an SSL listener",
                    )
                    return
            try:
                self._frames.feed(data)
                while not self._stopping and (frame := self._frames.next_frame()) is not None:
                    self._busy = True
                    if self._idle is not None:
                        self._idle.hold(self)
                    try:
                        try:
                            parts = await self._handle(frame)
                        finally:
                            self._active()
                        if parts is not None:
                            await self._send(parts)
                    finally:
                        self._busy = False
                    if self._close_after_send is not None:  # the authenticator's answer is final (logged there)
                        await self._writer.drain()
                        return
            except FrameError as exc:
                raise CloseConnection(str(exc)) from None
            await self._writer.drain()

    async def _send(self, parts: list[Any]) -> None:
        """Write one response: encoded bytes as they are, record sets streamed from the segment files with
        backpressure. Nothing else is written on this connection meanwhile, so answers stay in request order;
        a closed peer (shutdown, dropped) gets nothing, and every record set is released either way."""
        try:
            for part in parts:
                if self._writer.is_closing():
                    return
                if isinstance(part, RecordSlices):
                    try:
                        await part.write_to(self._writer, self._active)
                    except RecordsShrankError as exc:  # the frame's size is promised: only closing is honest
                        raise CloseConnection(f"fetch response cut short: {exc}") from None
                else:
                    self._writer.write(part)
        finally:
            for part in parts:
                if isinstance(part, RecordSlices):
                    part.close()

    async def _handle(self, frame: bytes) -> list[Any] | None:
        if self._auth is not None and self._auth.expects_raw_token:
            return self._authenticator_step(self._auth.on_raw_token(frame), None)
        try:
            request = api.decode_request(frame)
        except UnsupportedVersionError as exc:
            return self._not_served(exc.api_key, exc.api_version, exc.correlation_id)
        except DecodeError as exc:
            raise self._malformed(frame, exc) from None
        if self._auth is not None:
            step = self._auth.on_request(request.api_key, request.api_version, request.body, request.header.client_id)
            if step is not None:
                return self._authenticator_step(step, request)
        route = self._dispatcher.route(request.api_key, request.api_version)
        if route is None:
            return self._not_served(request.api_key, request.api_version, request.correlation_id)
        header = request.header
        self.session.client_id = header.client_id
        ctx = RequestContext(
            self.session, header.request_api_key, header.request_api_version, header.correlation_id, header.client_id
        )
        try:
            body = await self._dispatcher.call(ctx, route, request.body)
        except CloseConnection:
            raise
        except Exception as exc:
            log.exception("request.handler_failed", api_key=request.api_key, api_version=request.api_version)
            raise CloseConnection(f"internal error handling api key {request.api_key}: {exc!r}") from exc
        if body is None:
            return None
        body = as_written(request.api_key, request.api_version, body)
        try:
            if request.api_key == ApiKey.FETCH:  # the only response whose records may still be in segment files
                return api.encode_response_parts(request.api_key, request.api_version, request.correlation_id, body)
            return [api.encode_response(request.api_key, request.api_version, request.correlation_id, body)]
        except EncodeError as exc:
            log.exception("response.encode_failed", api_key=request.api_key, api_version=request.api_version)
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

    def _active(self) -> None:
        if self._idle is not None and not self.closed.is_set():
            self._idle.touch(self)

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
        if not self._writer.is_closing():
            self._writer.close()
        if self._idle is not None:
            self._idle.forget(self)
        self.closed.set()
