"""kafka-python against the broker process: the consumer-group lifecycle and the group admin APIs.

Each KafkaConsumer is polled continuously from a thread of its own, as applications do, not round-robin from the
test thread. kafka-python 3.0.12 runs JoinGroup+SyncGroup as a task on its IO thread and applies the result only
while a `poll()` is waiting on that task (`BaseCoordinator.join_group_async`). If the task completes while no
poll waits, the result is lost: the next poll sees `_join_task.is_done` and sends a fresh JoinGroup (a leader
doing that forces a new rebalance, again and again), or, if the rejoin was metadata-driven and `need_rejoin()` is
now false, never applies the assignment and never re-enables heartbeats, so the member is expired. Polled
round-robin, a consumer waits a third of the time and hits this within a few runs; a consumer that is always
inside `poll()`, with long polls and no metadata-driven rejoin (see `KafkaPythonConsumer`), practically never does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition

from tests.e2e.scenario import (
    GROUP_OPERATIONS,
    HEARTBEAT_INTERVAL_MS,
    SESSION_TIMEOUT_MS,
    WAIT_S,
    ConsumerThread,
    GroupView,
    Opened,
    Pump,
    Rec,
    end_offsets,
    keyed,
    run_group_lifecycle,
    unique,
)
from tests.support.broker_process import BrokerProcess, wait_until

pytestmark = pytest.mark.integration


class KafkaPythonConsumer:
    """A KafkaConsumer polled continuously in its own thread (see the module docstring for why)."""

    def __init__(self, bootstrap: str, group: str, topic: str, name: str) -> None:
        self.name = name
        self.topic = topic
        self.consumer = KafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=group,
            client_id=name,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            session_timeout_ms=SESSION_TIMEOUT_MS,
            heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
        )
        # Have the topic's partitions in the consumer's metadata before it first joins. Otherwise a leader that
        # joins first assigns nothing ("No partition metadata for topic"), then rejoins when the metadata arrives,
        # and that metadata-driven rejoin is the one whose result kafka-python can drop (see above).
        assert self.consumer.partitions_for_topic(topic)
        self.thread = ConsumerThread(name, self._poll, poll_s=0.5)

    def _poll(self, timeout_s: float) -> list[Rec]:
        batches = self.consumer.poll(timeout_ms=int(timeout_s * 1000))
        return [
            Rec(m.partition, m.offset, m.key.decode(), m.value.decode())
            for records in batches.values()
            for m in records
        ]

    def poll(self, timeout_s: float) -> list[Rec]:
        return self.thread.take(timeout_s)

    def assignment(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment() if tp.topic == self.topic}

    def commit(self) -> None:
        self.thread.call(self.consumer.commit)

    def committed(self, partitions: Iterable[int]) -> dict[int, int | None]:
        return self.thread.call(lambda: {p: self.consumer.committed(TopicPartition(self.topic, p)) for p in partitions})

    def close(self) -> None:
        self.thread.stop(self.consumer.close)


class KafkaPythonAdapter:
    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)

    def create_topic(self, topic: str, partitions: int) -> None:
        result = self.admin.create_topics({topic: {"num_partitions": partitions, "replication_factor": 1}})
        assert [(t["name"], t["error_code"], t["num_partitions"]) for t in result["topics"]] == [(topic, 0, partitions)]

    def produce(self, topic: str, records: Sequence[tuple[str, str]]) -> list[Rec]:
        futures = [self.producer.send(topic, key=k.encode(), value=v.encode()) for k, v in records]
        self.producer.flush()
        acked = [f.get(timeout=10) for f in futures]
        return [Rec(md.partition, md.offset, k, v) for md, (k, v) in zip(acked, records, strict=True)]

    def consumer(self, group: str, topic: str, name: str) -> KafkaPythonConsumer:
        return KafkaPythonConsumer(self.bootstrap, group, topic, name)

    def committed_offsets(self, group: str, topic: str) -> dict[int, int]:
        offsets = self.admin.list_group_offsets({group: None})[group]
        return {tp.partition: om.offset for tp, om in offsets.items() if tp.topic == topic and om.offset >= 0}

    def describe(self, group: str, topic: str) -> GroupView:
        described = self.admin.describe_groups([group])[group]
        assert described["error"] is None, described
        assignments = {}
        for member in described["members"]:
            assignment = member["member_assignment"] or {"assigned_partitions": []}
            assignments[member["member_id"]] = frozenset(
                p for tps in assignment["assigned_partitions"] if tps["topic"] == topic for p in tps["partitions"]
            )
        return GroupView(described["group_state"], assignments)

    def close(self) -> None:
        self.producer.close()
        self.admin.close()


@pytest.fixture
def adapter(bootstrap: str) -> Iterator[KafkaPythonAdapter]:
    client = KafkaPythonAdapter(bootstrap)
    yield client
    client.close()


def test_group_lifecycle(adapter: KafkaPythonAdapter, broker_process: BrokerProcess) -> None:
    """600 records over 6 partitions, 3 consumers, one leaves, commit, a new consumer resumes at the commit."""
    run_group_lifecycle(adapter, broker_process, "kp")


def test_admin_lists_describes_and_deletes_groups(adapter: KafkaPythonAdapter) -> None:
    topic = unique("kp-admin")
    active, idle, unknown = unique("kp-active"), unique("kp-idle"), unique("kp-unknown")
    adapter.create_topic(topic, 2)
    produced = adapter.produce(topic, keyed(0, 20))

    # `idle`: consumes, commits and leaves, so it is Empty with offsets. `active`: keeps a member.
    with Opened(adapter) as opened:
        first = opened.consumer(idle, topic, "kp-idle-member")
        pump = Pump([first])
        pump.until(lambda: len(pump.all_received()) == len(produced), "the idle group's member to consume the topic")
        first.commit()
        opened.close(first)
        member = opened.consumer(active, topic, "kp-active-member")
        pump = Pump([member])
        pump.until(lambda: len(pump.all_received()) == len(produced), "the active member to consume the topic")
        wait_until(
            lambda: adapter.describe(active, topic).state == "Stable", WAIT_S, what="the active group to be Stable"
        )

        listed = {g["group_id"]: g for g in adapter.admin.list_groups()}
        assert listed[active]["group_state"] == "Stable"
        assert listed[idle]["group_state"] == "Empty"
        assert listed[active]["protocol_type"] == listed[idle]["protocol_type"] == "consumer"
        assert unknown not in listed

        described = adapter.admin.describe_groups([active, idle, unknown])
        assert described[active]["group_state"] == "Stable"
        assert described[active]["protocol_type"] == "consumer"
        assert described[active]["protocol_data"] in ("range", "roundrobin", "sticky")
        # kafka-python asks for authorized operations; without an authorizer Kafka grants a group all it supports
        # (Kafka 4: group configs too).
        assert set(described[active]["authorized_operations"]) == GROUP_OPERATIONS
        [only] = described[active]["members"]
        assert only["client_id"] == "kp-active-member"
        assert only["member_metadata"]["topics"] == [topic]
        assert only["member_assignment"]["assigned_partitions"] == [{"topic": topic, "partitions": [0, 1]}]
        assert described[idle]["group_state"] == "Empty"
        assert described[idle]["members"] == []
        # Kafka describes a group it does not know as Dead, without an error.
        assert described[unknown]["group_state"] == "Dead"
        assert described[unknown]["error"] is None

        assert adapter.committed_offsets(idle, topic) == end_offsets(produced)
        results = adapter.admin.delete_groups([idle, active, unknown])
        assert results == {idle: "OK", active: "NonEmptyGroupError", unknown: "GroupIdNotFoundError"}

        listed_after = {g["group_id"] for g in adapter.admin.list_groups()}
        assert idle not in listed_after
        assert active in listed_after
        assert adapter.committed_offsets(idle, topic) == {}
        assert adapter.admin.describe_groups([idle])[idle]["group_state"] == "Dead"
        # Deleting it again: it is gone.
        assert adapter.admin.delete_groups([idle]) == {idle: "GroupIdNotFoundError"}
        opened.close(member)

    # Once its last member left, the other group can be deleted too.
    wait_until(
        lambda: adapter.describe(active, topic).state == "Empty", WAIT_S, what="the active group to become Empty"
    )
    assert adapter.admin.delete_groups([active]) == {active: "OK"}
