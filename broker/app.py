"""The broker process: listeners, connections, storage, the coordinator and the timer driver, and shutdown.

Shutdown follows uvicorn and mini-redis: stop accepting, let in-flight requests finish (bounded), flush storage,
close. Connection handling is capped by `max.connections` with a semaphore.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

import structlog

from broker.clock import SystemClock
from broker.config import BrokerConfig
from broker.connection import Connection
from broker.dispatch import Dispatcher
from broker.scheduler import TimerDriver

log = structlog.get_logger("broker.app")
SHUTDOWN_GRACE_S = 5.0


class Broker:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.dispatcher = Dispatcher()
        self._servers: list[asyncio.Server] = []
        self._connections: set[Connection] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(config["max.connections"])
        self.clock: SystemClock | None = None
        self.driver: TimerDriver | None = None
        self.on_stop: list[Callable[[], None]] = []
        self.stopped = asyncio.Event()

    @property
    def ports(self) -> list[int]:
        return [s.sockets[0].getsockname()[1] for s in self._servers]

    @property
    def bootstrap_servers(self) -> str:
        host = self.config.listeners[0][1] or "127.0.0.1"
        return f"{host}:{self.ports[0]}"

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.clock = SystemClock(loop)
        self.driver = TimerDriver(loop, self.clock, [])
        for name, host, port in self.config.listeners:
            server = await asyncio.start_server(self._acceptor(name), host or None, port, reuse_address=True)
            self._servers.append(server)
        log.info(
            "broker.started",
            listeners=[f"{n}://{h}:{p}" for (n, h, _), p in zip(self.config.listeners, self.ports, strict=True)],
        )

    def _acceptor(
        self, listener: str
    ) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Coroutine[Any, Any, None]]:
        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await self._accept(reader, writer, listener)

        return accept

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, listener: str) -> None:
        async with self._slots:
            connection = Connection(self.dispatcher, reader, writer, self.config["socket.request.max.bytes"], listener)
            self._connections.add(connection)
            try:
                await connection.run()
            finally:
                self._connections.discard(connection)

    async def stop(self) -> None:
        for server in self._servers:
            server.close()
        for connection in list(self._connections):
            connection.close()
        for server in self._servers:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(server.wait_closed(), SHUTDOWN_GRACE_S)
        if self.driver is not None:
            self.driver.close()
        for callback in self.on_stop:
            callback()
        log.info("broker.stopped")
        self.stopped.set()
