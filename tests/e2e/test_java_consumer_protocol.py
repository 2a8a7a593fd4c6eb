"""The Java consumer (kafka-clients' AsyncKafkaConsumer) with `group.protocol=consumer`: KIP-848 consumer groups end
to end, and the AdminClient's view of them (ConsumerGroupDescribe, ListGroups with the types filter).

Each test has a group of its own on a 4-partition topic: two members share it, consume everything produced, commit,
and a new member resumes at the committed offsets; one of two members closes and the other takes over every
partition; describeConsumerGroups, listConsumerGroups and listGroups report the group as a consumer group. The broker
is the `e2e_target` fixture's: group-broker by default, the reference Apache Kafka with `--e2e-broker=kafka`
(`make test-e2e-reference`), which is what proves the tests themselves right.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pytest

from tests.e2e.java_client import JavaAdapter, JavaConsumer
from tests.e2e.scenario import (
    Opened,
    Pump,
    Rec,
    assert_broker_accepted_every_request,
    assert_exclusive_cover,
    assert_nothing_lost,
    commit_and_leave,
    keyed,
    unique,
)
from tests.e2e.targets import E2ETarget, explained

pytestmark = pytest.mark.integration

PARTITIONS = 4


@pytest.fixture(scope="module")
def java(e2e_target: E2ETarget, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaAdapter]:
    """The Java programs, their consumers with group.protocol=consumer."""
    with contextlib.ExitStack() as stack:
        yield JavaAdapter(e2e_target.bootstrap, tmp_path_factory.mktemp("java-clients"), stack, "consumer")


def described(java: JavaAdapter, group: str) -> dict[str, Any]:
    """describeConsumerGroups, flattened by AdminServer (ConsumerGroupDescribe for a consumer group)."""
    result: dict[str, Any] = java.admin.call("describeGroup", group=group)
    return result


def settled(java: JavaAdapter, group: str, topic: str, consumers: Sequence[JavaConsumer]) -> bool:
    """A Stable consumer group with exactly these members, each at the group's epoch with its target assignment
    reached, and each client applying what the coordinator describes as its assignment."""
    d = described(java, group)
    members = {m["clientId"]: m for m in d["members"]}
    if (d["type"], d["state"]) != ("Consumer", "Stable") or sorted(members) != sorted(c.name for c in consumers):
        return False
    return all(
        members[c.name]["memberEpoch"] == d["groupEpoch"]
        and members[c.name]["assignment"] == members[c.name]["targetAssignment"]
        and set(members[c.name]["assignment"].get(topic, [])) == c.assignment()
        for c in consumers
    )


def caught_up(pump: Pump, consumers: Sequence[JavaConsumer], records: Iterable[Rec]) -> bool:
    """Every member has itself received `records` of the partitions it owns now. A member that was given a
    partition another one had read (nothing was committed) reads it again, and only then does its position, hence
    what commitSync commits, reach the end of that partition."""
    by_partition: dict[int, set[tuple[int, int]]] = {}
    for r in records:
        by_partition.setdefault(r.partition, set()).add(r.position)
    for c in consumers:
        own = {r.position for r in pump.received[c.name]}
        if not all(by_partition.get(p, set()) <= own for p in c.assignment()):
            return False
    return True


def consume_settled(
    java: JavaAdapter, group: str, topic: str, consumers: Sequence[JavaConsumer], records: Sequence[Rec], what: str
) -> Pump:
    """Poll the members until the group settled with partitions for each, and each member caught up on its own."""
    pump = Pump(list(consumers))
    pump.until(
        lambda: (
            all(c.assignment() for c in consumers)
            and settled(java, group, topic, consumers)
            and caught_up(pump, consumers, records)
        ),
        what,
    )
    return pump


def members(java: JavaAdapter, opened: Opened, group: str, topic: str, prefix: str, count: int) -> list[JavaConsumer]:
    return [opened.track(java.consumer(group, topic, f"{prefix}-{i}")) for i in range(count)]


def test_two_members_share_commit_and_a_new_member_resumes(java: JavaAdapter, e2e_target: E2ETarget) -> None:
    """Two consumer-protocol members split the four partitions (each exactly once, two apiece with the uniform
    assignor), consume every record produced, commit and close; the committed offsets are the log end offsets, and
    a new member of the same group resumes exactly there: its committed() agrees, and it receives only what was
    produced after the commit."""
    topic, group = unique("java848-share"), unique("java848-share-group")
    java.create_topic(topic, PARTITIONS)
    with explained(e2e_target, group), Opened(java) as opened:
        before = java.produce(topic, keyed(0, 400))
        assert {r.partition for r in before} == set(range(PARTITIONS))
        pair = members(java, opened, group, topic, "share", 2)
        pump = consume_settled(java, group, topic, pair, before, "two members to consume all 400 records")
        assert_exclusive_cover([c.assignment() for c in pair], PARTITIONS)
        assert sorted(len(c.assignment()) for c in pair) == [2, 2]
        assert_nothing_lost(before, pump.all_received())
        assert pump.positions() == {r.position for r in before}, "received records that were never produced"

        expected = commit_and_leave(java, opened, pair, group, topic, before)

        after = java.produce(topic, keyed(400, 80))
        [resumed] = members(java, opened, group, topic, "resumed", 1)
        assert resumed.committed(range(PARTITIONS)) == expected
        again = consume_settled(java, group, topic, [resumed], after, "the new member to consume the later batch")
        assert resumed.assignment() == set(range(PARTITIONS))
        assert sorted(again.all_received(), key=lambda r: r.position) == sorted(after, key=lambda r: r.position)
    if e2e_target.broker is not None:
        assert_broker_accepted_every_request(e2e_target.broker, "Java consumer (group.protocol=consumer)")


def test_closed_member_partitions_are_taken_over(java: JavaAdapter, e2e_target: E2ETarget) -> None:
    """One of two members closes (it leaves the group with epoch -1): the other is assigned all four partitions,
    the coordinator describes one member owning them at a new group epoch, and what is produced afterwards on
    every partition reaches the remaining member."""
    topic, group = unique("java848-takeover"), unique("java848-takeover-group")
    java.create_topic(topic, PARTITIONS)
    with explained(e2e_target, group), Opened(java) as opened:
        first = java.produce(topic, keyed(0, 200))
        staying, leaving = members(java, opened, group, topic, "takeover", 2)
        pump = consume_settled(java, group, topic, [staying, leaving], first, "two members to consume the first batch")
        epoch_before = described(java, group)["groupEpoch"]
        staying.commit()
        leaving.commit()
        pump.remove(leaving)
        opened.close(leaving)

        pump.until(
            lambda: staying.assignment() == set(range(PARTITIONS)) and settled(java, group, topic, [staying]),
            "the remaining member to own all four partitions",
        )
        d = described(java, group)
        assert d["groupEpoch"] > epoch_before
        [only] = d["members"]
        assert only["assignment"] == {topic: list(range(PARTITIONS))}

        later = java.produce(topic, keyed(200, 80))
        assert {r.partition for r in later} == set(range(PARTITIONS))
        seen = len(pump.received[staying.name])
        pump.until(lambda: {r.position for r in later} <= pump.positions(), "the remaining member to consume it all")
        assert {r.partition for r in pump.received[staying.name][seen:]} == set(range(PARTITIONS))
        assert_nothing_lost([*first, *later], pump.all_received())
    if e2e_target.broker is not None:
        assert_broker_accepted_every_request(e2e_target.broker, "Java consumer (group.protocol=consumer)")


def test_admin_client_describes_and_lists_the_consumer_group(java: JavaAdapter, e2e_target: E2ETarget) -> None:
    """describeConsumerGroups on a consumer group (ConsumerGroupDescribe; group-broker serves v0 only, the client
    knows v0-v1): type Consumer, state Stable, the uniform assignor, epochs, and each member with its client id,
    member epoch and assignment (= its target assignment). listConsumerGroups and listGroups (KIP-1043) report the
    group with type Consumer, and their types filter keeps it or leaves it out."""
    topic, group = unique("java848-admin"), unique("java848-admin-group")
    java.create_topic(topic, PARTITIONS)
    with explained(e2e_target, group), Opened(java) as opened:
        produced = java.produce(topic, keyed(0, 40))
        pair = members(java, opened, group, topic, "admin", 2)
        consume_settled(java, group, topic, pair, produced, "two members in a settled consumer group")

        d = described(java, group)
        assert (d["type"], d["state"], d["simple"]) == ("Consumer", "Stable", False)
        assert d["partitionAssignor"] == "uniform"  # group.consumer.assignors' default
        assert d["groupEpoch"] == d["targetAssignmentEpoch"] >= 1
        assert sorted(m["clientId"] for m in d["members"]) == sorted(c.name for c in pair)
        for m in d["members"]:
            owner = next(c for c in pair if c.name == m["clientId"])
            assert m["memberId"] and m["instanceId"] is None
            assert m["memberEpoch"] == d["groupEpoch"]
            assert m["assignment"] == m["targetAssignment"] == {topic: sorted(owner.assignment())}
        assert_exclusive_cover([m["assignment"][topic] for m in d["members"]], PARTITIONS)
        # MemberDescription.upgraded() comes from ConsumerGroupDescribe v1's MemberType (KIP-1099): true, the member
        # speaks the consumer protocol (kafka-consumer-groups.sh's UPGRADED column).
        assert [m["upgraded"] for m in d["members"]] == [True, True]

        listed = {g["groupId"]: g for g in java.admin.call("listGroups")}
        assert {k: listed[group][k] for k in ("state", "type", "simple")} == {
            "state": "Stable",
            "type": "Consumer",
            "simple": False,
        }
        assert group in {g["groupId"] for g in java.admin.call("listGroups", types=["consumer"])}
        assert group not in {g["groupId"] for g in java.admin.call("listGroups", types=["classic"])}
        every = {g["groupId"]: g for g in java.admin.call("listAllGroups")}
        assert {k: every[group][k] for k in ("type", "protocol", "state")} == {
            "type": "Consumer",
            "protocol": "consumer",
            "state": "Stable",
        }
        assert group in {g["groupId"] for g in java.admin.call("listAllGroups", types=["consumer"])}
        assert group not in {g["groupId"] for g in java.admin.call("listAllGroups", types=["classic"])}
    if e2e_target.broker is not None:
        assert_broker_accepted_every_request(e2e_target.broker, "Java AdminClient")
