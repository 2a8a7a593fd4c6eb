"""TLS beside plaintext, side by side with the other peers (issue #17's performance figures; figures only).

Two tables, one column per peer (`bench.peers`), driven by the same raw-protocol client as `bench_broker`:

* produce/fetch MB/s over plaintext and over TLS: `bench_broker`'s measurement (one producer connection, ~1 MiB
  batches, PRODUCE_IN_FLIGHT in flight, then one consumer reading them back), its two connections speaking TLS
  for the TLS rows (server certificate only, as most TLS clients connect).
* connection setups per second: TCP connect, the TLS handshake (server-only, then with a client certificate:
  mutual TLS), one ApiVersions v0 round trip, close; SETUP_CONCURRENCY such loops at once for SETUP_WINDOW_S, best of
  SETUP_WINDOWS windows; the broker's and the client's CPU say who was the bottleneck. The SASL rows add what a
  Kafka client does after ApiVersions: SaslHandshake v1 and SaslAuthenticate v2 (PLAIN's one message on
  SASL_PLAINTEXT; SCRAM-SHA-512's two over TLS on SASL_SSL, the broker's signature checked), then close.

Each peer runs twice: plainly, then with its client listener speaking TLS (`ssl.client.auth=requested`, so the same
broker serves the server-only and the mutual-TLS setups), with certificates made by `toolkit.security` (EC P-256,
TLS 1.3 negotiated by every peer here). The librdkafka mock and kfake have no TLS listener: their TLS rows say so.
Ours and Kafka run a third time for the SASL rows: beside the PLAINTEXT client listener (their readiness probe's), a
SASL_PLAINTEXT listener with PLAIN and a SASL_SSL one with SCRAM-SHA-512, with the settings and the user alice that
`toolkit.security` gives the pytest fixture (SCRAM user seeded before the first start: `group-broker scram add`
for ours, `kafka-storage format --add-scram` for Kafka, both with 4096 iterations).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.bench_broker import PRODUCE_BYTES, PRODUCE_IN_FLIGHT, PRODUCE_RUNS, ThroughputResult, _throughput
from bench.peers import (
    OURS_SETTINGS,
    PEER_BUDGET_S,
    Broker,
    Cell,
    Measure,
    Peer,
    comparison_table,
    each_peer,
    peer_notes,
    peers,
    with_failures,
    within,
)
from bench.wire_load import Connection, ServerProcess, cpu_seconds, print_table, request_frame, run_async
from cli.client_security import ClientSecurity, sasl_tokens
from cli.scram import add_offline
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from protocol.messages.sasl_handshake import SaslHandshakeRequest
from protocol.registry import ApiKey
from toolkit.security import ClientSettings, Security, secure

SETUP_CONCURRENCY = 4
SETUP_WINDOW_S = 3.0
SETUP_WINDOWS = 2
TLS_PEERS = frozenset({"ours", "kafka"})
NO_TLS = "n/a (no TLS listener)"
NO_SASL = "n/a (no SASL listener)"
#: The TLS broker of every peer: its client listener speaks SSL, client certificates requested (not required).
TLS_SECURITY = Security("SSL", client_auth="requested", client_cn="bench")
#: The SASL rows: label -> the listener's security (its name is its protocol's), as the pytest fixture sets it up.
SASL_MODES = {"SASL_PLAINTEXT PLAIN": Security("SASL_PLAINTEXT"), "SASL_SSL SCRAM-SHA-512": Security("SASL_SSL")}


@dataclass
class SetupResult:
    rate: float
    server_cpu: float
    client_cpu: float


@dataclass
class Contexts:
    """The client side of the TLS broker: server-only TLS, and mutual TLS (with the client certificate)."""

    tls: ssl.SSLContext
    mutual: ssl.SSLContext

    @classmethod
    def of(cls, client: ClientSettings) -> Contexts:
        assert client.ca_file is not None
        mutual = client.ssl_context()
        assert mutual is not None
        return cls(ssl.create_default_context(cafile=str(client.ca_file)), mutual)


def _kafka_tls_settings(broker: dict[str, str]) -> dict[str, str]:
    """Our TLS settings as the reference Kafka takes them: its client listener (named PLAINTEXT) mapped to SSL."""
    settings = {key: value for key, value in broker.items() if key != "listeners"}
    return {**settings, "listener.security.protocol.map": "PLAINTEXT:SSL,CONTROLLER:PLAINTEXT"}


def _make(peer: Peer, work_dir: Path, tls: dict[str, str] | None, probe: ssl.SSLContext | None) -> Broker:
    """The peer's broker, plain (`tls` None) or with its client listener speaking TLS."""
    if tls is None:
        return peer.make(work_dir)
    if peer.name == "ours":
        return ServerProcess.ours(work_dir, {**OURS_SETTINGS, **tls})
    from bench.kafka_peer import KafkaServer  # the tests package: only when Kafka runs

    return KafkaServer(work_dir, _kafka_tls_settings(tls), probe)


@contextlib.contextmanager
def _running(peer: Peer, work_dir: Path, tls: dict[str, str] | None, probe: ssl.SSLContext | None) -> Iterator[Broker]:
    server = _make(peer, work_dir, tls, probe)
    try:
        server.start()
        if peer.wait_ready is not None:
            peer.wait_ready(server)
        yield server
    finally:
        server.stop()


@dataclass(frozen=True)
class Endpoint:
    """Where a setup loop connects, how (TLS context), and the SASL user it logs in as (None: no SASL)."""

    host: str
    port: int
    tls: ssl.SSLContext | None = None
    user: ClientSecurity | None = None


async def _login(connection: Connection, user: ClientSecurity) -> None:
    """SaslHandshake v1, then SaslAuthenticate v2 for each token of the client's exchange (`cli.client_security`)."""
    handshake = await connection.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism=str(user.mechanism)))
    if handshake.error_code:
        raise RuntimeError(f"SaslHandshake {user.mechanism}: error {handshake.error_code}")
    exchange = sasl_tokens(user)
    token = next(exchange)
    while True:
        answer = await connection.call(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=token))
        if answer.error_code:
            raise RuntimeError(f"SaslAuthenticate: {answer.error_message}")
        try:
            token = exchange.send(bytes(answer.auth_bytes))
        except StopIteration:
            return


async def _setup_loop(endpoint: Endpoint, stop_at: float) -> int:
    frame = request_frame(ApiKey.API_VERSIONS, 0, ApiVersionsRequest(), 0)
    count = 0
    while time.perf_counter() < stop_at:
        connection = await Connection.open(endpoint.host, endpoint.port, endpoint.tls)
        try:
            await connection.send(frame)
            if endpoint.user is not None:
                await _login(connection, endpoint.user)
        finally:
            connection.close()
        count += 1
    return count


async def _setups(server: Broker, tls: ssl.SSLContext | None, endpoint: Endpoint | None = None) -> SetupResult:
    """Best of SETUP_WINDOWS windows of SETUP_CONCURRENCY connect-handshake-ApiVersions(-SASL)-close loops, to
    `endpoint` (the server's client listener when None); CPU figures are the server process's."""
    target = endpoint or Endpoint(server.host, server.port, tls)
    best: SetupResult | None = None
    for _ in range(SETUP_WINDOWS):
        server_cpu, client_cpu = cpu_seconds(server.pid), cpu_seconds()
        started = time.perf_counter()
        loops = [_setup_loop(target, started + SETUP_WINDOW_S) for _ in range(SETUP_CONCURRENCY)]
        count = sum(await asyncio.gather(*loops))
        elapsed = time.perf_counter() - started
        result = SetupResult(
            count / elapsed, (cpu_seconds(server.pid) - server_cpu) / elapsed, (cpu_seconds() - client_cpu) / elapsed
        )
        if best is None or result.rate > best.rate:
            best = result
    assert best is not None
    return best


@dataclass
class PeerFigures:
    throughput: dict[str, ThroughputResult]
    setups: dict[str, SetupResult]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class SaslSetup:
    """The SASL broker's settings (both SASL listeners, the SASL_SSL keystore), the SCRAM user to seed, and how the
    setup loops log in on each listener."""

    settings: dict[str, str]
    scram_user: str
    users: dict[str, tuple[ssl.SSLContext | None, ClientSecurity]]

    @classmethod
    def make(cls, directory: Path) -> SaslSetup:
        settings: dict[str, str] = {}
        users: dict[str, tuple[ssl.SSLContext | None, ClientSecurity]] = {}
        for label, security in SASL_MODES.items():
            broker, client = secure(security, directory / security.protocol.lower())
            settings |= {key: value for key, value in broker.items() if key != "listeners"}
            user = ClientSecurity(client.protocol, client.mechanism, security.username, security.password)
            users[label] = (client.ssl_context(), user)
        scram = [s.scram_spec for s in SASL_MODES.values() if s.scram_spec is not None]
        return cls(settings, scram[0], users)

    def endpoints(self, ports: dict[str, int]) -> dict[str, Endpoint]:
        """Each row's endpoint, given the port of each listener (named as its protocol)."""
        return {
            label: Endpoint("127.0.0.1", ports[security.protocol], *self.users[label])
            for label, security in SASL_MODES.items()
        }


def _sasl_broker(peer: Peer, work_dir: Path, sasl: SaslSetup) -> tuple[Broker, Callable[[], dict[str, int]]]:
    """Ours or Kafka with the two SASL listeners beside the client one; their ports by name once it started."""
    protocols = {security.protocol: security.protocol for security in SASL_MODES.values()}
    if peer.name == "kafka":
        from bench.kafka_peer import KafkaServer

        kafka = KafkaServer(
            work_dir, sasl.settings, extra_listeners=protocols, format_args=["--add-scram", sasl.scram_user]
        )
        return kafka, lambda: kafka.kafka.listener_ports
    ports = {name: _free_port() for name in protocols}
    work_dir.mkdir(parents=True, exist_ok=True)
    add_offline(work_dir, [sasl.scram_user])
    listeners = ",".join(["PLAINTEXT://127.0.0.1:0", *(f"{n}://127.0.0.1:{p}" for n, p in ports.items())])
    protocol_map = ",".join(["PLAINTEXT:PLAINTEXT", *(f"{n}:{n}" for n in ports)])
    overrides = {
        **OURS_SETTINGS,
        **sasl.settings,
        "listeners": listeners,
        "listener.security.protocol.map": protocol_map,
    }
    return ServerProcess.ours(work_dir, overrides), lambda: ports


def _measure_sasl(peer: Peer, work_dir: Path, sasl: SaslSetup, figures: PeerFigures) -> None:
    server, ports = _sasl_broker(peer, work_dir, sasl)
    try:
        server.start()
        if peer.wait_ready is not None:
            peer.wait_ready(server)
        for label, endpoint in sasl.endpoints(ports()).items():
            figures.setups[label] = run_async(within(_setups(server, None, endpoint), PEER_BUDGET_S))
    finally:
        server.stop()


def _measure(peer: Peer, tmp: Path, tls: dict[str, str], contexts: Contexts, sasl: SaslSetup) -> PeerFigures:
    figures = PeerFigures({}, {})
    with _running(peer, tmp / f"{peer.name}-plain", None, None) as server:
        figures.throughput["plaintext"] = run_async(within(_throughput(server, peer.creates_topics), PEER_BUDGET_S))
        figures.setups["plaintext"] = run_async(within(_setups(server, None), PEER_BUDGET_S))
    if peer.name not in TLS_PEERS:
        return figures
    with _running(peer, tmp / f"{peer.name}-tls", tls, contexts.mutual) as server:
        figures.throughput["TLS"] = run_async(within(_throughput(server, True, contexts.tls), PEER_BUDGET_S))
        figures.setups["TLS"] = run_async(within(_setups(server, contexts.tls), PEER_BUDGET_S))
        figures.setups["mutual TLS"] = run_async(within(_setups(server, contexts.mutual), PEER_BUDGET_S))
    _measure_sasl(peer, tmp / f"{peer.name}-sasl", sasl, figures)
    return figures


def _cells(
    results: dict[str, PeerFigures],
    columns: Sequence[Peer],
    figure: Callable[[PeerFigures], float | None],
    missing: str = NO_TLS,
) -> dict[str, Cell]:
    values: dict[str, Cell] = {}
    for peer in columns:
        if peer.name in results:
            value = figure(results[peer.name])
            values[peer.name] = missing if value is None else value
    return values


def run() -> None:
    columns = peers()
    failures: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="bench-security-") as tmp:
        broker_tls, client = secure(TLS_SECURITY, Path(tmp) / "certs")
        contexts = Contexts.of(client)
        sasl = SaslSetup.make(Path(tmp) / "sasl-certs")
        results = each_peer(columns, lambda peer: _measure(peer, Path(tmp), broker_tls, contexts, sasl), failures)

    def throughput(mode: str, attr: str) -> Callable[[PeerFigures], float | None]:
        return lambda f: max(getattr(f.throughput[mode], attr)) if mode in f.throughput else None

    def setups(mode: str, attr: str = "rate") -> Callable[[PeerFigures], float | None]:  # None: not served
        return lambda f: getattr(f.setups[mode], attr) if mode in f.setups else None

    measures = [
        Measure(label, with_failures(_cells(results, columns, throughput(mode, attr)), failures))
        for attr, what in (("produce_mbs", "produce MB/s (acks=1)"), ("fetch_mbs", "fetch MB/s"))
        for mode, label in (("plaintext", f"{what}, plaintext"), ("TLS", f"{what}, TLS"))
    ]
    header, rows = comparison_table(measures, columns, ",.1f")
    print_table(
        f"TLS produce/fetch: one producer (~1 MiB batches, {PRODUCE_IN_FLIGHT} in flight), one consumer; "
        f"best of {PRODUCE_RUNS} x {PRODUCE_BYTES // 2**20} MiB",
        header,
        rows,
        notes=peer_notes(columns, failures, *_tls_notes()),
    )
    measures = []
    for mode in ("plaintext", "TLS", "mutual TLS", *SASL_MODES):
        missing = NO_SASL if mode in SASL_MODES else NO_TLS
        for label, attr, spec in (
            (f"setups/s, {mode}", "rate", None),
            (f"  broker CPU, {mode}", "server_cpu", ".2f"),
            (f"  client CPU, {mode}", "client_cpu", ".2f"),
        ):
            cells = with_failures(_cells(results, columns, setups(mode, attr), missing), failures)
            measures.append(Measure(label, cells) if spec is None else Measure(label, cells, spec=spec, compare=False))
    header, rows = comparison_table(measures, columns, ",.0f")
    print_table(
        f"connection setups/s: connect, handshake, ApiVersions v0, close; {SETUP_CONCURRENCY} loops at once, "
        f"best of {SETUP_WINDOWS} x {SETUP_WINDOW_S:g} s",
        header,
        rows,
        notes=peer_notes(
            columns,
            failures,
            *_tls_notes(),
            "CPU rows say who was the bottleneck (1.0 = one core); the client's TLS runs in the same process as the"
            " client (uvloop + OpenSSL), one full handshake per connection (no session resumption)",
            "SASL rows: ours and Kafka only (ApiVersions, SaslHandshake v1, SaslAuthenticate v2 until done); SCRAM's"
            " 4096 PBKDF2 iterations are paid by the client too, in the same process as the loops",
        ),
    )


def _tls_notes() -> list[str]:
    return [
        "TLS rows: the peer's client listener speaks SSL (PEM keystore, EC P-256 certificate from toolkit.certs,"
        " ssl.client.auth=requested); mock and kfake have no TLS listener",
    ]


if __name__ == "__main__":
    run()
