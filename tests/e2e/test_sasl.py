"""kafka-python, aiokafka, confluent-kafka and kafkajs over SASL: SASL_PLAINTEXT with PLAIN (users in the listener's
JAAS config) and SASL_SSL with SCRAM-SHA-512 (a user seeded before the first start: `group-broker scram add` here,
`kafka-storage format --add-scram` for Kafka), and OAUTHBEARER with each client's unsecured tokens. Each client
produces, consumes in a group, commits, and a new consumer resumes at the commit; a wrong password fails fast with the
client's own authentication error; a raw request between SaslHandshake and SaslAuthenticate gets ILLEGAL_SASL_STATE.
One broker serves all the listeners for the whole module; the same Kafka settings serve group-broker and, with
`--e2e-broker=kafka`, Apache Kafka 4.4."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli.main import main as cli_main
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.messages.sasl_handshake import SaslHandshakeRequest
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from tests.e2e.scenario import unique
from tests.e2e.secure_roundtrips import SYNC_CLIENTS, WAIT_S, ClientSecurity, aiokafka
from tests.e2e.targets import CONSUMER_PROTOCOL_SETTINGS
from tests.reference.kafka import ReferenceKafka, unavailable_reason
from tests.support.broker_process import running_broker, wait_until
from tests.support.tls import TlsFiles

pytestmark = pytest.mark.integration

USER, PASSWORD = "alice", "alice-secret"
PLAIN_JAAS = f'org.apache.kafka.common.security.plain.PlainLoginModule required user_{USER}="{PASSWORD}";'
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
SCRAM_USER = f"SCRAM-SHA-512=[name={USER},password={PASSWORD}]"
OAUTH_JAAS = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=admin;"
)
LISTENERS = {
    "SASL_PLAINTEXT": "SASL_PLAINTEXT",
    "SASL_SSL": "SASL_SSL",
    "REAUTH": "SASL_PLAINTEXT",
    "OAUTH": "SASL_PLAINTEXT",
}
#: The REAUTH listener's session lifetime (KIP-368): clients re-authenticate on the same connection before it ends.
REAUTH_MS = 1500
#: A wrong password must fail well within this (the clients retry other errors for much longer).
FAIL_FAST_S = 20.0


def sasl_settings(tls: TlsFiles, directory: Path) -> dict[str, str]:
    """Kafka's keys, per listener: PLAIN on SASL_PLAINTEXT, SCRAM-SHA-512 over TLS (a PEM keystore) on SASL_SSL."""
    keystore = tls.keystore_file(directory)
    return {
        **CONSUMER_PROTOCOL_SETTINGS,
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
        "listener.name.reauth.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.reauth.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.reauth.plain.connections.max.reauth.ms": str(REAUTH_MS),
        # OAUTHBEARER with Kafka's unsecured validator (its default without a JWKS endpoint): development tokens
        "listener.name.oauth.sasl.enabled.mechanisms": "OAUTHBEARER",
        "listener.name.oauth.oauthbearer.sasl.jaas.config": OAUTH_JAAS,
        "listener.name.sasl_ssl.ssl.keystore.type": "PEM",
        "listener.name.sasl_ssl.ssl.keystore.location": str(keystore),
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def endpoints(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, tls: TlsFiles
) -> Iterator[dict[str, str]]:
    """Bootstrap address per listener name, of one broker serving both SASL listeners (and PLAINTEXT, unused)."""
    settings = sasl_settings(tls, tmp_path_factory.mktemp("keystore"))
    if request.config.getoption("--e2e-broker") == "kafka":
        reason = unavailable_reason()
        if reason is not None:
            pytest.fail(f"--e2e-broker=kafka: {reason}", pytrace=False)
        kafka = ReferenceKafka(
            tmp_path_factory.mktemp("reference-kafka"), settings, extra_listeners=LISTENERS,
            format_args=["--add-scram", SCRAM_USER],
        )  # fmt: skip
        kafka.start()
        try:
            yield {name: f"127.0.0.1:{port}" for name, port in kafka.listener_ports.items()}
        finally:
            kafka.stop()
        return
    data = tmp_path_factory.mktemp("broker-data")
    assert cli_main(["scram", "add", "--log-dir", str(data), "--add-scram", SCRAM_USER]) == 0
    ports = {name: _free_port() for name in LISTENERS}
    listeners = ",".join(["PLAINTEXT://127.0.0.1:0", *(f"{n}://127.0.0.1:{p}" for n, p in ports.items())])
    protocols = ",".join(["PLAINTEXT:PLAINTEXT", *(f"{n}:{p}" for n, p in LISTENERS.items())])
    with running_broker(data, {**settings, "listeners": listeners, "listener.security.protocol.map": protocols}):
        yield {name: f"127.0.0.1:{port}" for name, port in ports.items()}


def security(mode: str, tls: TlsFiles, password: str = PASSWORD) -> ClientSecurity:
    if mode == "PLAIN":
        return ClientSecurity("SASL_PLAINTEXT", mechanism="PLAIN", username=USER, password=password)
    return ClientSecurity("SASL_SSL", tls.files, mechanism="SCRAM-SHA-512", username=USER, password=password)


def bootstrap(endpoints: dict[str, str], mode: str) -> str:
    return endpoints["SASL_PLAINTEXT" if mode == "PLAIN" else "SASL_SSL"]


def batches(prefix: str) -> tuple[list[str], list[str]]:
    return [f"{prefix}-first-{i}" for i in range(10)], [f"{prefix}-later-{i}" for i in range(5)]


MODES = ["PLAIN", "SCRAM-SHA-512"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("client", sorted(SYNC_CLIENTS))
def test_produce_consume_commit_and_resume_over_sasl(
    client: str, mode: str, endpoints: dict[str, str], tls: TlsFiles
) -> None:
    first, later = batches(client)
    topic, group = unique(f"sasl-{client}"), unique(f"sasl-{client}-group")
    run = SYNC_CLIENTS[client]
    read, resumed = run(bootstrap(endpoints, mode), security(mode, tls), topic, group, first, later)
    assert sorted(read) == sorted(first)
    assert sorted(resumed) == sorted(later)


@pytest.mark.parametrize("mode", MODES)
async def test_aiokafka_produce_consume_commit_and_resume_over_sasl(
    mode: str, endpoints: dict[str, str], tls: TlsFiles
) -> None:
    first, later = batches("aiokafka")
    topic, group = unique("sasl-aiokafka"), unique("sasl-aiokafka-group")
    read, resumed = await aiokafka(bootstrap(endpoints, mode), security(mode, tls), topic, group, first, later)
    assert sorted(read) == sorted(first)
    assert sorted(resumed) == sorted(later)


def _elapsed(started: float) -> float:
    return time.monotonic() - started


@pytest.mark.parametrize("mode", MODES)
def test_kafka_python_reports_a_wrong_password(
    mode: str, endpoints: dict[str, str], tls: TlsFiles, caplog: pytest.LogCaptureFixture
) -> None:
    """kafka-python 3 retries every bootstrap failure until `bootstrap_timeout_ms`, then raises KafkaTimeoutError;
    each attempt's failure is logged. Its transport drops bytes that arrive together with the broker's close, so an
    attempt may log "socket disconnected" instead of the SASL error: against Kafka too, which also closes right
    after its SASL_AUTHENTICATION_FAILED answer. Nothing else may be logged."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaTimeoutError

    settings = security(mode, tls, "wrong").kafka_python()
    # With its api_version given the constructor does not connect, so the producer exists to be closed: a
    # constructor that fails leaves its I/O thread and sockets behind.
    producer = KafkaProducer(
        bootstrap_servers=bootstrap(endpoints, mode), api_version=(4, 0), max_block_ms=3000, **settings
    )
    started = time.monotonic()
    try:
        with pytest.raises(KafkaTimeoutError):
            producer.send(unique("sasl-wrong"), b"never").get(FAIL_FAST_S)
    finally:
        producer.close()
    assert _elapsed(started) < FAIL_FAST_S
    failures = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Bootstrap connection to")]
    assert failures
    for failure in failures:
        assert f"SaslAuthenticationFailedError: {expected_message(mode)}" in failure or "socket disconnected" in failure


async def test_aiokafka_reports_a_wrong_password(
    endpoints: dict[str, str], tls: TlsFiles, caplog: pytest.LogCaptureFixture
) -> None:
    """aiokafka raises KafkaConnectionError ("Unable to bootstrap") and logs the broker's authentication error."""
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import KafkaConnectionError

    for mode in MODES:
        caplog.clear()
        settings = security(mode, tls, "wrong").aiokafka()
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap(endpoints, mode), **settings)
        started = time.monotonic()
        with pytest.raises(KafkaConnectionError, match="Unable to bootstrap"):
            await producer.start()
        await producer.stop()
        assert _elapsed(started) < FAIL_FAST_S
        logged = [r.getMessage() for r in caplog.records if r.name == "aiokafka"]
        assert any(f"[Error 58] SaslAuthenticationFailed: {expected_message(mode)}" in line for line in logged), logged


@pytest.mark.parametrize("mode", MODES)
def test_confluent_kafka_reports_a_wrong_password(mode: str, endpoints: dict[str, str], tls: TlsFiles) -> None:
    from confluent_kafka import KafkaError, Producer

    errors: list[Any] = []
    config = {"bootstrap.servers": bootstrap(endpoints, mode), "error_cb": errors.append}
    producer = Producer({**config, **security(mode, tls, "wrong").confluent()})
    started = time.monotonic()
    while not errors and _elapsed(started) < FAIL_FAST_S:
        producer.poll(0.2)
    assert errors, "no error reported"
    assert errors[0].code() == KafkaError._AUTHENTICATION
    assert expected_message(mode) in errors[0].str()


@pytest.mark.parametrize("mode", MODES)
def test_kafkajs_reports_a_wrong_password(mode: str, endpoints: dict[str, str], tls: TlsFiles) -> None:
    from tests.e2e.secure_roundtrips import kafkajs_failure

    name, message = kafkajs_failure(bootstrap(endpoints, mode), security(mode, tls, "wrong"))
    assert name == "KafkaJSSASLAuthenticationError"
    assert expected_message(mode) in message


def test_kafka_python_reauthenticates_before_its_session_ends(
    endpoints: dict[str, str], tls: TlsFiles, caplog: pytest.LogCaptureFixture
) -> None:
    """KIP-368 with a real client: the broker gives each session `connections.max.reauth.ms`, kafka-python
    re-authenticates on the same connection before it ends (twice here), and its sends go on succeeding."""
    from kafka import KafkaProducer

    caplog.set_level(logging.DEBUG, logger="kafka.net.connection")
    topic = unique("sasl-reauth")
    producer = KafkaProducer(bootstrap_servers=endpoints["REAUTH"], **security("PLAIN", tls).kafka_python())
    sent: list[int] = []

    def reauthentications() -> int:
        return sum("Beginning SASL re-authentication" in r.getMessage() for r in caplog.records)

    def send() -> None:
        producer.send(topic, f"m{len(sent)}".encode()).get(WAIT_S)
        sent.append(len(sent))

    try:
        wait_until(lambda: reauthentications() >= 2, 10 * REAUTH_MS / 1000, what="two re-authentications", step=send)
        # Before closing: kafka-python 3.0.12 still runs a re-authentication it scheduled on a connection closed since.
        failures = [r.getMessage() for r in caplog.records if "re-authentication failed" in r.getMessage()]
    finally:
        producer.close()
    assert not failures
    assert sent


def expected_message(mode: str) -> str:
    """Kafka's messages: PLAIN's own words, SCRAM's generic one (nothing tells which part was wrong)."""
    if mode == "PLAIN":
        return "Authentication failed: Invalid username or password"
    return "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"


async def test_a_request_between_handshake_and_authenticate_is_answered_illegal_sasl_state_then_closed(
    endpoints: dict[str, str],
) -> None:
    """Kafka's handleSaslToken answers such a request with its own error response (getErrorResponse: Metadata per
    topic) carrying ILLEGAL_SASL_STATE, then closes; raw protocol, the same answer from both brokers."""
    port = int(endpoints["SASL_PLAINTEXT"].rsplit(":", 1)[1])
    client = await WireClient.connect(port)
    try:
        handshake = await client.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
        assert (handshake.error_code, handshake.mechanisms) == (0, ["PLAIN"])
        topics = [MetadataRequestTopic(name="between")]
        answer = await client.call(ApiKey.METADATA, 12, MetadataRequest(topics=topics))
        assert [(t.name, t.error_code, t.is_internal, t.partitions) for t in answer.topics] == [
            ("between", 34, False, [])
        ]
        assert (answer.brokers, answer.controller_id, answer.cluster_id) == ([], -1, None)
        assert await client.closed_or_reset()
    finally:
        await client.close()


@pytest.mark.parametrize("client", [*sorted(SYNC_CLIENTS), "aiokafka"])
async def test_oauthbearer_with_unsecured_tokens_produce_consume_commit_and_resume(
    client: str, endpoints: dict[str, str]
) -> None:
    """Each client's own support for Kafka's unsecured tokens (librdkafka's `sasl.oauthbearer.config`, a token
    provider handing out an unsecured JWS in the others) against the unsecured validator."""
    first, later = batches(f"oauth-{client}")
    topic, group = unique(f"oauth-{client}"), unique(f"oauth-{client}-group")
    user = ClientSecurity("SASL_PLAINTEXT", mechanism="OAUTHBEARER", username=USER)
    if client == "aiokafka":
        read, resumed = await aiokafka(endpoints["OAUTH"], user, topic, group, first, later)
    else:
        read, resumed = await asyncio.to_thread(
            SYNC_CLIENTS[client], endpoints["OAUTH"], user, topic, group, first, later
        )
    assert sorted(read) == sorted(first)
    assert sorted(resumed) == sorted(later)
