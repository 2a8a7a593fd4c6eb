"""The pytest fixture secured with `group_broker_security`: each client family connects with the settings the handle
hands out (`group_broker.client_settings`) over TLS, mutual TLS and SASL (PLAIN, SCRAM-SHA-256/512, with and without
TLS), and the recorder, the timeline and the logs say which principal and listener each request came from
(`User:CN=client` on mutual TLS, `User:alice` once SASL authenticated the connection)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import structlog
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from confluent_kafka import Consumer, Producer
from kafka import KafkaProducer
from structlog.testing import capture_logs

from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.metadata import MetadataRequest
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from protocol.messages.sasl_handshake import SaslHandshakeRequest
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from tests.e2e.kafkajs_client import node
from tests.support.broker_process import wait_until, wait_until_async
from tests.support.clients import subscribed_consumer
from toolkit.pytest_plugin import GroupBrokerHandle
from toolkit.security import ClientSettings, Security, secure
from toolkit.timeline.html import render_html
from toolkit.timeline.text import render_text

ROOT_JS = Path(__file__).resolve().parent / "js"
MUTUAL = "User:CN=client"
ALICE = "User:alice"
WAIT_S = 30.0


def principals(broker: GroupBrokerHandle, client_id: str) -> set[tuple[str, str]]:
    """Who sent the client's requests; ApiVersions aside, which a SASL client sends before it authenticates (still
    User:ANONYMOUS then, as in Kafka)."""
    return {(e.principal, e.listener) for e in broker.requests(client_id=client_id) if e.api != "API_VERSIONS"}


@pytest.mark.parametrize(
    ("group_broker_security", "principal"),
    [("SSL", "User:ANONYMOUS"), ("mTLS", MUTUAL), ("SASL_PLAINTEXT", ALICE), ("SASL_SSL", ALICE)],
)
def test_kafka_python_produces_and_consumes_in_a_group_over_a_secured_listener(
    group_broker: GroupBrokerHandle, principal: str, group_broker_security: str
) -> None:
    settings = group_broker.client_settings
    listener = settings.protocol
    assert listener == group_broker_security.replace("mTLS", "SSL") and settings.principal == principal
    tls = settings.kafka_python()
    producer = KafkaProducer(bootstrap_servers=group_broker.bootstrap_servers, client_id="kp-producer", **tls)
    producer.send("kp-tls", b"over-tls").get(WAIT_S)
    producer.close()
    consumer = subscribed_consumer(  # its first rebalance has the topic's partitions (tests/support/clients.py)
        ["kp-tls"], bootstrap_servers=group_broker.bootstrap_servers, group_id="kp-tls-group", client_id="kp-consumer",
        auto_offset_reset="earliest", enable_auto_commit=False, **tls,
    )  # fmt: skip
    read: list[bytes] = []

    def poll() -> None:
        for records in consumer.poll(timeout_ms=200).values():
            read.extend(r.value for r in records)

    wait_until(lambda: bool(read), WAIT_S, what="kafka-python to read over TLS", step=poll)
    consumer.commit()
    consumer.close()
    assert read == [b"over-tls"]
    assert principals(group_broker, "kp-producer") == {(principal, listener)}
    assert principals(group_broker, "kp-consumer") == {(principal, listener)}
    assert group_broker.requests(api="OffsetCommit", principal=principal)


@pytest.mark.parametrize("group_broker_security", ["mTLS", "SASL_PLAINTEXT"])
async def test_aiokafka_over_a_secured_listener_and_the_timeline_names_the_principal(
    group_broker: GroupBrokerHandle,
) -> None:
    settings = group_broker.client_settings
    tls = settings.aiokafka()
    admin = AIOKafkaAdminClient(bootstrap_servers=group_broker.bootstrap_servers, **tls)
    await admin.start()
    await admin.create_topics([NewTopic("aio-tls", 1, 1)])
    await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=group_broker.bootstrap_servers, **tls)
    await producer.start()
    await producer.send_and_wait("aio-tls", b"over-tls")
    await producer.stop()
    consumer = AIOKafkaConsumer(
        "aio-tls", bootstrap_servers=group_broker.bootstrap_servers, group_id="aio-tls-group", client_id="aio-consumer",
        auto_offset_reset="earliest", enable_auto_commit=False, **tls,
    )  # fmt: skip
    await consumer.start()
    read: list[bytes] = []

    async def poll() -> None:
        for records in (await consumer.getmany(timeout_ms=200)).values():
            read.extend(r.value for r in records if r.value is not None)

    try:
        await wait_until_async(lambda: bool(read), WAIT_S, what="aiokafka to read over mutual TLS", step=poll)
        await consumer.commit()
    finally:
        await consumer.stop()
    assert read == [b"over-tls"]
    view = group_broker.group_timeline("aio-tls-group")
    assert view is not None
    requests = [e for e in view["events"] if e["kind"] in ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup")]
    assert requests and {(e["principal"], e["listener"]) for e in requests} == {(settings.principal, settings.protocol)}
    assert f"principal={settings.principal} listener={settings.protocol}" in render_text(view)
    assert f"principal={settings.principal} listener={settings.protocol}" in render_html(view, None)


@pytest.mark.parametrize("group_broker_security", ["mTLS", "SASL_SSL:SCRAM-SHA-256"])
def test_confluent_kafka_over_a_secured_listener(group_broker: GroupBrokerHandle) -> None:
    settings = group_broker.client_settings
    config = {"bootstrap.servers": group_broker.bootstrap_servers, **group_broker.client_settings.confluent()}
    producer = Producer({**config, "client.id": "ck-producer"})
    producer.produce("ck-tls", b"over-tls")
    assert producer.flush(WAIT_S) == 0
    consumer = Consumer(
        {**config, "client.id": "ck-consumer", "group.id": "ck-tls-group", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe(["ck-tls"])
    read: list[bytes] = []

    def poll() -> None:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            read.append(message.value())

    wait_until(lambda: bool(read), WAIT_S, what="confluent-kafka to read over mutual TLS", step=poll)
    consumer.close()
    assert read == [b"over-tls"]
    assert principals(group_broker, "ck-producer") == {(settings.principal, settings.protocol)}
    assert group_broker.requests(api="JoinGroup", client_id="ck-consumer", principal=settings.principal)


@pytest.mark.parametrize("group_broker_security", ["mTLS", "SASL_SSL"])
def test_kafkajs_over_a_secured_listener(group_broker: GroupBrokerHandle) -> None:
    client = group_broker.client_settings
    settings = json.dumps(client.kafkajs())
    args = [node(), str(ROOT_JS / "client_settings_test.js"), group_broker.bootstrap_servers, "js-tls", "js-group"]
    done = subprocess.run([*args, settings], capture_output=True, text=True, timeout=120, check=False)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and lines, f"kafkajs failed ({done.returncode}): {done.stdout}\n{done.stderr[-3000:]}"
    assert json.loads(lines[-1]) == {"read": "over-tls"}
    assert principals(group_broker, "kafkajs-settings") == {(client.principal, client.protocol)}


@pytest.mark.parametrize("group_broker_security", ["mTLS"])
async def test_log_lines_of_a_connection_name_its_principal_and_listener(group_broker: GroupBrokerHandle) -> None:
    host, port = group_broker.bootstrap_servers.rsplit(":", 1)
    context = group_broker.client_settings.ssl_context()
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        reader, writer = await asyncio.open_connection(host, int(port), ssl=context)
        writer.write(b"\xff\xff\xff\xff")  # a negative frame size: the broker closes this connection, saying why
        await writer.drain()
        assert await reader.read() == b""
        writer.close()

        def closed() -> list[dict[str, Any]]:
            return [e for e in logs if e["event"] == "connection.closed_on_bad_request"]

        await wait_until_async(lambda: bool(closed()), WAIT_S, what="the connection's closing line")
    [line] = closed()
    assert (line["principal"], line["listener"]) == (MUTUAL, "SSL")


async def test_plaintext_is_the_default_and_its_requests_are_anonymous(group_broker: GroupBrokerHandle) -> None:
    assert group_broker.client_settings == ClientSettings()
    assert group_broker.client_settings.kafka_python() == {"security_protocol": "PLAINTEXT"}
    assert group_broker.client_settings.kafkajs() == {}
    client = await WireClient.connect(int(group_broker.bootstrap_servers.rsplit(":", 1)[1]))
    await client.call(ApiKey.API_VERSIONS, 3, ApiVersionsRequest(client_software_name="t", client_software_version="1"))
    await client.close()
    assert {(e.principal, e.listener) for e in group_broker.requests(client_id="wire-test")} == {
        ("User:ANONYMOUS", "PLAINTEXT")
    }


def test_security_specs_and_client_settings(tmp_path: Path) -> None:
    assert Security.of(None) == Security.of("plaintext") == Security("PLAINTEXT")
    assert Security.of("mTLS") == Security("SSL", client_auth="required")
    with pytest.raises(ValueError, match="unknown security protocol"):
        Security.of("TLS")
    broker, client = secure("mTLS", tmp_path)
    assert broker["listeners"] == "SSL://127.0.0.1:0" and broker["ssl.client.auth"] == "required"
    assert (tmp_path / "client.key").stat().st_mode & 0o077 == 0
    assert client.confluent() == {
        "security.protocol": "SSL",
        "ssl.ca.location": str(tmp_path / "ca.pem"),
        "ssl.certificate.location": str(tmp_path / "client.pem"),
        "ssl.key.location": str(tmp_path / "client.key"),
    }
    tls = client.kafkajs()["ssl"]
    assert tls["ca"][0].startswith("-----BEGIN CERTIFICATE-----") and "PRIVATE KEY" in tls["key"]


def test_sasl_specs_and_their_broker_and_client_settings(tmp_path: Path) -> None:
    assert Security.of("SASL_PLAINTEXT").mechanism == "PLAIN" and Security.of("sasl_ssl").mechanism == "SCRAM-SHA-512"
    assert Security.of("SASL_SSL:scram-sha-256") == Security("SASL_SSL", mechanism="SCRAM-SHA-256")
    assert Security.of("SASL_SSL:SCRAM-SHA-256").scram_spec == "SCRAM-SHA-256=[name=alice,password=alice-secret]"
    assert Security.of("SASL_PLAINTEXT").scram_spec is None
    with pytest.raises(ValueError, match="the fixture makes users for PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"):
        Security.of("SASL_PLAINTEXT:GSSAPI")
    with pytest.raises(ValueError, match="needs SASL_PLAINTEXT or SASL_SSL"):
        Security("SSL", mechanism="PLAIN")
    broker, client = secure(Security("SASL_PLAINTEXT", username="bob", password="pw"), tmp_path)
    assert broker == {
        "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": (
            'org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="pw";'
        ),
    }
    assert client.principal == "User:bob"
    assert client.confluent() == {
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "bob", "sasl.password": "pw",
    }  # fmt: skip
    assert client.kafkajs() == {"sasl": {"mechanism": "plain", "username": "bob", "password": "pw"}}
    broker, client = secure("SASL_SSL", tmp_path)
    assert broker["listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config"] == (
        "org.apache.kafka.common.security.scram.ScramLoginModule required;"
    )
    assert client.kafka_python()["sasl_mechanism"] == "SCRAM-SHA-512" and client.ssl_context() is not None


@pytest.mark.parametrize("group_broker_security", ["SASL_PLAINTEXT"])
@pytest.mark.parametrize("group_broker_config", [{"listener.name.sasl_plaintext.connections.max.reauth.ms": "60000"}])
async def test_once_sasl_authenticated_a_connections_log_lines_and_requests_name_the_user(
    group_broker: GroupBrokerHandle,
) -> None:
    """After the login and after a KIP-368 re-authentication on the same connection."""
    client = await WireClient.connect(int(group_broker.bootstrap_servers.rsplit(":", 1)[1]))

    async def login() -> None:
        await client.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
        auth = SaslAuthenticateRequest(auth_bytes=b"\0alice\0alice-secret")
        assert (await client.call(ApiKey.SASL_AUTHENTICATE, 2, auth)).error_code == 0
        await client.call(ApiKey.METADATA, 12, MetadataRequest(topics=[]))

    group_broker.freeze_time()
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        await login()
        group_broker.advance(1000)  # Kafka starts a re-authentication at most once a second
        await login()
        client.writer.write(b"\xff\xff\xff\xff")  # a negative frame size: the broker closes, saying why
        assert await client.closed_or_reset()

        def closed() -> list[dict[str, Any]]:
            return [e for e in logs if e["event"] == "connection.closed_on_bad_request"]

        await wait_until_async(lambda: bool(closed()), WAIT_S, what="the connection's closing line")
    events = [e["event"] for e in logs if e["event"].startswith("security.")]
    assert events == ["security.authenticated", "security.reauthenticated"]
    assert (closed()[0]["principal"], closed()[0]["listener"]) == (ALICE, "SASL_PLAINTEXT")
    assert [e.api for e in group_broker.requests(principal=ALICE)] == ["METADATA", "METADATA"]
