"""`GET /metrics` on the control listener: scraped after an aiokafka consumer group forms, parsed as Prometheus
text. Each broker has its own registry, so two brokers in one process report only their own groups."""

from __future__ import annotations

from collections.abc import Iterator

import aiohttp
import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from tests.support.broker_process import wait_until_awaited
from tests.support.clients import aiokafka_poll
from toolkit.embedded import EmbeddedBroker

CONTROL = {"control.listener": "http://127.0.0.1:0"}
GROUP = "metrics-group"
TOPIC = "metrics-topic"


@pytest.fixture
def brokers() -> Iterator[tuple[EmbeddedBroker, EmbeddedBroker]]:
    first = EmbeddedBroker(CONTROL).start()
    second = EmbeddedBroker(CONTROL).start()
    try:
        yield first, second
    finally:
        first.stop()
        second.stop()


async def scrape(broker: EmbeddedBroker) -> list[Sample]:
    async with aiohttp.ClientSession() as session, session.get(f"{broker.control_url}/metrics") as answer:
        assert answer.status == 200
        assert answer.headers["Content-Type"].startswith("text/plain; version=")
        text = await answer.text()
    return [sample for family in text_string_to_metric_families(text) for sample in family.samples]


def value(samples: list[Sample], name: str, default: float | None = None, **labels: str) -> float:
    """The sum of the matching samples; without a default, at least one must exist."""
    matching = [s.value for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]
    if not matching and default is not None:
        return default
    assert matching, f"no sample {name}{labels}"
    return sum(matching)


async def test_metrics_after_a_consumer_group_forms(brokers: tuple[EmbeddedBroker, EmbeddedBroker]) -> None:
    broker, other = brokers
    admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    await admin.start()
    await admin.create_topics([NewTopic(TOPIC, 2, 1)])
    await admin.close()
    consumer = AIOKafkaConsumer(
        TOPIC,
        bootstrap_servers=broker.bootstrap_servers,
        group_id=GROUP,
        heartbeat_interval_ms=100,
        session_timeout_ms=30_000,
        enable_auto_commit=False,
    )
    await consumer.start()
    try:

        async def formed() -> bool:
            samples = await scrape(broker)
            stable = value(samples, "group_broker_groups", state="Stable") == 1
            return stable and value(samples, "group_broker_requests_total", 0, api="Heartbeat", error="NONE") >= 1

        await wait_until_awaited(formed, what="a Stable group that heartbeats", step=aiokafka_poll(consumer))
        await consumer.commit({next(iter(consumer.assignment())): 0})
        samples = await scrape(broker)
    finally:
        await consumer.stop()

    assert value(samples, "group_broker_groups", state="Stable") == 1
    assert value(samples, "group_broker_groups", state="Empty") == 0
    assert value(samples, "group_broker_group_members", group=GROUP) == 1
    assert value(samples, "group_broker_members") == 1
    assert value(samples, "group_broker_rebalances_started_total") >= 1
    assert value(samples, "group_broker_rebalances_total") >= 1
    assert value(samples, "group_broker_rebalance_duration_seconds_count") >= 1
    assert value(samples, "group_broker_rebalance_duration_seconds_bucket", le="+Inf") >= 1
    assert value(samples, "group_broker_member_events_total", event="joined") >= 1
    assert value(samples, "group_broker_offset_commits_total") == 1
    # requests by API, version and error: aiokafka's JoinGroup first gets MEMBER_ID_REQUIRED (v4+), then joins
    joins = [s for s in samples if s.name == "group_broker_requests_total" and s.labels["api"] == "JoinGroup"]
    assert {s.labels["error"] for s in joins} >= {"NONE"}
    assert all(s.labels["version"].isdigit() for s in joins)
    assert value(samples, "group_broker_requests_total", api="SyncGroup", error="NONE") >= 1
    assert value(samples, "group_broker_requests_total", api="OffsetCommit", error="NONE") == 1
    assert value(samples, "group_broker_requests_total", api="ApiVersions") >= 1
    heartbeats = value(samples, "group_broker_requests_total", api="Heartbeat")
    assert value(samples, "group_broker_request_duration_seconds_count", api="Heartbeat") == heartbeats
    assert value(samples, "group_broker_request_duration_seconds_bucket", api="Heartbeat", le="+Inf") == heartbeats
    buckets = [
        s.value
        for s in samples
        if s.name == "group_broker_request_duration_seconds_bucket" and s.labels["api"] == "JoinGroup"
    ]
    assert buckets == sorted(buckets)  # cumulative
    assert value(samples, "group_broker_connections", listener="PLAINTEXT") >= 1
    assert value(samples, "group_broker_connections_accepted_total") >= 2

    # the other broker in this process has its own registry: nothing of the first one's group
    elsewhere = await scrape(other)
    assert value(elsewhere, "group_broker_members") == 0
    assert value(elsewhere, "group_broker_rebalances_total") == 0
    assert not [s for s in elsewhere if s.name == "group_broker_requests_total"]
