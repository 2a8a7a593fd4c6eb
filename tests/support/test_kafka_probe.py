"""The reference Kafka's readiness probe (`tests/reference/kafka.py`) over TLS, against a stand-in TLS server: a
connection the broker resets after the handshake is closed by `close_probe` without raising (a reset used to escape
the probe's retry loop from its `finally`, failing the start at the first such connection) and without leaving a
transport open (the suite turns ResourceWarnings into errors)."""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from protocol.registry import ApiKey
from tests.broker.wire import NAMED_API_VERSIONS, WireClient
from tests.reference.kafka import close_probe
from tests.support.tls import TlsFiles

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def tls_server(tls: TlsFiles, handle: Handler) -> AsyncIterator[int]:
    """A TLS server requiring a client certificate, as the e2e Kafka's SSL listener does; its port."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(tls.files.ca))
    context.load_cert_chain(tls.files.broker_cert, tls.files.broker_key)
    context.verify_mode = ssl.CERT_REQUIRED
    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


async def reset_after_the_first_bytes(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.read(1)
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a RST
    writer.transport.abort()


async def connect(port: int, tls: TlsFiles) -> WireClient:
    return WireClient(*await asyncio.open_connection("127.0.0.1", port, ssl=tls.client_context()))


async def test_a_probe_connection_reset_by_the_broker_closes_without_raising(tmp_path: Path) -> None:
    tls = TlsFiles.create(tmp_path)
    async with tls_server(tls, reset_after_the_first_bytes) as port:
        client = await connect(port, tls)
        with pytest.raises((OSError, asyncio.IncompleteReadError)):
            await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
        await close_probe(client)
        assert client.writer.transport.is_closing()
