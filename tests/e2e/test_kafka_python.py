"""kafka-python against the broker process: the consumer-group lifecycle and the group admin APIs, with the clients
of kafka_python_client.py (whose docstring says why each consumer is polled from a thread of its own)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.kafka_python_client import KafkaPythonAdapter
from tests.e2e.scenario import (
    GROUP_OPERATIONS,
    WAIT_S,
    Opened,
    Pump,
    end_offsets,
    keyed,
    run_group_lifecycle,
    unique,
)
from tests.support.broker_process import BrokerProcess, wait_until

pytestmark = pytest.mark.integration


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
        # kafka-python negotiates DescribeGroups v6, where Kafka 4.4 answers a group it does not know Dead with
        # GROUP_ID_NOT_FOUND and its message (KIP-1043; Dead without an error before v6).
        assert described[unknown]["group_state"] == "Dead"
        assert described[unknown]["error"] == f"[Error 69] GroupIdNotFoundError: Group {unknown} not found."

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
