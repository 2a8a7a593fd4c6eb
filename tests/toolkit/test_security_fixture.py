"""The pytest fixture secured with `group_broker_security`: each client family connects with the settings the handle
hands out (`group_broker.client_settings`), and the recorder, the timeline and the logs say which principal and
listener each request came from (`User:CN=client` on mutual TLS)."""

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
from kafka import KafkaConsumer, KafkaProducer
from structlog.testing import capture_logs

from protocol.messages.api_versions import ApiVersionsRequest
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from tests.e2e.kafkajs_client import node
from tests.support.broker_process import wait_until, wait_until_async
from toolkit.embedded import EmbeddedBroker
from toolkit.pytest_plugin import GroupBrokerHandle
from toolkit.security import ClientSettings, SaslNotServedError, Security, secure
from toolkit.timeline.html import render_html
from toolkit.timeline.text import render_text

ROOT_JS = Path(__file__).resolve().parent / "js"
MUTUAL = "User:CN=client"
WAIT_S = 30.0


def principals(broker: GroupBrokerHandle, client_id: str) -> set[tuple[str, str]]:
    return {(e.principal, e.listener) for e in broker.requests(client_id=client_id)}


@pytest.mark.parametrize(("group_broker_security", "principal"), [("SSL", "User:ANONYMOUS"), ("mTLS", MUTUAL)])
def test_kafka_python_produces_and_consumes_in_a_group_over_tls(
    group_broker: GroupBrokerHandle, principal: str
) -> None:
    settings = group_broker.client_settings
    assert settings.protocol == "SSL" and settings.principal == principal
    tls = settings.kafka_python()
    producer = KafkaProducer(bootstrap_servers=group_broker.bootstrap_servers, client_id="kp-producer", **tls)
    producer.send("kp-tls", b"over-tls").get(WAIT_S)
    producer.close()
    consumer = KafkaConsumer(
        "kp-tls", bootstrap_servers=group_broker.bootstrap_servers, group_id="kp-tls-group", client_id="kp-consumer",
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
    assert principals(group_broker, "kp-producer") == {(principal, "SSL")}
    assert principals(group_broker, "kp-consumer") == {(principal, "SSL")}
    assert group_broker.requests(api="OffsetCommit", principal=principal)


@pytest.mark.parametrize("group_broker_security", ["mTLS"])
async def test_aiokafka_over_mutual_tls_and_the_timeline_names_the_principal(group_broker: GroupBrokerHandle) -> None:
    tls = group_broker.client_settings.aiokafka()
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
    assert requests and {(e["principal"], e["listener"]) for e in requests} == {(MUTUAL, "SSL")}
    assert "principal=User:CN=client listener=SSL" in render_text(view)
    assert "principal=User:CN=client listener=SSL" in render_html(view, None)


@pytest.mark.parametrize("group_broker_security", ["mTLS"])
def test_confluent_kafka_over_mutual_tls(group_broker: GroupBrokerHandle) -> None:
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
    assert principals(group_broker, "ck-producer") == {(MUTUAL, "SSL")}
    assert group_broker.requests(api="JoinGroup", client_id="ck-consumer", principal=MUTUAL)


@pytest.mark.parametrize("group_broker_security", ["mTLS"])
def test_kafkajs_over_mutual_tls(group_broker: GroupBrokerHandle) -> None:
    settings = json.dumps(group_broker.client_settings.kafkajs())
    args = [node(), str(ROOT_JS / "client_settings_test.js"), group_broker.bootstrap_servers, "js-tls", "js-group"]
    done = subprocess.run([*args, settings], capture_output=True, text=True, timeout=120, check=False)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and lines, f"kafkajs failed ({done.returncode}): {done.stdout}\n{done.stderr[-3000:]}"
    assert json.loads(lines[-1]) == {"read": "over-tls"}
    assert principals(group_broker, "kafkajs-settings") == {(MUTUAL, "SSL")}


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
    assert principals(group_broker, "wire-test") == {("User:ANONYMOUS", "PLAINTEXT")}


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


@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_sasl_is_refused_clearly_until_the_broker_serves_it(protocol: str) -> None:
    with pytest.raises(SaslNotServedError, match=f"security protocol {protocol} is not served yet"):
        EmbeddedBroker(security=protocol)
