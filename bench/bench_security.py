"""TLS beside plaintext, side by side with the other peers (issue #17's performance figures; figures only).

Two tables, one column per peer (`bench.peers`), driven by the same raw-protocol client as `bench_broker`:

* produce/fetch MB/s over plaintext and over TLS: `bench_broker`'s measurement (one producer connection, ~1 MiB
  batches, PRODUCE_IN_FLIGHT in flight, then one consumer reading them back), its two connections speaking TLS
  for the TLS rows (server certificate only, as most TLS clients connect).
* connection setups per second: TCP connect, the TLS handshake (server-only, then with a client certificate:
  mutual TLS), one ApiVersions v0 round trip, close; SETUP_CONCURRENCY such loops at once for SETUP_WINDOW_S, best of
  SETUP_WINDOWS windows; the broker's and the client's CPU say who was the bottleneck. The SASL/SCRAM-SHA-512 row
  (a SCRAM exchange after the handshake) is the slot for SASL, which group-broker does not serve yet (issue #17):
  it says so rather than measure anything.

Each peer runs twice: plainly, then with its client listener speaking TLS (`ssl.client.auth=requested`, so the same
broker serves the server-only and the mutual-TLS setups), with certificates made by `toolkit.security` (EC P-256,
TLS 1.3 negotiated by every peer here). The librdkafka mock and kfake have no TLS listener: their TLS rows say so.
"""

from __future__ import annotations

import asyncio
import contextlib
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
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.registry import ApiKey
from toolkit.security import ClientSettings, Security, secure

SETUP_CONCURRENCY = 4
SETUP_WINDOW_S = 3.0
SETUP_WINDOWS = 2
TLS_PEERS = frozenset({"ours", "kafka"})
NO_TLS = "n/a (no TLS listener)"
SASL_SLOT = "n/a (SASL not served yet)"
SASL_LATER = "n/a (measured once ours is)"
#: The TLS broker of every peer: its client listener speaks SSL, client certificates requested (not required).
TLS_SECURITY = Security("SSL", client_auth="requested", client_cn="bench")


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


async def _setup_loop(server: Broker, tls: ssl.SSLContext | None, stop_at: float) -> int:
    frame = request_frame(ApiKey.API_VERSIONS, 0, ApiVersionsRequest(), 0)
    count = 0
    while time.perf_counter() < stop_at:
        connection = await Connection.open(server.host, server.port, tls)
        try:
            await connection.send(frame)
        finally:
            connection.close()
        count += 1
    return count


async def _setups(server: Broker, tls: ssl.SSLContext | None) -> SetupResult:
    """Best of SETUP_WINDOWS windows of SETUP_CONCURRENCY connect-handshake-ApiVersions-close loops."""
    best: SetupResult | None = None
    for _ in range(SETUP_WINDOWS):
        server_cpu, client_cpu = cpu_seconds(server.pid), cpu_seconds()
        started = time.perf_counter()
        loops = [_setup_loop(server, tls, started + SETUP_WINDOW_S) for _ in range(SETUP_CONCURRENCY)]
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


def _measure(peer: Peer, tmp: Path, tls: dict[str, str], contexts: Contexts) -> PeerFigures:
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
    return figures


def _cells(
    results: dict[str, PeerFigures], columns: Sequence[Peer], figure: Callable[[PeerFigures], float | None]
) -> dict[str, Cell]:
    values: dict[str, Cell] = {}
    for peer in columns:
        if peer.name in results:
            value = figure(results[peer.name])
            values[peer.name] = NO_TLS if value is None else value
    return values


def run() -> None:
    columns = peers()
    failures: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="bench-security-") as tmp:
        broker_tls, client = secure(TLS_SECURITY, Path(tmp) / "certs")
        contexts = Contexts.of(client)
        results = each_peer(columns, lambda peer: _measure(peer, Path(tmp), broker_tls, contexts), failures)

    def throughput(mode: str, attr: str) -> Callable[[PeerFigures], float | None]:
        return lambda f: max(getattr(f.throughput[mode], attr)) if mode in f.throughput else None

    def setups(mode: str, attr: str = "rate") -> Callable[[PeerFigures], float | None]:
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
    for mode in ("plaintext", "TLS", "mutual TLS"):
        measures += [
            Measure(f"setups/s, {mode}", with_failures(_cells(results, columns, setups(mode)), failures)),
            Measure(
                f"  broker CPU, {mode}",
                with_failures(_cells(results, columns, setups(mode, "server_cpu")), failures),
                spec=".2f",
                compare=False,
            ),
            Measure(
                f"  client CPU, {mode}",
                with_failures(_cells(results, columns, setups(mode, "client_cpu")), failures),
                spec=".2f",
                compare=False,
            ),
        ]
    sasl: dict[str, Cell] = {name: SASL_SLOT if name == "ours" else SASL_LATER for name in results}
    measures.append(Measure("setups/s, SASL_SSL SCRAM-SHA-512", sasl, compare=False))
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
            "SASL/SCRAM setups: group-broker serves no SASL yet (issue #17); the row is measured once it does",
        ),
    )


def _tls_notes() -> list[str]:
    return [
        "TLS rows: the peer's client listener speaks SSL (PEM keystore, EC P-256 certificate from toolkit.certs,"
        " ssl.client.auth=requested); mock and kfake have no TLS listener",
    ]


if __name__ == "__main__":
    run()
