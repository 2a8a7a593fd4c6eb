"""SSL listeners over the raw protocol: requests answered over TLS (beside a plaintext listener, each advertising
its own address), mutual TLS giving the certificate's principal, client auth none/requested/required, the wrong
protocol on either kind of listener closed at once with one log line, and a stalled handshake blocking nobody."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import uvloop
from structlog.testing import capture_logs

from broker.app import Broker
from broker.config import BrokerConfig
from protocol.messages.metadata import MetadataRequest
from protocol.registry import ApiKey
from tests.broker.conftest import broker_config
from tests.broker.wire import NAMED_API_VERSIONS, WireClient
from tests.support.broker_process import wait_until_async
from tests.support.tls import TlsFiles

LISTENERS = {
    "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
    "advertised.listeners": "PLAINTEXT://127.0.0.1:0,SSL://localhost:0",
}


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return TlsFiles.create(tmp_path_factory.mktemp("certs"))


async def start(tmp_path: Path, tls: TlsFiles, client_auth: str) -> Broker:
    raw = {**broker_config(tmp_path).explicit, **LISTENERS, **tls.broker_properties(prefix="listener.name.ssl.")}
    raw["listener.name.ssl.ssl.client.auth"] = client_auth
    broker = Broker(BrokerConfig(raw))
    await broker.start()
    await broker.loaded.wait()
    return broker


@pytest.fixture
async def mutual(tmp_path: Path, tls: TlsFiles) -> AsyncIterator[Broker]:
    broker = await start(tmp_path, tls, "required")
    yield broker
    await broker.stop()


async def tls_client(port: int, context: ssl.SSLContext) -> WireClient:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
    return WireClient(reader, writer)


async def test_requests_are_answered_over_tls_with_the_ssl_listeners_address(mutual: Broker, tls: TlsFiles) -> None:
    plain_port, ssl_port = mutual.ports
    client = await tls_client(ssl_port, tls.client_context())
    try:
        versions = await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
        assert versions.error_code == 0
        metadata = await client.call(ApiKey.METADATA, 12, MetadataRequest(topics=None))
        assert [(b.host, b.port) for b in metadata.brokers] == [("localhost", ssl_port)]
    finally:
        await client.close()
    plain = await WireClient.connect(plain_port)
    try:
        metadata = await plain.call(ApiKey.METADATA, 12, MetadataRequest(topics=None))
        assert [(b.host, b.port) for b in metadata.brokers] == [("127.0.0.1", plain_port)]
    finally:
        await plain.close()


async def test_mutual_tls_gives_the_certificates_distinguished_name_as_principal(mutual: Broker, tls: TlsFiles) -> None:
    client = await tls_client(mutual.ports[1], tls.client_context())
    try:
        await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
        (connection,) = mutual.connections
        assert (connection.session.principal, connection.session.peer_dn) == (tls.client_principal, "CN=alice")
        assert connection.session.listener == "SSL"
    finally:
        await client.close()


async def test_required_client_auth_refuses_a_client_without_a_certificate(mutual: Broker, tls: TlsFiles) -> None:
    with capture_logs() as logs:
        client = await tls_client(mutual.ports[1], tls.client_context(with_certificate=False))
        # TLS 1.3 sends the client's (missing) certificate after the client's side of the handshake is done: the
        # refusal arrives as the first read.
        with pytest.raises((ssl.SSLError, ConnectionError, asyncio.IncompleteReadError)):
            await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
        client.writer.close()
        await wait_until_async(lambda: any(e["event"] == "connection.tls_handshake_failed" for e in logs))
    (failed,) = [e for e in logs if e["event"] == "connection.tls_handshake_failed"]
    assert "CERTIFICATE" in failed["reason"].upper()
    assert not mutual.connections


@pytest.mark.parametrize("client_auth", ["none", "requested"])
async def test_without_a_client_certificate_the_principal_is_anonymous(
    tmp_path: Path, tls: TlsFiles, client_auth: str
) -> None:
    broker = await start(tmp_path, tls, client_auth)
    try:
        client = await tls_client(broker.ports[1], tls.client_context(with_certificate=False))
        await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
        (connection,) = broker.connections
        assert (connection.session.principal, connection.session.peer_dn) == ("User:ANONYMOUS", None)
        await client.close()
    finally:
        await broker.stop()


async def test_requested_client_auth_verifies_a_certificate_that_is_sent(tmp_path: Path, tls: TlsFiles) -> None:
    broker = await start(tmp_path, tls, "requested")
    try:
        client = await tls_client(broker.ports[1], tls.client_context())
        await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
        (connection,) = broker.connections
        assert connection.session.principal == tls.client_principal
        await client.close()
    finally:
        await broker.stop()


async def test_a_plaintext_client_on_the_ssl_listener_is_closed_with_a_log_line(mutual: Broker) -> None:
    with capture_logs() as logs:
        client = await WireClient.connect(mutual.ports[1])
        client.writer.write(client.frame(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)[1])
        assert await client.closed_or_reset()
    (line,) = [e for e in logs if e["event"] == "connection.plaintext_on_tls_listener"]
    assert line["listener"] == "SSL" and line["first_bytes"] == "0000"
    assert not mutual.connections


async def test_a_tls_client_on_the_plaintext_listener_is_closed_with_a_log_line(mutual: Broker, tls: TlsFiles) -> None:
    with capture_logs() as logs, pytest.raises((ssl.SSLError, ConnectionError)):
        await tls_client(mutual.ports[0], tls.client_context())
    (line,) = [e for e in logs if e["event"] == "connection.tls_on_plaintext_listener"]
    assert line["listener"] == "PLAINTEXT"


async def test_a_stalled_handshake_does_not_hold_up_other_clients(mutual: Broker, tls: TlsFiles) -> None:
    """A client that sends half a ClientHello and stops: another TLS client is served meanwhile."""
    _, stalled = await asyncio.open_connection("127.0.0.1", mutual.ports[1])
    stalled.write(b"\x16\x03\x01\x02\x00\x01")
    await stalled.drain()
    try:
        client = await tls_client(mutual.ports[1], tls.client_context())
        assert (await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)).error_code == 0
        await client.close()
    finally:
        stalled.close()


def test_an_ssl_listener_serves_on_uvloop_as_the_server_runs(tmp_path: Path, tls: TlsFiles) -> None:
    """`server.py` runs on uvloop, whose accepted-socket SSL transport differs from asyncio's (it hands back its own
    protocol): a request is answered over TLS there too."""

    async def scenario() -> tuple[int, str]:
        broker = await start(tmp_path, tls, "required")
        try:
            client = await tls_client(broker.ports[1], tls.client_context())
            versions = await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
            (connection,) = broker.connections
            principal = connection.session.principal
            await client.close()
            return versions.error_code, principal
        finally:
            await broker.stop()

    assert uvloop.run(scenario()) == (0, tls.client_principal)


async def test_a_client_certificate_from_an_unknown_ca_is_refused(
    mutual: Broker, tls: TlsFiles, tmp_path: Path
) -> None:
    stranger = TlsFiles.create(tmp_path / "stranger")
    context = ssl.create_default_context(cafile=str(tls.files.ca))
    context.load_cert_chain(stranger.files.client_cert, stranger.files.client_key)
    with capture_logs() as logs:
        client = await tls_client(mutual.ports[1], context)
        with pytest.raises((ssl.SSLError, ConnectionError, asyncio.IncompleteReadError)):
            await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
        client.writer.close()
        await wait_until_async(lambda: any(e["event"] == "connection.tls_handshake_failed" for e in logs))
    (failed,) = [e for e in logs if e["event"] == "connection.tls_handshake_failed"]
    assert failed["reason"] == "CERTIFICATE_VERIFY_FAILED"
    assert not mutual.connections


async def start_with_rules(tmp_path: Path, tls: TlsFiles, rules: str) -> Broker:
    raw = {**broker_config(tmp_path).explicit, **LISTENERS, **tls.broker_properties(prefix="listener.name.ssl.")}
    raw |= {"listener.name.ssl.ssl.client.auth": "required", "listener.name.ssl.ssl.principal.mapping.rules": rules}
    broker = Broker(BrokerConfig(raw))
    await broker.start()
    return broker


async def test_principal_mapping_rules_name_the_mutual_tls_principal(tmp_path: Path, tls: TlsFiles) -> None:
    broker = await start_with_rules(tmp_path, tls, "RULE:^CN=(.*?)$/$1/U")
    try:
        client = await tls_client(broker.ports[1], tls.client_context())
        await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
        (connection,) = broker.connections
        assert (connection.session.principal, connection.session.peer_dn) == ("User:ALICE", "CN=alice")
        await client.close()
    finally:
        await broker.stop()


async def test_a_certificate_no_rule_maps_is_closed_with_one_line(tmp_path: Path, tls: TlsFiles) -> None:
    """Kafka's NoMatchingRule fails the connection: no principal, no requests served."""
    broker = await start_with_rules(tmp_path, tls, "RULE:^CN=nobody$/x/")
    try:
        with capture_logs() as logs:
            client = await tls_client(broker.ports[1], tls.client_context())
            assert await client.closed_or_reset()
        [line] = [e for e in logs if e["event"] == "connection.principal_mapping_failed"]
        assert line["reason"].startswith("No rules apply to CN=alice")
    finally:
        await broker.stop()


def test_a_fetch_streamed_over_tls_on_uvloop_decodes_to_the_same_records(tmp_path: Path, tls: TlsFiles) -> None:
    """A multi-megabyte Fetch answer is streamed through the SSL transport from buffers reused once sent
    (broker/record_slices.py): every byte arrives as written, also on uvloop's SSL transport."""
    from tests.broker.fetch_wire import INT32_MAX, filled, request
    from tests.support.data_plane import FETCH_VERSION

    async def scenario() -> bool:
        broker = await start(tmp_path, tls, "required")
        try:
            values = [bytes([65 + i]) * (700 * 1024) for i in range(6)]  # 4 MB: several 1 MiB chunks
            producer = await filled(broker, "over-tls", {0: values})
            await producer.close()
            expected = broker.logs.get("over-tls", 0).read(0, INT32_MAX)
            client = await tls_client(broker.ports[1], tls.client_context())
            answers = []
            for _ in range(2):  # the second reuses nothing of the first's buffers: each fetch has its own
                response = await client.call(ApiKey.FETCH, FETCH_VERSION, request("over-tls", [0]))
                answers.append(response.responses[0].partitions[0].records == expected)
            await client.close()
            return all(answers)
        finally:
            await broker.stop()

    assert uvloop.run(scenario())
