"""Burrow 1.2.1 (LinkedIn's consumer-lag monitor, Debian's `burrow`) reads the broker's `__consumer_offsets`.

Burrow learns committed offsets only by consuming `__consumer_offsets` from the beginning and decoding Kafka's record
formats, and topic ends only from ListOffsets; so a lag it reports that equals log-end offset minus committed offset
(what the broker itself answers to ListOffsets and OffsetFetch) shows both paths interoperate.

What Burrow sends (observed by recording the broker's routed requests): Metadata v5, ListOffsets v0 (its cluster
module's topic ends, `old_style_offsets`), ListOffsets v1 (starting points of its `__consumer_offsets` consumers) and
Fetch v4 on every `__consumer_offsets` partition. Sarama, configured as kafka-version 2.0.0, sends no ApiVersions.

Expected noise: Burrow 1.2.1 decodes OffsetCommitValue v0, v1 and v3 but GroupMetadataValue only v0/v1, so every
group metadata record (we write v3, as Kafka 2.3+ does) is logged as `failed to decode ... message_type=metadata
reason=value version version=3`, and it never learns partition owners. Offsets and lag do not depend on that.

Burrow drops commits for topics it has not yet fetched ends for, so the test waits for Burrow to know the topic
before the group commits. Burrow's own rule for a stopped consumer (current lag > 0 and no commit for longer than
the committed window spans) turns the group to ERR with STOP partitions once the consumer is gone.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic, OffsetSpec

from tests.interop.burrow_support import (
    DEBIAN_PACKAGES,
    BurrowProcess,
    ZooKeeperProcess,
    missing_tools,
    poll,
)
from tests.support.broker_process import BrokerProcess
from tests.support.clients import subscribed_consumer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "burrow-orders"
GROUP = "burrow-billing"
PARTITIONS = 3
FIRST_BATCH = {0: 5, 1: 3, 2: 8}
SECOND_BATCH = {0: 4, 1: 0, 2: 6}  # produced while the group has no consumer
DEADLINE_S = 30.0
BROKER_FAULTS = ("request.handler_failed", "connection.closed_on_bad_request", "request.malformed")


class BrokerView:
    """What the broker itself says: log-end offsets (ListOffsets) and the group's commits (OffsetFetch)."""

    def __init__(self, bootstrap: str) -> None:
        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="burrow-test-admin")

    def end_offsets(self) -> dict[int, int]:
        specs = {TopicPartition(TOPIC, p): OffsetSpec.LATEST for p in range(PARTITIONS)}
        return {tp.partition: found.offset for tp, found in self.admin.list_partition_offsets(specs).items()}

    def committed(self) -> dict[int, int]:
        offsets = self.admin.list_group_offsets({GROUP: None})[GROUP]
        return {tp.partition: meta.offset for tp, meta in offsets.items() if tp.topic == TOPIC}

    def expected_lag(self) -> dict[int, int]:
        ends, committed = self.end_offsets(), self.committed()
        assert set(committed) == set(ends), (committed, ends)
        return {p: ends[p] - committed[p] for p in ends}


def produce(producer: KafkaProducer, counts: Mapping[int, int]) -> None:
    futures = [
        producer.send(TOPIC, key=f"k{p}-{i}".encode(), value=b"order", partition=p)
        for p, count in counts.items()
        for i in range(count)
    ]
    producer.flush()
    for future in futures:
        future.get(timeout=10)


def consume_all_and_commit(consumer: KafkaConsumer, total: int) -> None:
    """Poll until `total` records arrived, committing (OffsetCommit, synchronously) after every poll that had any."""
    received = 0

    def step() -> bool | None:
        nonlocal received
        batches = consumer.poll(timeout_ms=500)
        count = sum(len(records) for records in batches.values())
        if count:
            received += count
            consumer.commit()
        return True if received >= total else None

    poll(f"the group to consume {total} records", step, DEADLINE_S, interval_s=0)
    assert received == total


def by_partition(status: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    return {part["partition"]: part for part in status["partitions"] if part["topic"] == TOPIC}


def burrow_events(burrow: BurrowProcess) -> list[dict[str, Any]]:
    """Burrow's log as events (it logs JSON lines, plus a few plain lines at start and stop)."""
    events = []
    for line in burrow.log_text().splitlines():
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                events.append(json.loads(line))
    return events


def _stop_broker(broker: BrokerProcess) -> None:
    if broker.process is None or broker.process.poll() is not None:
        broker.kill()  # releases the output pipe if it is still open
        return
    try:
        broker.stop()
    except subprocess.TimeoutExpired:
        broker.kill()


def test_burrow_reports_group_lag_from_our_consumer_offsets(tmp_path: Path) -> None:
    missing = missing_tools()
    if missing:
        pytest.fail(
            "the Burrow interop test needs Burrow and ZooKeeper from Debian: "
            f"apt-get install {' '.join(DEBIAN_PACKAGES)} (missing: {'; '.join(missing)})",
            pytrace=False,
        )
    with contextlib.ExitStack() as cleanup:
        zookeeper = ZooKeeperProcess(tmp_path / "zookeeper")
        cleanup.callback(zookeeper.stop)
        zookeeper.start()

        broker = BrokerProcess(tmp_path / "broker")
        cleanup.callback(_stop_broker, broker)
        bootstrap = broker.start()

        burrow = BurrowProcess(tmp_path / "burrow", bootstrap, zookeeper.connect)
        cleanup.callback(burrow.stop)
        burrow.start()

        def burrow_says() -> str:
            return f"Burrow log:\n{burrow.log_tail()}"

        view = BrokerView(bootstrap)
        cleanup.callback(view.admin.close)
        producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="burrow-test-producer")
        cleanup.callback(producer.close)

        # -- the topic, and Burrow's view of its ends (ListOffsets v0) --------------------------------------------
        view.admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])
        produce(producer, FIRST_BATCH)
        ends = view.end_offsets()
        assert ends == FIRST_BATCH
        expected_ends = [ends[p] for p in range(PARTITIONS)]
        poll(
            f"Burrow to report {TOPIC} ends {expected_ends}",
            lambda: True if burrow.topic_offsets(TOPIC) == expected_ends else None,
            DEADLINE_S,
            detail=burrow_says,
        )

        # -- a group that consumes everything and commits: OK, lag 0 ---------------------------------------------
        consumer = subscribed_consumer(  # no metadata-driven rejoin (tests/support/clients.py)
            [TOPIC],
            bootstrap_servers=bootstrap,
            group_id=GROUP,
            client_id="burrow-test-consumer",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
        )
        cleanup.callback(consumer.close)
        consume_all_and_commit(consumer, sum(FIRST_BATCH.values()))
        committed = view.committed()
        assert committed == ends
        assert view.expected_lag() == dict.fromkeys(range(PARTITIONS), 0)

        def lag_reports_commits() -> dict[str, Any] | None:
            status = burrow.consumer_lag(GROUP)
            if status is None:
                return None
            parts = by_partition(status)
            seen = {p: part["end"]["offset"] for p, part in parts.items() if part.get("end")}
            return status if seen == committed else None

        status = poll(
            f"Burrow to see {GROUP}'s commits {committed}", lag_reports_commits, DEADLINE_S, detail=burrow_says
        )
        assert status["status"] == "OK", json.dumps(status)
        assert status["partition_count"] == PARTITIONS
        assert status["totallag"] == 0
        assert {p: part["current_lag"] for p, part in by_partition(status).items()} == dict.fromkeys(
            range(PARTITIONS), 0
        )
        assert {p: part["status"] for p, part in by_partition(status).items()} == dict.fromkeys(range(PARTITIONS), "OK")
        summary = burrow.consumer_status(GROUP)
        assert summary is not None
        assert (summary["status"], summary["totallag"], summary["partitions"]) == ("OK", 0, []), json.dumps(summary)

        # -- the consumer stops, more is produced: the lag Burrow reports grows to match -------------------------
        consumer.close()
        produce(producer, SECOND_BATCH)
        assert view.committed() == committed
        expected_lag = view.expected_lag()
        assert expected_lag == SECOND_BATCH

        def lag_caught_up() -> dict[str, Any] | None:
            status = burrow.consumer_lag(GROUP)
            if status is None:
                return None
            current = {p: part["current_lag"] for p, part in by_partition(status).items()}
            return status if current == expected_lag else None

        status = poll(f"Burrow to report lag {expected_lag}", lag_caught_up, DEADLINE_S, detail=burrow_says)
        assert status["totallag"] == sum(expected_lag.values())
        assert {p: part["end"]["offset"] for p, part in by_partition(status).items()} == committed

        # Burrow's "stopped" rule: lag and no commit for longer than the (instant-long) window of commits.
        lagging = sorted(p for p, lag in expected_lag.items() if lag)

        def flagged_stopped() -> dict[str, Any] | None:
            status = burrow.consumer_lag(GROUP)
            return status if status is not None and status["status"] == "ERR" else None

        status = poll("Burrow to flag the stopped consumer", flagged_stopped, DEADLINE_S, detail=burrow_says)
        assert {p: part["status"] for p, part in by_partition(status).items()} == {
            p: "STOP" if p in lagging else "OK" for p in range(PARTITIONS)
        }
        summary = burrow.consumer_status(GROUP)
        assert summary is not None
        assert summary["status"] == "ERR"
        assert summary["totallag"] == sum(expected_lag.values())
        assert {p: (part["status"], part["current_lag"]) for p, part in by_partition(summary).items()} == {
            p: ("STOP", expected_lag[p]) for p in lagging
        }

        # Burrow decoded every offset commit; only group metadata (v3) is beyond it. The broker served it cleanly.
        burrow_log = burrow_events(burrow)
        undecoded = [e for e in burrow_log if e["msg"] == "failed to decode"]
        assert [e for e in undecoded if e.get("message_type") != "metadata"] == []
        assert [e for e in burrow_log if e["msg"] == "consume error"] == []
        assert [line for line in broker.log_lines() if any(fault in line for fault in BROKER_FAULTS)] == []
