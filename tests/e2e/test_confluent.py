"""confluent-kafka (librdkafka) against the broker process.

The consumer-group lifecycle, incremental (cooperative-sticky) rebalancing, static membership (KIP-345), the
group admin APIs and a consumer picking up partitions added by CreatePartitions. librdkafka runs the group
protocol on its own threads, so every consumer here is polled round-robin from the test thread.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import NewPartitions

from tests.e2e.confluent_client import TIMEOUT_S, ConfluentAdapter, ConfluentConsumer
from tests.e2e.scenario import (
    GROUP_OPERATIONS,
    PARTITIONS,
    WAIT_S,
    Opened,
    Pump,
    assert_exclusive_cover,
    broker_events,
    broker_generation,
    completed_generations,
    end_offsets,
    explained_by_broker,
    keyed,
    log_barrier,
    run_group_lifecycle,
    settled,
    unique,
)
from tests.support.broker_process import BrokerProcess, wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
def adapter(bootstrap: str) -> Iterator[ConfluentAdapter]:
    client = ConfluentAdapter(bootstrap)
    yield client
    client.close()


def test_group_lifecycle(adapter: ConfluentAdapter, broker_process: BrokerProcess) -> None:
    """600 records over 6 partitions, 3 consumers, one leaves, commit, a new consumer resumes at the commit."""
    run_group_lifecycle(adapter, broker_process, "ck")


def test_cooperative_sticky_moves_partitions_incrementally(
    adapter: ConfluentAdapter, broker_process: BrokerProcess
) -> None:
    """A second member joins a cooperative-sticky group: the first gives up only some partitions (never all, and
    keeps consuming the rest), the second gets exactly those, and every record is consumed exactly once."""
    topic, group = unique("ck-coop"), unique("ck-coop-group")
    adapter.create_topic(topic, PARTITIONS)
    cooperative = {"partition.assignment.strategy": "cooperative-sticky"}
    with explained_by_broker(broker_process, group), Opened(adapter) as opened:
        first_batch = adapter.produce(topic, keyed(0, 300))
        first = opened.track(adapter.consumer(group, topic, "coop-a", commit_on_revoke=True, **cooperative))
        pump = Pump([first])
        wanted = {r.position for r in first_batch}
        pump.until(lambda: wanted <= pump.positions(), "the first member to consume the first batch")
        assert first.events == [("assign", frozenset(range(PARTITIONS)))]

        second = opened.track(adapter.consumer(group, topic, "coop-b", commit_on_revoke=True, **cooperative))
        pump.add(second)
        pump.until(
            lambda: (
                settled(adapter, [first, second], group, topic)
                and bool(first.assignment())
                and bool(second.assignment())
            ),
            "both members to own partitions in a settled generation",
        )
        view = adapter.describe(group, topic)
        assert_exclusive_cover(list(view.assignments.values()), PARTITIONS)
        broker_generation(broker_process, group, view)
        assert completed_generations(broker_process, group)[-1]["protocol"] == "cooperative-sticky"

        # The first member only ever lost some of its partitions, and gained nothing back.
        held: set[int] = set()
        for kind, partitions in first.events:
            if kind == "assign":
                held |= partitions
            else:
                assert partitions < held, f"revoked {sorted(partitions)} while holding {sorted(held)}"
                held -= partitions
            assert held, f"the first member was left with nothing: {first.events}"
        revoked = [partitions for kind, partitions in first.events if kind == "revoke"]
        assert revoked, "no partition moved"
        assert held == first.assignment()
        # The second member got exactly the partitions the first gave up, and gave nothing up itself.
        assert all(kind == "assign" for kind, _ in second.events), second.events
        assert frozenset().union(*(p for _, p in second.events)) == frozenset().union(*revoked)
        assert second.assignment() == set(range(PARTITIONS)) - first.assignment()

        second_batch = adapter.produce(topic, keyed(300, 300))
        everything = [*first_batch, *second_batch]
        wanted = {r.position for r in everything}
        pump.until(lambda: wanted <= pump.positions(), "both members to consume the second batch")
        received = pump.all_received()
        assert Counter(r.position for r in received) == Counter(wanted), "a record was consumed twice"
        assert sorted(received, key=lambda r: r.position) == sorted(everything, key=lambda r: r.position)
        for r in pump.received[second.name]:
            assert r.partition in second.assignment()


def test_static_member_restart_does_not_rebalance(adapter: ConfluentAdapter, broker_process: BrokerProcess) -> None:
    """KIP-345: a static member (group.instance.id) closes without LeaveGroup (librdkafka skips it for static
    members on close) and comes back within its session timeout: the coordinator swaps its member id, the
    generation stays the same, the other member is not disturbed, and it gets the same partitions back."""
    topic, group = unique("ck-static"), unique("ck-static-group")
    adapter.create_topic(topic, PARTITIONS)

    def static(opened: Opened, instance: str) -> ConfluentConsumer:
        # A session long enough to restart in; librdkafka sends JoinGroup v5 with the group.instance.id.
        options = {"group.instance.id": instance, "session.timeout.ms": 6000}
        return opened.track(adapter.consumer(group, topic, instance, **options))

    with explained_by_broker(broker_process, group), Opened(adapter) as opened:
        one, two = static(opened, "static-1"), static(opened, "static-2")
        pump = Pump([one, two])
        pump.until(
            lambda: settled(adapter, [one, two], group, topic) and bool(one.assignment()) and bool(two.assignment()),
            "two static members in a settled generation",
        )
        owned, old_member = one.assignment(), one.memberid()
        broker_generation(broker_process, group, adapter.describe(group, topic))
        generations = completed_generations(broker_process, group)
        events_before = len(broker_events(broker_process, group))
        two_events = list(two.events)

        pump.remove(one)
        opened.close(one)

        again = static(opened, "static-1")
        pump.add(again)
        pump.until(lambda: again.assignment() == owned, "the restarted static member to get its partitions back")
        wait_until(
            lambda: any(
                e["old_member_id"] == old_member and e["group_instance_id"] == "static-1"
                for e in broker_events(broker_process, group, "member.fenced")
            ),
            WAIT_S,
            what="the coordinator to replace the static member's id",
        )
        assert again.memberid() != old_member
        assert again.events == [("assign", frozenset(owned))]

        # Both members still consume: records on every partition reach their owner.
        produced = adapter.produce(topic, keyed(0, 120))
        wanted = {r.position for r in produced}
        mark = {c.name: len(pump.received[c.name]) for c in (again, two)}
        pump.until(lambda: wanted <= pump.positions(), "both members to consume new records")
        for c in (again, two):
            assert {r.partition for r in pump.received[c.name][mark[c.name] :]} <= c.assignment()

        # No rebalance: the same generation, no rebalance event since the restart, the other member untouched.
        log_barrier(broker_process, adapter)
        after = broker_events(broker_process, group)[events_before:]
        assert not [e for e in after if e["event"].startswith("rebalance.") or e["event"] == "group.state"], after
        assert not [e for e in after if e["event"] == "member.left"], "a static member sent LeaveGroup on close"
        assert completed_generations(broker_process, group) == generations
        assert two.events == two_events
        view = adapter.describe(group, topic)
        assert view.state == "stable"
        assert view.assignments == {again.memberid(): frozenset(owned), two.memberid(): frozenset(two.assignment())}


def test_admin_lists_describes_and_deletes_groups(adapter: ConfluentAdapter) -> None:
    topic = unique("ck-admin")
    active, idle, unknown = unique("ck-active"), unique("ck-idle"), unique("ck-unknown")
    adapter.create_topic(topic, 2)
    produced = adapter.produce(topic, keyed(0, 20))

    # `idle`: consumes, commits and leaves, so it is Empty with offsets. `active`: keeps a member.
    with Opened(adapter) as opened:
        first = opened.consumer(idle, topic, "ck-idle-member")
        pump = Pump([first])
        pump.until(lambda: len(pump.all_received()) == len(produced), "the idle group's member to consume the topic")
        first.commit()
        opened.close(first)
        member = opened.consumer(active, topic, "ck-active-member")
        pump = Pump([member])
        pump.until(
            lambda: len(pump.all_received()) == len(produced) and adapter.describe(active, topic).state == "stable",
            "the active group's member to consume the topic",
        )

        listing = adapter.admin.list_consumer_groups().result(TIMEOUT_S)
        assert not listing.errors
        listed = {g.group_id: g for g in listing.valid}
        assert listed[active].state.name == "STABLE"
        assert listed[idle].state.name == "EMPTY"
        assert not listed[active].is_simple_consumer_group
        assert unknown not in listed

        futures = adapter.admin.describe_consumer_groups([active, idle, unknown], include_authorized_operations=True)
        described = futures[active].result(TIMEOUT_S)
        assert described.state.name == "STABLE"
        # Without an authorizer Kafka grants a group every operation it supports (Kafka 4: group configs too).
        assert {op.name for op in described.authorized_operations} == GROUP_OPERATIONS
        assert described.partition_assignor in ("range", "roundrobin")
        [only] = described.members
        assert only.client_id == "ck-active-member"
        assert sorted(tp.partition for tp in only.assignment.topic_partitions) == [0, 1]
        assert {tp.topic for tp in only.assignment.topic_partitions} == {topic}
        idle_described = futures[idle].result(TIMEOUT_S)
        assert idle_described.state.name == "EMPTY"
        assert idle_described.members == []
        # Kafka describes a group it does not know as Dead, without an error.
        assert futures[unknown].result(TIMEOUT_S).state.name == "DEAD"

        assert adapter.committed_offsets(idle, topic) == end_offsets(produced)
        deleted = adapter.admin.delete_consumer_groups([idle, active, unknown])
        deleted[idle].result(TIMEOUT_S)
        for group, code in ((active, KafkaError.NON_EMPTY_GROUP), (unknown, KafkaError.GROUP_ID_NOT_FOUND)):
            with pytest.raises(KafkaException) as refused:
                deleted[group].result(TIMEOUT_S)
            assert refused.value.args[0].code() == code, refused.value

        listed_after = {g.group_id for g in adapter.admin.list_consumer_groups().result(TIMEOUT_S).valid}
        assert idle not in listed_after
        assert active in listed_after
        assert adapter.committed_offsets(idle, topic) == {}
        opened.close(member)

    # Once its last member left, the other group can be deleted too.
    wait_until(
        lambda: adapter.describe(active, topic).state == "empty", WAIT_S, what="the active group to become Empty"
    )
    adapter.admin.delete_consumer_groups([active])[active].result(TIMEOUT_S)


def test_consumer_gets_partitions_added_by_create_partitions(
    adapter: ConfluentAdapter, broker_process: BrokerProcess
) -> None:
    """CreatePartitions 2 -> 4 under a subscribed consumer: its next metadata refresh shows 4 partitions, the
    group rebalances, the consumer is assigned all four and consumes what is produced to a new one."""
    topic, group = unique("ck-grow"), unique("ck-grow-group")
    adapter.create_topic(topic, 2)
    with explained_by_broker(broker_process, group), Opened(adapter) as opened:
        options = {"topic.metadata.refresh.interval.ms": 500}
        consumer = opened.track(adapter.consumer(group, topic, "ck-grow-member", **options))
        pump = Pump([consumer])
        pump.until(
            lambda: consumer.assignment() == {0, 1} and adapter.describe(group, topic).state == "stable",
            "the consumer to own both partitions",
        )
        generation = broker_generation(broker_process, group, adapter.describe(group, topic))
        adapter.admin.create_partitions([NewPartitions(topic, 4)])[topic].result(TIMEOUT_S)
        pump.until(
            lambda: consumer.assignment() == {0, 1, 2, 3} and adapter.describe(group, topic).state == "stable",
            "the consumer to be assigned 4 partitions",
        )
        view = adapter.describe(group, topic)
        assert view.assignments == {consumer.memberid(): frozenset({0, 1, 2, 3})}
        broker_generation(broker_process, group, view, after=generation)

        produced = adapter.produce(topic, keyed(0, 10), partition=3)
        assert {r.partition for r in produced} == {3}
        wanted = {r.position for r in produced}
        pump.until(lambda: wanted <= pump.positions(), "the records on the new partition to be consumed")
        assert sorted(pump.all_received(), key=lambda r: r.position) == produced
