"""One round trip per client library over SSL with mutual TLS: produce a first batch, a consumer of the group reads
it all, commits and closes; produce a later batch; a new consumer of the same group resumes at the commit.

Each returns (values the first consumer read, values the resuming consumer read); a resume at the commit means the
second list is exactly the later batch. Consumers poll with a timeout until they have what they wait for
(`wait_until` with the poll as its step), never sleeping a fixed time.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.helpers import create_ssl_context
from confluent_kafka import Consumer, Producer
from kafka import KafkaConsumer, KafkaProducer

from tests.e2e.kafkajs_client import JS, node
from tests.support.broker_process import wait_until, wait_until_async
from toolkit.certs import CertFiles

WAIT_S = 30.0
Batches = tuple[list[str], list[str]]


def round_trip(
    produce: Callable[[list[str]], None], consume: Callable[[int], list[str]], first: list[str], later: list[str]
) -> Batches:
    """The scenario: the first batch read whole and committed, then only the later batch read on resuming."""
    produce(first)
    read = consume(len(first))
    produce(later)
    return read, consume(len(later))


def kafka_python(
    bootstrap: str, files: CertFiles, topic: str, group: str, first: list[str], later: list[str]
) -> Batches:
    tls: dict[str, Any] = {
        "security_protocol": "SSL",
        "ssl_cafile": str(files.ca),
        "ssl_certfile": str(files.client_cert),
        "ssl_keyfile": str(files.client_key),
    }

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
    bootstrap: str, files: CertFiles, topic: str, group: str, first: list[str], later: list[str]
) -> Batches:
    context = create_ssl_context(cafile=str(files.ca), certfile=str(files.client_cert), keyfile=str(files.client_key))
    tls: dict[str, Any] = {"security_protocol": "SSL", "ssl_context": context}

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


def confluent(bootstrap: str, files: CertFiles, topic: str, group: str, first: list[str], later: list[str]) -> Batches:
    tls = {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SSL",
        "ssl.ca.location": str(files.ca),
        "ssl.certificate.location": str(files.client_cert),
        "ssl.key.location": str(files.client_key),
    }

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


def kafkajs(bootstrap: str, files: CertFiles, topic: str, group: str, first: list[str], later: list[str]) -> Batches:
    files_args = [str(files.ca), str(files.client_cert), str(files.client_key)]
    args = [
        node(),
        str(JS / "ssl_roundtrip.js"),
        bootstrap,
        topic,
        group,
        *files_args,
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
