"""Serve one SSL listener: accept, look at the first bytes, shake hands without blocking the loop, then serve the
decrypted stream with the broker's protocol exactly as a plaintext listener's is.

`asyncio.start_server(ssl=...)` drops a failed handshake silently (a plaintext client on an SSL port just sees a
close). Accepting by hand lets the broker peek at the first bytes (`MSG_PEEK`, nothing consumed): a TLS record
starts 0x16 (handshake) 0x03 (major version); anything else is a client speaking plaintext to a TLS port, closed at
once with one log line. The handshake itself runs in the event loop's SSL protocol (`connect_accepted_socket`), a
few callbacks per round trip, so other clients are served meanwhile; it is bounded by `connections.max.idle.ms`.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import Callable

import structlog

from broker.auth_gate import OPEN_GATE, AuthGate

log = structlog.get_logger("broker.tls")
TLS_RECORD_START = b"\x16\x03"
#: Makes the protocol that serves one connection once its handshake is done (the broker's `Connection`).
ProtocolFactory = Callable[[], asyncio.BaseProtocol]


class TlsServer:
    """The SSL counterpart of `asyncio.Server` for what the broker uses: `sockets`, `close()`, `wait_closed()`."""

    def __init__(
        self,
        sock: socket.socket,
        context: ssl.SSLContext,
        listener: str,
        serve: ProtocolFactory,
        timeout_s: float,
        gate: AuthGate = OPEN_GATE,
    ) -> None:
        self.sockets = [sock]
        self._gate = gate
        self._context = context
        self._listener = listener
        self._serve = serve
        self._timeout_s = timeout_s
        self._handshakes: set[asyncio.Task[None]] = set()
        sock.setblocking(False)
        self._accepting = asyncio.get_running_loop().create_task(self._accept_forever())

    async def _accept_forever(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            client, _ = await loop.sock_accept(self.sockets[0])
            task = loop.create_task(self._open(client))
            self._handshakes.add(task)
            task.add_done_callback(self._handshakes.discard)

    async def _open(self, client: socket.socket) -> None:
        """Peek, shake hands, serve; any failure before serving closes this socket with one line saying why."""
        peer = _peer(client)
        try:
            first = await asyncio.wait_for(_peek(client, len(TLS_RECORD_START)), self._timeout_s)
            if first and not first.startswith(TLS_RECORD_START[: len(first)]):
                log.warning(
                    "connection.plaintext_on_tls_listener",
                    listener=self._listener,
                    peer=peer,
                    first_bytes=first.hex(),
                    reason="the client did not start a TLS handshake: set its security.protocol to SSL",
                )
                client.close()
                return
            if not first:
                client.close()
                return
            refused = self._gate.tls_handshake(self._listener, peer)
            if refused is not None:
                log.warning("connection.tls_handshake_failed", listener=self._listener, peer=peer, reason=refused)
                client.close()  # the ClientHello unread: the client sees its handshake cut off
                return
            # The protocol is told `connection_made` once the handshake is done; from then on the transport drives
            # it, and this task ends (no task stays parked per connection).
            await asyncio.get_running_loop().connect_accepted_socket(
                self._serve, client, ssl=self._context, ssl_handshake_timeout=self._timeout_s
            )
        except (TimeoutError, OSError) as exc:
            log.warning("connection.tls_handshake_failed", listener=self._listener, peer=peer, reason=_why(exc))
            client.close()

    def close(self) -> None:
        self._accepting.cancel()
        for task in self._handshakes:
            task.cancel()
        self.sockets[0].close()

    async def wait_closed(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            await self._accepting


async def _peek(client: socket.socket, size: int) -> bytes:
    """The first `size` bytes (fewer if the client closes first), left in the socket for the TLS layer."""
    loop = asyncio.get_running_loop()
    while True:
        try:
            data = client.recv(size, socket.MSG_PEEK)
        except BlockingIOError:
            data = None
        if data is not None and (len(data) >= size or not data):
            return data
        ready = loop.create_future()
        loop.add_reader(client.fileno(), ready.set_result, None)
        try:
            await ready
        finally:
            loop.remove_reader(client.fileno())


def _peer(client: socket.socket) -> str:
    try:
        host, port = client.getpeername()[:2]
    except OSError:
        return "?"
    return f"{host}:{port}"


def _why(exc: BaseException) -> str:
    if isinstance(exc, asyncio.TimeoutError):
        return "no TLS handshake within connections.max.idle.ms"
    if isinstance(exc, ssl.SSLError):
        return exc.reason or str(exc)
    return str(exc) or type(exc).__name__
