"""Run a broker inside the current process, on its own thread and event loop.

Tests are the main user: an async test (aiokafka) and a blocking one (kafka-python, confluent-kafka) can both
talk to it, because the broker never shares the test's thread. Calls into the broker (`call`) are marshalled
onto its loop, so the coordinator is only ever touched from one thread.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TypeVar

import uvloop

from broker.app import Broker
from broker.config import BrokerConfig
from broker.logging import configure_test_logging
from cli.scram import add_offline
from toolkit.kit import Toolkit
from toolkit.security import ClientSettings, Security, secure

T = TypeVar("T")

TEST_DEFAULTS = {
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "100",
    "offsets.topic.num.partitions": "10",
    "num.partitions": "1",
}


class EmbeddedBroker:
    def __init__(
        self,
        overrides: dict[str, str] | None = None,
        data_dir: Path | None = None,
        security: str | Security | None = None,
    ) -> None:
        """`security`: how its listener is secured (`toolkit.security.Security.of`: "PLAINTEXT", "SSL", "mTLS",
        "SASL_PLAINTEXT", "SASL_SSL:SCRAM-SHA-256"...); certificates go to a temporary directory of their own (never
        the log directory), a SCRAM user to the data directory's credential store, and `client_settings` tells
        clients how to connect. `overrides` win over what `security` sets."""
        wanted = Security.of(security)  # a spec it cannot serve is refused before anything is made
        self._temp: tempfile.TemporaryDirectory[str] | None = None
        if data_dir is None:
            self._temp = tempfile.TemporaryDirectory(prefix="group-broker-")
            data_dir = Path(self._temp.name)
        self.data_dir = data_dir
        self._certs: tempfile.TemporaryDirectory[str] | None = None
        secured: dict[str, str] = {}
        self.client_settings = ClientSettings()
        if wanted.tls or wanted.sasl:
            self._certs = tempfile.TemporaryDirectory(prefix="group-broker-certs-")
            secured, self.client_settings = secure(wanted, Path(self._certs.name))
        if wanted.scram_spec is not None:  # the user, made as `group-broker scram add` makes one
            add_offline(data_dir, [wanted.scram_spec])
        self.config = BrokerConfig({**TEST_DEFAULTS, **secured, "log.dirs": str(data_dir), **(overrides or {})})
        self._kit: Toolkit | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()

    @property
    def kit(self) -> Toolkit:
        """The broker with its toolkit; built on the broker's own loop by `start`."""
        if self._kit is None:
            raise RuntimeError("the embedded broker is not started")
        return self._kit

    @property
    def broker(self) -> Broker:
        return self.kit.broker

    @property
    def bootstrap_servers(self) -> str:
        return self.broker.bootstrap_servers

    @property
    def control_url(self) -> str | None:
        return self.kit.control_url

    def start(self, timeout_s: float = 10.0) -> EmbeddedBroker:
        configure_test_logging()  # warnings only, unless GROUP_BROKER_LOG_LEVEL asks for more
        ready: Future[None] = Future()

        def run() -> None:
            loop = uvloop.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                kit = self._kit = loop.run_until_complete(self._build())
                loop.run_until_complete(kit.start())
                loop.run_until_complete(kit.broker.loaded.wait())
            except BaseException as exc:
                ready.set_exception(exc)
                loop.close()
                return
            ready.set_result(None)
            loop.run_forever()
            loop.run_until_complete(kit.stop())
            loop.close()
            self._stopped.set()

        self._thread = threading.Thread(target=run, name="group-broker", daemon=True)
        self._thread.start()
        ready.result(timeout_s)
        return self

    async def _build(self) -> Toolkit:
        return Toolkit.build(self.config)

    def call(self, fn: Callable[[], T], timeout_s: float = 10.0) -> T:
        """Run `fn` on the broker's loop and return its result (exceptions propagate)."""
        loop = self._loop
        assert loop is not None
        result: Future[T] = Future()

        def invoke() -> None:
            try:
                result.set_result(fn())
            except BaseException as exc:
                result.set_exception(exc)

        loop.call_soon_threadsafe(invoke)
        return result.result(timeout_s)

    def stop(self, timeout_s: float = 15.0) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout_s)
        for temp in (self._temp, self._certs):
            if temp is not None:
                temp.cleanup()
        self._temp = self._certs = None
