"""One round trip per client library over a secured listener (SSL with mutual TLS, SASL_PLAINTEXT, SASL_SSL; SASL with
PLAIN, SCRAM or OAUTHBEARER, the last with an unsecured JWS for the user, as Kafka's unsecured validator takes it):
produce a first batch, a consumer of the group reads it all, commits and closes; produce a later batch; a new
consumer of the same group resumes at the commit. `ClientSecurity` says how to connect, in each library's words.

Each returns (values the first consumer read, values the resuming consumer read); a resume at the commit means the
second list is exactly the later batch. Consumers poll with a timeout until they have what they wait for
(`wait_until` with the poll as its step), never sleeping a fixed time.
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.abc import AbstractTokenProvider as AioTokenProvider
from aiokafka.helpers import create_ssl_context
from confluent_kafka import Consumer, Producer
from kafka import KafkaConsumer, KafkaProducer
from kafka.net.sasl.oauth import AbstractTokenProvider

from tests.e2e.kafkajs_client import JS, node
from tests.support.broker_process import wait_until, wait_until_async
from toolkit.certs import CertFiles

WAIT_S = 30.0
Batches = tuple[list[str], list[str]]
#: How long the clients' unsecured OAUTHBEARER tokens last (the SASL session lasts as long on both brokers).
TOKEN_LIFETIME_S = 3600


def unsecured_token(subject: str) -> str:
    """An unsecured JWS (`"alg":"none"`, empty signature) naming `subject`, as Kafka's OAuthBearerUnsecuredLoginCallback
    makes them: what a client without a token endpoint sends to a broker running the unsecured validator."""

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    now = int(time.time())
    return f"{part({'alg': 'none'})}.{part({'sub': subject, 'iat': now, 'exp': now + TOKEN_LIFETIME_S})}."


class KafkaPythonToken(AbstractTokenProvider):  # type: ignore[misc]
    def __init__(self, token: str) -> None:
        super().__init__()
        self._token = token

    def token(self) -> str:
        return self._token


class AiokafkaToken(AioTokenProvider):
    def __init__(self, token: str) -> None:
        self._token = token

    async def token(self) -> str:
        return self._token


@dataclass(frozen=True, slots=True)
class ClientSecurity:
    """A listener's `security.protocol` and what the client presents: a CA to trust (TLS), a client certificate
    (mutual TLS), a SASL mechanism with a user and password."""

    protocol: str
    files: CertFiles | None = None
    client_certificate: bool = False
    mechanism: str | None = None
    username: str = ""
    password: str = ""

    @property
    def _tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    def kafka_python(self) -> dict[str, Any]:
        settings: dict[str, Any] = {"security_protocol": self.protocol}
        if self._tls and self.files is not None:
            settings["ssl_cafile"] = str(self.files.ca)
            if self.client_certificate:
                settings |= {"ssl_certfile": str(self.files.client_cert), "ssl_keyfile": str(self.files.client_key)}
        if self.mechanism == "OAUTHBEARER":
            token = KafkaPythonToken(unsecured_token(self.username))
            settings |= {"sasl_mechanism": self.mechanism, "sasl_oauth_token_provider": token}
        elif self.mechanism is not None:
            settings |= {
                "sasl_mechanism": self.mechanism, "sasl_plain_username": self.username,
                "sasl_plain_password": self.password,
            }  # fmt: skip
        return settings

    def aiokafka(self) -> dict[str, Any]:
        settings = self.kafka_python()
        for key in ("ssl_cafile", "ssl_certfile", "ssl_keyfile"):
            settings.pop(key, None)
        if self._tls and self.files is not None:
            cert = (
                (str(self.files.client_cert), str(self.files.client_key)) if self.client_certificate else (None, None)
            )
            settings["ssl_context"] = create_ssl_context(cafile=str(self.files.ca), certfile=cert[0], keyfile=cert[1])
        if self.mechanism == "OAUTHBEARER":
            settings["sasl_oauth_token_provider"] = AiokafkaToken(unsecured_token(self.username))
        return settings

    def confluent(self) -> dict[str, Any]:
        settings: dict[str, Any] = {"security.protocol": self.protocol}
        if self._tls and self.files is not None:
            settings["ssl.ca.location"] = str(self.files.ca)
            if self.client_certificate:
                settings |= {
                    "ssl.certificate.location": str(self.files.client_cert),
                    "ssl.key.location": str(self.files.client_key),
                }
        if self.mechanism == "OAUTHBEARER":  # librdkafka makes the unsecured JWS itself
            settings |= {
                "sasl.mechanism": self.mechanism,
                "enable.sasl.oauthbearer.unsecure.jwt": True,
                "sasl.oauthbearer.config": f"principal={self.username}",
            }
        elif self.mechanism is not None:
            settings |= {
                "sasl.mechanism": self.mechanism,
                "sasl.username": self.username,
                "sasl.password": self.password,
            }
        return settings

    def kafkajs(self) -> dict[str, Any]:
        """What tests/e2e/js/secure_roundtrip.js reads: file paths (it loads them) and kafkajs's `sasl` object (for
        OAUTHBEARER, the token its `oauthBearerProvider` hands out, which the script makes)."""
        settings: dict[str, Any] = {}
        if self._tls and self.files is not None:
            settings["ssl"] = {"ca": str(self.files.ca)}
            if self.client_certificate:
                settings["ssl"] |= {"cert": str(self.files.client_cert), "key": str(self.files.client_key)}
        if self.mechanism == "OAUTHBEARER":
            settings["sasl"] = {"mechanism": "oauthbearer", "token": unsecured_token(self.username)}
        elif self.mechanism is not None:
            settings["sasl"] = {
                "mechanism": self.mechanism.lower(),
                "username": self.username,
                "password": self.password,
            }
        return settings


def round_trip(
    produce: Callable[[list[str]], None], consume: Callable[[int], list[str]], first: list[str], later: list[str]
) -> Batches:
    """The scenario: the first batch read whole and committed, then only the later batch read on resuming."""
    produce(first)
    read = consume(len(first))
    produce(later)
    return read, consume(len(later))


def kafka_python(
    bootstrap: str, security: ClientSecurity, topic: str, group: str, first: list[str], later: list[str]
) -> Batches:
    tls = security.kafka_python()

    def produce(values: list[str]) -> None:
        producer = KafkaProducer(bootstrap_servers=bootstrap, **tls)
        for value in values:
            producer.send(topic, value.encode()).get(WAIT_S)
        producer.close()

    def consume(count: int) -> list[str]:
        consumer = KafkaConsumer(
            topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
            enable_auto_commit=False, **tls,
        )  # fmt: skip
        received: list[str] = []

        def poll() -> None:
            for records in consumer.poll(timeout_ms=500).values():
                received.extend(r.value.decode() for r in records)

        wait_until(lambda: len(received) >= count, WAIT_S, what=f"kafka-python to read {count} records", step=poll)
        consumer.commit()
        consumer.close()
        return received

    return round_trip(produce, consume, first, later)


async def aiokafka(
    bootstrap: str, security: ClientSecurity, topic: str, group: str, first: list[str], later: list[str]
) -> Batches:
    tls = security.aiokafka()

    async def produce(values: list[str]) -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, **tls)
        await producer.start()
        try:
            for value in values:
                await producer.send_and_wait(topic, value.encode())
        finally:
            await producer.stop()

    async def consume(count: int) -> list[str]:
        consumer = AIOKafkaConsumer(
            topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
            enable_auto_commit=False, **tls,
        )  # fmt: skip
        await consumer.start()
        received: list[str] = []

        async def poll() -> None:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                received.extend(r.value.decode() for r in records if r.value is not None)

        try:
            await wait_until_async(lambda: len(received) >= count, WAIT_S, what=f"aiokafka to read {count}", step=poll)
            await consumer.commit()
        finally:
            await consumer.stop()
        return received

    await produce(first)
    read = await consume(len(first))
    await produce(later)
    return read, await consume(len(later))


def confluent(
    bootstrap: str, security: ClientSecurity, topic: str, group: str, first: list[str], later: list[str]
) -> Batches:
    tls = {"bootstrap.servers": bootstrap, **security.confluent()}

    def produce(values: list[str]) -> None:
        producer = Producer(tls)
        failures: list[Any] = []
        for value in values:
            producer.produce(topic, value.encode(), on_delivery=lambda err, _msg: failures.append(err) if err else None)
        assert producer.flush(WAIT_S) == 0 and not failures, failures

    def consume(count: int) -> list[str]:
        consumer = Consumer({**tls, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False})
        consumer.subscribe([topic])
        received: list[str] = []

        def poll() -> None:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                received.append(message.value().decode())

        wait_until(lambda: len(received) >= count, WAIT_S, what=f"confluent-kafka to read {count}", step=poll)
        consumer.commit(asynchronous=False)
        consumer.close()
        return received

    return round_trip(produce, consume, first, later)


def kafkajs(
    bootstrap: str, security: ClientSecurity, topic: str, group: str, first: list[str], later: list[str]
) -> Batches:
    args = [
        node(),
        str(JS / "secure_roundtrip.js"),
        bootstrap,
        topic,
        group,
        json.dumps(security.kafkajs()),
        ",".join(first),
        ",".join(later),
    ]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and lines, f"kafkajs failed ({done.returncode}): {done.stdout}\n{done.stderr[-3000:]}"
    result = json.loads(lines[-1])
    return result["first"], result["resumed"]


SYNC_CLIENTS: dict[str, Callable[..., Batches]] = {
    "kafka-python": kafka_python,
    "confluent-kafka": confluent,
    "kafkajs": kafkajs,
}


def kafkajs_failure(bootstrap: str, security: ClientSecurity) -> tuple[str, str]:
    """The (error class, message) with which a kafkajs producer fails to connect."""
    args = [node(), str(JS / "secure_connect.js"), bootstrap, json.dumps(security.kafkajs())]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and lines, f"kafkajs failed ({done.returncode}): {done.stdout}\n{done.stderr[-3000:]}"
    result = json.loads(lines[-1])
    assert "connected" not in result, "kafkajs connected with a wrong password"
    return result["name"], result["message"]
