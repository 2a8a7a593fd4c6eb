"""The Java client (Apache Kafka's kafka-clients) against the broker process with the classic group protocol: the
group lifecycle scenario and the AdminClient's group operations. The Java programs and their adapter are in
java_client.py.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from tests.e2e.java_client import ERRORS, JavaAdapter, JavaConsumer
from tests.e2e.scenario import (
    WAIT_S,
    Opened,
    Pump,
    Rec,
    assert_broker_accepted_every_request,
    end_offsets,
    keyed,
    run_group_lifecycle,
    unique,
)
from tests.support.broker_process import BrokerProcess, wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def java(bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaAdapter]:
    with contextlib.ExitStack() as stack:
        yield JavaAdapter(bootstrap, tmp_path_factory.mktemp("java-clients"), stack)


def test_group_lifecycle(java: JavaAdapter, broker_process: BrokerProcess) -> None:
    """600 records over 6 partitions, 3 consumers (classic protocol), one leaves, commit, a new one resumes there."""
    run_group_lifecycle(java, broker_process, "java")
    assert_broker_accepted_every_request(broker_process, "Java client")


def _consume_all(java: JavaAdapter, opened: Opened, group: str, topic: str, produced: list[Rec]) -> JavaConsumer:
    """A member of `group` that has received every produced record, in a Stable group."""
    member = opened.track(java.consumer(group, topic, unique(f"{group}-member")))
    pump = Pump([member])
    pump.until(
        lambda: len(pump.all_received()) == len(produced) and java.describe(group, topic).state == "Stable",
        f"the member of {group} to consume the topic",
    )
    return member


def test_admin_client_group_operations(java: JavaAdapter, broker_process: BrokerProcess) -> None:
    """listConsumerGroups, describeConsumerGroups, deleteConsumerGroups, alter/list/deleteConsumerGroupOffsets,
    with the exceptions Kafka's AdminClient raises when the broker refuses."""
    admin = java.admin
    topic = unique("java-admin")
    active, idle, manual, unknown = (unique(f"java-{name}") for name in ("active", "idle", "manual", "unknown"))
    java.create_topic(topic, 2)
    produced = java.produce(topic, keyed(0, 20))

    with Opened(java) as opened:
        # `idle`: consumed, committed and left, so it is Empty with offsets. `active`: keeps its member.
        first = _consume_all(java, opened, idle, topic, produced)
        first.commit()
        opened.close(first)
        member = _consume_all(java, opened, active, topic, produced)
        # `manual`: never had a member; the admin client commits its offsets (a "simple" consumer group).
        assert admin.call("alterOffsets", group=manual, topic=topic, offsets={"0": 3, "1": 5}) is True
        assert java.committed_offsets(manual, topic) == {0: 3, 1: 5}

        listed = {g["groupId"]: g for g in admin.call("listGroups")}
        assert {k: listed[active][k] for k in ("state", "simple")} == {"state": "Stable", "simple": False}
        assert {k: listed[idle][k] for k in ("state", "simple")} == {"state": "Empty", "simple": False}
        assert {k: listed[manual][k] for k in ("state", "simple")} == {"state": "Empty", "simple": True}
        assert unknown not in listed

        described = admin.call("describeGroup", group=active)
        assert (described["state"], described["simple"], described["type"]) == ("Stable", False, "Classic")
        assert described["partitionAssignor"] == "range"  # the first of the Java consumer's default assignors
        host, port = broker_process.bootstrap.rsplit(":", 1)
        assert (described["coordinator"]["host"], described["coordinator"]["port"]) == (host, int(port))
        [only] = described["members"]
        assert only["clientId"] == member.name
        assert only["assignment"] == {topic: [0, 1]}
        idle_described = admin.call("describeGroup", group=idle)
        assert (idle_described["state"], idle_described["members"]) == ("Empty", [])
        # DescribeGroups v6 (KIP-1043, the newest, which the admin client uses): a group the broker does not know is
        # GROUP_ID_NOT_FOUND, as Kafka 4.4 answers it (up to v5: Dead, without an error).
        assert admin.error("describeGroup", group=unknown) == ERRORS + "GroupIdNotFoundException"

        # Offsets: the admin client may not commit for a group with live members; it may for an empty one.
        assert admin.error("alterOffsets", group=active, topic=topic, offsets={"0": 1}) == (
            ERRORS + "UnknownMemberIdException"
        )
        assert admin.call("alterOffsets", group=idle, topic=topic, offsets={"0": 7}) is True
        assert java.committed_offsets(idle, topic) == {**end_offsets(produced), 0: 7}
        # ... and may delete offsets of a topic the group is not subscribed to (any topic, for a simple group).
        assert admin.error("deleteOffsets", group=active, topic=topic, partitions=[0]) == (
            ERRORS + "GroupSubscribedToTopicException"
        )
        assert admin.call("deleteOffsets", group=manual, topic=topic, partitions=[0]) is True
        assert java.committed_offsets(manual, topic) == {1: 5}
        assert admin.error("deleteOffsets", group=unknown, topic=topic, partitions=[0]) == (
            ERRORS + "GroupIdNotFoundException"
        )

        # Groups: an empty group is deleted with its offsets, one with members or none at all is refused.
        assert admin.call("deleteGroup", group=idle) is True
        assert admin.error("deleteGroup", group=active) == ERRORS + "GroupNotEmptyException"
        assert admin.error("deleteGroup", group=unknown) == ERRORS + "GroupIdNotFoundException"
        listed_after = {g["groupId"] for g in admin.call("listGroups")}
        assert idle not in listed_after
        assert active in listed_after
        assert java.committed_offsets(idle, topic) == {}
        opened.close(member)

    # Once its last member left, the other group can be deleted too.
    wait_until(lambda: java.describe(active, topic).state == "Empty", WAIT_S, what="the active group to become Empty")
    assert admin.call("deleteGroup", group=active) is True
    assert admin.call("deleteGroup", group=manual) is True
    assert {active, manual}.isdisjoint(g["groupId"] for g in admin.call("listGroups"))
    assert_broker_accepted_every_request(broker_process, "Java AdminClient")
