"""confluent-kafka (librdkafka) with `group.protocol=consumer`: KIP-848 consumer groups end to end.

The flows issue #14 demands, each in a group of its own: three members sharing six partitions, one stopping and the
others taking over, commit and resume, a static member restarting without disturbing the others, a regex
subscription picking up a new topic, partitions added under a group, and a rolling upgrade of a running classic
group to the consumer protocol. The broker is the `e2e_target` fixture's: group-broker by default, the reference
Apache Kafka with `--e2e-broker=kafka` (`make test-e2e-reference`), which is what proves the tests themselves right.

Members commit what they consumed from the partitions they give up (`commit_on_revoke`), so at-least-once delivery
is checked strictly: a record may be received twice only if it lies after the last commit of its partition at the
time it is received again (`assert_at_least_once`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import pytest
from confluent_kafka import KafkaError, Message
from confluent_kafka.admin import ConsumerGroupDescription, NewPartitions

from tests.e2e.confluent_client import TIMEOUT_S, ConfluentAdapter, ConfluentConsumer, record_of
from tests.e2e.scenario import (
    PARTITIONS,
    WAIT_S,
    Opened,
    Pump,
    Rec,
    assert_exclusive_cover,
    assert_generation_owned,
    assert_nothing_lost,
    end_offsets,
    explained_by_broker,
    keyed,
    settled,
    unique,
)
from tests.e2e.targets import E2ETarget
from tests.support.broker_process import wait_until

pytestmark = pytest.mark.integration

CONSUMER_PROTOCOL = {"group.protocol": "consumer"}
CLASSIC_PROTOCOL = {"group.protocol": "classic"}


@pytest.fixture
def adapter(e2e_target: E2ETarget) -> Iterator[ConfluentAdapter]:
    client = ConfluentAdapter(e2e_target.bootstrap)
    yield client
    client.close()


def explained(target: E2ETarget, group: str) -> AbstractContextManager[None]:
    """On group-broker, a failed assertion carries the coordinator's events for the group; Kafka's log is its own."""
    return nullcontext() if target.broker is None else explained_by_broker(target.broker, group)


def member(
    opened: Opened, adapter: ConfluentAdapter, group: str, topic: str, name: str, **config: Any
) -> ConfluentConsumer:
    """A consumer-protocol member (unless `config` says otherwise) that commits what it gives up."""
    options = {**CONSUMER_PROTOCOL, **config}
    return opened.track(adapter.consumer(group, topic, name, commit_on_revoke=True, **options))


def describe(adapter: ConfluentAdapter, group: str) -> ConsumerGroupDescription:
    """ConsumerGroupDescribe for a consumer group, DescribeGroups for a classic one (confluent-kafka picks)."""
    return adapter.admin.describe_consumer_groups([group])[group].result(TIMEOUT_S)


def group_type(adapter: ConfluentAdapter, group: str) -> str:
    return str(describe(adapter, group).type.name)


def received_all(pump: Pump, records: Iterable[Rec]) -> bool:
    return {r.position for r in records} <= pump.positions()


def assert_at_least_once(pump: Pump, consumers: Sequence[ConfluentConsumer]) -> int:
    """Replay receipts and commits in time order: a record received again must lie at or after its partition's
    last committed offset at that moment (what at-least-once allows); one below it should have been skipped by
    its new owner. Returns how many records were received again."""
    events = sorted(
        [(t, 0, p, offset, "") for c in consumers for t, p, offset in c.commits]
        + [(t, 1, r.partition, r.offset, name) for t, name, r in pump.journal]
    )
    committed: dict[int, int] = {}
    seen: set[tuple[int, int]] = set()
    again = 0
    wrong = []
    for _, kind, partition, offset, name in events:
        if kind == 0:
            committed[partition] = offset
            continue
        if (partition, offset) in seen:
            again += 1
            if committed.get(partition, 0) > offset:
                wrong.append(f"{name} got {partition}@{offset} again after a commit at {committed[partition]}")
        seen.add((partition, offset))
    assert not wrong, f"{len(wrong)} records delivered again below a commit, e.g. {wrong[:5]}"
    return again


def consumer_group_settled(adapter: ConfluentAdapter, consumers: Sequence[ConfluentConsumer], group: str) -> bool:
    """`settled` (Stable, every member's applied assignment is the described one) for a consumer-type group."""
    return settled(adapter, consumers, group, consumers[0].topic) and group_type(adapter, group) == "CONSUMER"


def consume_settled(
    adapter: ConfluentAdapter, group: str, consumers: Sequence[ConfluentConsumer], records: Sequence[Rec], what: str
) -> Pump:
    """Poll the members until they received `records` and the consumer group settled with a share for each."""
    pump = Pump(list(consumers))
    pump.until(
        lambda: (
            received_all(pump, records)
            and all(c.assignment() for c in consumers)
            and consumer_group_settled(adapter, consumers, group)
        ),
        what,
    )
    return pump


# -- 1-3: share, take over, commit and resume --------------------------------------------------------------------


def test_three_members_share_six_partitions(adapter: ConfluentAdapter, e2e_target: E2ETarget) -> None:
    """Three consumer-protocol members on a 6-partition topic: the group is a consumer group, each partition is
    assigned to exactly one member (as the members see it and as ConsumerGroupDescribe reports it), every member
    gets partitions, and every produced record is consumed; a record is received twice only after a commit gap."""
    topic, group = unique("ck848-share"), unique("ck848-share-group")
    adapter.create_topic(topic, PARTITIONS)
    with explained(e2e_target, group), Opened(adapter) as opened:
        produced = adapter.produce(topic, keyed(0, 600))
        assert {r.partition for r in produced} == set(range(PARTITIONS))
        consumers = [member(opened, adapter, group, topic, f"share-{i}") for i in range(3)]
        pump = consume_settled(adapter, group, consumers, produced, "three members to consume all 600 records")
        assert_generation_owned(adapter, consumers, group, topic)
        assert_exclusive_cover([c.assignment() for c in consumers], PARTITIONS)
        assert_nothing_lost(produced, pump.all_received())
        assert pump.positions() == {r.position for r in produced}, "received records that were never produced"
        assert_at_least_once(pump, consumers)


def test_stopped_member_partitions_are_taken_over(adapter: ConfluentAdapter, e2e_target: E2ETarget) -> None:
    """One of three members closes (leaving with epoch -1 after committing what it consumed): the other two are
    assigned its partitions, consume what is produced afterwards on every partition, and nothing is lost."""
    topic, group = unique("ck848-takeover"), unique("ck848-takeover-group")
    adapter.create_topic(topic, PARTITIONS)
    with explained(e2e_target, group), Opened(adapter) as opened:
        first = adapter.produce(topic, keyed(0, 300))
        consumers = [member(opened, adapter, group, topic, f"takeover-{i}") for i in range(3)]
        pump = consume_settled(adapter, group, consumers, first, "three members to consume the first batch")
        leaving, staying = consumers[2], consumers[:2]
        given_up = leaving.assignment()
        pump.remove(leaving)
        opened.close(leaving)
        assert leaving.events[-1] == ("revoke", frozenset(given_up)), leaving.events

        pump.until(
            lambda: consumer_group_settled(adapter, staying, group),
            "the two remaining members to own all six partitions",
        )
        assert_generation_owned(adapter, staying, group, topic)
        assert given_up <= staying[0].assignment() | staying[1].assignment()

        later = adapter.produce(topic, keyed(300, 120))
        assert {r.partition for r in later} == set(range(PARTITIONS))
        seen = {c.name: len(pump.received[c.name]) for c in staying}
        pump.until(lambda: received_all(pump, later), "the two to consume the later batch")
        for c in staying:
            assert {r.partition for r in pump.received[c.name][seen[c.name] :]} <= c.assignment()
        assert_nothing_lost([*first, *later], pump.all_received())
        assert_at_least_once(pump, consumers)


def test_commit_and_resume(adapter: ConfluentAdapter, e2e_target: E2ETarget) -> None:
    """Two members consume, commit and close; the group is Empty with the log end offsets committed; two new
    members of the same group resume exactly there: they receive only what was produced after the commit."""
    topic, group = unique("ck848-resume"), unique("ck848-resume-group")
    adapter.create_topic(topic, PARTITIONS)
    with explained(e2e_target, group), Opened(adapter) as opened:
        before = adapter.produce(topic, keyed(0, 300))
        consumers = [member(opened, adapter, group, topic, f"resume-{i}") for i in range(2)]
        pump = consume_settled(adapter, group, consumers, before, "two members to consume the first batch")
        for c in consumers:
            c.commit()
        expected = end_offsets(before)
        assert adapter.committed_offsets(group, topic) == expected
        for c in consumers:
            pump.remove(c)
            opened.close(c)
        wait_until(lambda: describe(adapter, group).state.name == "EMPTY", WAIT_S, what="the group to become Empty")
        assert adapter.committed_offsets(group, topic) == expected

        after = adapter.produce(topic, keyed(300, 120))
        resumed = [member(opened, adapter, group, topic, f"resumed-{i}") for i in range(2)]
        again = consume_settled(adapter, group, resumed, after, "the new members to consume what came after the commit")
        # Exactly what came after the commit: each partition from its committed offset, nothing before it.
        assert sorted(again.all_received(), key=lambda r: r.position) == sorted(after, key=lambda r: r.position)
        assert {p: min(r.offset for r in after if r.partition == p) for p in expected} == expected


# -- 4: static membership ----------------------------------------------------------------------------------------


def test_static_member_restart_keeps_assignments(adapter: ConfluentAdapter, e2e_target: E2ETarget) -> None:
    """KIP-848 static membership: a member with a group.instance.id closes (leaving with epoch -2, so the
    coordinator keeps its assignment for the session timeout) and a new consumer with the same instance id comes
    back within it: it is given the same partitions, and the other members are not touched: no assign or revoke
    callback fires on them, and ConsumerGroupDescribe shows their member ids and assignments unchanged."""
    topic, group = unique("ck848-static"), unique("ck848-static-group")
    adapter.create_topic(topic, PARTITIONS)
    with explained(e2e_target, group), Opened(adapter) as opened:
        members = [
            member(opened, adapter, group, topic, f"static-{i}", **{"group.instance.id": f"static-{i}"})
            for i in range(3)
        ]
        pump = Pump(list(members))
        pump.until(
            lambda: all(c.assignment() for c in members) and consumer_group_settled(adapter, members, group),
            "three static members in a settled consumer group",
        )
        restarting, others = members[0], members[1:]
        owned = restarting.assignment()
        before = adapter.describe(group, topic).assignments
        events_before = {c.name: list(c.events) for c in others}

        pump.remove(restarting)
        opened.close(restarting)
        back = member(opened, adapter, group, topic, "static-0-again", **{"group.instance.id": "static-0"})
        pump.add(back)
        pump.until(
            lambda: back.assignment() == owned and consumer_group_settled(adapter, [back, *others], group),
            "the restarted static member to get its partitions back",
        )
        assert back.events == [("assign", frozenset(owned))]

        after = adapter.describe(group, topic).assignments
        for c in others:
            assert after[c.memberid()] == before[c.memberid()], "another member's assignment changed"
            assert c.events == events_before[c.name], f"{c.name} was rebalanced: {c.events}"
        assert after[back.memberid()] == frozenset(owned)

        produced = adapter.produce(topic, keyed(0, 120))
        pump.until(lambda: received_all(pump, produced), "all three to consume new records")
        assert_nothing_lost(produced, pump.all_received())
        for c in others:
            assert c.events == events_before[c.name], f"{c.name} was rebalanced: {c.events}"


# -- 5-6: subscriptions following the metadata -------------------------------------------------------------------


def test_regex_subscription_picks_up_a_new_topic(adapter: ConfluentAdapter, e2e_target: E2ETarget) -> None:
    """Two members subscribed to `^prefix.*` (resolved by the coordinator, RE2 syntax): the matching topic is
    consumed; a topic created later that matches is assigned to the group and consumed too; one that does not
    match is not."""
    prefix, group = unique("ck848-rx"), unique("ck848-rx-group")
    existing, created, unrelated = f"{prefix}-a", f"{prefix}-b", unique("ck848-other")
    adapter.create_topic(existing, 3)
    with explained(e2e_target, group), Opened(adapter) as opened:
        members = [member(opened, adapter, group, f"^{prefix}-.*", f"rx-{i}") for i in range(2)]
        pump = Pump(list(members))

        def assigned() -> set[tuple[str, int]]:
            return {(tp.topic, tp.partition) for c in members for tp in c.consumer.assignment()}

        first = adapter.produce(existing, keyed(0, 60))
        pump.until(
            lambda: set(first) <= set(pump.all_received()) and assigned() == {(existing, p) for p in range(3)},
            "the members to consume the topic that matched when they subscribed",
        )
        adapter.create_topic(created, 3)
        adapter.create_topic(unrelated, 1)
        pump.until(
            lambda: assigned() == {(t, p) for t in (existing, created) for p in range(3)},
            "the group to be assigned the new matching topic",
        )
        later = adapter.produce(created, keyed(1000, 60))
        pump.until(lambda: set(later) <= set(pump.all_received()), "the members to consume the new topic")
        assert all(tp.topic != unrelated for c in members for tp in c.consumer.assignment())


def test_added_partitions_are_assigned_and_consumed(adapter: ConfluentAdapter, e2e_target: E2ETarget) -> None:
    """CreatePartitions 3 -> 6 under two members: the coordinator notices the new partitions and assigns them, each
    of the six to exactly one member, and records produced to the new partitions are consumed."""
    topic, group = unique("ck848-grow"), unique("ck848-grow-group")
    adapter.create_topic(topic, 3)
    with explained(e2e_target, group), Opened(adapter) as opened:
        members = [member(opened, adapter, group, topic, f"grow-{i}") for i in range(2)]
        pump = Pump(list(members))
        pump.until(
            lambda: (
                consumer_group_settled(adapter, members, group)
                and members[0].assignment() | members[1].assignment() == {0, 1, 2}
            ),
            "two members to share the three partitions",
        )
        adapter.admin.create_partitions([NewPartitions(topic, PARTITIONS)])[topic].result(TIMEOUT_S)
        pump.until(
            lambda: (
                consumer_group_settled(adapter, members, group)
                and members[0].assignment() | members[1].assignment() == set(range(PARTITIONS))
            ),
            "the members to be assigned the new partitions",
        )
        assert_generation_owned(adapter, members, group, topic)
        produced = [r for p in range(3, PARTITIONS) for r in adapter.produce(topic, keyed(p * 100, 20), partition=p)]
        pump.until(lambda: received_all(pump, produced), "the new partitions to be consumed")
        assert_nothing_lost(produced, pump.all_received())


# -- 7: rolling upgrade ------------------------------------------------------------------------------------------


class Stream:
    """A steady stream of keyed records: `tick()` produces a few more without waiting (the producer's delivery
    reports fill `acked` as they come), `finish()` waits for the last acknowledgements."""

    def __init__(self, adapter: ConfluentAdapter, topic: str, per_tick: int = 3) -> None:
        self.adapter = adapter  # its producer, not a reference of our own: closing the adapter destroys it
        self.topic = topic
        self.per_tick = per_tick
        self.sent = 0
        self.acked: list[Rec] = []

    def _delivered(self, err: KafkaError | None, m: Message) -> None:
        assert err is None, err
        self.acked.append(record_of(m))

    def tick(self) -> None:
        for key, value in keyed(self.sent, self.per_tick):
            self.adapter.producer.produce(self.topic, key=key, value=value, on_delivery=self._delivered)
        self.sent += self.per_tick
        self.adapter.producer.poll(0)

    def finish(self) -> list[Rec]:
        assert self.adapter.producer.flush(TIMEOUT_S) == 0
        assert len(self.acked) == self.sent
        return self.acked


def test_rolling_upgrade_from_classic_to_consumer_protocol(
    adapter: ConfluentAdapter, e2e_target: E2ETarget, request: pytest.FixtureRequest
) -> None:
    """A classic group of three (group.protocol=classic) consumes a steady stream; its members are replaced one by
    one by group.protocol=consumer members (each commits and closes first). The group turns into a consumer group
    when the first consumer-protocol member joins and serves the mixed members meanwhile, every step settles with
    each partition owned once, the stream keeps being consumed throughout, and in the end all members use the
    consumer protocol, nothing is lost, and nothing is received twice below a commit."""
    if e2e_target.broker is not None:
        # Online migration (KIP-848) is written but not merged on main yet (issue #14 in progress). Strict: this
        # test runs in full and must fail on group-broker until it lands; it passes against Kafka.
        request.applymarker(pytest.mark.xfail(strict=True, reason="online classic->consumer migration not merged"))
    topic, group = unique("ck848-upgrade"), unique("ck848-upgrade-group")
    adapter.create_topic(topic, PARTITIONS)
    stream = Stream(adapter, topic)
    with explained(e2e_target, group), Opened(adapter) as opened:
        current = [member(opened, adapter, group, topic, f"classic-{i}", **CLASSIC_PROTOCOL) for i in range(3)]
        everyone = list(current)
        pump = Pump(list(current))

        def flowing(settled_now: Callable[[], bool]) -> Callable[[], bool]:
            """Produce more on every check; hold once the group settled, every member received records produced
            during this step, and everything acknowledged so far was received."""
            marks = {c.name: len(pump.received[c.name]) for c in current}

            def check() -> bool:
                stream.tick()
                return (
                    settled_now()
                    and all(len(pump.received[c.name]) > marks[c.name] for c in current)
                    and received_all(pump, stream.acked)
                )

            return check

        pump.until(
            flowing(lambda: settled(adapter, current, group, topic) and group_type(adapter, group) == "CLASSIC"),
            "three classic members to consume the stream in a settled classic group",
        )
        for i in range(3):
            old = current[i]
            old.commit()
            pump.remove(old)
            opened.close(old)
            new = member(opened, adapter, group, topic, f"upgraded-{i}")
            everyone.append(new)
            current[i] = new
            pump.add(new)
            # Mixed until the last step: classic members served by the consumer group beside the upgraded ones.
            pump.until(
                flowing(
                    lambda: all(c.assignment() for c in current) and consumer_group_settled(adapter, current, group)
                ),
                f"the group to settle with {[c.name for c in current]}, each consuming the stream",
            )
            assert_generation_owned(adapter, current, group, topic)

        produced = stream.finish()
        pump.until(lambda: received_all(pump, produced), "the end of the stream")
        assert_nothing_lost(produced, pump.all_received())
        assert_at_least_once(pump, everyone)
        assert group_type(adapter, group) == "CONSUMER"
