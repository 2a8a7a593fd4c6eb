"""kafkajs 2.2.4 against the broker process: a three-member group, a member leaving, commits and resuming.

The node side is the scripts of kafkajs_client.py (`admin.js`, `producer.js`, `consumer.js`). Everything waits on
conditions with deadlines; nothing asserts on time.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.jsonlines import Event
from tests.e2e.kafkajs_client import NodeScript, harness, node, stop_consumer
from tests.e2e.scenario import assert_broker_accepted_every_request
from tests.support.broker_process import BrokerProcess, wait_until

PARTITIONS = 6


# -- helpers over the scripts' events -------------------------------------------------------------------------


def _records(consumer: NodeScript) -> list[tuple[int, int, str]]:
    return [(e["partition"], e["offset"], e["key"]) for e in consumer.of_kind("message")]


def _last_assignment(consumer: NodeScript, topic: str) -> tuple[str, frozenset[int]] | None:
    """(member id, partitions) from the member's last GROUP_JOIN, if it joined at all."""
    joined = consumer.of_kind("joined")
    if not joined:
        return None
    return joined[-1]["memberId"], frozenset(joined[-1]["assignment"].get(topic, []))


def _owned(consumer: NodeScript, topic: str) -> tuple[str, frozenset[int]]:
    view = _last_assignment(consumer, topic)
    assert view is not None, f"{consumer.name} never joined"
    return view


def _wait_stable(admin: NodeScript, group: str, topic: str, members: list[NodeScript]) -> dict[str, frozenset[int]]:
    """Wait until the broker reports the group Stable with exactly `members`, whose assignments (as DescribeGroups
    and each member's own GROUP_JOIN both report them) split the topic's partitions without overlap."""
    seen: dict[str, Any] = {}

    def stable() -> bool:
        views = [_last_assignment(m, topic) for m in members]
        if any(view is None for view in views):
            return False
        described = admin.call("describeGroup", group=group)
        seen["described"], seen["views"] = described, views
        if described["state"] != "Stable" or described["protocolType"] != "consumer":
            return False
        broker_view = {m["memberId"]: frozenset(m["assignment"].get(topic, [])) for m in described["members"]}
        client_view = dict(view for view in views if view is not None)
        if broker_view != client_view:
            return False
        owned = [p for parts in broker_view.values() for p in parts]
        return sorted(owned) == list(range(PARTITIONS))

    try:
        wait_until(stable, timeout_s=30, interval_s=0.1)
    except AssertionError:
        raise AssertionError(f"group {group} never settled: {seen}") from None
    return dict(seen["views"])


def _wait_committed(admin: NodeScript, group: str, topic: str, expected: dict[int, int]) -> None:
    seen: dict[str, Any] = {}

    def caught_up() -> bool:
        committed = {p["partition"]: p["offset"] for p in admin.call("fetchOffsets", group=group, topic=topic)}
        seen["committed"] = committed
        return committed == expected

    try:
        wait_until(caught_up, timeout_s=30, interval_s=0.1)
    except AssertionError:
        raise AssertionError(f"commits of {group} never reached {expected}: {seen}") from None


def _high_watermarks(admin: NodeScript, topic: str) -> dict[int, int]:
    return {p["partition"]: p["high"] for p in admin.call("topicOffsets", topic=topic)}


def _produce(producer: NodeScript, topic: str, keys: list[str]) -> set[tuple[int, int, str]]:
    acked = producer.call("send", topic=topic, messages=[{"key": k, "value": f"value-of-{k}"} for k in keys])
    assert [r["key"] for r in acked] == keys
    return {(r["partition"], r["offset"], r["key"]) for r in acked}


def _wait_consumed(
    consumers: list[NodeScript], expected: set[tuple[int, int, str]], what: str, timeout_s: float = 30.0
) -> None:
    def done() -> bool:
        got: set[tuple[int, int, str]] = set()
        for c in consumers:
            got.update(_records(c))
        return expected <= got

    try:
        wait_until(done, timeout_s=timeout_s, interval_s=0.05)
    except AssertionError:
        got = {r for c in consumers for r in _records(c)}
        missing = sorted(expected - got)
        raise AssertionError(f"{what}: {len(missing)} records never consumed, e.g. {missing[:10]}") from None


def _group_events(broker: BrokerProcess, group: str, *names: str) -> list[Event]:
    events = []
    for line in broker.log_lines():
        if line.startswith("{"):
            event = json.loads(line)
            if event.get("group") == group and event.get("event") in names:
                events.append(event)
    return events


def _assert_left_cleanly(broker: BrokerProcess, group: str, members: list[NodeScript], topic: str) -> None:
    """Every stopped member sent LeaveGroup (consumer.disconnect() ran); none was expired by its session timeout."""
    left = {e["member"] for e in _group_events(broker, group, "member.left")}
    expired = _group_events(broker, group, "member.expired")
    assert not expired, expired
    assert {_owned(m, topic)[0] for m in members} <= left, (left, [m.name for m in members])


# -- the acceptance test ---------------------------------------------------------------------------------------


@pytest.mark.integration
def test_kafkajs_group_shares_partitions_survives_a_leaving_member_and_resumes_at_commits(
    bootstrap: str, broker_process: BrokerProcess, tmp_path: Path
) -> None:
    node()  # fail at once, clearly, without node or kafkajs
    suffix = uuid.uuid4().hex[:8]
    topic, group = f"kafkajs-orders-{suffix}", f"kafkajs-billing-{suffix}"
    with harness(bootstrap, tmp_path) as h:
        admin = h.rpc("admin.js", "admin")
        assert admin.call("createTopic", topic=topic, partitions=PARTITIONS) is True
        assert _high_watermarks(admin, topic) == dict.fromkeys(range(PARTITIONS), 0)
        producer = h.rpc("producer.js", "producer")

        # 1. Three members split the six partitions; 600 keyed records are each consumed once, by their owner.
        members = [h.consumer(f"member{i}", group, topic) for i in range(3)]
        owners = _wait_stable(admin, group, topic, members)
        first = _produce(producer, topic, [f"key-{i}" for i in range(600)])
        per_partition = Counter(p for p, _, _ in first)
        assert len(per_partition) == PARTITIONS, per_partition  # the keys spread over every partition
        for partition, count in per_partition.items():
            assert sorted(o for p, o, _ in first if p == partition) == list(range(count))
        assert _high_watermarks(admin, topic) == dict(per_partition)
        _wait_consumed(members, first, "three members")
        for member in members:
            member_id, owned = _owned(member, topic)
            assert owners[member_id] == owned
            assert {p for p, _, _ in _records(member)} <= owned, f"{member.name} read a partition it does not own"
        all_records = [r for m in members for r in _records(m)]
        assert Counter(all_records) == Counter(first), "every record exactly once, with the key it was produced with"
        _wait_committed(admin, group, topic, dict(per_partition))

        # 2. One member leaves (LeaveGroup on SIGTERM): the other two take over all six partitions and keep going.
        stop_consumer(members[0])
        survivors = members[1:]
        owners = _wait_stable(admin, group, topic, survivors)
        assert set(owners) == {_owned(m, topic)[0] for m in survivors}
        before = {m.name: len(_records(m)) for m in survivors}
        second = _produce(producer, topic, [f"after-leave-{i}" for i in range(120)])
        _wait_consumed(survivors, second, "two survivors")
        for member in survivors:
            _, owned = _owned(member, topic)
            new = _records(member)[before[member.name] :]
            assert {p for p, _, _ in new} <= owned, f"{member.name} read a partition it does not own"
        all_records = [r for m in members for r in _records(m)]
        assert Counter(all_records) == Counter(first | second), "nothing lost or read twice across the rebalance"
        ends = _high_watermarks(admin, topic)
        _wait_committed(admin, group, topic, ends)

        # 3. Everyone stops; what is produced now lies after the last commit.
        for member in survivors:
            stop_consumer(member)
        assert admin.call("describeGroup", group=group)["state"] == "Empty"
        third = _produce(producer, topic, [f"while-away-{i}" for i in range(60)])
        assert all(o >= ends[p] for p, o, _ in third)

        # 4. A new member (fromBeginning: true, which only applies without commits) resumes exactly at the commits.
        newcomer = h.consumer("newcomer", group, topic)
        _wait_stable(admin, group, topic, [newcomer])
        _wait_consumed([newcomer], third, "the new member")
        _wait_committed(admin, group, topic, _high_watermarks(admin, topic))
        stop_consumer(newcomer)
        # Within a partition records arrive in offset order, so anything before the commits would have come first.
        assert Counter(_records(newcomer)) == Counter(third)
        firsts = {p: min(o for q, o, _ in _records(newcomer) if q == p) for p, _, _ in third}
        assert firsts == {p: ends[p] for p in firsts}
        _assert_left_cleanly(broker_process, group, [*members, newcomer], topic)

    assert_broker_accepted_every_request(broker_process, "kafkajs")
