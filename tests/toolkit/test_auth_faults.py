"""Authentication faults: the next TLS handshakes refused on demand (a client sees its handshake cut off, then
connects), and the next SASL authentications failed after the client was verified (SASL_AUTHENTICATION_FAILED with
Kafka's message, the connection closed, one log line; then the client gets in), through the handle and the control
API."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
from confluent_kafka import KafkaError, Producer
from structlog.testing import capture_logs

from bench.wire_load import request_frame
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.metadata import MetadataRequest
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from protocol.messages.sasl_handshake import SaslHandshakeRequest
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from tests.support.broker_process import wait_until
from toolkit.embedded import EmbeddedBroker
from toolkit.faults import SASL_AUTHENTICATION, AuthRule, FaultGate, Faults
from toolkit.pytest_plugin import GroupBrokerHandle

INJECTED = "injected by the toolkit (fail_next_handshakes)"


def handshake(broker: GroupBrokerHandle) -> bool:
    """One TLS connection attempt with the fixture's client settings: True when the handshake completed."""
    host, port = broker.bootstrap_servers.rsplit(":", 1)
    context = broker.client_settings.ssl_context()
    assert context is not None
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        try:
            with context.wrap_socket(raw, server_hostname=host):
                return True
        except (ssl.SSLError, ConnectionError):
            return False


@pytest.mark.parametrize("group_broker_security", ["mTLS"])
def test_the_next_handshakes_are_cut_off_then_clients_connect(group_broker: GroupBrokerHandle) -> None:
    group_broker.fail_next_handshakes(2)
    with capture_logs() as logs:
        assert [handshake(group_broker) for _ in range(3)] == [False, False, True]

        def refused() -> list[dict[str, Any]]:
            return [e for e in logs if e["event"] == "connection.tls_handshake_failed"]

        wait_until(lambda: len(refused()) == 2, 10, what="two refusal lines")
    assert {(e["listener"], e["reason"]) for e in refused()} == {("SSL", INJECTED)}


@pytest.mark.parametrize("group_broker_security", ["mTLS"])
def test_confluent_kafka_retries_a_refused_handshake_and_produces(group_broker: GroupBrokerHandle) -> None:
    group_broker.fail_next_handshakes(1, listener="ssl")
    config = {"bootstrap.servers": group_broker.bootstrap_servers, **group_broker.client_settings.confluent()}
    with capture_logs() as logs:
        producer = Producer({**config, "client.id": "retrying", "reconnect.backoff.ms": 50})
        producer.produce("after-refusal", b"made it")
        assert producer.flush(30) == 0
    assert [e["reason"] for e in logs if e["event"] == "connection.tls_handshake_failed"] == [INJECTED]
    assert group_broker.requests(api="Produce", client_id="retrying")


def test_a_handshake_fault_needs_an_ssl_listener(group_broker: GroupBrokerHandle) -> None:
    with pytest.raises(ValueError, match="this broker has no SSL listener"):
        group_broker.fail_next_handshakes(1)


@pytest.mark.parametrize("group_broker_security", ["SSL"])
def test_a_handshake_fault_names_an_existing_listener(group_broker: GroupBrokerHandle) -> None:
    with pytest.raises(ValueError, match=r"'EXTERNAL' is not one of this broker's SSL listeners \(SSL\)"):
        group_broker.fail_next_handshakes(1, listener="EXTERNAL")


def test_an_authentication_fault_needs_a_sasl_listener(group_broker: GroupBrokerHandle) -> None:
    with pytest.raises(ValueError, match="this broker has no SASL listener"):
        group_broker.fail_next_authentications(1, mechanism="PLAIN")


def test_the_gate_refuses_the_matching_sasl_authentications_count_times() -> None:
    """What the SASL authenticator sees through `Broker.auth_gate.authentication(...)`."""
    faults = Faults()
    gate = FaultGate(faults)
    faults.fail_authentications(AuthRule(SASL_AUTHENTICATION, 2, "SASL", client_id="app", mechanism="SCRAM-SHA-512"))
    assert gate.authentication("SASL", "other", "SCRAM-SHA-512", "alice") is None
    assert gate.authentication("SASL", "app", "PLAIN", "alice") is None
    assert gate.authentication("OTHER", "app", "SCRAM-SHA-512", "alice") is None
    assert gate.authentication("sasl", "app", "SCRAM-SHA-512", "alice") == (
        "injected by the toolkit (fail_next_authentications)"
    )
    assert gate.authentication("SASL", "app", "SCRAM-SHA-512", "bob") is not None
    assert gate.authentication("SASL", "app", "SCRAM-SHA-512", "alice") is None  # both uses spent
    assert gate.tls_handshake("SASL", "127.0.0.1:1") is None  # a SASL rule is not a TLS one


@pytest.fixture(scope="module")
def mtls_broker() -> Iterator[EmbeddedBroker]:
    broker = EmbeddedBroker({"control.listener": "http://127.0.0.1:0"}, security="mTLS").start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def control(mtls_broker: EmbeddedBroker) -> str:
    assert mtls_broker.control_url is not None
    return mtls_broker.control_url


async def test_the_control_api_sets_lists_and_clears_handshake_faults(control: str) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.post(control + "/faults/handshakes", json={"count": 3, "listener": "SSL"}) as answer:
            assert (answer.status, await answer.json()) == (200, {"count": 3, "listener": "SSL"})
        async with session.get(control + "/faults") as answer:
            listed = (await answer.json())["authentication_failures"]
        assert listed == [{"stage": "tls_handshake", "remaining": 3, "listener": "SSL"}]
        async with session.post(control + "/faults/authentications", json={"mechanism": "PLAIN"}) as answer:
            assert answer.status == 400 and "no SASL listener" in (await answer.json())["error"]
        async with session.delete(control + "/faults") as answer:
            assert answer.status == 200
        async with session.get(control + "/faults") as answer:
            assert (await answer.json())["authentication_failures"] == []


async def test_the_control_api_lists_requests_with_their_principal_and_filters_on_it(
    mtls_broker: EmbeddedBroker, control: str
) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.post(control + "/requests/recording", json={"enabled": True}) as answer:
            assert answer.status == 200
        host, port = mtls_broker.bootstrap_servers.rsplit(":", 1)
        context = mtls_broker.client_settings.ssl_context()
        assert context is not None
        with (
            socket.create_connection((host, int(port)), timeout=10) as raw,
            context.wrap_socket(raw, server_hostname=host) as tls,
        ):
            tls.sendall(request_frame(ApiKey.API_VERSIONS, 0, ApiVersionsRequest(), 0))
            assert len(tls.recv(4)) == 4
        async with session.get(control + "/requests", params={"principal": "User:CN=client"}) as answer:
            listed = (await answer.json())["requests"]
        assert [(r["api"], r["principal"], r["listener"]) for r in listed] == [
            ("API_VERSIONS", "User:CN=client", "SSL")
        ]
        async with session.get(control + "/requests", params={"principal": "User:ANONYMOUS"}) as answer:
            assert (await answer.json())["requests"] == []


SASL_INJECTED = "injected by the toolkit (fail_next_authentications)"


async def plain_login(port: int, password: str = "alice-secret") -> tuple[int, str | None, bool]:
    """A raw SaslHandshake v1 + SaslAuthenticate v2 for alice: (error code, error message, closed after it)."""
    client = await WireClient.connect(port)
    try:
        await client.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
        auth = f"\0alice\0{password}".encode()
        answer = await client.call(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=auth))
        if answer.error_code == 0:
            await client.call(ApiKey.METADATA, 12, MetadataRequest(topics=[]))  # served: authenticated
            return 0, answer.error_message, False
        return answer.error_code, answer.error_message, await client.closed_or_reset()
    finally:
        await client.close()


async def test_the_control_api_fails_the_next_sasl_authentication_on_the_wire() -> None:
    embedded = EmbeddedBroker({"control.listener": "http://127.0.0.1:0"}, security="SASL_PLAINTEXT").start()
    port = int(embedded.bootstrap_servers.rsplit(":", 1)[1])
    try:
        async with aiohttp.ClientSession() as session:
            rule = {"count": 1, "listener": "SASL_PLAINTEXT", "username": "alice"}
            async with session.post(f"{embedded.control_url}/faults/authentications", json=rule) as answer:
                assert (answer.status, await answer.json()) == (200, rule)
            with capture_logs() as logs:
                assert await plain_login(port) == (58, "Authentication failed: Invalid username or password", True)
                assert await plain_login(port) == (0, "", False)  # the rule is used up
            async with session.get(f"{embedded.control_url}/faults") as answer:
                assert (await answer.json())["authentication_failures"] == []
    finally:
        embedded.stop()
    [failed] = [e for e in logs if e["event"] == "security.authentication_failed"]
    assert (failed["reason"], failed["principal"], failed["mechanism"]) == (SASL_INJECTED, "User:alice", "PLAIN")


@pytest.mark.parametrize("group_broker_security", ["SASL_SSL"])
def test_confluent_kafka_sees_its_authentication_fail_then_gets_in(group_broker: GroupBrokerHandle) -> None:
    group_broker.fail_next_authentications(1, mechanism="SCRAM-SHA-512", client_id="refused-once")
    errors: list[KafkaError] = []
    config = {"bootstrap.servers": group_broker.bootstrap_servers, **group_broker.client_settings.confluent()}
    producer = Producer({**config, "client.id": "refused-once", "reconnect.backoff.ms": 50, "error_cb": errors.append})
    producer.produce("after-sasl-refusal", b"made it")
    assert producer.flush(30) == 0
    [refused] = [e for e in errors if e.code() == KafkaError._AUTHENTICATION]  # (and "all brokers down" meanwhile)
    message = "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"
    assert message in refused.str()
    assert group_broker.requests(api="Produce", client_id="refused-once", principal="User:alice")
